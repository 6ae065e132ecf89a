//! `tdqs-gate ci export`: every server of one side exported into a folder.
//!
//! The folder is what the scoring job reads with `--base-exports` / `--head-exports`
//! ([`crate::gate::export_dirs`]): with `[[server]]` tables (or several `--server`), one
//! `NAME.json` per server, or `NAME.failed` holding the cause when that server's export failed;
//! for a single server, `_single.json` or `_single.failed`. A failure is data for the scoring
//! job, which makes the server INVALID with its cause; only a folder that cannot be written at
//! all fails the command.
//!
//! Each side is exported with its own tree's server set: the base job lists the base's tables,
//! the head job the head's. The scoring job reconciles them: a server only the head has is gated
//! against an empty base, one only the base has is INVALID (unless `--server` names the servers
//! to gate), and a single server on one side against tables on the other is INVALID.

use std::path::{Path, PathBuf};

use crate::config::is_valid_server_name;
use crate::gate::base_settings::SettingsSource;
use crate::gate::export_dirs::{SETTINGS_FILE, SINGLE};
use crate::gate::{ServerOptions, SideSource};
use crate::progress::Progress;
use tdqs_core::error::{Error, Stage};
use tdqs_core::redact::redact;

/// Which side a folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Base,
    Head,
}

impl Side {
    pub fn label(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Head => "head",
        }
    }
}

/// What one export of the folder became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The server's name, or `_single`.
    pub name: String,
    /// `None` when exported, else the cause written to `NAME.failed`.
    pub failure: Option<String>,
    /// The whole error with its advice and the server's stderr, for the log.
    pub details: Option<String>,
}

/// What [`run`] needs.
pub struct ExportSide<'a> {
    pub repo: Option<&'a Path>,
    /// The revision to export (`--base`/`--head` of the gate's arguments), else the working tree.
    pub revision: Option<&'a str>,
    pub server: &'a ServerOptions,
    pub output_dir: &'a Path,
    pub side: Side,
}

/// Exports every server of the side into `output_dir` (created; it must be empty or missing).
pub async fn run(args: &ExportSide<'_>, progress: &dyn Progress) -> Result<Vec<Exported>, Error> {
    prepare_folder(args.output_dir)?;
    if args.side == Side::Base {
        write_base_settings(args)?;
    }
    let source = match args.revision {
        Some(rev) => SideSource::Revision(rev.to_string()),
        None => SideSource::WorkingTree,
    };
    let names = match crate::gate::export_dirs::list_servers(args.repo, args.revision, args.server)
    {
        Ok(names) => names,
        Err(e) => {
            // The configuration cannot be read: the side's single note says why, and the
            // scoring job makes the run INVALID with that cause.
            let cause = note_text(&e);
            write_note(args.output_dir, SINGLE, &cause)?;
            return Ok(vec![Exported {
                name: SINGLE.to_string(),
                failure: Some(cause),
                details: Some(redact(&e.render())),
            }]);
        }
    };
    let mut done = Vec::new();
    if names.is_empty() {
        done.push(export_one(args, &source, args.server, SINGLE, progress).await?);
        return Ok(done);
    }
    for name in names {
        if !is_valid_server_name(&name) {
            return Err(Error::internal(format!(
                "the configuration gave {name:?} as a server name"
            )));
        }
        let one = ServerOptions {
            server: Some(name.clone()),
            servers: vec![name.clone()],
            ..args.server.clone()
        };
        done.push(export_one(args, &source, &one, &name, progress).await?);
    }
    Ok(done)
}

async fn export_one(
    args: &ExportSide<'_>,
    source: &SideSource,
    server: &ServerOptions,
    name: &str,
    progress: &dyn Progress,
) -> Result<Exported, Error> {
    let result = crate::gate::sides::export_one(args.repo, source, server, &[], progress).await;
    // The server has stopped: nothing it left running may outlive its export (and rewrite the
    // folder after it was written).
    crate::platform::harden::end_detached();
    match result {
        Ok(export) => {
            let path = args.output_dir.join(format!("{name}.json"));
            crate::export::file::write_export(&path, &export)?;
            Ok(Exported {
                name: name.to_string(),
                failure: None,
                details: None,
            })
        }
        Err(e) => {
            let cause = note_text(&e);
            write_note(args.output_dir, name, &cause)?;
            Ok(Exported {
                name: name.to_string(),
                failure: Some(cause),
                details: Some(redact(&e.render())),
            })
        }
    }
}

/// Copies the base's judging settings (its `[decision]` table) into the base folder as
/// [`SETTINGS_FILE`], so that the scoring job, which checks out neither side, decides by them and
/// not by the defaults. Nothing is written when the base has no tdqs-gate.toml; a configuration
/// that cannot be read is left to the export's own note.
fn write_base_settings(args: &ExportSide<'_>) -> Result<(), Error> {
    let config = match args.revision {
        Some(rev) => SettingsSource::Revision(rev.to_string()).config(args.repo),
        None => working_tree_root(args.repo).and_then(|root| crate::config::Config::load(&root)),
    };
    let Ok(Some(config)) = config else {
        return Ok(());
    };
    let mut text = String::from(
        "# The base revision's [decision] settings, copied by `tdqs-gate ci export --side base`\n\
         # for the scoring job; the folder's digest covers this file.\n[decision]\n",
    );
    if let Some(drop) = config.decision.tool_drop {
        text.push_str(&format!("tool-drop = {drop}\n"));
    }
    if let Some(growth) = config.decision.max_listing_growth {
        text.push_str(&format!("max-listing-growth = {growth}\n"));
    }
    let path = args.output_dir.join(SETTINGS_FILE);
    crate::platform::atomic::write_atomically(&path, text.as_bytes(), Some(0o644)).map_err(|io| {
        Error::io(
            Stage::Export,
            format!("cannot write {}", path.display()),
            io,
        )
    })
}

