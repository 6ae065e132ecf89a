//! Credentials typed straight into a server command (`--access-token X`, `--api-key=X`,
//! `env TOKEN=X …`, `FOO_SECRET=x cmd`): their values are masked wherever the command is stored
//! or shown (the export's `source.command`, the report, the "reproduce with" line). The way to
//! give a server a secret is a `${VAR}` reference, expanded from the environment at launch and
//! never stored; see docs/reference.md.

use tdqs_core::redact::{NameContext, MASK};

/// Whether an option or `NAME=` word of a command line carries a credential: the one rule of
/// [`tdqs_core::redact::is_credential_name`] for [`NameContext::CommandOption`].
fn is_credential_name(name: &str) -> bool {
    tdqs_core::redact::is_credential_name(name, NameContext::CommandOption)
}

/// A `${VAR}` reference (or text holding one) is not a secret: it names where the secret is.
fn is_reference(value: &str) -> bool {
    value.contains("${")
}

/// The positions of credential values in `words`: `(index, byte range of the value)`.
fn credential_spots(words: &[String]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut spots = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if word.contains("://") {
            // A URL: credentials in its user information, query or fragment.
            spots.extend(url_credentials(word).into_iter().map(|r| (i, r)));
        } else if let Some(option) = word.strip_prefix('-') {
            match option.split_once('=') {
                Some((name, value)) => {
                    if is_credential_name(name) && !value.is_empty() && !is_reference(value) {
                        spots.push((i, word.len() - value.len()..word.len()));
                    }
                }
                None => {
                    if is_credential_name(option) {
                        if let Some(next) = words.get(i + 1) {
                            if !next.starts_with('-') && !is_reference(next) {
                                spots.push((i + 1, 0..next.len()));
                                i += 1;
                            }
                        }
                    }
                }
            }
        } else if let Some((name, value)) = word.split_once('=') {
            if crate::config::is_valid_env_name(name)
                && is_credential_name(name)
                && !value.is_empty()
                && !is_reference(value)
            {
                spots.push((i, name.len() + 1..word.len()));
            }
        }
        i += 1;
    }
    spots
}

/// The byte ranges of credentials in a URL: the password of `user:password@`, and the values of
/// query and fragment parameters whose names are credentials' (`?api_key=…`, `#access_token=…`,
/// in any case, percent-encoded names decoded first). `${…}` references are not credentials.
pub(crate) fn url_credentials(url: &str) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let Some(scheme_end) = url.find("://").map(|at| at + 3) else {
        return ranges;
    };
    let authority_end = url[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |at| scheme_end + at);
    let authority = &url[scheme_end..authority_end];
    if let Some(at) = authority.rfind('@') {
        if let Some(colon) = authority[..at].find(':') {
            let value = &authority[colon + 1..at];
            if !value.is_empty() && !is_reference(value) {
                ranges.push(scheme_end + colon + 1..scheme_end + at);
            }
        }
    }
    let query_start = url[authority_end..].find('?').map(|at| authority_end + at);
    let fragment_start = url[authority_end..].find('#').map(|at| authority_end + at);
    let mut parts = Vec::new();
    if let Some(q) = query_start.filter(|q| fragment_start.is_none_or(|f| *q < f)) {
        parts.push((q + 1, fragment_start.unwrap_or(url.len())));
    }
    if let Some(f) = fragment_start {
        parts.push((f + 1, url.len()));
    }
    for (start, end) in parts {
        let mut at = start;
        for pair in url[start..end].split(['&', ';']) {
            if let Some((name, value)) = pair.split_once('=') {
                let decoded = percent_decoded(name);
                if tdqs_core::redact::is_credential_name(&decoded, NameContext::Header)
                    && !value.is_empty()
                    && !is_reference(value)
                {
                    let value_start = at + name.len() + 1;
                    ranges.push(value_start..value_start + value.len());
                }
            }
            at += pair.len() + 1;
        }
    }
    ranges
}

/// `%XX` sequences decoded (invalid ones kept as written), `+` as a space.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `words` with every credential value replaced by `[REDACTED]`.
pub(crate) fn mask_command(words: &[String]) -> Vec<String> {
    let mut out = words.to_vec();
    let mut spots = credential_spots(words);
    // Later ranges first, so earlier ranges of the same word keep their offsets.
    spots.sort_by_key(|spot| std::cmp::Reverse((spot.0, spot.1.start)));
    for (index, range) in spots {
        out[index].replace_range(range, MASK);
    }
    out
}

/// The credential values in `words`, to register with [`tdqs_core::redact`] so every other text
/// (errors, the reproduce line) masks them too.
pub(crate) fn credential_values(words: &[String]) -> Vec<String> {
    credential_spots(words)
        .into_iter()
        .map(|(index, range)| words[index][range].to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        shlex::split(line).unwrap()
    }

    #[test]
    fn credential_values_are_masked_and_references_kept() {
        let masked = mask_command(&words(
            "env GITHUB_TOKEN=ghp_abc FOO_SECRET=x PATH=/bin server --access-token tok1 \
             --api-key=k2 --port 80 --password ${PASS} --verbose",
        ));
        assert_eq!(
            masked.join(" "),
            "env GITHUB_TOKEN=[REDACTED] FOO_SECRET=[REDACTED] PATH=/bin server --access-token \
             [REDACTED] --api-key=[REDACTED] --port 80 --password ${PASS} --verbose"
        );
        assert_eq!(
            credential_values(&words("x --token abcdefgh KEY=v")),
            vec!["abcdefgh", "v"]
        );
    }

    #[test]
    fn credentials_in_a_url_are_masked_in_any_case() {
        let masked = mask_command(&words(
            "--url HTTPS://me:hunter2pass@example.test/mcp?Api_Key=k1secret&page=2&TOKEN=t2#frag&access%5Ftoken=f3secret",
        ));
        assert_eq!(
            masked.join(" "),
            "--url HTTPS://me:[REDACTED]@example.test/mcp?Api_Key=[REDACTED]&page=2&TOKEN=[REDACTED]#frag&access%5Ftoken=[REDACTED]"
        );
        assert_eq!(
            credential_values(&words("http://h/x?key=${KEY}&sig=abc#session=s1")),
            vec!["s1"]
        );
        assert!(url_credentials("http://127.0.0.1:{port}/mcp").is_empty());
    }
}
