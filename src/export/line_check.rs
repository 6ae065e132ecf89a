//! Stdout lines that look like a JSON-RPC message but are not valid JSON: what is wrong with
//! them, said at once instead of waiting out the timeout; and lone UTF-16 surrogate escapes,
//! which are repaired.
//!
//! A lone surrogate escape (`"\ud83d"` not followed by a low surrogate) is what Node writes when
//! a description is cut in the middle of an emoji; Python's `json` accepts it. JSON text with one
//! is not valid Unicode, so it has no well-defined hash as it stands. The gate replaces each lone
//! surrogate escape by `\ufffd` (U+FFFD REPLACEMENT CHARACTER) before parsing and records a
//! warning: the definition then hashes the same way on every run and every machine.

/// Replaces every lone surrogate `\uXXXX` escape inside JSON strings by `\ufffd`. Returns the
/// repaired line and how many were replaced, or `None` when there was none.
pub(crate) fn repair_lone_surrogates(line: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out: Option<Vec<u8>> = None;
    let mut replaced = 0;
    let mut in_string = false;
    let mut i = 0;
    let mut copied = 0;
    while i < line.len() {
        let b = line[i];
        if !in_string {
            if b == b'"' {
                in_string = true;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if line.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(line, i + 2) else {
                    i += 2;
                    continue;
                };
                let lone_at = |len: usize| (i, i + len);
                let span = if (0xD800..=0xDBFF).contains(&unit) {
                    let low = (line.get(i + 6) == Some(&b'\\') && line.get(i + 7) == Some(&b'u'))
                        .then(|| hex4(line, i + 8))
                        .flatten();
                    match low {
                        Some(l) if (0xDC00..=0xDFFF).contains(&l) => {
                            i += 12;
                            continue;
                        }
                        _ => Some(lone_at(6)),
                    }
                } else if (0xDC00..=0xDFFF).contains(&unit) {
                    Some(lone_at(6))
                } else {
                    None
                };
                match span {
                    Some((start, end)) => {
                        let buf = out.get_or_insert_with(|| Vec::with_capacity(line.len()));
                        buf.extend_from_slice(&line[copied..start]);
                        buf.extend_from_slice(b"\\ufffd");
                        copied = end;
                        replaced += 1;
                        i = end;
                    }
                    None => i += 6,
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    let mut buf = out?;
    buf.extend_from_slice(&line[copied..]);
    Some((buf, replaced))
}

fn hex4(line: &[u8], at: usize) -> Option<u32> {
    let digits = line.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// Whether a line that failed to parse was meant as a JSON-RPC message (so a parse failure is
/// the server's broken answer, not a log line to skip).
pub(crate) fn looks_like_message(line: &[u8]) -> bool {
    let trimmed = line.trim_ascii_start();
    (trimmed.starts_with(b"{") || trimmed.starts_with(b"[")) && contains(line, b"\"jsonrpc\"")
}

/// What is wrong with a message line that does not parse, in words.
pub fn describe(line: &[u8], err: &serde_json::Error) -> String {
    if let Err(e) = std::str::from_utf8(line) {
        return format!(
            "the message is not UTF-8 (an invalid byte at offset {}); JSON text must be UTF-8",
            e.valid_up_to()
        );
    }
    let text = err.to_string();
    let hint = if contains(line, b"NaN") || contains(line, b"Infinity") {
        " (JSON has no NaN or Infinity: a number must be finite)"
    } else if text.contains("number out of range") {
        " (a number too large for a 64-bit float, such as 1e400)"
    } else {
        ""
    };
    format!("the message is not valid JSON: {text}{hint}")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let line = br#"{"a":"cut \ud83d","b":"ok \ud83d\ude00","c":"\\ud83d","d":"\udc00x"}"#;
        let (fixed, n) = repair_lone_surrogates(line).unwrap();
        assert_eq!(n, 2);
        let v: serde_json::Value = serde_json::from_slice(&fixed).unwrap();
        assert_eq!(v["a"], "cut \u{FFFD}");
        assert_eq!(v["b"], "ok 😀");
        assert_eq!(v["c"], "\\ud83d");
        assert_eq!(v["d"], "\u{FFFD}x");
        assert!(repair_lone_surrogates(br#"{"a":"\ud83d\ude00"}"#).is_none());
    }
}