/// The folder whose tdqs-gate.toml a working-tree export reads: the repository's working tree,
/// else the given folder, else the current one.
fn working_tree_root(repo: Option<&Path>) -> Result<PathBuf, Error> {
    if let Ok(opened) = crate::revision::open(repo) {
        if let Some(dir) = opened.workdir() {
            return Ok(dir.to_path_buf());
        }
    }
    match repo {
        Some(dir) => Ok(dir.to_path_buf()),
        None => std::env::current_dir()
            .map_err(|io| Error::io(Stage::Config, "cannot read the current folder", io)),
    }
}

/// The note's one line: the error's summary and advice, masked, without control characters.
fn note_text(e: &Error) -> String {
    let mut text = e.summary();
    if let Some(advice) = &e.advice {
        text.push_str(&format!(" ({advice})"));
    }
    redact(&text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn write_note(dir: &Path, name: &str, cause: &str) -> Result<(), Error> {
    let path = dir.join(format!("{name}.failed"));
    crate::platform::atomic::write_atomically(&path, format!("{cause}\n").as_bytes(), Some(0o644))
        .map_err(|io| {
            Error::io(
                Stage::Export,
                format!("cannot write {}", path.display()),
                io,
            )
        })
}

/// Creates the folder; one that already holds files is refused, so no file of an earlier run
/// (or of anyone else) travels as this side's export.
fn prepare_folder(dir: &Path) -> Result<(), Error> {
    let refuse = |what: String| {
        Error::usage(format!("the export folder {}: {what}", dir.display()))
            .with_advice("pass a new or empty folder to --output-dir")
    };
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if !meta.is_dir() => return Err(refuse("it is not a folder".to_string())),
        Ok(_) => {
            let mut entries = std::fs::read_dir(dir).map_err(|io| {
                Error::io(Stage::Export, format!("cannot read {}", dir.display()), io)
            })?;
            if entries.next().is_some() {
                return Err(refuse("it is not empty".to_string()));
            }
        }
        Err(_) => std::fs::create_dir_all(dir).map_err(|io| {
            Error::io(
                Stage::Export,
                format!("cannot create {}", dir.display()),
                io,
            )
            .with_advice("pass a folder that can be created")
        })?,
    }
    Ok(())
}

/// The folder's files, for messages: `NAME.json` or `NAME.failed`.
pub fn file_of(dir: &Path, exported: &Exported) -> PathBuf {
    let ext = if exported.failure.is_some() {
        "failed"
    } else {
        "json"
    };
    dir.join(format!("{}.{ext}", exported.name))
}

/// A digest of the folder's files (names and contents, in name order), regular files only. The
/// base job gives it as a job output, and the scoring job refuses a base folder that does not
/// match. Each file is streamed through the hash, so no size limit applies here: the scoring
/// job reads the exports under the run's own listing limit, which the base's settings may raise
/// above the default.
pub fn folder_digest(dir: &Path) -> Result<String, Error> {
    use crate::platform::safe_file::{open_regular, Links};
    use sha2::{Digest, Sha256};
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|io| Error::io(Stage::Export, format!("cannot read {}", dir.display()), io))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut all = Sha256::new();
    for name in names {
        let path = dir.join(&name);
        let cannot_read = |why: String| {
            Error::new(
                Stage::Export,
                format!("cannot read {}: {why}", path.display()),
            )
            .with_advice("an export folder holds only regular NAME.json and NAME.failed files")
        };
        let mut file =
            open_regular(&path, Links::Refuse).map_err(|e| cannot_read(e.to_string()))?;
        let mut one = Sha256::new();
        std::io::copy(&mut file, &mut one).map_err(|e| cannot_read(e.to_string()))?;
        all.update(format!("{name}\0{}\n", hex::encode(one.finalize())).as_bytes());
    }
    Ok(hex::encode(all.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_covers_names_and_contents_in_name_order() {
        use sha2::{Digest, Sha256};
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.json"), b"{\"tools\":[]}").unwrap();
        std::fs::write(dir.path().join("a.failed"), b"it crashed").unwrap();
        let mut expected = Sha256::new();
        for (name, bytes) in [
            ("a.failed", &b"it crashed"[..]),
            ("b.json", b"{\"tools\":[]}"),
        ] {
            expected.update(format!("{name}\0{}\n", hex::encode(Sha256::digest(bytes))).as_bytes());
        }
        assert_eq!(
            folder_digest(dir.path()).unwrap(),
            hex::encode(expected.finalize())
        );
    }

    #[test]
    fn an_export_over_the_default_file_limit_is_digested() {
        // A raised `max-listing-bytes` lets an export grow past the default 96 MiB; the digest
        // streams it (a sparse file: no disk is used).
        let dir = tempfile::tempdir().unwrap();
        let big = std::fs::File::create(dir.path().join("api.json")).unwrap();
        big.set_len(crate::export::file::MAX_EXPORT_FILE_BYTES + 1)
            .unwrap();
        assert_eq!(folder_digest(dir.path()).unwrap().len(), 64);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_the_folder_is_refused_with_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("real.json"), b"{}").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real.json"), dir.path().join("api.json"))
            .unwrap();
        let e = folder_digest(dir.path()).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }
}
