//! The Markdown page of a calibration: the record's tables, formatted. It reads only the record
//! and computes nothing new, so the page and `calibration.json` cannot disagree.

use std::fmt::Write as _;

use super::record::{CalibrationRecord, DimensionAgreement, Measured, SetMeasure};
use tdqs_core::arith::Tenths;
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

fn tool_list(tools: &[String]) -> String {
    tools
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
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
fn lowest_runs_text(m: &SetMeasure) -> String {
    let same = m.runs.windows(2).all(|w| w[0].tools == w[1].tools);
    if same {
        let tools = m
            .runs
            .first()
            .map(|r| tool_list(&r.tools))
            .unwrap_or_default();
        format!("{} {tools}", runs_text(m)).trim_end().to_string()
    } else {
        m.runs
            .iter()
            .map(|r| format!("{} {}", r.value, tool_list(&r.tools)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

use tdqs_core::report::md_escape::{code, text as escape};

fn agreement_row(out: &mut String, a: &DimensionAgreement) {
    let correlation = a
        .correlation
        .map(two_places)
        .unwrap_or_else(|| "—".to_string());
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} |",
        measure_label(&a.measure),
        two_places(a.mean_absolute_difference.value),
        signed_two_places(a.mean_signed_difference.value),
        a.gate_higher,
        a.gate_lower,
        a.equal,
        correlation
    );
}

/// Renders the page: one function per section, in the order the page shows them.
pub fn render(record: &CalibrationRecord) -> String {
    let mut out = String::new();
    write_introduction(&mut out, record);
    write_whole_set(&mut out, record);
    write_per_dimension(&mut out, record);
    write_run_to_run(&mut out, record);
    write_largest_differences(&mut out, record);
    write_every_tool(&mut out, record);
    out
}

/// The title, the note, what was compared (capture, judge, digests) and the warnings, so the
/// page says what it measured before any number.
fn write_introduction(out: &mut String, record: &CalibrationRecord) {
    let judge = &record.scoring.judge;
    let registry = &record.registry;
    let server = &registry.server;

    let _ = writeln!(out, "# Calibration against the registry\n");
    let _ = writeln!(out, "> {}\n", escape(&record.note));
    let source = registry
        .source
        .as_deref()
        .map(|s| format!(" (source: {})", escape(s)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "The capture{source} holds release {} as the registry scored it at {}: {} tools, set \
         hash `{}`.",
        escape(&registry.release),
        escape(&server.scored_at),
        server.tool_count,
        registry.set_hash
    );
    let _ = writeln!(
        out,
        "The gate scored the same definitions (set hash `{}`) {} time{} with the `{}` judge, \
         model `{}`{}.",
        record.scored_set_hash,
        record.runs.len(),
        if record.runs.len() == 1 { "" } else { "s" },
        judge.mode,
        judge.model,
        if judge.model_judged {
            ""
        } else {
            " (rules, no language model)"
        }
    );
    let _ = writeln!(
        out,
        "Pins digest `{}`{}; scoring digest `{}`.\n",
        record.version_digest,
        if record.scoring.pins_embedded {
            " (the embedded pins)"
        } else {
            " (pins other than the embedded ones)"
        },
        record.scoring_digest
    );
    for warning in &record.warnings {
        let _ = writeln!(out, "- Warning: {}", escape(warning));
    }
    if !record.warnings.is_empty() {
        out.push('\n');
    }
}

/// "The whole set": the server rollups, registry against each run and the median, then the
/// coherence dimensions and the unrounded mean TDQS.
fn write_whole_set(out: &mut String, record: &CalibrationRecord) {
    let whole = &record.summary.whole_set;
    let _ = writeln!(out, "## The whole set\n");
    let _ = writeln!(out, "| Measure | Registry | Gate runs | Gate median |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (label, m) in [
        ("Overall", &whole.overall),
        ("Description quality", &whole.description_quality),
        ("Coherence", &whole.coherence),
        ("Mean TDQS", &whole.mean_tdqs),
    ] {
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} |",
            with_tier(&m.registry),
            runs_text(m),
            with_tier(&m.median)
        );
    }
    let lowest = &whole.min_tdqs;
    let _ = writeln!(
        out,
        "| Lowest TDQS | {} {} | {} | {} |",
        lowest.registry.value,
        tool_list(&lowest.registry.tools),
        lowest_runs_text(lowest),
        lowest.median.value
    );
    write_coherence_dimensions(out, record);
    let exact_runs: Vec<String> = whole
        .mean_tdqs
        .runs
        .iter()
        .filter_map(|r| r.exact.as_ref().map(|e| format!("{:.3}", e.value)))
        .collect();
    if let Some(registry_exact) = &whole.mean_tdqs.registry.exact {
        let _ = writeln!(
            out,
            "\nUnrounded mean TDQS: registry {:.3}; gate runs {}.",
            registry_exact.value,
            exact_runs.join(", ")
        );
    }
}

/// The coherence dimensions' table: the registry's score against each run's and the median.
fn write_coherence_dimensions(out: &mut String, record: &CalibrationRecord) {
    let _ = writeln!(
        out,
        "\n| Coherence dimension | Registry | Gate runs | Gate median |\n|---|---|---|---|"
    );
    for (dimension, c) in &record.summary.coherence_dimensions {
        let runs: Vec<String> = c.runs.iter().map(|r| r.to_string()).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            capitalised(dimension.label()),
            c.registry,
            runs.join(", "),
            c.median
        );
    }
}

/// "Per dimension": how closely the gate's median follows the registry, one row per measure.
fn write_per_dimension(out: &mut String, record: &CalibrationRecord) {
    let _ = writeln!(
        out,
        "\n## Per dimension\n\nThe gate's median against the registry's score, over the {} tools:\n",
        record.summary.tools.len()
    );
    let _ = writeln!(
        out,
        "| Measure | Mean absolute difference | Mean signed difference | Gate higher | Gate lower | Equal | Correlation |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for a in &record.summary.per_dimension {
        agreement_row(out, a);
    }
}

/// "Run to run": how far the gate's own runs spread, which bounds how close to the registry it
/// can be expected to come.
fn write_run_to_run(out: &mut String, record: &CalibrationRecord) {
    let spread = &record.summary.spread;
    let _ = writeln!(out, "\n## Run to run\n");
    if spread.identical_runs {
        let _ = writeln!(
            out,
            "The {} runs gave every tool and the coherence the same scores.",
            spread.runs
        );
    } else {
        let at_largest = if spread.largest_range_tools.is_empty() {
            String::new()
        } else {
            format!(" ({})", tool_list(&spread.largest_range_tools))
        };
        let _ = writeln!(
            out,
            "Over {} runs, {} tools moved; a tool's TDQS ranged by {} on average and by up to {}{}.",
            spread.runs,
            spread.tools_that_moved,
            two_places(spread.mean_tool_range.value),
            spread.largest_tool_range,
            at_largest
        );
    }
    let _ = writeln!(
        out,
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
    );
}

/// "The largest differences": the tools the gate and the registry disagree on most, with the
/// dimensions behind each difference.
fn write_largest_differences(out: &mut String, record: &CalibrationRecord) {
    let _ = writeln!(out, "\n## The largest differences\n");
    let _ = writeln!(
        out,
        "| Tool | Registry | Gate | Difference | Dimensions that differ (gate minus registry) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for l in &record.summary.largest_differences {
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
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            code(&l.tool),
            l.registry,
            l.gate,
            signed(l.difference),
            dims
        );
    }
}

/// "Every tool": each tool's TDQS, registry against the gate's median and runs.
fn write_every_tool(out: &mut String, record: &CalibrationRecord) {
    let _ = writeln!(out, "\n## Every tool\n");
    let _ = writeln!(
        out,
        "| Tool | Registry | Gate (median) | Difference | Gate runs |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (name, t) in &record.summary.tools {
        let runs: Vec<String> = t.runs.iter().map(|r| r.to_string()).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            code(name),
            t.registry.tdqs,
            t.median.tdqs,
            signed(t.difference.tdqs),
            runs.join(", ")
        );
    }
}
