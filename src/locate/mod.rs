//! Reads a side's source tree for [`tdqs_core::locate`]: a bounded walk that never follows a
//! symbolic link (the tree is pull-request content, so a link could point anywhere), skips
//! dependency and build folders, and reads only files that can define a tool.
//!
//! `locate(tree, &export)` is the one call the gate and `lint` make; the matching itself is pure
//! code in the core crate.

pub mod sarif;

use std::path::Path;

use tdqs_core::error::{Error, Stage};
use tdqs_core::export::Export;
pub use tdqs_core::locate::{Confidence, Locations, Place, SourceFile, Span};

/// Folders never read: version control, dependencies, virtual environments and build output.
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "dist",
    "build",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
    "vendor",
    // The gate's own report folder: its reports quote every description of both sides.
    ".tool-definition-score",
];

/// Bounds of one walk.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    /// Larger files are skipped (generated bundles, data).
    pub max_file_bytes: u64,
    /// The walk stops after this many source files.
    pub max_files: usize,
    /// The walk stops once the files read reach this many bytes together.
    pub max_total_bytes: u64,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_file_bytes: 1024 * 1024,
            max_files: 20_000,
            max_total_bytes: 256 * 1024 * 1024,
        }
    }
}

/// The files read from one tree, and whether the walk stopped at its bound.
#[derive(Debug, Default)]
pub struct Tree {
    pub files: Vec<SourceFile>,
    /// True when a bound stopped the walk: tools may then be "not located" wrongly.
    pub truncated: bool,
}

/// Reads the source files under `root` (sorted, so two walks give the same order).
pub fn read_tree(root: &Path, limits: WalkLimits) -> Result<Tree, Error> {
    // The root is the caller's choice and may itself be a link; links under it are not followed.
    let meta = std::fs::metadata(root)
        .map_err(|e| Error::io(Stage::Usage, format!("source tree {}", root.display()), e))?;
    if !meta.is_dir() {
        return Err(Error::usage(format!(
            "the source tree {} is not a folder",
            root.display()
        ))
        .with_advice(
            "give --source the folder that holds the server's code (the repository root)",
        ));
    }
    let mut tree = Tree::default();
    let mut total: u64 = 0;
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue; // an unreadable folder holds nothing we can point at
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        let mut subdirs = Vec::new();
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            // file_type() does not follow links: a link is neither a dir nor a file here.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if kind.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    subdirs.push((entry.path(), path));
                }
                continue;
            }
            if !kind.is_file() || tdqs_core::locate::Lang::of_path(&name).is_none() {
                continue;
            }
            if name == "package-lock.json" || name.ends_with(".min.js") {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.len() > limits.max_file_bytes {
                continue;
            }
            if tree.files.len() >= limits.max_files
                || total.saturating_add(meta.len()) > limits.max_total_bytes
            {
                tree.truncated = true;
                return Ok(tree);
            }
            let Ok(bytes) = std::fs::read(entry.path()) else {
                continue;
            };
            // A file that grew past the bound between stat and read is skipped too.
            if bytes.len() as u64 > limits.max_file_bytes {
                continue;
            }
            total += bytes.len() as u64;
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            tree.files.push(SourceFile { path, text });
        }
        // Depth first in name order: push in reverse so the first name is read first.
        stack.extend(subdirs.into_iter().rev());
    }
    Ok(tree)
}

/// Where each tool and described parameter of `export` is defined under `tree`.
pub fn locate(tree: &Path, export: &Export) -> Result<Locations, Error> {
    let files = read_tree(tree, WalkLimits::default())?;
    let mut locations = tdqs_core::locate::locate_in(&files.files, export);
    locations.truncated = files.truncated;
    Ok(locations)
}
