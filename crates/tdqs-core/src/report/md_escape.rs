//! Escaping text from outside the gate (tool names, judge justifications, server output, error
//! texts) for Markdown read on GitHub: the job summary and the pull-request comment.
//!
//! Nothing from outside may become a link, an image, HTML, a mention, a heading or a table
//! column, nor leave the code span it is shown in.

/// A zero-width space: breaks what GitHub would otherwise turn into a link or a mention, without
/// changing what a reader sees.
const BREAK: char = '\u{200B}';

/// Prose: every character with a Markdown or HTML meaning is backslash-escaped, line breaks
/// become spaces, and bare addresses (`https://`, `www.`) and `@mentions` are broken up so
/// GitHub does not link them.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            // An underscore inside a word never starts emphasis on GitHub: left as it is.
            '_' if i > 0
                && chars[i - 1].is_alphanumeric()
                && chars.get(i + 1).is_some_and(|c| c.is_alphanumeric()) =>
            {
                out.push('_')
            }
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '!' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\u{2028}' | '\u{2029}' => out.push(' '),
            c if c.is_control() => out.push(' '),
            ':' if chars.get(i + 1) == Some(&'/') => {
                out.push(':');
                out.push(BREAK);
            }
            '.' if i >= 3
                && chars[i - 3..i]
                    .iter()
                    .collect::<String>()
                    .eq_ignore_ascii_case("www") =>
            {
                out.push(BREAK);
                out.push('.');
            }
            '@' => {
                out.push('@');
                out.push(BREAK);
            }
            c => out.push(c),
        }
    }
    out
}

/// A code span holding `s` verbatim: the fence is longer than any run of backticks inside, line
/// breaks become spaces, and `|` is escaped (GitHub splits table cells on it even in a span).
pub fn code(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect();
    let flat = flat.replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in flat.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick (or is blank) needs a space inside the fence;
    // one space on each side is stripped when shown.
    if flat.starts_with('`') || flat.ends_with('`') || flat.trim().is_empty() || longest > 0 {
        format!("{fence} {flat} {fence}")
    } else {
        format!("{fence}{flat}{fence}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_cannot_link_embed_or_break_out() {
        let t = text(
            "[x](https://evil.example) ![i](http://e/i.png) <img src=x> | a\nb @team www.e.com",
        );
        assert!(!t.contains("](") || t.contains("\\]("), "{t}");
        assert!(t.contains("\\[x\\]"));
        assert!(t.contains("\\<img"));
        assert!(t.contains("\\|"));
        assert!(!t.contains('\n'));
        assert!(!t.contains("https://"));
        assert!(!t.contains("www."));
        assert!(!t.contains("@team"));
    }

    #[test]
    fn a_code_span_holds_backticks() {
        assert_eq!(code("get_issue"), "`get_issue`");
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("a|b"), "`a\\|b`");
    }
}
