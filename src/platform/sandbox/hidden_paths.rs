//! Which files a server's plan names that the sandbox hides from it.
//!
//! The sandbox replaces `/tmp`, `/home`, `/root` and the gate's own `$HOME` and `$TMPDIR` with
//! empty folders. A plan that names a file there (`--command "node /home/me/server.js"`, an env
//! value `CONFIG=/tmp/x.json`, a setup command's argument) finds nothing at that path inside the
//! sandbox, and the server fails with a bare "no such file". The gate looks for such paths when a
//! sandboxed server fails, so that the error can say the sandbox hid them and how to fix it.

use std::path::{Path, PathBuf};

use super::{inside_any, Mounts};

/// The absolute paths among `words` (a command, its arguments, env values) that lie strictly
/// below a folder the sandbox hides, in no folder it shows again (the side's tree, the temporary
/// home, the tool folders, the package cache), and that `exists` on the host: the files the plan
/// names that the sandboxed server cannot see. A hidden folder itself is not reported (the
/// sandbox has an empty one, as a `TMPDIR=/tmp` expects). In the order found, each once.
pub fn hidden_paths_named<'a>(
    mounts: &Mounts,
    words: impl IntoIterator<Item = &'a str>,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let shown: Vec<PathBuf> = mounts
        .writable
        .iter()
        .chain(mounts.read_only.iter())
        .cloned()
        .collect();
    let mut found: Vec<PathBuf> = Vec::new();
    for word in words {
        for candidate in candidates(word) {
            let path = Path::new(candidate);
            let hidden = mounts
                .hide
                .iter()
                .any(|root| path.starts_with(root) && path != root);
            if hidden
                && !inside_any(path, &shown)
                && exists(path)
                && !found.iter().any(|f| f == path)
            {
                found.push(path.to_path_buf());
            }
        }
    }
    found
}

/// The absolute paths a word may hold: the word itself, the value of `--flag=/path` or
/// `NAME=/path`, and each entry of a `:`-separated list (`PATH`-like values).
fn candidates(word: &str) -> Vec<&str> {
    let value = word.split_once('=').map(|(_, value)| value);
    let mut out: Vec<&str> = Vec::new();
    for part in std::iter::once(word).chain(value) {
        for entry in part.split(':').map(str::trim) {
            if entry.starts_with('/') && !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mounts() -> Mounts {
        Mounts {
            hide: vec![PathBuf::from("/tmp"), PathBuf::from("/home")],
            writable: vec![
                PathBuf::from("/tmp/tdqs-gate-abc/tree"),
                PathBuf::from("/tmp/home-xyz"),
            ],
            read_only: vec![PathBuf::from("/home/me/.nvm/versions/node/v22")],
            ..Mounts::default()
        }
    }

    #[test]
    fn only_existing_files_below_a_hidden_folder_and_not_shown_again_are_named() {
        let on_host = |p: &Path| {
            [
                "/home/me/server.js",
                "/tmp/config.json",
                "/tmp/tdqs-gate-abc/tree/server.js",
                "/home/me/.nvm/versions/node/v22/bin/node",
            ]
            .iter()
            .any(|f| p == Path::new(f))
        };
        let words = [
            "/home/me/.nvm/versions/node/v22/bin/node",
            "/home/me/server.js",
            "--config=/tmp/config.json",
            "/tmp/tdqs-gate-abc/tree/server.js",
            "/home/me/missing.js",
            "/tmp",
            "PATH=/usr/bin:/home/me/server.js",
            "relative/path",
            "/usr/bin/python3",
        ];
        assert_eq!(
            hidden_paths_named(&mounts(), words, &on_host),
            vec![
                PathBuf::from("/home/me/server.js"),
                PathBuf::from("/tmp/config.json")
            ]
        );
    }

    #[test]
    fn a_plan_inside_the_tree_names_nothing() {
        let words = ["/tmp/tdqs-gate-abc/tree/server.py", "TMPDIR=/tmp"];
        assert!(hidden_paths_named(&mounts(), words, &|_| true).is_empty());
    }
}
