//! Where a proposal is shown: a replacement of the one source line that holds the description
//! literal (a GitHub suggestion block), else a diff of the definition.

use serde_json::Value;

/// Quote characters a description literal may use on one line.
const QUOTES: [char; 3] = ['"', '\'', '`'];

/// `text` as the inside of a `quote`-quoted literal: the backslash, the quote and line breaks
/// escaped the way every language we locate in reads them. `None` when a backtick literal would
/// need an escape (Go's raw strings have none).
fn encoded(text: &str, quote: char) -> Option<String> {
    if quote == '`' {
        let plain = !text.contains(['`', '\\', '\n', '\r']) && !text.contains("${");
        return plain.then(|| text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// The source line with the literal `old` replaced by `new`, when `old` is on `line` exactly
/// once as one quoted literal (or as a YAML plain scalar after `key: `). `None` otherwise: the
/// text is then split over lines, computed or ambiguous, and the caller shows a diff instead.
pub fn replaced_line(line: &str, old: &str, new: &str) -> Option<String> {
    for quote in QUOTES {
        let Some(inner) = encoded(old, quote) else {
            continue;
        };
        let literal = format!("{quote}{inner}{quote}");
        if line.matches(&literal).count() != 1 {
            continue;
        }
        let replacement = match encoded(new, quote) {
            Some(inner) => format!("{quote}{inner}{quote}"),
            // A backtick literal the new text cannot be written in: a double-quoted one.
            None => format!("\"{}\"", encoded(new, '"')?),
        };
        return Some(line.replacen(&literal, &replacement, 1));
    }
    // A YAML plain scalar: `description: text` with nothing after the text.
    let (head, value) = line.split_once(": ")?;
    if value.trim_end() == old && !old.is_empty() && !head.trim().is_empty() {
        let quoted = serde_json::to_string(new).ok()?;
        return Some(format!("{head}: {quoted}"));
    }
    None
}

/// The lines of `base` and `proposal` (pretty JSON) that differ, in order, each `- ` or `+ `
/// first: a longest common subsequence of lines, removed lines before added ones at each change.
pub fn definition_diff(base: &Value, proposal: &Value) -> Vec<String> {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let (a, b) = (pretty(base), pretty(proposal));
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    let line = |removed: bool, text: &str| format!("{} {text}", if removed { '-' } else { '+' });
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j >= b.len() || (i < a.len() && lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(line(true, a[i]));
            i += 1;
        } else {
            out.push(line(false, b[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_double_quoted_literal_is_replaced_with_escapes() {
        let line = r#"    description: "Get the weather.","#;
        assert_eq!(
            replaced_line(line, "Get the weather.", "Say \"hi\"\nthen go."),
            Some(r#"    description: "Say \"hi\"\nthen go.","#.to_string())
        );
    }

    #[test]
    fn a_single_quoted_literal_with_escaped_quotes_is_found() {
        let line = r"  'Move an event to a new time; attendees are \'notified\'.',";
        let old = "Move an event to a new time; attendees are 'notified'.";
        assert_eq!(
            replaced_line(line, old, "Move it. Don't."),
            Some(r"  'Move it. Don\'t.',".to_string())
        );
    }

    #[test]
    fn a_backtick_literal_falls_back_to_double_quotes_when_it_cannot_hold_the_text() {
        let line = "d := `Ping.`";
        assert_eq!(
            replaced_line(line, "Ping.", "Ping `host`."),
            Some(r#"d := "Ping `host`.""#.to_string())
        );
    }

    #[test]
    fn a_yaml_plain_scalar_is_replaced_by_a_quoted_one() {
        assert_eq!(
            replaced_line(
                "    description: Ping a host",
                "Ping a host",
                "Ping: a host"
            ),
            Some(r#"    description: "Ping: a host""#.to_string())
        );
    }

    #[test]
    fn text_not_on_the_line_or_twice_on_it_gives_no_replacement() {
        assert_eq!(replaced_line("description:", "Ping.", "x"), None);
        assert_eq!(replaced_line(r#"f("Ping.", "Ping.")"#, "Ping.", "x"), None);
    }

    #[test]
    fn the_diff_lists_only_changed_lines_removed_first() {
        let base = json!({"name": "a", "description": "Old."});
        let new = json!({"name": "a", "description": "New."});
        let lines = definition_diff(&base, &new);
        assert_eq!(
            lines,
            vec![
                "-   \"description\": \"Old.\"",
                "+   \"description\": \"New.\""
            ]
        );
    }
}
