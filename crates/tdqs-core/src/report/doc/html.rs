//! The HTML backend: blocks as elements of a self-contained page. Every text and attribute
//! value is escaped by [`escape`]; the gate's own words are written as they are. The page around
//! the blocks (head, style, security policy) is the report's business (`report::html`).

use super::{Align, Attrs, Block, GroupKind, Inline, ListItem, Table};

pub use super::escape::escape;

/// The blocks, each element on its own line.
pub fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        block(&mut out, b);
    }
    out
}

/// Inline content as HTML.
pub fn inlines(content: &[Inline]) -> String {
    super::concat(content, inline)
}

fn inline(out: &mut String, i: &Inline) {
    match i {
        Inline::Text(s) => out.push_str(&escape(s)),
        Inline::Words(s) => out.push_str(s),
        Inline::Code(s) => {
            out.push_str("<code>");
            out.push_str(&escape(s));
            out.push_str("</code>");
        }
        Inline::Strong(c) => wrap(out, "b", c),
        Inline::Emphasis(c) => wrap(out, "em", c),
        Inline::Link { text, href } => {
            out.push_str(&format!("<a href=\"{}\">", escape(href)));
            out.push_str(&inlines(text));
            out.push_str("</a>");
        }
        Inline::Span { class, content } => {
            out.push_str(&format!("<span class=\"{}\">", escape(class)));
            out.push_str(&inlines(content));
            out.push_str("</span>");
        }
        Inline::Break => out.push_str("<br>\n"),
    }
}

fn wrap(out: &mut String, tag: &str, content: &[Inline]) {
    out.push_str(&format!("<{tag}>{}</{tag}>", inlines(content)));
}

/// ` class="…" data-…="…"`, escaped.
fn attrs(a: &Attrs) -> String {
    let mut out = String::new();
    if let Some(class) = &a.class {
        out.push_str(&format!(" class=\"{}\"", escape(class)));
    }
    for (name, value) in &a.data {
        out.push_str(&format!(" data-{name}=\"{}\"", escape(value)));
    }
    out
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Heading { level, content } => {
            out.push_str(&format!("<h{level}>{}</h{level}>\n", inlines(content)))
        }
        Block::Paragraph { attrs: a, content } => {
            out.push_str(&format!("<p{}>{}</p>\n", attrs(a), inlines(content)))
        }
        Block::Quote(content) => {
            out.push_str(&format!("<blockquote>{}</blockquote>\n", inlines(content)))
        }
        Block::List { attrs: a, items } => list(out, a, items),
        Block::Table(t) => table(out, t),
        Block::Details {
            attrs: a,
            summary,
            blocks,
        } => {
            out.push_str(&format!(
                "<details{}><summary>{}</summary>\n",
                attrs(a),
                inlines(summary)
            ));
            out.push_str(&render(blocks));
            out.push_str("</details>\n");
        }
        Block::CodeBlock(text) | Block::Suggestion(text) => {
            out.push_str(&format!("<pre><code>{}</code></pre>\n", escape(text)))
        }
        Block::Diff(lines) => {
            out.push_str("<div class=\"diff\" aria-label=\"description diff\">");
            for l in lines {
                let class = if l.removed { "del" } else { "ins" };
                out.push_str(&format!(
                    "<span class=\"{class}\">{}</span>",
                    escape(&l.line)
                ));
            }
            out.push_str("</div>\n");
        }
        Block::Chart(chart) => super::svg::draw(out, chart),
        Block::Group {
            kind,
            attrs: a,
            blocks,
        } => {
            let tag = match kind {
                GroupKind::Section => "section",
                GroupKind::Div => "div",
            };
            out.push_str(&format!("<{tag}{}>\n", attrs(a)));
            out.push_str(&render(blocks));
            out.push_str(&format!("</{tag}>\n"));
        }
        Block::Footer(content) => out.push_str(&format!("<footer>{}</footer>\n", inlines(content))),
    }
}

fn list(out: &mut String, a: &Attrs, items: &[ListItem]) {
    out.push_str(&format!("<ul{}>\n", attrs(a)));
    for item in items {
        out.push_str("<li>");
        out.push_str(&inlines(&item.content));
        if !item.children.is_empty() {
            out.push('\n');
            list(out, &Attrs::none(), &item.children);
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n");
}

fn table(out: &mut String, t: &Table) {
    out.push_str(&format!("<table{}>\n", attrs(&t.attrs)));
    // Numbers are right-aligned by the page's style; centring has no class of its own.
    let num = |align: Align| match align {
        Align::Right => " class=\"num\"",
        Align::Left | Align::Center => "",
    };
    if t.grouped {
        out.push_str("<thead>");
    }
    out.push_str("<tr>");
    for c in &t.columns {
        out.push_str(&format!("<th{}>{}</th>", num(c.align), inlines(&c.head)));
    }
    out.push_str("</tr>");
    out.push_str(if t.grouped {
        "</thead>\n<tbody>\n"
    } else {
        "\n"
    });
    for r in &t.rows {
        out.push_str(&format!("<tr{}>", attrs(&r.attrs)));
        for (c, column) in r.cells.iter().zip(&t.columns) {
            let mut classes = Vec::new();
            if column.align == Align::Right {
                classes.push("num");
            }
            if c.tone.is_some() {
                classes.push("decision");
            }
            let mut open = String::from("<td");
            if !classes.is_empty() {
                open.push_str(&format!(" class=\"{}\"", classes.join(" ")));
            }
            if let Some(tone) = c.tone {
                open.push_str(&format!(" data-verdict=\"{}\"", tone.as_str()));
            }
            if c.span > 1 {
                open.push_str(&format!(" colspan=\"{}\"", c.span));
            }
            out.push_str(&format!("{open}>{}</td>", inlines(&c.content)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str(if t.grouped {
        "</tbody>\n</table>\n"
    } else {
        "</table>\n"
    });
}
