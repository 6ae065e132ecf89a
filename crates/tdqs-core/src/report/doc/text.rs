//! The plain-text backend: pages read in a terminal (`tdqs-gate score`, `tdqs-gate eval`).
//! Blocks are separated by one blank line, tables are aligned columns two spaces apart, and
//! text from outside has its control characters (line breaks, terminal escapes) replaced by
//! spaces, so a tool name cannot break a line or repaint the terminal. Charts are left out.

use super::{Align, Block, Inline, Table};

/// The page: its blocks, one blank line between each two.
pub fn render(blocks: &[Block]) -> String {
    super::blank_line_apart(blocks, block)
}

/// Text from outside on one line: every control character becomes a space.
pub fn escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// Inline content as plain text: marks (code, strong) are dropped, links show their address.
pub fn inlines(content: &[Inline]) -> String {
    let mut out = String::new();
    for i in content {
        match i {
            Inline::Text(s) | Inline::Code(s) => out.push_str(&escape(s)),
            Inline::Words(s) => out.push_str(s),
            Inline::Strong(c) | Inline::Emphasis(c) | Inline::Span { content: c, .. } => {
                out.push_str(&inlines(c))
            }
            Inline::Link { text, href } => {
                out.push_str(&inlines(text));
                out.push_str(" <");
                out.push_str(&escape(href));
                out.push('>');
            }
            Inline::Break => out.push('\n'),
        }
    }
    out
}

fn block(b: &Block) -> String {
    match b {
        Block::Heading { content, .. }
        | Block::Paragraph { content, .. }
        | Block::Footer(content) => format!("{}\n", inlines(content)),
        Block::Quote(content) => format!("> {}\n", inlines(content)),
        Block::List { items, .. } => super::indented(items, 1, "", &inlines),
        Block::Table(t) => table(t),
        Block::Details {
            summary, blocks, ..
        } => format!("{}\n\n{}", inlines(summary), render(blocks)),
        Block::CodeBlock(text) | Block::Suggestion(text) => format!("{text}\n"),
        Block::Diff(lines) => lines
            .iter()
            .map(|l| format!("{}\n", escape(&l.line)))
            .collect(),
        Block::Chart(_) => String::new(),
        Block::Group { blocks, .. } => render(blocks),
    }
}

/// `s` padded to `width` characters as `align` says; a longer `s` is left as it is.
fn pad(s: &str, width: usize, align: Align) -> String {
    let room = width.saturating_sub(s.chars().count());
    match align {
        Align::Left => format!("{s}{}", " ".repeat(room)),
        Align::Right => format!("{}{s}", " ".repeat(room)),
        // As `{:^w}` does: the odd space goes to the right.
        Align::Center => format!("{}{s}{}", " ".repeat(room / 2), " ".repeat(room - room / 2)),
    }
}

/// Aligned columns two spaces apart; a column with a width is padded to it, any other to its
/// longest cell; the last column is not padded.
fn table(t: &Table) -> String {
    let mut lines: Vec<Vec<String>> = Vec::new();
    if t.head {
        lines.push(t.columns.iter().map(|c| inlines(&c.head)).collect());
    }
    for r in &t.rows {
        lines.push(r.cells.iter().map(|c| inlines(&c.content)).collect());
    }
    let widths: Vec<usize> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if c.width > 0 {
                c.width
            } else {
                lines
                    .iter()
                    .filter_map(|l| l.get(i))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            }
        })
        .collect();
    let mut out = String::new();
    for line in lines {
        let last = line.len().saturating_sub(1);
        let cells: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if i == last {
                    s.clone()
                } else {
                    pad(s, widths[i], t.columns[i].align)
                }
            })
            .collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    out
}
