//! Several servers gated from export files: `--base-exports DIR --head-exports DIR`.
//!
//! Each folder holds one file per server, named after the server: `NAME.json` (its export, as
//! `tdqs-gate export --output` writes it) or `NAME.failed` (a note that the export of that
//! server failed on that side, with the reason on its first line). The GitHub Action writes
//! these folders in the step that runs the pull request's code, without the token, and the gate
//! reads them in the step that holds the token and starts no server.
//!
//! The servers gated are those named by `--server NAME` (in that order), else every name found
//! in either folder, sorted. For each server:
//! - an export on both sides: gated as `--base-export`/`--head-export` gate one server;
//! - a `.failed` note on either side: that server is INVALID with the note's reason;
//! - an export on the head only (a server the base does not have): gated against an empty base,
//!   which PASSes with nothing scored, as for a single server whose base lists no tools;
//! - an export on the base only: INVALID (the head no longer lists the server, and a removed
//!   server has no score to compare).
//!
//! The folders are read as untrusted data: only regular files named `NAME.json` or
//! `NAME.failed` with a valid server name (the `[[server]]` rule, so no path separator and no
//! `..`), one file per name, no two names that differ only in case (they would collide on a
//! case-insensitive file system and in GitHub output names); anything else refuses the run. The
//! one exception is the base folder's [`SETTINGS_FILE`], the base's `[decision]` table, which
//! `ci score` reads as the run's settings (in a head folder it refuses the run). Every export is verified (hashes and sizes recomputed) before it decides anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{monorepo, sides, Draft, GateOptions, Outcome, SideSource};
use crate::config::is_valid_server_name;
use crate::progress::{Progress, ProgressEvent};
use crate::score::session::JudgeSlot;
use tdqs_core::error::{Error, Stage};
use tdqs_core::export::{Export, ExportSource, RawListing};
use tdqs_core::report::monorepo::{MonorepoReport, ServerReport};
use tdqs_core::spec::pins::Pins;

/// The name under which `tdqs-gate ci export` writes a side that has a single server (no
/// `[[server]]` tables): `_single.json` or `_single.failed`. A server name cannot start with `_`,
/// so it never collides with a table's name.
pub const SINGLE: &str = "_single";

/// The base's `tdqs-gate.toml`, copied into the base folder by `tdqs-gate ci export --side base`:
/// the scoring job, which checks out neither side, judges by the base's settings (its
/// `[decision]`). Only a base folder may hold it, and the folder's digest covers it.
pub const SETTINGS_FILE: &str = "_settings.toml";
/// The most files a folder may hold: far beyond a real repository's servers, and a bound on
/// what an untrusted folder can make the gate read.
const MAX_FOLDER_ENTRIES: usize = 512;

/// The longest `.failed` note read, in bytes; the reason is its first line.
const MAX_NOTE_BYTES: u64 = 64 * 1024;
/// The longest reason kept from a `.failed` note, in characters.
const MAX_REASON_CHARS: usize = 500;

/// What a folder holds for one server.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// `NAME.json`: the server's export.
    Export(PathBuf),
    /// `NAME.failed`: the export failed on this side, for this reason.
    Failed(String),
}

/// The revision label of the empty base a server new on the head is gated against.
pub const NO_BASE_LABEL: &str = "no base export (a server new on the head)";

fn folder_error(dir: &Path, label: &str, what: String) -> Error {
    Error::usage(format!(
        "the {label} export folder {}: {what}",
        dir.display()
    ))
    .with_advice(
        "the folder must hold only NAME.json exports (tdqs-gate export --server NAME --output \
         DIR/NAME.json) or NAME.failed notes, one per server, named with 1 to 64 letters, \
         digits, `-`, `_` or `.`, starting with a letter or a digit",
    )
}

