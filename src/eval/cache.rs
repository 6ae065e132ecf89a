//! The answer cache: one JSON file per answer under `.tdqs/eval-cache/` (by default), named by
//! its key, hash(judge and model, prompt, tool-set digest). Commit the folder and `--offline`
//! replays the run with no key and no network.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use tdqs_core::error::{Error, Stage};
use tdqs_core::judge::TokenUsage;

use crate::platform::safe_file::{first_link_below, read_regular, Links, ReadError};

/// The cache folder, relative to the repository root.
pub const DEFAULT_DIR: &str = ".tdqs/eval-cache";

pub(crate) const MAX_ENTRY_BYTES: u64 = 4 * 1024 * 1024;

/// One cached answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub key: String,
    pub selector: String,
    pub model: String,
    pub case_id: String,
    pub tool_set_digest: String,
    /// The answer text exactly as the judge returned it.
    pub text: String,
    pub usage: TokenUsage,
    pub latency_ms: u64,
}

fn path_of(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.json"))
}

/// Refuses a cache folder reached through a symbolic link below `tree` (the repository the
/// folder sits in; `None` for a folder given on the command line): the head of a pull request
/// could otherwise point the cache's writes at any folder of the user.
fn refuse_links(dir: &Path, tree: Option<&Path>) -> Result<(), Error> {
    match tree.and_then(|root| first_link_below(root, dir)) {
        None => Ok(()),
        Some(link) => Err(Error::new(
            Stage::Eval,
            format!(
                "the eval cache {} is reached through the symbolic link {}, which is not followed",
                dir.display(),
                link.display()
            ),
        )
        .with_advice("make the cache folder a real folder of the repository (delete the link), or give --eval-cache DIR")),
    }
}

/// The entry under `key`, if any. A file that exists but cannot be read or parsed is an error:
/// a damaged cache must not turn into a silent re-ask.
pub fn get(dir: &Path, tree: Option<&Path>, key: &str) -> Result<Option<Entry>, Error> {
    refuse_links(dir, tree)?;
    let path = path_of(dir, key);
    let bytes = match read_regular(&path, Links::Refuse, MAX_ENTRY_BYTES) {
        Ok(b) => b,
        Err(ReadError::NotFound) => return Ok(None),
        Err(e) => {
            return Err(Error::new(
                Stage::Eval,
                format!("cannot read the cached answer {}: {e}", path.display()),
            ))
        }
    };
    parse(&path, key, &bytes).map(Some)
}

/// Parses one entry read from `path` (a file, or a blob of a committed tree) under `key`.
pub(crate) fn parse(path: &Path, key: &str, bytes: &[u8]) -> Result<Entry, Error> {
    let entry: Entry = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(
            Stage::Eval,
            format!("the cached answer {} is damaged: {e}", path.display()),
        )
        .with_advice("delete that file and run again without --offline to ask again")
    })?;
    if entry.key != key {
        return Err(Error::new(
            Stage::Eval,
            format!("the cached answer {} holds another key", path.display()),
        )
        .with_advice("delete that file and run again without --offline to ask again"));
    }
    Ok(entry)
}

/// Stores an entry (atomically: a run stopped mid-write leaves no half file). No symbolic link
/// below `tree` is followed, before or after the folder is created; the final rename replaces a
/// link at the entry's own name instead of writing through it.
pub fn put(dir: &Path, tree: Option<&Path>, entry: &Entry) -> Result<(), Error> {
    refuse_links(dir, tree)?;
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(
            Stage::Eval,
            format!("cannot create the eval cache {}: {e}", dir.display()),
        )
    })?;
    let mut bytes = serde_json::to_vec_pretty(entry)
        .map_err(|e| Error::internal(format!("cannot serialise a cached answer: {e}")))?;
    bytes.push(b'\n');
    refuse_links(dir, tree)?;
    let path = path_of(dir, &entry.key);
    crate::platform::atomic::write_atomically(&path, &bytes, None).map_err(|e| {
        Error::new(
            Stage::Eval,
            format!("cannot write the cached answer {}: {e}", path.display()),
        )
    })
}
