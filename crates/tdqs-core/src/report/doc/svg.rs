//! The HTML backend's drawing of a [`Chart`]: inline SVG with presentation attributes and
//! classes the page's style colours, every name escaped. Long names are shortened in the
//! labels; the full name is each row's tooltip.

use std::fmt::Write as _;

use super::chart::{Chart, ChartKind, ChartRow};
use super::escape::escape;
use crate::rubric::ToolDimension;

/// Tool names longer than this are shortened in the charts (the full name is the tooltip).
const LABEL_CHARS: usize = 32;
const LABEL_W: u32 = 230;

pub(super) fn draw(out: &mut String, chart: &Chart) {
    match chart.kind {
        ChartKind::Bars => bars(out, &chart.rows),
        ChartKind::HeatMap => heat_map(out, &chart.rows),
    }
}

fn label(name: &str) -> String {
    if name.chars().count() <= LABEL_CHARS {
        return name.to_string();
    }
    let mut s: String = name.chars().take(LABEL_CHARS - 1).collect();
    s.push('…');
    s
}

/// Base against head TDQS per tool, as horizontal bars on a 0–5 axis.
fn bars(out: &mut String, drawn: &[ChartRow]) {
    // With the labels, as wide as a server's section on the page (about 1,000 pixels): the
    // bars used to fill less than half of it.
    const BAR_W: f64 = 720.0;
    const ROW_H: u32 = 34;
    const TOP: u32 = 24;
    let rows = drawn.len() as u32;
    let height = TOP + rows * ROW_H + 24;
    let width = LABEL_W + BAR_W as u32 + 60;
    let _ = writeln!(
        out,
        "<svg class=\"chart bars\" role=\"img\" aria-label=\"TDQS per tool, base against head\" \
         xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" data-tools=\"{rows}\">"
    );
    // Legend and axis.
    let _ = writeln!(
        out,
        "<rect class=\"legend-base\" x=\"{LABEL_W}\" y=\"4\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"14\">base</text>\
         <rect class=\"legend-head\" x=\"{}\" y=\"4\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"14\">head</text>\
         <rect class=\"legend-fell\" x=\"{}\" y=\"4\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"14\">head, fell</text>",
        LABEL_W + 16,
        LABEL_W + 60,
        LABEL_W + 76,
        LABEL_W + 120,
        LABEL_W + 136
    );
    for tick in 0..=5u32 {
        let x = LABEL_W as f64 + BAR_W * f64::from(tick) / 5.0;
        let _ = writeln!(
            out,
            "<line class=\"axis\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{}\"/>\
             <text class=\"small\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{tick}</text>",
            TOP + rows * ROW_H,
            TOP + rows * ROW_H + 14
        );
    }
    for (i, row) in drawn.iter().enumerate() {
        let y = TOP + i as u32 * ROW_H;
        let esc = escape(&row.name);
        let _ = writeln!(
            out,
            "<g class=\"tool-bars\" data-tool=\"{esc}\"><title>{esc}</title>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LABEL_W - 8,
            y + ROW_H / 2 + 4,
            escape(&label(&row.name))
        );
        let sides = [
            ("base", row.base.as_ref(), y + 4),
            ("head", row.head.as_ref(), y + 4 + 13),
        ];
        for (side, tool, bar_y) in sides {
            let Some(tool) = tool else {
                let _ = writeln!(
                    out,
                    "<text class=\"small\" x=\"{}\" y=\"{}\">no {side} tool</text>",
                    LABEL_W + 2,
                    bar_y + 10
                );
                continue;
            };
            let w = BAR_W * tool.tdqs.0.clamp(0, 50) as f64 / 50.0;
            let fell = if side == "head" && row.fell {
                " fell"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "<rect class=\"bar bar-{side}{fell}\" x=\"{LABEL_W}\" y=\"{bar_y}\" \
                 width=\"{w:.1}\" height=\"11\"><title>{side} {}: {} ({})</title></rect>\
                 <text class=\"small\" x=\"{:.1}\" y=\"{}\">{}</text>",
                esc,
                tool.tdqs,
                tool.tier,
                LABEL_W as f64 + w + 4.0,
                bar_y + 10,
                tool.tdqs
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
}

/// A dimension's label on two lines (`behavioral` / `transparency`).
fn split_label(label: &str) -> (&str, &str) {
    match label.split_once(' ') {
        Some((a, b)) => (a, b),
        None => (label, ""),
    }
}

/// The six dimensions per tool: the head's score (the base's where the head lacks the tool),
/// coloured by score, with `base→head` where they differ and a red border where it fell.
fn heat_map(out: &mut String, drawn: &[ChartRow]) {
    const CELL_W: u32 = 96;
    const CELL_H: u32 = 26;
    const TOP: u32 = 44;
    let rows = drawn.len() as u32;
    let width = LABEL_W + CELL_W * 6 + 8;
    let height = TOP + rows * CELL_H + 8;
    let _ = writeln!(
        out,
        "<svg class=\"chart heatmap\" role=\"img\" aria-label=\"The six dimensions per tool\" \
         xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" data-tools=\"{rows}\">"
    );
    for (j, d) in ToolDimension::ALL.into_iter().enumerate() {
        let x = LABEL_W + j as u32 * CELL_W + CELL_W / 2;
        let (a, b) = split_label(d.label());
        let _ = writeln!(
            out,
            "<text class=\"small\" x=\"{x}\" y=\"16\" text-anchor=\"middle\">{a}</text>\
             <text class=\"small\" x=\"{x}\" y=\"30\" text-anchor=\"middle\">{b}</text>"
        );
    }
    for (i, row) in drawn.iter().enumerate() {
        let y = TOP + i as u32 * CELL_H;
        let esc = escape(&row.name);
        let _ = writeln!(
            out,
            "<g class=\"tool-cells\" data-tool=\"{esc}\"><title>{esc}</title>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LABEL_W - 8,
            y + CELL_H / 2 + 4,
            escape(&label(&row.name))
        );
        for (j, d) in ToolDimension::ALL.into_iter().enumerate() {
            let x = LABEL_W + j as u32 * CELL_W;
            let bs = row.base.as_ref().and_then(|t| t.dimensions[j]);
            let hs = row.head.as_ref().and_then(|t| t.dimensions[j]);
            let shown = hs.or(bs);
            let class = shown
                .map(|s| format!("s{}", s.min(5)))
                .unwrap_or_else(|| "none".to_string());
            let dropped = matches!((bs, hs), (Some(b), Some(h)) if h < b);
            let border = if dropped && row.fell {
                " cell-fell"
            } else {
                ""
            };
            let text = match (bs, hs) {
                (Some(b), Some(h)) if b != h => format!("{b}→{h}"),
                (_, Some(h)) => h.to_string(),
                (Some(b), None) => format!("{b} (base)"),
                (None, None) => "–".to_string(),
            };
            let _ = writeln!(
                out,
                "<rect class=\"cell {class}{border}\" x=\"{}\" y=\"{}\" width=\"{}\" \
                 height=\"{}\"><title>{esc} · {}: {text}</title></rect>\
                 <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{text}</text>",
                x + 1,
                y + 1,
                CELL_W - 2,
                CELL_H - 2,
                d.label(),
                x + CELL_W / 2,
                y + CELL_H / 2 + 4
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
}