/// Reads one side's folder: server name → what it holds.
pub fn read_folder(dir: &Path, label: &str) -> Result<BTreeMap<String, Entry>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|io| {
        Error::io(
            Stage::Export,
            format!("cannot read the {label} export folder {}", dir.display()),
            io,
        )
        .with_advice("pass an existing folder of export files (NAME.json, one per server)")
    })?;
    let mut found: BTreeMap<String, Entry> = BTreeMap::new();
    let mut folded: BTreeMap<String, String> = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|io| {
            Error::io(
                Stage::Export,
                format!("cannot read the {label} export folder {}", dir.display()),
                io,
            )
        })?;
        if found.len() >= MAX_FOLDER_ENTRIES {
            return Err(folder_error(
                dir,
                label,
                format!("it holds more than {MAX_FOLDER_ENTRIES} files"),
            ));
        }
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            return Err(folder_error(
                dir,
                label,
                format!("{:?} is not a valid server file name", entry.file_name()),
            ));
        };
        let kind = entry.file_type().map_err(|io| {
            Error::io(
                Stage::Export,
                format!("cannot read {}", entry.path().display()),
                io,
            )
        })?;
        if !kind.is_file() {
            return Err(folder_error(
                dir,
                label,
                format!(
                    "{file_name:?} is a {}, not a regular file (only regular files are read)",
                    crate::platform::file_modes::kind_name(&kind)
                ),
            ));
        }
        if file_name == SETTINGS_FILE {
            if label == "base" {
                // The base's settings, read through `GateOptions::settings_file`.
                continue;
            }
            return Err(folder_error(
                dir,
                label,
                format!(
                    "{file_name:?} is the base's settings, which only the base's export job \
                     writes; the {label} side's settings are never read"
                ),
            ));
        }
        let (name, failed) = if let Some(name) = file_name.strip_suffix(".json") {
            (name, false)
        } else if let Some(name) = file_name.strip_suffix(".failed") {
            (name, true)
        } else {
            return Err(folder_error(
                dir,
                label,
                format!("{file_name:?} is neither NAME.json nor NAME.failed"),
            ));
        };
        if name != SINGLE && !is_valid_server_name(name) {
            return Err(folder_error(
                dir,
                label,
                format!("{file_name:?} does not start with a valid server name"),
            ));
        }
        if let Some(other) = folded.insert(name.to_ascii_lowercase(), file_name.to_string()) {
            return Err(folder_error(
                dir,
                label,
                format!(
                    "{other:?} and {file_name:?} are two files for one server (names are \
                     compared without case)"
                ),
            ));
        }
        let path = entry.path();
        let value = if failed {
            Entry::Failed(read_note(&path)?)
        } else {
            Entry::Export(path)
        };
        found.insert(name.to_string(), value);
    }
    Ok(found)
}

