//! Proof that a leftover folder is the gate's own and that no running gate still uses it.
//!
//! Names are no proof (a user may create `tdqs-gate-123-0a1b2c3d` by hand, for instance by
//! following a "reproduce with" line) and pids are no liveness test (a gate in another PID
//! namespace, such as a devcontainer sharing the checkout, has pids this one cannot see). So every
//! folder the gate creates for a run gets a marker file, written at creation with a random token,
//! and the marker stays `flock`ed for as long as the run uses the folder. A later run removes a
//! leftover only when
//! - the marker is there, is a regular file (not a symlink) and has the gate's format, and
//! - it can take the lock itself (the kernel drops a lock when its holder dies, even by SIGKILL,
//!   and `flock` works across PID namespaces on the same machine).
//!
//! Anything else is left alone.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

/// The marker's file name, inside the folder it speaks for (or the worktree's admin folder).
pub const MARKER: &str = ".tdqs-gate-owner";
const HEADER: &str = "tdqs-gate owner marker v1";

/// A held marker: the folder belongs to this run while the value lives.
#[derive(Debug)]
pub struct Claim {
    file: File,
    token: String,
}

impl Claim {
    /// The random token written into the marker.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The open marker, for callers that also lock other things on it.
    pub fn file(&self) -> &File {
        &self.file
    }
}

/// Writes a new marker into `dir` (which must exist and must not hold one) and locks it.
/// `note` is one line of free text kept in the marker (for example the commit checked out).
pub fn claim(dir: &Path, note: &str) -> io::Result<Claim> {
    let token = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    let path = dir.join(MARKER);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    lock_exclusive(&file, true)?;
    let note = note.replace(['\n', '\r'], " ");
    write!(
        file,
        "{HEADER}\ntoken {token}\npid {}\nnote {note}\n",
        std::process::id()
    )?;
    file.sync_all().ok();
    Ok(Claim { file, token })
}

/// What [`take`] found.
#[derive(Debug)]
pub enum Take {
    /// No marker of the gate's format: not provably the gate's, leave it.
    NotOurs,
    /// A gate's marker that another process holds: a running gate uses it.
    InUse,
    /// A gate's marker nobody holds: the run that created it is gone. The returned claim holds
    /// the lock while the caller removes the folder. The note written at creation is included.
    Abandoned { claim: Claim, note: String },
}

/// Tries to take over the marker in `dir` (never blocks).
pub fn take(dir: &Path) -> Take {
    let path = dir.join(MARKER);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_file() => {}
        _ => return Take::NotOurs,
    }
    let Ok(mut file) = OpenOptions::new().read(true).open(&path) else {
        return Take::NotOurs;
    };
    let mut text = String::new();
    if Read::by_ref(&mut file)
        .take(4096)
        .read_to_string(&mut text)
        .is_err()
    {
        return Take::NotOurs;
    }
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Take::NotOurs;
    }
    let token = match lines.next().and_then(|l| l.strip_prefix("token ")) {
        Some(t) if t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()) => t.to_string(),
        _ => return Take::NotOurs,
    };
    let note = text
        .lines()
        .find_map(|l| l.strip_prefix("note "))
        .unwrap_or_default()
        .to_string();
    match lock_exclusive(&file, false) {
        Ok(()) => Take::Abandoned {
            claim: Claim { file, token },
            note,
        },
        Err(_) => Take::InUse,
    }
}

/// Whether a run holds the marker in `dir` right now (a marker of the gate's format that cannot
/// be locked).
pub fn is_held(dir: &Path) -> bool {
    matches!(take(dir), Take::InUse)
}

#[cfg(unix)]
fn lock_exclusive(file: &File, _creating: bool) -> io::Result<()> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a descriptor this function borrows; no memory is shared with the kernel.
    let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn lock_exclusive(_file: &File, creating: bool) -> io::Result<()> {
    // Without flock no leftover can be proven abandoned: only the creator "holds" it.
    if creating {
        Ok(())
    } else {
        Err(io::Error::other("no file locks on this platform"))
    }
}

/// Holds an exclusive `flock` on a folder itself (no file is created, so nothing is left
/// behind), blocking until it is free. Serialises the few steps two gates must not interleave.
#[derive(Debug)]
pub(crate) struct FolderLock {
    _file: Option<File>,
}

/// Locks `dir` exclusively, waiting for other holders. Failing to lock (a platform or file
/// system without `flock`) returns an unlocked guard: the steps then run as before.
pub(crate) fn lock_folder(dir: &Path) -> FolderLock {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        if let Ok(file) = File::open(dir) {
            loop {
                // SAFETY: flock on a descriptor owned by `file`.
                let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
                if result == 0 {
                    return FolderLock { _file: Some(file) };
                }
                if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break;
                }
            }
        }
        FolderLock { _file: None }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        FolderLock { _file: None }
    }
}

/// A process found by [`processes_inside`]: its pid and command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundProcess {
    pub pid: u32,
    pub command: String,
}

