//! The Markdown page of a calibration: the record's tables, built as a document
//! ([`tdqs_core::report::doc`]) and printed by its Markdown backend, which escapes every text. It
//! reads only the record and computes nothing new, so the page and `calibration.json` cannot
//! disagree.

use super::record::{CalibrationRecord, DimensionAgreement, Measured, SetMeasure};
use tdqs_core::arith::Tenths;
use tdqs_core::report::doc::{self, code, column, fill, joined, row, text, words};
use tdqs_core::report::doc::{Align, Block, Inline, Row, Table};
use tdqs_core::rubric::ToolDimension;

fn signed(t: Tenths) -> String {
    if t.0 > 0 {
        format!("+{t}")
    } else {
        t.to_string()
    }
}

fn signed_int(d: i8) -> String {
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

fn two_places(x: f64) -> String {
    let text = format!("{x:.2}");
    // "-0.00" says nothing a reader can use.
    if text == "-0.00" {
        "0.00".to_string()
    } else {
        text
    }
}

fn signed_two_places(x: f64) -> String {
    let text = two_places(x);
    if x > 0.0 && text != "0.00" {
        format!("+{text}")
    } else {
        text
    }
}

fn with_tier(m: &Measured) -> String {
    match m.tier {
        Some(tier) => format!("{} ({tier})", m.value),
        None => m.value.to_string(),
    }
}

/// Tool names as code, comma-separated.
fn tool_list(tools: &[String]) -> Vec<Inline> {
    joined(tools.iter().map(|t| vec![code(t)]), ", ")
}

fn capitalised(label: &str) -> String {
    let mut chars = label.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

fn measure_label(measure: &str) -> String {
    match ToolDimension::from_key(measure) {
        Some(d) => capitalised(d.label()),
        None if measure == "tdqs" => "TDQS".to_string(),
        None => measure.to_string(),
    }
}

fn runs_text(m: &SetMeasure) -> String {
    m.runs
        .iter()
        .map(|r| r.value.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lowest-TDQS row names the tools once when every run had the same lowest tools.
fn lowest_runs_text(m: &SetMeasure) -> Vec<Inline> {
    let same = m.runs.windows(2).all(|w| w[0].tools == w[1].tools);
    match m.runs.first() {
        Some(first) if same && !first.tools.is_empty() => {
            let mut out = vec![words(format!("{} ", runs_text(m)))];
            out.extend(tool_list(&first.tools));
            out
        }
        _ if same => vec![words(runs_text(m))],
        _ => joined(
            m.runs.iter().map(|r| {
                let mut run = vec![words(format!("{} ", r.value))];
                run.extend(tool_list(&r.tools));
                run
            }),
            ", ",
        ),
    }
}

fn agreement_row(a: &DimensionAgreement) -> Row {
    let correlation = a
        .correlation
        .map(two_places)
        .unwrap_or_else(|| "—".to_string());
    row([
        measure_label(&a.measure),
        two_places(a.mean_absolute_difference.value),
        signed_two_places(a.mean_signed_difference.value),
        a.gate_higher.to_string(),
        a.gate_lower.to_string(),
        a.equal.to_string(),
        correlation,
    ]
    .map(|cell| vec![words(cell)]))
}

/// A table of left-aligned columns.
fn table(heads: &[&'static str], rows: Vec<Row>) -> Block {
    let mut table = Table::new(heads.iter().map(|h| column(h, Align::Left)).collect());
    table.rows = rows;
    Block::Table(table)
}

/// Renders the page: one function per section, in the order the page shows them.
pub fn render(record: &CalibrationRecord) -> String {
    let mut page = introduction(record);
    page.extend(whole_set(record));
    page.extend(per_dimension(record));
    page.extend(run_to_run(record));
    page.extend(largest_differences(record));
    page.extend(every_tool(record));
    doc::markdown::render(&page)
}

/// The title, the note, what was compared (capture, judge, digests) and the warnings, so the
/// page says what it measured before any number.
fn introduction(record: &CalibrationRecord) -> Vec<Block> {
    let judge = &record.scoring.judge;
    let registry = &record.registry;
    let server = &registry.server;
    let source = registry.source.as_ref();
    let mut capture = vec![words("The capture")];
    capture.extend(
        source
            .map(|s| fill(" (source: {})", [text(s)]))
            .unwrap_or_default(),
    );
    let (release, at) = (text(&registry.release), text(&server.scored_at));
    let template = " holds release {} as the registry scored it at {}: {} tools, set hash {}.";
    let tools = words(server.tool_count.to_string());
    capture.extend(fill(
        template,
        [release, at, tools, code(&registry.set_hash)],
    ));
    capture.push(Inline::Break);
    let runs = record.runs.len();
    let times = words(format!("{runs} time{}", if runs == 1 { "" } else { "s" }));
    let (mode, model) = (code(&judge.mode), code(&judge.model));
    capture.extend(match judge.model_judged {
        true => fill("The gate scored the same definitions (set hash {}) {} with the {} judge, model {}.", [code(&record.scored_set_hash), times, mode, model]),
        false => fill("The gate scored the same definitions (set hash {}) {} with the {} judge, model {} (rules, no language model).", [code(&record.scored_set_hash), times, mode, model]),
    });
    capture.push(Inline::Break);
    let pins = match record.scoring.pins_embedded {
        true => "Pins digest {} (the embedded pins); scoring digest {}.",
        false => "Pins digest {} (pins other than the embedded ones); scoring digest {}.",
    };
    capture.extend(fill(
        pins,
        [code(&record.version_digest), code(&record.scoring_digest)],
    ));
    let mut out = vec![
        doc::heading(1, vec![words("Calibration against the registry")]),
        Block::Quote(vec![text(&record.note)]),
        doc::paragraph(capture),
    ];
    if !record.warnings.is_empty() {
        out.push(doc::list(
            record
                .warnings
                .iter()
                .map(|w| vec![words("Warning: "), text(w)]),
        ));
    }
    out
}

/// "The whole set": the server rollups, registry against each run and the median, then the
/// coherence dimensions and the unrounded mean TDQS.
fn whole_set(record: &CalibrationRecord) -> Vec<Block> {
    let whole = &record.summary.whole_set;
    let mut rows: Vec<Row> = [
        ("Overall", &whole.overall),
        ("Description quality", &whole.description_quality),
        ("Coherence", &whole.coherence),
        ("Mean TDQS", &whole.mean_tdqs),
    ]
    .into_iter()
    .map(|(label, m)| {
        row([
            label.to_string(),
            with_tier(&m.registry),
            runs_text(m),
            with_tier(&m.median),
        ]
        .map(|cell| vec![words(cell)]))
    })
    .collect();
    let lowest = &whole.min_tdqs;
    let mut registry = vec![words(format!("{} ", lowest.registry.value))];
    registry.extend(tool_list(&lowest.registry.tools));
    rows.push(row([
        vec![words("Lowest TDQS")],
        registry,
        lowest_runs_text(lowest),
        vec![words(lowest.median.value.to_string())],
    ]));
    let mut out = vec![
        doc::heading(2, vec![words("The whole set")]),
        table(&["Measure", "Registry", "Gate runs", "Gate median"], rows),
        coherence_dimensions(record),
    ];
    if let Some(registry_exact) = &whole.mean_tdqs.registry.exact {
        let exact_runs: Vec<String> = whole
            .mean_tdqs
            .runs
            .iter()
            .filter_map(|r| r.exact.as_ref().map(|e| format!("{:.3}", e.value)))
            .collect();
        out.push(doc::paragraph(vec![words(format!(
            "Unrounded mean TDQS: registry {:.3}; gate runs {}.",
            registry_exact.value,
            exact_runs.join(", ")
        ))]));
    }
    out
}

/// The coherence dimensions' table: the registry's score against each run's and the median.
fn coherence_dimensions(record: &CalibrationRecord) -> Block {
    let rows = record
        .summary
        .coherence_dimensions
        .iter()
        .map(|(dimension, c)| {
            let runs: Vec<String> = c.runs.iter().map(|r| r.to_string()).collect();
            row([
                capitalised(dimension.label()),
                c.registry.to_string(),
                runs.join(", "),
                c.median.to_string(),
            ]
            .map(|cell| vec![words(cell)]))
        })
        .collect();
    table(
        &[
            "Coherence dimension",
            "Registry",
            "Gate runs",
            "Gate median",
        ],
        rows,
    )
}

/// "Per dimension": how closely the gate's median follows the registry, one row per measure.
fn per_dimension(record: &CalibrationRecord) -> Vec<Block> {
    vec![
        doc::heading(2, vec![words("Per dimension")]),
        doc::paragraph(vec![words(format!(
            "The gate's median against the registry's score, over the {} tools:",
            record.summary.tools.len()
        ))]),
        table(
            &[
                "Measure",
                "Mean absolute difference",
                "Mean signed difference",
                "Gate higher",
                "Gate lower",
                "Equal",
                "Correlation",
            ],
            record
                .summary
                .per_dimension
                .iter()
                .map(agreement_row)
                .collect(),
        ),
    ]
}

/// "Run to run": how far the gate's own runs spread, which bounds how close to the registry it
/// can be expected to come.
fn run_to_run(record: &CalibrationRecord) -> Vec<Block> {
    let spread = &record.summary.spread;
    let mut content = if spread.identical_runs {
        vec![words(format!(
            "The {} runs gave every tool and the coherence the same scores.",
            spread.runs
        ))]
    } else {
        let mut line = vec![words(format!(
            "Over {} runs, {} tools moved; a tool's TDQS ranged by {} on average and by up to {}",
            spread.runs,
            spread.tools_that_moved,
            two_places(spread.mean_tool_range.value),
            spread.largest_tool_range,
        ))];
        if !spread.largest_range_tools.is_empty() {
            line.push(words(" ("));
            line.extend(tool_list(&spread.largest_range_tools));
            line.push(words(")"));
        }
        line.push(words("."));
        line
    };
    content.push(Inline::Break);
    content.push(words(format!(
        "Mean TDQS {}–{} (unrounded {:.3}–{:.3}), lowest TDQS {}–{}, description quality {}–{}, \
         coherence {}–{}, overall {}–{}.",
        spread.mean_tdqs.lowest,
        spread.mean_tdqs.highest,
        spread.exact_mean_tdqs.lowest.value,
        spread.exact_mean_tdqs.highest.value,
        spread.min_tdqs.lowest,
        spread.min_tdqs.highest,
        spread.description_quality.lowest,
        spread.description_quality.highest,
        spread.coherence.lowest,
        spread.coherence.highest,
        spread.overall.lowest,
        spread.overall.highest
    )));
    vec![
        doc::heading(2, vec![words("Run to run")]),
        doc::paragraph(content),
    ]
}

/// "The largest differences": the tools the gate and the registry disagree on most, with the
/// dimensions behind each difference.
fn largest_differences(record: &CalibrationRecord) -> Vec<Block> {
    let rows = record
        .summary
        .largest_differences
        .iter()
        .map(|l| {
            let dims: Vec<String> = l
                .dimensions
                .iter()
                .map(|d| format!("{} {}", d.dimension.label(), signed_int(d.difference)))
                .collect();
            let dims = if dims.is_empty() {
                "none".to_string()
            } else {
                dims.join(", ")
            };
            row([
                vec![code(&l.tool)],
                vec![words(l.registry.to_string())],
                vec![words(l.gate.to_string())],
                vec![words(signed(l.difference))],
                vec![words(dims)],
            ])
        })
        .collect();
    vec![
        doc::heading(2, vec![words("The largest differences")]),
        table(
            &[
                "Tool",
                "Registry",
                "Gate",
                "Difference",
                "Dimensions that differ (gate minus registry)",
            ],
            rows,
        ),
    ]
}

/// "Every tool": each tool's TDQS, registry against the gate's median and runs.
fn every_tool(record: &CalibrationRecord) -> Vec<Block> {
    let rows = record
        .summary
        .tools
        .iter()
        .map(|(name, t)| {
            let runs: Vec<String> = t.runs.iter().map(|r| r.to_string()).collect();
            row([
                vec![code(name)],
                vec![words(t.registry.tdqs.to_string())],
                vec![words(t.median.tdqs.to_string())],
                vec![words(signed(t.difference.tdqs))],
                vec![words(runs.join(", "))],
            ])
        })
        .collect();
    vec![
        doc::heading(2, vec![words("Every tool")]),
        table(
            &[
                "Tool",
                "Registry",
                "Gate (median)",
                "Difference",
                "Gate runs",
            ],
            rows,
        ),
    ]
}
