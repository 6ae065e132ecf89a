//! `--calibrate`: scoring a registry capture against its published scores.
//!
//! The gate's judge and a public registry's judge are different models, so their scores differ
//! by some offset. A calibration measures it: it takes a capture of the definitions a registry
//! scored together with the scores it published, checks that the capture is still what it claims
//! to be ([`capture::check_capture`]), scores those same definitions N times with the current pins
//! and judge, and writes a record (`calibration.json`) and a Markdown page (`calibration.md`)
//! that set the runs against the registry per tool, per dimension and for the whole set.
//!
//! No score is ever adjusted, in either direction. The committed `tdqs/calibration.json` carries
//! the pins digest it was made with, so a change of the pins is caught by a test until the
//! calibration is made again (docs/calibration.md).

pub mod capture;
pub mod markdown;
pub mod record;
pub mod stats;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::judge::build::{self, JudgeOptions};
use crate::judge::Judge;
use crate::progress::{Progress, ProgressEvent};
use crate::report::write::atomic_write;
use crate::score::session::{ScoringSession, Sharing};
use tdqs_core::error::{Error, Stage};
use tdqs_core::exit::Verdict;
use tdqs_core::redact::redact;
use tdqs_core::report::Scoring;
use tdqs_core::spec::pins::Pins;

pub use capture::{check_capture, CheckedCapture, RegistryServer, ToolScores};
pub use record::{CalibrationRecord, CALIBRATION_JSON, CALIBRATION_MARKDOWN};

/// What `--calibrate CAPTURE --runs N --report-dir DIR` asks for.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    pub capture: PathBuf,
    pub runs: usize,
    pub judge: JudgeOptions,
    pub report_dir: PathBuf,
}

/// A finished calibration and where it was written.
#[derive(Debug, Clone)]
pub struct Calibrated {
    pub record: CalibrationRecord,
    pub json: PathBuf,
    pub markdown: PathBuf,
}

/// Runs a calibration with the judge `opts.judge` describes.
pub async fn run(
    opts: &CalibrateOptions,
    progress: Arc<dyn Progress>,
) -> Result<Calibrated, Error> {
    check_runs(opts.runs)?;
    let pins = crate::spec::load_pins(opts.judge.pins.as_deref())?;
    let capture = read_capture(&opts.capture, &pins)?;
    let judge = build::build(&opts.judge, &pins)?;
    calibrate(opts, pins, capture, judge, progress).await
}

/// Runs a calibration with a judge built by the caller (a scripted judge in tests, for one).
/// The pins, concurrency and prompt cache still come from `opts.judge`.
pub async fn run_with_judge(
    opts: &CalibrateOptions,
    judge: Arc<dyn Judge>,
    progress: Arc<dyn Progress>,
) -> Result<Calibrated, Error> {
    check_runs(opts.runs)?;
    let pins = crate::spec::load_pins(opts.judge.pins.as_deref())?;
    let capture = read_capture(&opts.capture, &pins)?;
    calibrate(opts, pins, capture, judge, progress).await
}

fn check_runs(runs: usize) -> Result<(), Error> {
    if runs == 0 || runs % 2 == 0 {
        return Err(Error::usage(format!(
            "--runs {runs}: a calibration needs an odd number of runs, so that each median is one \
             of the scores the judge gave"
        ))
        .with_advice("pass --runs 3 (the default), 1 or 5"));
    }
    Ok(())
}

/// Reads the capture file and checks it with the pins' arithmetic.
pub fn read_capture(path: &Path, pins: &Pins) -> Result<CheckedCapture, Error> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::io(
            Stage::Calibrate,
            format!("cannot read the capture {}", path.display()),
            e,
        )
        .with_advice(
            "pass the path of a capture file: tdqs-gate calibrate CAPTURE (docs/calibration.md)",
        )
    })?;
    check_capture(&bytes, &pins.weights())
        .map_err(|e| e.context(format!("capture {}", path.display())))
}

/// What the record says about the judge and the capture, in plain words.
fn note_for(scoring: &Scoring, pins: &Pins, capture: &CheckedCapture) -> String {
    let judge = &scoring.judge;
    let mut note = if judge.model_judged {
        format!(
            "Made with the language model {} through the {} judge.",
            judge.model, judge.mode
        )
    } else {
        format!(
            "Made with the {} judge ({}), which scores definitions by rules and calls no language \
             model: these runs measure the offline judge against the registry, not the pinned \
             model {}.",
            judge.mode,
            judge.model,
            pins.model()
        )
    };
    if let Some(capture_note) = &capture.note {
        note.push_str(" The capture: ");
        note.push_str(capture_note.trim());
    }
    if !scoring.pins_embedded {
        note.push_str(
            " Scored with pins other than the embedded tdqs/version.json, so this is not a \
             calibration of the configuration the gate ships with.",
        );
    }
    note
}

