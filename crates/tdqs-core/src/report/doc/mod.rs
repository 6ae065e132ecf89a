//! The document model every page is built as: neutral data (headings, paragraphs, tables,
//! lists, folded details, code and diff blocks, charts, inline spans), printed by one backend
//! per markup ([`markdown`], [`html`], [`text`](mod@text)).
//!
//! Why: the pages (the Markdown summary, the HTML page, the calibration page, the text reports)
//! say the same things about the same report. Built as data once, a fact is worded in one place
//! and each markup's rules — above all its escaping — live in one small backend, so a tool name
//! from a pull request is escaped by the backend that prints it and nowhere else. A page builder
//! never writes markup and a backend never looks at a report.
//!
//! Text comes in two kinds: [`Inline::Text`] is anything that may hold text from outside (tool
//! names, descriptions, justifications, errors) and every backend escapes it for its markup;
//! [`Inline::Words`] are the gate's own fixed words and figures, printed as they are. Names
//! shown as names are [`Inline::Code`], escaped for a code span. Attributes ([`Attrs`]) are the
//! HTML page's hooks (classes, `data-` values) and mean nothing to the other markups.

pub mod chart;
mod escape;
pub mod html;
pub mod markdown;
mod svg;
pub mod text;

#[cfg(test)]
mod tests;

use std::borrow::Cow;

/// A run of text inside a block.
#[derive(Debug, Clone, PartialEq)]
pub enum Inline {
    /// Text that may come from outside the gate: escaped by every backend.
    Text(String),
    /// The gate's own words and figures (never text from outside): printed as they are.
    Words(Cow<'static, str>),
    /// A name or a literal value, shown as code.
    Code(String),
    Strong(Vec<Inline>),
    Emphasis(Vec<Inline>),
    /// A link; its address is escaped like text.
    Link {
        text: Vec<Inline>,
        href: String,
    },
    /// Content with an HTML class (a verdict badge, a note); the other markups show the content.
    Span {
        class: Cow<'static, str>,
        content: Vec<Inline>,
    },
    /// A line break inside a paragraph.
    Break,
}

/// Text from outside (escaped by every backend).
pub fn text(s: impl Into<String>) -> Inline {
    Inline::Text(s.into())
}

/// The gate's own words or figures.
pub fn words(s: impl Into<Cow<'static, str>>) -> Inline {
    Inline::Words(s.into())
}

/// A name or literal value as code.
pub fn code(s: impl Into<String>) -> Inline {
    Inline::Code(s.into())
}

pub fn strong(content: Vec<Inline>) -> Inline {
    Inline::Strong(content)
}

pub fn span(class: impl Into<Cow<'static, str>>, content: Vec<Inline>) -> Inline {
    Inline::Span {
        class: class.into(),
        content,
    }
}

/// The gate's own sentence `template` with each `{}` filled by the next of `args`, in order:
/// `fill("Scored by {} through {}.", [code(model), text(mode)])`.
pub fn fill<const N: usize>(template: &'static str, args: [Inline; N]) -> Vec<Inline> {
    let mut out = Vec::with_capacity(2 * N + 1);
    let mut args = args.into_iter();
    for (i, part) in template.split("{}").enumerate() {
        if i > 0 {
            out.extend(args.next());
        }
        if !part.is_empty() {
            out.push(words(part));
        }
    }
    out
}

/// `items` joined by `sep` (the gate's own separator, such as ", ").
pub fn joined(items: impl IntoIterator<Item = Vec<Inline>>, sep: &'static str) -> Vec<Inline> {
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(words(sep));
        }
        out.extend(item);
    }
    out
}

/// Text with names marked by backtick pairs, as the gate records its reasons in the JSON report
/// ("tools that fell: `close_issue` 4.0 → 1.8"), as spans: each marked name a [`Inline::Code`],
/// the rest [`Inline::Text`]. The marks are cut here, once, when a page is built; no backend
/// sees them. With an odd number of backticks (a name that holds one) nothing is taken for a
/// name and the whole is text.
pub fn marked(s: &str) -> Vec<Inline> {
    if s.matches('`').count() % 2 != 0 {
        return vec![text(s)];
    }
    s.split('`')
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { code(part) } else { text(part) })
        .collect()
}

/// `blocks` as `block` prints each, one blank line between each two, the empty ones left out
/// (the Markdown and plain-text backends).
fn blank_line_apart(blocks: &[Block], block: impl Fn(&Block) -> String) -> String {
    let parts: Vec<String> = blocks.iter().map(block).filter(|b| !b.is_empty()).collect();
    parts.join("\n")
}

/// List items one a line, indented two spaces a level from `depth`, each after `mark`
/// (the Markdown and plain-text backends).
fn indented(
    items: &[ListItem],
    depth: usize,
    mark: &str,
    inlines: &dyn Fn(&[Inline]) -> String,
) -> String {
    let mut out = String::new();
    for item in items {
        out.push_str(&format!(
            "{}{mark}{}\n",
            "  ".repeat(depth),
            inlines(&item.content)
        ));
        out.push_str(&indented(&item.children, depth + 1, mark, inlines));
    }
    out
}

