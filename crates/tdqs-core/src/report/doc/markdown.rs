//! The Markdown backend: a page for GitHub (the job summary, the pull-request comment, the
//! calibration page). Text is escaped by [`crate::report::md_escape`]: nothing from outside
//! becomes a link, an image, HTML, a mention, a heading or a table column, nor leaves its code
//! span. Blocks are separated by one blank line; charts are left to the HTML page.

use super::{Align, Block, Inline, Table};
use crate::report::md_escape;

/// The page: its blocks, one blank line between each two.
pub fn render(blocks: &[Block]) -> String {
    super::blank_line_apart(blocks, block)
}

/// Inline content as Markdown.
pub fn inlines(content: &[Inline]) -> String {
    super::concat(content, inline)
}

fn inline(out: &mut String, i: &Inline) {
    match i {
        Inline::Text(s) => out.push_str(&md_escape::text(s)),
        Inline::Words(s) => out.push_str(s),
        Inline::Code(s) => out.push_str(&md_escape::code(s)),
        Inline::Strong(c) => {
            out.push_str("**");
            out.push_str(&inlines(c));
            out.push_str("**");
        }
        Inline::Emphasis(c) => {
            out.push('_');
            out.push_str(&inlines(c));
            out.push('_');
        }
        Inline::Link { text, href } => {
            out.push('[');
            out.push_str(&inlines(text));
            out.push_str("](");
            out.push_str(&link_target(href));
            out.push(')');
        }
        Inline::Span { content, .. } => out.push_str(&inlines(content)),
        Inline::Break => out.push('\n'),
    }
}

/// An address that cannot close the link or start another: spaces, brackets, angle brackets,
/// quotes and control characters percent-encoded.
fn link_target(href: &str) -> String {
    let mut out = String::with_capacity(href.len());
    for c in href.chars() {
        match c {
            ' ' | '(' | ')' | '<' | '>' | '[' | ']' | '"' | '\'' | '`' | '\\' => {
                out.push_str(&format!("%{:02X}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("%{:02X}", c as u32 & 0xff)),
            c => out.push(c),
        }
    }
    out
}

fn block(b: &Block) -> String {
    match b {
        Block::Heading { level, content } => {
            format!("{} {}\n", "#".repeat(usize::from(*level)), inlines(content))
        }
        Block::Paragraph { content, .. } => format!("{}\n", inlines(content)),
        Block::Quote(content) => format!("> {}\n", inlines(content)),
        Block::List { items, .. } => super::indented(items, 0, "- ", &inlines),
        Block::Table(t) => table(t),
        Block::Details {
            summary, blocks, ..
        } => format!(
            "<details><summary>{}</summary>\n\n{}\n</details>\n",
            inlines(summary),
            render(blocks)
        ),
        Block::CodeBlock(text) => fenced("", text),
        Block::Suggestion(text) => fenced("suggestion", text),
        Block::Diff(lines) => {
            let text: Vec<&str> = lines.iter().map(|l| l.line.as_str()).collect();
            fenced("diff", &text.join("\n"))
        }
        Block::Chart(_) => String::new(),
        Block::Group { blocks, .. } => render(blocks),
        Block::Footer(content) => format!("<sub>{}</sub>\n", inlines(content)),
    }
}

/// A fenced block whose fence is longer than any run of backticks inside.
fn fenced(info: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{info}\n{text}\n{fence}\n")
}

fn table(t: &Table) -> String {
    let mut out = String::from("|");
    for c in &t.columns {
        out.push(' ');
        out.push_str(&inlines(&c.head));
        out.push_str(" |");
    }
    out.push_str("\n|");
    for c in &t.columns {
        out.push_str(match c.align {
            Align::Left => "---|",
            Align::Right => "---:|",
            Align::Center => ":---:|",
        });
    }
    out.push('\n');
    for r in &t.rows {
        out.push('|');
        for c in &r.cells {
            out.push(' ');
            out.push_str(&inlines(&c.content));
            out.push_str(" |");
        }
        // Cells a row leaves out are empty columns.
        for _ in r.cells.len()..t.columns.len() {
            out.push_str(" |");
        }
        out.push('\n');
    }
    out
}