/// The first line of a `.failed` note, bounded.
fn read_note(path: &Path) -> Result<String, Error> {
    use crate::platform::safe_file::{read_regular, Links};
    // A regular file only, never through a link, bounded: the folder may come from a job that
    // ran the pull request's code.
    let bytes = read_regular(path, Links::Refuse, MAX_NOTE_BYTES).map_err(|e| {
        Error::new(
            Stage::Export,
            format!("cannot read the export note {}: {e}", path.display()),
        )
        .with_advice("a NAME.failed note is a small regular file holding the export's error")
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("the export failed (the note gives no reason)");
    let line = line.strip_prefix("INVALID: ").unwrap_or(line);
    Ok(line
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_REASON_CHARS)
        .collect())
}

/// Folders written by `tdqs-gate ci export` for a single server (`_single.json` or
/// `_single.failed` on both sides): the options of a single-server run on the two files, or the
/// error that makes it INVALID (a failed export, or one side with a single server and the other
/// with `[[server]]` tables). `None` when the folders hold named servers only, or cannot be read
/// (the run over several servers then says why).
pub(super) fn single_layout(opts: &GateOptions) -> Option<Result<GateOptions, Error>> {
    let (SideSource::ExportDir(base_dir), SideSource::ExportDir(head_dir)) =
        (&opts.base, &opts.head)
    else {
        return None;
    };
    // A folder of `ci export` for a single server: its read errors are this run's cause.
    let has_single = |dir: &Path| {
        ["json", "failed"]
            .iter()
            .any(|ext| std::fs::symlink_metadata(dir.join(format!("{SINGLE}.{ext}"))).is_ok())
    };
    let (base, head) = if has_single(base_dir) || has_single(head_dir) {
        match (read_folder(base_dir, "base"), read_folder(head_dir, "head")) {
            (Ok(b), Ok(h)) => (b, h),
            (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
        }
    } else {
        (
            read_folder(base_dir, "base").ok()?,
            read_folder(head_dir, "head").ok()?,
        )
    };
    let single = |f: &BTreeMap<String, Entry>| f.contains_key(SINGLE);
    if !single(&base) && !single(&head) {
        return None;
    }
    let only = |f: &BTreeMap<String, Entry>| f.len() == 1 && single(f);
    if !only(&base) || !only(&head) {
        let shape = |f: &BTreeMap<String, Entry>| {
            if f.is_empty() {
                "no export at all".to_string()
            } else if single(f) {
                "a single server".to_string()
            } else {
                format!(
                    "the servers {}",
                    f.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            }
        };
        return Some(Err(Error::new(
            Stage::Config,
            format!(
                "the base has {} and the head has {}: a change between one server and \
                 `[[server]]` tables cannot be compared server by server",
                shape(&base),
                shape(&head)
            ),
        )
        .with_advice(
            "review this change by hand; once it is merged, the base has the same layout and \
             later changes are gated again",
        )));
    }
    let mut files = Vec::with_capacity(2);
    for (label, folder) in [("base", &base), ("head", &head)] {
        match &folder[SINGLE] {
            Entry::Export(path) => files.push(path.clone()),
            Entry::Failed(reason) => {
                return Some(Err(Error::new(
                    Stage::Export,
                    format!("the {label} export failed: {reason}"),
                )
                .with_advice(format!(
                    "the log of the {label} export (the job or step that ran `tdqs-gate ci \
                     export --side {label}`) has the details"
                ))))
            }
        }
    }
    let mut single = opts.clone();
    single.head = SideSource::ExportFile(files.pop()?);
    single.base = SideSource::ExportFile(files.pop()?);
    Some(Ok(single))
}

/// The servers to gate: the `--server` names in order (each must be in a folder), else every
/// name of either folder, sorted.
pub fn names(
    given: &[String],
    base: &BTreeMap<String, Entry>,
    head: &BTreeMap<String, Entry>,
) -> Result<Vec<String>, Error> {
    let mut all: Vec<String> = base.keys().chain(head.keys()).cloned().collect();
    all.sort();
    all.dedup();
    if all.is_empty() {
        return Err(
            Error::usage("the base and head export folders hold no server exports").with_advice(
                "export each server into its side's folder first (tdqs-gate export --server NAME \
             --output DIR/NAME.json)",
            ),
        );
    }
    if given.is_empty() {
        return Ok(all);
    }
    let mut names: Vec<String> = Vec::with_capacity(given.len());
    for name in given {
        if names.contains(name) {
            return Err(Error::usage(format!("--server {name} is given twice"))
                .with_advice("name each server once"));
        }
        if !all.contains(name) {
            return Err(Error::usage(format!(
                "--server {name:?}: neither export folder has a file for it; the folders hold: {}",
                all.join(", ")
            ))
            .with_advice("name a server the folders hold, or export it first"));
        }
        names.push(name.clone());
    }
    Ok(names)
}

/// The two folders of a run, read and paired.
pub(super) struct Folders {
    pub base: BTreeMap<String, Entry>,
    pub head: BTreeMap<String, Entry>,
    pub names: Vec<String>,
    /// The most bytes one export file may hold: from the run's settings (the base's
    /// `max-listing-bytes`, `--max-listing-bytes`), as the gate reads a single export file.
    pub file_limit: u64,
}

pub(super) fn open(opts: &GateOptions) -> Result<Folders, Error> {
    let (SideSource::ExportDir(base_dir), SideSource::ExportDir(head_dir)) =
        (&opts.base, &opts.head)
    else {
        return Err(Error::internal("export folders expected for both sides"));
    };
    let base = read_folder(base_dir, "base")?;
    let head = read_folder(head_dir, "head")?;
    let names = names(&opts.server.servers, &base, &head)?;
    let file_limit = sides::export_file_limit_of(opts)?;
    Ok(Folders {
        base,
        head,
        names,
        file_limit,
    })
}

/// Both sides of one server from the folders, each file read within `file_limit` bytes
/// ([`Folders::file_limit`]).
pub(super) fn sides_of(
    name: &str,
    base: Option<&Entry>,
    head: Option<&Entry>,
    file_limit: u64,
) -> Result<(sides::SideExport, sides::SideExport, Option<String>), Error> {
    let read = |label: &str, entry: &Entry| match entry {
        Entry::Export(path) => {
            sides::read_file_side(path, file_limit).map_err(|e| e.context(label))
        }
        Entry::Failed(reason) => Err(Error::new(
            Stage::Export,
            format!("the {label} export of server `{name}` failed: {reason}"),
        )
        .with_advice("the log of the export (the step \"Export both sides\") has the details")),
    };
    match (base, head) {
        (Some(b), Some(h)) => {
            let (b, h) = (read("base", b), read("head", h));
            Ok((b?, h?, None))
        }
        (None, Some(h)) => {
            let head = read("head", h)?;
            let base = sides::SideExport {
                export: empty_like(&head.export)?,
                revision: Some(NO_BASE_LABEL.to_string()),
                commit: None,
                decision: Default::default(),
                blind: None,
                settings_changed: None,
                locations: None,
            };
            Ok((
                base,
                head,
                Some(format!(
                    "server `{name}` has no export in the base folder: gated against an empty \
                     base (a server new on the head)"
                )),
            ))
        }
        (Some(_), None) => Err(Error::new(
            Stage::Export,
            format!(
                "server `{name}` has an export in the base folder but none in the head folder: \
                 a server the head no longer lists has no score to compare"
            ),
        )
        .with_advice(
            "export the head's server too; if the server was removed on purpose, gate the \
             others with --server NAME",
        )),
        (None, None) => Err(Error::internal(format!(
            "server `{name}` is in neither folder"
        ))),
    }
}

/// An export listing no tools, made with the same probe as `head` (so the two compare).
pub fn empty_like(head: &Export) -> Result<Export, Error> {
    let listing = RawListing {
        protocol_version: head.protocol_version.clone(),
        era: head.era,
        ..RawListing::default()
    };
    let source = ExportSource {
        revision: Some(NO_BASE_LABEL.to_string()),
        ..ExportSource::default()
    };
    tdqs_core::digest::assemble_export(listing, head.probe.clone(), source)
}

/// Gates every server of the two folders and writes one report.
pub(super) async fn run(opts: &GateOptions, progress: Arc<dyn Progress>, pins: Pins) -> Outcome {
    let folders = match open(opts) {
        Ok(f) => f,
        Err(e) => return monorepo::failed(opts, e),
    };
    if opts.eval.is_some() && folders.names.len() > 1 {
        return monorepo::failed(
            opts,
            monorepo::eval_over_several("these export folders hold several"),
        );
    }
    let mut judge = JudgeSlot::new(crate::judge::build::build(&opts.judge, &pins));
    let mut servers = Vec::with_capacity(folders.names.len());
    for name in &folders.names {
        progress.event(ProgressEvent::Note(format!(
            "server `{name}`: reading the base and head exports"
        )));
        let mut draft = Draft::new(pins.clone());
        let decided = one_server(
            opts,
            &progress,
            &mut draft,
            name,
            (folders.base.get(name), folders.head.get(name)),
            folders.file_limit,
            &mut judge,
        )
        .await;
        let report = monorepo::server_report(draft, decided, opts);
        progress.event(ProgressEvent::Note(format!(
            "server `{name}`: {}",
            report.decision
        )));
        servers.push(ServerReport {
            name: name.clone(),
            report,
        });
    }
    monorepo::finish(opts, MonorepoReport::new(servers))
}

async fn one_server(
    opts: &GateOptions,
    progress: &Arc<dyn Progress>,
    draft: &mut Draft,
    name: &str,
    (base, head): (Option<&Entry>, Option<&Entry>),
    file_limit: u64,
    judge: &mut JudgeSlot,
) -> Result<super::Decided, Error> {
    let (b, mut h, note) = sides_of(name, base, head, file_limit)?;
    h.decision = super::base_settings::decision_of(opts)?;
    if let Some(note) = note {
        draft.warnings.push(note);
    }
    let unchanged = super::record_sides(draft, b, h)?;
    let decided =
        super::decide_recorded(opts, Arc::clone(progress), draft, unchanged, judge).await?;
    super::after_decision(opts, progress.as_ref(), draft, decided).await
}

/// The server names a gate run covers, for `tdqs-gate export --list-servers`: the `[[server]]`
/// tables of the revision's tdqs-gate.toml (the working tree's without `rev`), or several
/// `--server` names; empty for a single server. Starts nothing.
pub fn list_servers(
    repo: Option<&Path>,
    rev: Option<&str>,
    server: &super::ServerOptions,
) -> Result<Vec<String>, Error> {
    let config = match rev {
        Some(rev) => {
            let opened = crate::revision::open(repo)?;
            let side = opened.checkout(rev)?;
            let config = crate::config::Config::load(&side.root);
            side.close()?;
            config?
        }
        None => {
            let root = match crate::revision::open(repo) {
                Ok(opened) => match opened.workdir() {
                    Some(dir) => dir.to_path_buf(),
                    None => return Ok(Vec::new()),
                },
                Err(_) => match repo {
                    Some(dir) => dir.to_path_buf(),
                    None => std::env::current_dir().map_err(|io| {
                        Error::io(Stage::Config, "cannot read the current folder", io)
                    })?,
                },
            };
            crate::config::Config::load(&root)?
        }
    };
    Ok(monorepo::targets(config.as_ref(), server)?
        .map(|targets| targets.into_iter().map(|t| t.name).collect())
        .unwrap_or_default())
}