/// `content` as `inline` appends each run (every backend).
fn concat(content: &[Inline], inline: impl Fn(&mut String, &Inline)) -> String {
    let mut out = String::new();
    for i in content {
        inline(&mut out, i);
    }
    out
}

/// The HTML page's hooks on an element: a class and `data-` attributes, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attrs {
    pub class: Option<Cow<'static, str>>,
    /// `(name without "data-", value)`; the value is escaped.
    pub data: Vec<(&'static str, String)>,
}

impl Attrs {
    pub fn class(class: impl Into<Cow<'static, str>>) -> Attrs {
        Attrs {
            class: Some(class.into()),
            data: Vec::new(),
        }
    }

    pub fn none() -> Attrs {
        Attrs::default()
    }

    pub fn data(mut self, name: &'static str, value: impl ToString) -> Attrs {
        self.data.push((name, value.to_string()));
        self
    }
}

/// A block of a page.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading {
        level: u8,
        content: Vec<Inline>,
    },
    Paragraph {
        attrs: Attrs,
        content: Vec<Inline>,
    },
    /// A quoted note (the advice of an error).
    Quote(Vec<Inline>),
    List {
        attrs: Attrs,
        items: Vec<ListItem>,
    },
    Table(Table),
    /// Folded content with a one-line summary.
    Details {
        attrs: Attrs,
        summary: Vec<Inline>,
        blocks: Vec<Block>,
    },
    /// Preformatted text, shown verbatim.
    CodeBlock(String),
    /// Lines removed and added, each `- ` or `+ ` first.
    Diff(Vec<DiffLine>),
    /// The replacement of one source line, which GitHub applies with one click when the block
    /// sits in a review comment on that line (a ```` ```suggestion ```` fence in Markdown).
    Suggestion(String),
    /// A drawing of the scores; only the HTML page draws it.
    Chart(chart::Chart),
    /// Blocks that belong together (an HTML `section` or `div`).
    Group {
        kind: GroupKind,
        attrs: Attrs,
        blocks: Vec<Block>,
    },
    /// The page's closing line (small print).
    Footer(Vec<Inline>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    Section,
    Div,
}

pub fn heading(level: u8, content: Vec<Inline>) -> Block {
    Block::Heading { level, content }
}

pub fn paragraph(content: Vec<Inline>) -> Block {
    Block::Paragraph {
        attrs: Attrs::none(),
        content,
    }
}

pub fn paragraph_with(attrs: Attrs, content: Vec<Inline>) -> Block {
    Block::Paragraph { attrs, content }
}

pub fn list(items: impl IntoIterator<Item = Vec<Inline>>) -> Block {
    Block::List {
        attrs: Attrs::none(),
        items: items.into_iter().map(ListItem::new).collect(),
    }
}

/// One item of a list, with the items nested under it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListItem {
    pub content: Vec<Inline>,
    pub children: Vec<ListItem>,
}

impl ListItem {
    pub fn new(content: Vec<Inline>) -> ListItem {
        ListItem {
            content,
            children: Vec::new(),
        }
    }
}

/// A removed (`del`) or added line of a [`Block::Diff`].
#[derive(Debug, Clone, PartialEq)]
pub struct DiffLine {
    pub removed: bool,
    /// The line, its `- ` or `+ ` included.
    pub line: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
    Center,
}

/// How a cell is coloured where the markup can: the verdict it shows (pass, block, invalid).
pub type Tone = crate::exit::Verdict;

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub head: Vec<Inline>,
    pub align: Align,
    /// The plain-text backend pads the column to at least this many characters.
    pub width: usize,
}

pub fn column(head: &'static str, align: Align) -> Column {
    Column {
        head: vec![words(head)],
        align,
        width: 0,
    }
}

impl Column {
    /// The plain-text backend pads the column to `width` characters (longer cells overflow).
    pub fn width(mut self, width: usize) -> Column {
        self.width = width;
        self
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub content: Vec<Inline>,
    pub tone: Option<Tone>,
    /// How many columns the cell spans (1 for most).
    pub span: usize,
}

impl Cell {
    pub fn new(content: Vec<Inline>) -> Cell {
        Cell {
            content,
            tone: None,
            span: 1,
        }
    }
}

impl From<Vec<Inline>> for Cell {
    fn from(content: Vec<Inline>) -> Cell {
        Cell::new(content)
    }
}

/// A row; it may leave its last cells out (Markdown writes them as empty columns).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub attrs: Attrs,
    pub cells: Vec<Cell>,
}

pub fn row(cells: impl IntoIterator<Item = Vec<Inline>>) -> Row {
    Row {
        attrs: Attrs::none(),
        cells: cells.into_iter().map(Cell::new).collect(),
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub attrs: Attrs,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// HTML: head and body in `thead` and `tbody` (every table but the overview of servers).
    pub grouped: bool,
    /// Whether the column heads are printed; only plain text leaves them out (label columns).
    pub head: bool,
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            attrs: Attrs::none(),
            columns,
            rows: Vec::new(),
            grouped: true,
            head: true,
        }
    }

    pub fn with_attrs(mut self, attrs: Attrs) -> Table {
        self.attrs = attrs;
        self
    }
}
