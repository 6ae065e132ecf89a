//! Git fixture repositories built with the `git` command line, and snapshots of everything a
//! run of the gate must leave as it found it.
//!
//! Every `git` call runs without the caller's `GIT_*` variables and without system or global
//! configuration, with fixed identities and dates, so fixture commits have the same ids on every
//! machine and a developer's git setup (hooks, signing, default branch) cannot leak in.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A `git` command for `dir`, isolated from the environment's git configuration.
pub fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    command
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Fixture Author")
        .env("GIT_AUTHOR_EMAIL", "author@fixture.invalid")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_NAME", "Fixture Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@fixture.invalid")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.autocrlf=false",
        ]);
    command
}

/// Runs git in `dir`, panicking with its stderr on failure; returns stdout.
pub fn git<I, S>(dir: &Path, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    let output = git_command(dir)
        .args(&args)
        .output()
        .expect("git can be run");
    assert!(
        output.status.success(),
        "git {:?} failed in {}:\n{}",
        args,
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("git prints UTF-8")
}

/// A repository in a temporary folder, removed when dropped.
pub struct GitRepo {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl GitRepo {
    /// An empty repository on branch `main`.
    pub fn init() -> GitRepo {
        let dir = tempfile::Builder::new()
            .prefix("gitrepo-")
            .tempdir()
            .expect("temp folder");
        let path = dir
            .path()
            .canonicalize()
            .expect("canonical temp folder")
            .join("repo");
        fs::create_dir(&path).expect("repo folder");
        git(&path, ["init", "-q"]);
        GitRepo { _dir: dir, path }
    }

    /// A `git clone --depth=<depth>` of this repository (through `file://`, so the depth is
    /// honoured).
    pub fn shallow_clone(&self, depth: u32) -> GitRepo {
        let dir = tempfile::Builder::new()
            .prefix("gitrepo-")
            .tempdir()
            .expect("temp folder");
        let parent = dir.path().canonicalize().expect("canonical temp folder");
        let url = format!("file://{}", self.path.display());
        git(
            &parent,
            ["clone", "-q", &format!("--depth={depth}"), &url, "repo"],
        );
        GitRepo {
            _dir: dir,
            path: parent.join("repo"),
        }
    }

    pub fn git<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        git(&self.path, args)
    }

    /// Runs git without checking the outcome.
    pub fn git_output<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        git_command(&self.path)
            .args(args)
            .output()
            .expect("git can be run")
    }

    /// Writes a file (creating folders), mode 0644.
    pub fn write(&self, relative: &str, contents: &str) -> &Self {
        self.write_mode(relative, contents, 0o644)
    }

    /// Writes a file with the executable bit set (mode 0755).
    pub fn write_executable(&self, relative: &str, contents: &str) -> &Self {
        self.write_mode(relative, contents, 0o755)
    }

    fn write_mode(&self, relative: &str, contents: &str, mode: u32) -> &Self {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path.join(relative);
        fs::create_dir_all(path.parent().expect("file has a folder")).expect("folders");
        fs::write(&path, contents).expect("write file");
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("set mode");
        self
    }

    /// Creates (or replaces) a symbolic link at `relative` pointing to `target`.
    pub fn symlink(&self, relative: &str, target: &str) -> &Self {
        let path = self.path.join(relative);
        fs::create_dir_all(path.parent().expect("link has a folder")).expect("folders");
        let _ = fs::remove_file(&path);
        std::os::unix::fs::symlink(target, &path).expect("symlink");
        self
    }

    pub fn remove(&self, relative: &str) -> &Self {
        fs::remove_file(self.path.join(relative)).expect("remove file");
        self
    }

    /// Stages everything and commits; returns the new commit id.
    pub fn commit_all(&self, message: &str) -> String {
        self.git(["add", "-A"]);
        self.git(["commit", "-q", "-m", message]);
        self.rev_parse("HEAD")
    }

    pub fn rev_parse(&self, rev: &str) -> String {
        self.git(["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
            .trim()
            .to_string()
    }

    /// Everything about the repository a run of the gate must not change.
    pub fn snapshot(&self) -> RepoSnapshot {
        let gitdir = self.path.join(".git");
        RepoSnapshot {
            head: fs::read_to_string(gitdir.join("HEAD")).expect("HEAD"),
            worktree_list: self.git(["worktree", "list", "--porcelain"]),
            branches: self.git(["branch", "-a"]),
            refs: self.git(["for-each-ref"]),
            // --no-optional-locks: reading the status must not refresh (rewrite) the index.
            status: self.git([
                "--no-optional-locks",
                "status",
                "--porcelain=v1",
                "--ignored",
                "--untracked-files=all",
            ]),
            index: fs::read(gitdir.join("index"))
                .map(|bytes| digest(&bytes))
                .ok(),
            worktree_entries: list_dir(&gitdir.join("worktrees")),
            reflogs: list_files(&gitdir.join("logs")),
            files: tree_files(&self.path),
            temp_worktrees: self.temp_worktrees(),
        }
    }

    /// Folders in the system temporary directory named like the gate's worktrees whose `.git`
    /// file points into this repository.
    pub fn temp_worktrees(&self) -> Vec<PathBuf> {
        let marker = self.path.join(".git").join("worktrees");
        let marker = marker.to_string_lossy();
        let temp = std::env::temp_dir().canonicalize().expect("temp dir");
        let mut found: Vec<PathBuf> = fs::read_dir(&temp)
            .expect("read temp dir")
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("tdqs-gate-"))
            .filter(|entry| {
                fs::read_to_string(entry.path().join(".git")).is_ok_and(|text| text.contains(marker.as_ref()))
                    // A folder whose .git file was never written: named after an entry of ours.
                    || self.path.join(".git/worktrees").join(entry.file_name()).exists()
            })
            .map(|entry| entry.path())
            .collect();
        found.sort();
        found
    }
}

/// What [`GitRepo::snapshot`] records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoSnapshot {
    pub head: String,
    pub worktree_list: String,
    pub branches: String,
    pub refs: String,
    pub status: String,
    /// A digest of `.git/index`.
    pub index: Option<u64>,
    /// Names under `.git/worktrees` (`None` when the folder does not exist).
    pub worktree_entries: Option<Vec<String>>,
    /// Reflog files under `.git/logs`.
    pub reflogs: Vec<String>,
    /// Every file of the working tree (outside `.git`): kind, mode and content digest.
    pub files: BTreeMap<String, String>,
    pub temp_worktrees: Vec<PathBuf>,
}