async fn calibrate(
    opts: &CalibrateOptions,
    pins: Pins,
    capture: CheckedCapture,
    judge: Arc<dyn Judge>,
    progress: Arc<dyn Progress>,
) -> Result<Calibrated, Error> {
    let session = ScoringSession::open(
        judge,
        &opts.judge,
        &pins,
        Sharing::default(),
        Arc::clone(&progress),
        None,
    )
    .await?;
    let mut warnings = session.warnings.clone();
    if let Some(w) = pins.warning() {
        warnings.push(w);
    }
    let prepared = session.prepare(&capture.export)?;
    let scoring = session.scoring.clone();
    let weights = pins.weights();
    let scorer = session.scorer;
    let mut runs = Vec::with_capacity(opts.runs);
    for n in 1..=opts.runs {
        progress.event(ProgressEvent::Note(format!(
            "calibration run {n} of {}: {} tools",
            opts.runs,
            prepared.tools.len()
        )));
        let (side, calls) = scorer
            .score_side(&prepared)
            .await
            .map_err(|e| e.context(format!("calibration run {n}")))?;
        if side.set_hash != capture.export.set_hash {
            return Err(Error::internal(format!(
                "run {n} scored set {} instead of the capture's {}",
                side.set_hash, capture.export.set_hash
            )));
        }
        runs.push((side, calls));
    }
    let note = note_for(&scoring, &pins, &capture);
    let record = record::build(record::Inputs {
        capture: &capture,
        runs: &runs,
        scoring,
        weights: &weights,
        note,
        warnings,
    });
    let (json, markdown) = write(&opts.report_dir, &record)?;
    Ok(Calibrated {
        record,
        json,
        markdown,
    })
}

/// The record as written: pretty JSON with secrets masked, ending in a newline.
pub fn to_json(record: &CalibrationRecord) -> Result<String, Error> {
    let text = serde_json::to_string_pretty(record)
        .map_err(|e| Error::internal(format!("cannot serialise the calibration: {e}")))?;
    Ok(redact(&text) + "\n")
}

/// Writes `calibration.json` and `calibration.md` into `dir`, each atomically.
pub fn write(dir: &Path, record: &CalibrationRecord) -> Result<(PathBuf, PathBuf), Error> {
    let json = dir.join(CALIBRATION_JSON);
    let md = dir.join(CALIBRATION_MARKDOWN);
    atomic_write(&json, to_json(record)?.as_bytes())?;
    atomic_write(&md, redact(&markdown::render(record)).as_bytes())?;
    Ok((json, md))
}

/// Reads a record back (`tdqs/calibration.json`, a previous run).
pub fn read_record(path: &Path) -> Result<CalibrationRecord, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::io(
            Stage::Calibrate,
            format!("cannot read the calibration {}", path.display()),
            e,
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Error::new(
            Stage::Calibrate,
            format!("{} is not a calibration record: {e}", path.display()),
        )
        .with_advice(
            "make the calibration again with `tdqs-gate --calibrate` (docs/calibration.md)",
        )
    })
}

/// The command line's summary of a finished calibration: one line on `out`.
pub fn print_summary(done: &Calibrated, out: &mut dyn Write) -> Result<Verdict, Error> {
    let summary = &done.record.summary;
    let mean = &summary.whole_set.mean_tdqs;
    let tdqs = summary.per_dimension.first();
    let correlation = tdqs
        .and_then(|a| a.correlation)
        .map(|r| format!("{r:.2}"))
        .unwrap_or_else(|| "undefined".to_string());
    let line = format!(
        "CALIBRATED: {} tools, {} runs with the {} judge ({}): median mean TDQS {} against the \
         registry's {}; per tool mean absolute difference {:.2}, correlation {}; written to {} \
         and {}",
        summary.tools.len(),
        done.record.runs.len(),
        done.record.scoring.judge.mode,
        done.record.scoring.judge.model,
        mean.median.value,
        mean.registry.value,
        tdqs.map(|a| a.mean_absolute_difference.value)
            .unwrap_or(0.0),
        correlation,
        done.json.display(),
        done.markdown.display()
    );
    writeln!(out, "{}", redact(&line))
        .map_err(|e| Error::io(Stage::Report, "cannot write the summary", e))?;
    Ok(Verdict::Pass)
}
