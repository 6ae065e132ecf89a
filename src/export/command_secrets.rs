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

/// The positions of credential values in `words`: `(index, byte offset of the value)`.
fn credential_spots(words: &[String]) -> Vec<(usize, usize)> {
    let mut spots = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if let Some(option) = word.strip_prefix('-') {
            match option.split_once('=') {
                Some((name, value)) => {
                    if is_credential_name(name) && !value.is_empty() && !is_reference(value) {
                        spots.push((i, word.len() - value.len()));
                    }
                }
                None => {
                    if is_credential_name(option) {
                        if let Some(next) = words.get(i + 1) {
                            if !next.starts_with('-') && !is_reference(next) {
                                spots.push((i + 1, 0));
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
                spots.push((i, name.len() + 1));
            }
        }
        i += 1;
    }
    spots
}

/// `words` with every credential value replaced by `[REDACTED]`.
pub(crate) fn mask_command(words: &[String]) -> Vec<String> {
    let mut out = words.to_vec();
    for (index, offset) in credential_spots(words) {
        out[index] = format!("{}{MASK}", &words[index][..offset]);
    }
    out
}

/// The credential values in `words`, to register with [`tdqs_core::redact`] so every other text
/// (errors, the reproduce line) masks them too.
pub(crate) fn credential_values(words: &[String]) -> Vec<String> {
    credential_spots(words)
        .into_iter()
        .map(|(index, offset)| words[index][offset..].to_string())
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
}
