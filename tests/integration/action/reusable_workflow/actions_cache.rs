//! The stand-in of the repository's Actions cache for the workflow runner: a folder of
//! entries, each a numbered folder holding its `key` and `content/`, numbered in the order saved
//! (so the newest is last). `actions/cache/restore` and `save` of the workflow's jobs use it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::copy_tree;

/// `actions/cache/restore`: the entry named `key`, else the newest entry whose key starts with
/// the first `restore-keys` line that matches any, copied to `path`. Outputs as the action's.
pub(super) fn restore(store: &Path, with: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let entries = entries(store);
    let key = &with["key"];
    let found = entries.iter().find(|(k, _)| k == key).or_else(|| {
        with.get("restore-keys")
            .into_iter()
            .flat_map(|keys| keys.lines())
            .map(str::trim)
            .filter(|prefix| !prefix.is_empty())
            .find_map(|prefix| entries.iter().rev().find(|(k, _)| k.starts_with(prefix)))
    });
    let mut outputs = BTreeMap::new();
    outputs.insert(
        "cache-hit".to_string(),
        found.is_some_and(|(k, _)| k == key).to_string(),
    );
    if let Some((matched, dir)) = found {
        copy_tree(&dir.join("content"), Path::new(&with["path"]));
        outputs.insert("cache-matched-key".to_string(), matched.clone());
    }
    outputs
}

/// `actions/cache/save`: a new entry under `key` holding `path`; a key that exists is left as
/// it is (entries are immutable), a missing path saves nothing. Returns the step's log.
pub(super) fn save(store: &Path, with: &BTreeMap<String, String>) -> String {
    let key = &with["key"];
    let source = Path::new(&with["path"]);
    if !source.exists() {
        return format!("Path does not exist: {}; no cache saved", source.display());
    }
    if entries(store).iter().any(|(k, _)| k == key) {
        return format!("a cache entry for the key {key} exists already; not saved");
    }
    let dir = store.join(format!("{:06}", entries(store).len()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("key"), key).unwrap();
    copy_tree(source, &dir.join("content"));
    format!("Cache saved with key: {key}")
}

/// The store's entries (key, folder), oldest first: each folder is numbered in the order saved
/// and holds `key` and `content/`.
pub(super) fn entries(store: &Path) -> Vec<(String, PathBuf)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(store)
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|d| Some((std::fs::read_to_string(d.join("key")).ok()?, d)))
        .collect()
}
