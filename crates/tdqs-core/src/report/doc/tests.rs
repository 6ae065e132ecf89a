//! The document model and each backend's escaping, with hostile tool names: backticks, pipes,
//! markup, line breaks and terminal escapes.

use super::*;

const HOSTILE: &str = "a`b|c\n<script>alert(1)</script>\u{1b}[31m@team [x](https://e.example)";

fn table_of(name: &str) -> Block {
    let mut t = Table::new(vec![
        column("Tool", Align::Left),
        column("TDQS", Align::Right),
    ]);
    t.rows.push(row([vec![code(name)], vec![words("3.0")]]));
    t.rows.push(row([vec![text(name)], vec![words("2.0")]]));
    Block::Table(t)
}

#[test]
fn a_marked_reason_becomes_names_and_text_once() {
    assert_eq!(
        marked("tools that fell: `close_issue` 4.0 → 1.8"),
        vec![
            text("tools that fell: "),
            code("close_issue"),
            text(" 4.0 → 1.8")
        ]
    );
    // An odd number of backticks (a name holding one): nothing is taken for a name.
    assert_eq!(marked("one ` alone"), vec![text("one ` alone")]);
    assert_eq!(marked(""), vec![text("")]);
}

#[test]
fn joined_puts_the_separator_between_items_only() {
    let items = joined([vec![code("a")], vec![code("b")]], ", ");
    assert_eq!(items, vec![code("a"), words(", "), code("b")]);
    assert!(joined(Vec::<Vec<Inline>>::new(), ", ").is_empty());
}

#[test]
fn markdown_reasons_show_names_as_code_and_nothing_breaks_out() {
    let md = |s: &str| markdown::inlines(&[strong(marked(s))]);
    assert_eq!(
        md("tools that fell: `close_issue` 4.0 → 1.8 (*)"),
        "**tools that fell: `close_issue` 4.0 → 1.8 (\\*)**"
    );
    assert_eq!(
        md("fell: `b|[x](http://e)` and `c`"),
        "**fell: `b\\|[x](http://e)` and `c`**"
    );
    assert_eq!(md("one ` alone"), "**one \\` alone**");
}

#[test]
fn markdown_keeps_a_hostile_name_in_its_span_and_its_row() {
    let page = markdown::render(&[table_of(HOSTILE)]);
    let lines: Vec<&str> = page.lines().collect();
    assert_eq!(lines.len(), 4, "one line a row: {page}");
    for line in &lines[2..] {
        // Every column bar the name holds is escaped: the row keeps its two columns.
        let bars = line.matches('|').count() - line.matches("\\|").count();
        assert_eq!(bars, 3, "{line}");
        assert!(!line.contains("<script>") || line.contains('`'), "{line}");
    }
    // As code: a fence longer than the name's backticks; as text: every mark escaped.
    assert!(
        lines[2].starts_with("| `` a`b\\|c <script>"),
        "{}",
        lines[2]
    );
    assert!(lines[3].contains("a\\`b\\|c \\<script\\>"), "{}", lines[3]);
    assert!(!lines[3].contains("https://") && !lines[3].contains("@team"));
    assert!(!page.contains('\u{1b}'));
}

#[test]
fn markdown_blocks_are_one_blank_line_apart() {
    let page = markdown::render(&[
        heading(2, vec![words("Title")]),
        paragraph(vec![words("a"), Inline::Break, words("b")]),
        Block::Chart(chart::Chart {
            kind: chart::ChartKind::Bars,
            rows: Vec::new(),
        }),
        Block::List {
            attrs: Attrs::none(),
            items: vec![ListItem {
                content: vec![code("x")],
                children: vec![ListItem::new(vec![text("*y*")])],
            }],
        },
        Block::Details {
            attrs: Attrs::class("ignored"),
            summary: vec![words("More")],
            blocks: vec![paragraph(vec![words("inside")])],
        },
        Block::Footer(vec![words("small")]),
    ]);
    assert_eq!(
        page,
        "## Title\n\na\nb\n\n- `x`\n  - \\*y\\*\n\n<details><summary>More</summary>\n\ninside\n\n\
         </details>\n\n<sub>small</sub>\n"
    );
}

#[test]
fn markdown_rows_may_leave_their_last_cells_out() {
    let mut t = Table::new(vec![
        column("A", Align::Left),
        column("B", Align::Right),
        column("C", Align::Center),
    ]);
    t.rows.push(row([vec![words("x")]]));
    assert_eq!(
        markdown::render(&[Block::Table(t)]),
        "| A | B | C |\n|---|---:|:---:|\n| x | | |\n"
    );
}