/// Processes whose working directory is `dir` or inside it, or with an environment variable
/// pointing there (a temporary `HOME`) (Linux: read from `/proc`; other systems: none found). Used to report, never to kill, what an earlier run left running.
pub(crate) fn processes_inside(dir: &Path) -> Vec<FoundProcess> {
    #[cfg(target_os = "linux")]
    {
        let mut found = Vec::new();
        let Ok(dir) = dir.canonicalize() else {
            return found;
        };
        for (pid, folder) in super::procfs::processes() {
            let in_cwd = fs::read_link(folder.join("cwd"))
                .map(|cwd| cwd.starts_with(&dir))
                .unwrap_or(false);
            // A server's temporary home is its HOME (and XDG folders), not its working folder.
            let in_env = || {
                let Ok(environ) = fs::read(folder.join("environ")) else {
                    return false;
                };
                let prefix = dir.as_os_str().as_encoded_bytes();
                environ.split(|&b| b == 0).any(|pair| {
                    pair.iter()
                        .position(|&b| b == b'=')
                        .map(|eq| pair[eq + 1..].starts_with(prefix))
                        .unwrap_or(false)
                })
            };
            if in_cwd || in_env() {
                found.push(FoundProcess {
                    pid,
                    command: command_line(pid),
                });
            }
        }
        found
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        Vec::new()
    }
}

/// The command line of `pid` (arguments joined by spaces, secrets masked), or `?`.
pub(crate) fn command_line(pid: u32) -> String {
    let text = fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            bytes
                .split(|&b| b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let text: String = text.chars().take(200).collect();
    if text.is_empty() {
        "?".to_string()
    } else {
        tdqs_core::redact::redact(&text)
    }
}

/// `pid 123 (node server.js), pid 456 (sleep 60)`.
pub(crate) fn describe_processes(found: &[FoundProcess]) -> String {
    found
        .iter()
        .map(|p| format!("pid {} ({})", p.pid, p.command))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Prefixes of the temporary folders the gate creates next to its worktrees: a server's
/// temporary home and a Claude Code judge call's scratch folder.
pub(crate) const TEMP_FOLDER_PREFIXES: [&str; 3] =
    ["tdqs-gate-home-", "tdqs-judge-", "tdqs-gate-copy-"];

fn kept_claims() -> &'static std::sync::Mutex<Vec<Claim>> {
    static KEPT: std::sync::OnceLock<std::sync::Mutex<Vec<Claim>>> = std::sync::OnceLock::new();
    KEPT.get_or_init(|| std::sync::Mutex::new(Vec::new()))
}

/// Marks `dir` as this run's and keeps the lock until the process ends (for the few folders,
/// one per side, whose owner cannot hold a [`Claim`] itself). A failure is ignored: the folder
/// is then simply never removed by a later run.
pub(crate) fn claim_for_process(dir: &Path) {
    if let Ok(claim) = claim(dir, "") {
        kept_claims()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(claim);
    }
}

/// Removes `tdqs-gate-home-*` and `tdqs-judge-*` folders in the temporary directory that a
/// killed run left: only those holding the gate's marker, unlocked, with no process running
/// inside (those are reported, not killed). Returns what was removed and what was kept (as
/// warnings).
pub fn prune_temp_folders() -> (Vec<String>, Vec<String>) {
    let mut removed = Vec::new();
    let mut kept = Vec::new();
    let Ok(temp) = std::env::temp_dir().canonicalize() else {
        return (removed, kept);
    };
    let Ok(entries) = fs::read_dir(&temp) else {
        return (removed, kept);
    };
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !TEMP_FOLDER_PREFIXES.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let path = entry.path();
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {}
            _ => continue,
        }
        let Take::Abandoned { claim, .. } = take(&path) else {
            continue;
        };
        let inside = processes_inside(&path);
        if !inside.is_empty() {
            kept.push(format!(
                "kept {}: left by an earlier run and still in use by {} (not killed; end them, then the next run removes the folder)",
                path.display(),
                describe_processes(&inside)
            ));
            continue;
        }
        match fs::remove_dir_all(&path) {
            Ok(()) => removed.push(path.display().to_string()),
            Err(e) => kept.push(format!(
                "cannot remove {} left by an earlier run: {e}",
                path.display()
            )),
        }
        drop(claim);
    }
    (removed, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_folder_is_in_use_until_the_claim_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = claim(dir.path(), "note text").expect("claim");
        assert_eq!(held.token().len(), 32);
        assert!(matches!(take(dir.path()), Take::InUse));
        assert!(is_held(dir.path()));
        drop(held);
        match take(dir.path()) {
            Take::Abandoned { note, .. } => assert_eq!(note, "note text"),
            other => panic!("expected abandoned, got {other:?}"),
        }
    }

    #[test]
    fn a_folder_without_a_well_formed_marker_is_not_ours() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(matches!(take(dir.path()), Take::NotOurs));
        fs::write(dir.path().join(MARKER), "something else\n").expect("write");
        assert!(matches!(take(dir.path()), Take::NotOurs));
        fs::write(dir.path().join(MARKER), format!("{HEADER}\ntoken short\n")).expect("write");
        assert!(matches!(take(dir.path()), Take::NotOurs));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_marker_is_not_ours() {
        let dir = tempfile::tempdir().expect("tempdir");
        let other = tempfile::tempdir().expect("tempdir");
        drop(claim(other.path(), "").expect("claim"));
        std::os::unix::fs::symlink(other.path().join(MARKER), dir.path().join(MARKER))
            .expect("symlink");
        assert!(matches!(take(dir.path()), Take::NotOurs));
    }
}