fn digest(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

fn list_dir(dir: &Path) -> Option<Vec<String>> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Some(names)
}

fn list_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(dir, dir, &mut |relative, _| out.push(relative.to_string()));
    out.sort();
    out
}

/// Each file and symlink under `root` (skipping `.git`), as kind/mode/digest.
pub fn tree_files(root: &Path) -> BTreeMap<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    walk(root, root, &mut |relative, path| {
        let meta = fs::symlink_metadata(path).expect("metadata");
        let description = if meta.file_type().is_symlink() {
            format!(
                "link -> {}",
                fs::read_link(path).expect("read link").display()
            )
        } else {
            let bytes = fs::read(path).expect("read file");
            format!(
                "file {:o} {:016x}",
                meta.permissions().mode() & 0o777,
                digest(&bytes)
            )
        };
        out.insert(relative.to_string(), description);
    });
    out
}

fn walk(root: &Path, dir: &Path, visit: &mut dyn FnMut(&str, &Path)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let relative = path
            .strip_prefix(root)
            .expect("under root")
            .to_string_lossy()
            .into_owned();
        if relative == ".git" {
            continue;
        }
        let file_type = entry.file_type().expect("file type");
        if file_type.is_dir() {
            walk(root, &path, visit);
        } else {
            visit(&relative, &path);
        }
    }
}