#[test]
fn markdown_links_and_fences_cannot_be_closed_from_inside() {
    let link = Inline::Link {
        text: vec![text("[see]")],
        href: "https://e.example/a b)(<x>".into(),
    };
    assert_eq!(
        markdown::inlines(&[link]),
        "[\\[see\\]](https://e.example/a%20b%29%28%3Cx%3E)"
    );
    let page = markdown::render(&[Block::CodeBlock("```\nrun".into())]);
    assert_eq!(page, "````\n```\nrun\n````\n");
}

#[test]
fn html_escapes_markup_quotes_and_controls() {
    assert_eq!(
        html::escape("<script>a&b</style>\"'\u{1}"),
        "&lt;script&gt;a&amp;b&lt;/style&gt;&quot;&#39;\u{fffd}"
    );
    assert_eq!(
        html::inlines(&marked("tools `a` and `b&` <i>")),
        "tools <code>a</code> and <code>b&amp;</code> &lt;i&gt;"
    );
    assert_eq!(html::inlines(&marked("one ` alone")), "one ` alone");
}

#[test]
fn html_keeps_a_hostile_name_out_of_the_markup_and_its_attributes() {
    let page = html::render(&[
        Block::Group {
            kind: GroupKind::Div,
            attrs: Attrs::class("tool").data("tool", HOSTILE),
            blocks: vec![table_of(HOSTILE)],
        },
        Block::Diff(vec![DiffLine {
            removed: true,
            line: format!("- {HOSTILE}"),
        }]),
    ]);
    assert!(!page.contains("<script"), "{page}");
    assert!(!page.contains('\u{1b}'), "{page}");
    assert!(page.contains("data-tool=\"a`b|c\n&lt;script&gt;"), "{page}");
    assert!(page.contains("<td><code>a`b|c\n&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("<span class=\"del\">- a`b|c"));
}

#[test]
fn html_tables_carry_alignment_tone_span_and_grouping() {
    let mut t = Table::new(vec![
        column("Pair", Align::Left),
        column("Mean", Align::Right),
    ])
    .with_attrs(Attrs::class("pairs"));
    t.rows.push(Row {
        attrs: Attrs::class("decided"),
        cells: vec![
            Cell {
                tone: Some(Tone::Block),
                ..Cell::new(vec![words("BLOCK")])
            },
            Cell::new(vec![words("3.0")]),
        ],
    });
    t.rows.push(Row {
        attrs: Attrs::none(),
        cells: vec![Cell {
            span: 2,
            ..Cell::new(vec![words("all")])
        }],
    });
    assert_eq!(
        html::render(&[Block::Table(t.clone())]),
        "<table class=\"pairs\">\n<thead><tr><th>Pair</th><th class=\"num\">Mean</th></tr>\
         </thead>\n<tbody>\n<tr class=\"decided\"><td class=\"decision\" data-verdict=\"block\">\
         BLOCK</td><td class=\"num\">3.0</td></tr>\n<tr><td colspan=\"2\">all</td></tr>\n\
         </tbody>\n</table>\n"
    );
    t.grouped = false;
    t.rows.truncate(0);
    assert_eq!(
        html::render(&[Block::Table(t)]),
        "<table class=\"pairs\">\n<tr><th>Pair</th><th class=\"num\">Mean</th></tr>\n</table>\n"
    );
}

#[test]
fn text_puts_a_hostile_name_on_one_line_without_escapes() {
    let page = text::render(&[table_of(HOSTILE)]);
    assert_eq!(page.lines().count(), 3, "{page}");
    assert!(!page.contains('\u{1b}'));
    // No markup in plain text: the name is shown as it is, its line breaks as spaces.
    assert!(page.contains("a`b|c <script>alert(1)</script> [31m@team"));
}

#[test]
fn text_tables_pad_to_fit_or_to_a_fixed_width() {
    let mut t = Table::new(vec![
        column("tool", Align::Left),
        column("TDQS", Align::Right).width(4),
        column("tier", Align::Center).width(4),
        column("note", Align::Left),
    ]);
    t.rows.push(row([
        vec![text("get_issue")],
        vec![words("3.5")],
        vec![words("B")],
        vec![],
    ]));
    t.rows.push(row([
        vec![text("x")],
        vec![words("12345")],
        vec![words("A")],
        vec![words("long")],
    ]));
    assert_eq!(
        text::render(&[Block::Table(t)]),
        "tool       TDQS  tier  note\nget_issue   3.5   B    \nx          12345   A    long\n"
    );
}
