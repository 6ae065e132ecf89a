//! The sandbox around every process the pull request controls: each side's setup commands and
//! its server run inside bubblewrap (`bwrap`, Linux), the tool Flatpak and Claude Code use to
//! confine the commands they run. See docs/security.md ("The sandbox") for what it removes and
//! what it cannot.
//!
//! What one sandboxed process gets:
//! - **Its own PID namespace and `/proc`.** It sees only its own descendants: not the gate, not
//!   the shell or CI step that started the gate (`/proc/<ancestor>/environ`), not the judge, not
//!   the other side. `bwrap`'s init (pid 1 inside) reaps orphans; when the command it runs
//!   ends, the namespace ends and the kernel kills everything left in it, daemons included.
//!   `--die-with-parent` kills the sandbox when the gate dies, even by SIGKILL.
//! - **No privileges.** Every capability dropped, `no_new_privs` set (a setuid `sudo` does not
//!   elevate), a new session (no controlling terminal to inject input into).
//! - **A file system of its own.** The machine's folders read-only; `/tmp`, `/var/tmp`, `/run`
//!   (where sockets such as Docker's live) and every home folder (`/home`, `/root`, the gate's
//!   `$HOME` and the password database's one) replaced by empty private folders; then, on top:
//!   the tools of the server's `PATH` that live in a hidden folder (read-only), the side's tree
//!   and the temporary HOME (writable), the package cache (writable for the gate's base side
//!   only, see [`CacheUse`]), and the repository's git folders read-only, so setup cannot
//!   `git stash clear` or `git branch -D` in the user's repository.
//! - **Only the environment the gate passes.** `bwrap` itself starts from the spec's
//!   environment (never the gate's), which it hands on unchanged; values never go on a command
//!   line, where `/proc/<pid>/cmdline` would show them.
//! - **A process limit.** A watchdog counts the processes of the sandbox's PID namespace and
//!   kills the sandbox when they pass the limit; for a user other than root the kernel's
//!   `RLIMIT_NPROC` also stops a fork bomb faster than any watchdog could (the kernel exempts
//!   root from that limit).
//! - **Network** for setup commands (they download dependencies); for the server it is the
//!   `[sandbox] server-network` setting, on by default: package runners (`npx -y`, `uvx`)
//!   download the server when it starts, and a server speaking HTTP listens on a loopback port
//!   the gate must reach, which a network namespace of its own would hide.
//!
//! The argument list is built by a pure function ([`bwrap_args`]) from [`Mounts`], unit-tested
//! here; [`probe`] finds out once per run whether `bwrap` works on this machine and why not.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tdqs_core::error::{Error, Result, Stage};
use tdqs_core::sandbox::{SandboxKind, SandboxRecord};

pub mod hidden_paths;

/// Processes at once inside one sandbox unless `[sandbox] max-processes` says otherwise: far
/// above what `npm ci`, `uv sync` or a build with a few jobs starts, far below a fork bomb.
pub const DEFAULT_MAX_PROCESSES: u32 = 256;
/// The variable that sets `--sandbox` from the workflow's environment.
pub const SANDBOX_ENV: &str = "TDQS_GATE_SANDBOX";
/// How often the watchdog counts a sandbox's processes.
const WATCH_INTERVAL: Duration = Duration::from_millis(20);

// ---------------------------------------------------------------------------------------------
// Settings

/// `--sandbox` and `[sandbox] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// Sandboxed when bubblewrap works here; otherwise a warning outside CI, INVALID in CI.
    Auto,
    /// Sandboxed, or INVALID with the reason and the fix.
    On,
    /// Never sandboxed (in CI only the workflow may choose this: `--sandbox off`).
    Off,
}

impl SandboxMode {
    pub fn parse(text: &str) -> Option<SandboxMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(SandboxMode::Auto),
            "on" | "true" | "required" => Some(SandboxMode::On),
            "off" | "false" | "none" => Some(SandboxMode::Off),
            _ => None,
        }
    }
}

/// The `[sandbox]` table of tdqs-gate.toml.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// `mode`: `auto` (default), `on` or `off`.
    pub mode: Option<SandboxMode>,
    /// `server-network`: whether the server (not its setup) may use the network.
    pub server_network: bool,
    /// `max-processes`: most processes at once in one sandbox.
    pub max_processes: u32,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: None,
            server_network: true,
            max_processes: DEFAULT_MAX_PROCESSES,
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSandbox {
    mode: Option<String>,
    server_network: Option<bool>,
    max_processes: Option<i64>,
}

/// Reads the `[sandbox]` table (`None`: absent). `path` names the file in messages.
pub fn parse_config(table: Option<&toml::Value>, path: &Path) -> Result<SandboxConfig> {
    let Some(table) = table else {
        return Ok(SandboxConfig::default());
    };
    let fail = |message: String| {
        Error::new(
            Stage::Config,
            format!("{} [sandbox]: {message}", path.display()),
        )
    };
    let raw: RawSandbox = table.clone().try_into().map_err(|e: toml::de::Error| {
        fail(e.message().trim().to_string()).with_advice(
            "the keys of [sandbox] are `mode` (\"auto\", \"on\" or \"off\"), `server-network` \
             (true or false) and `max-processes` (16 to 65536)",
        )
    })?;
    let mode = match raw.mode.as_deref() {
        None => None,
        Some(text) => Some(SandboxMode::parse(text).ok_or_else(|| {
            fail(format!("mode = \"{text}\" is not one of auto, on, off"))
                .with_advice("write mode = \"auto\", \"on\" or \"off\"")
        })?),
    };
    let max_processes = match raw.max_processes {
        None => DEFAULT_MAX_PROCESSES,
        Some(n) if (16..=65536).contains(&n) => n as u32,
        Some(n) => {
            return Err(fail(format!("max-processes = {n} is out of range"))
                .with_advice("give a number from 16 to 65536"))
        }
    };
    Ok(SandboxConfig {
        mode,
        server_network: raw.server_network.unwrap_or(true),
        max_processes,
    })
}

// ---------------------------------------------------------------------------------------------
// Probing

/// Whether bubblewrap works on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Ready {
        bwrap: PathBuf,
        /// `bubblewrap 0.8.0`.
        version: String,
        /// Root without the right to create namespaces directly gets them through a user
        /// namespace.
        unshare_user: bool,
    },
    Unavailable {
        cause: String,
        fix: String,
    },
}

const FIX_INSTALL: &str = "install bubblewrap (`sudo apt-get install -y bubblewrap` on Debian and \
     Ubuntu, `sudo dnf install bubblewrap` on Fedora), or run without the sandbox with \
     `--sandbox off` (only where the pull request's code may run unconfined)";

const FIX_USERNS: &str = "allow user namespaces for bwrap: on Ubuntu 23.10 and later (GitHub's \
     ubuntu-24.04 runners included) AppArmor refuses them to unprivileged programs; run `sudo \
     sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` in a step before the gate, or \
     install an AppArmor profile for /usr/bin/bwrap that allows `userns`; in a container, start \
     it with `--security-opt seccomp=unconfined --security-opt apparmor=unconfined` (or \
     `--privileged`); on older Debian, `sudo sysctl -w kernel.unprivileged_userns_clone=1`. Or \
     run without the sandbox with `--sandbox off`";

/// Whether bubblewrap works here for a server with (or without) network, probed once per
/// process for each: `bwrap` is looked for on the gate's own `PATH` and run with the
/// namespaces the gate uses.
pub fn probe(server_network: bool) -> Probe {
    static WITH_NET: OnceLock<Probe> = OnceLock::new();
    static WITHOUT_NET: OnceLock<Probe> = OnceLock::new();
    let cell = if server_network {
        &WITH_NET
    } else {
        &WITHOUT_NET
    };
    cell.get_or_init(|| probe_now(server_network)).clone()
}

/// Starts [`probe`] on a thread of its own, so that its two short `bwrap` runs overlap the
/// base's checkout instead of following it; the run's own [`probe`] call then finds the answer
/// ready, or waits for this one to finish rather than probing again. `server_network` is a
/// guess from the head's configuration: when the base's settings decide otherwise, that probe
/// runs when asked, as before.
pub fn probe_ahead(server_network: bool) {
    let started = std::thread::Builder::new()
        .name("sandbox-probe".to_string())
        .spawn(move || {
            let _ = probe(server_network);
        });
    if let Ok(handle) = started {
        let mut ahead = PROBE_AHEAD.lock().unwrap_or_else(|e| e.into_inner());
        *ahead = Some(handle);
    }
}

/// The thread [`probe_ahead`] started, until someone waits for it.
static PROBE_AHEAD: std::sync::Mutex<Option<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(None);

/// Waits for a probe [`probe_ahead`] started (a few milliseconds at most), so that its `bwrap`
/// runs are over before the gate looks for processes left below it: a probe still running when
/// a run ends early (a bad revision, the sandbox turned off by the base's settings) must not be
/// mistaken for something a server left behind.
pub fn wait_for_probe_ahead() {
    let handle = PROBE_AHEAD.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(handle) = handle {
        let _ = handle.join();
    }
}

/// The variable naming the `bwrap` program to use (default: `bwrap` on the gate's `PATH`).
pub const BWRAP_ENV: &str = "TDQS_GATE_BWRAP";

fn find_bwrap() -> Option<PathBuf> {
    if let Some(chosen) = std::env::var_os(BWRAP_ENV).filter(|v| !v.is_empty()) {
        let chosen = PathBuf::from(chosen);
        return chosen.is_file().then_some(chosen);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    crate::platform::path_search::find_on_path(
        "bwrap".as_ref(),
        &path,
        crate::platform::path_search::EmptyEntry::Skipped,
        None,
        &[""],
    )
    .or_else(|| {
        let fixed = PathBuf::from("/usr/bin/bwrap");
        fixed.is_file().then_some(fixed)
    })
}

fn probe_now(server_network: bool) -> Probe {
    if !cfg!(target_os = "linux") {
        return Probe::Unavailable {
            cause: "the sandbox (bubblewrap) exists on Linux only".into(),
            fix: "run the gate on Linux (a CI runner) to confine the pull request's code, or \
                  run without the sandbox with `--sandbox off`"
                .into(),
        };
    }
    let Some(bwrap) = find_bwrap() else {
        return Probe::Unavailable {
            cause: "bubblewrap (`bwrap`) is not installed, or not on the gate's PATH".into(),
            fix: FIX_INSTALL.into(),
        };
    };
    let version = std::process::Command::new(&bwrap)
        .arg("--version")
        .env_clear()
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "bubblewrap".to_string());
    let root = is_root();
    let mut last_error = String::new();
    for unshare_user in [false, true] {
        if unshare_user && !root {
            break;
        }
        let mounts = Mounts::default();
        let invocation = Invocation {
            network: server_network,
            unshare_user,
            cwd: Path::new("/"),
            program: &bwrap.to_string_lossy(),
            args: &["--version".to_string()],
        };
        let output = std::process::Command::new(&bwrap)
            .args(bwrap_args(&mounts, &invocation))
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => {
                return Probe::Ready {
                    bwrap,
                    version,
                    unshare_user,
                }
            }
            Ok(output) => {
                last_error = String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
            }
            Err(e) => last_error = e.to_string(),
        }
    }
    let fix = if last_error.contains("RTM_NEWADDR") || last_error.contains("loopback") {
        format!(
            "set `[sandbox] server-network = true` (a network namespace of its own is refused \
             here), or {FIX_USERNS}"
        )
    } else {
        FIX_USERNS.to_string()
    };
    Probe::Unavailable {
        cause: format!(
            "bubblewrap ({}) cannot create its namespaces on this machine: {}",
            bwrap.display(),
            if last_error.is_empty() {
                "it failed without a message"
            } else {
                &last_error
            }
        ),
        fix,
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid only reads this process's credentials.
    unsafe { libc::geteuid() == 0 }
}

// ---------------------------------------------------------------------------------------------
// The run's decision

/// The sandbox every sandboxed process of a run uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub bwrap: PathBuf,
    pub version: String,
    pub unshare_user: bool,
    pub server_network: bool,
    pub max_processes: u32,
}

/// Whether a run's pull-request code is sandboxed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Confined(Arc<Policy>),
    /// Not sandboxed; the record says why, and `warning` is set when the user did not ask for
    /// it (the sandbox was wanted but cannot run here).
    Unconfined {
        record: SandboxRecord,
        warning: Option<String>,
    },
}

impl Decision {
    /// What an export records.
    pub fn record(&self) -> SandboxRecord {
        match self {
            Decision::Confined(policy) => policy.record(),
            Decision::Unconfined { record, .. } => record.clone(),
        }
    }

    /// A warning for the exports when the processes run without a wanted sandbox.
    pub fn warning(&self) -> Option<&str> {
        match self {
            Decision::Unconfined { warning, .. } => warning.as_deref(),
            Decision::Confined(_) => None,
        }
    }
}

impl Policy {
    pub fn record(&self) -> SandboxRecord {
        SandboxRecord {
            kind: SandboxKind::Bubblewrap,
            version: Some(self.version.clone()),
            server_network: Some(self.server_network),
            max_processes: Some(self.max_processes),
            reason: None,
        }
    }
}

/// Decides from the command line's `--sandbox` (`flag`, which the workflow sets, or
/// `TDQS_GATE_SANDBOX`), the `[sandbox]` table, whether this is CI, and whether bubblewrap
/// works (`probe`, asked only when needed).
pub fn decide(
    flag: Option<SandboxMode>,
    config: &SandboxConfig,
    ci: bool,
    probe: impl FnOnce(bool) -> Probe,
) -> Result<Decision> {
    let none = |reason: &str, warning: Option<String>| Decision::Unconfined {
        record: SandboxRecord {
            kind: SandboxKind::None,
            version: None,
            server_network: None,
            max_processes: None,
            reason: Some(reason.to_string()),
        },
        warning,
    };
    let mode = flag.or(config.mode).unwrap_or(SandboxMode::Auto);
    if mode == SandboxMode::Off {
        if flag == Some(SandboxMode::Off) {
            return Ok(none("turned off by --sandbox off", None));
        }
        if ci {
            return Err(Error::new(
                Stage::Config,
                "tdqs-gate.toml turns the sandbox off ([sandbox] mode = \"off\"), but in CI only \
                 the workflow may run the pull request's code without it",
            )
            .with_advice(
                "install bubblewrap on the runner and remove `mode = \"off\"`, or opt out in the \
                 workflow itself: `--sandbox off` (or TDQS_GATE_SANDBOX=off in the step's env)",
            ));
        }
        return Ok(none("turned off by [sandbox] mode = \"off\"", None));
    }
    match probe(config.server_network) {
        Probe::Ready {
            bwrap,
            version,
            unshare_user,
        } => Ok(Decision::Confined(Arc::new(Policy {
            bwrap,
            version,
            unshare_user,
            server_network: config.server_network,
            max_processes: config.max_processes,
        }))),
        Probe::Unavailable { cause, fix } => {
            if mode == SandboxMode::On || ci {
                let why = if mode == SandboxMode::On {
                    "the sandbox is required (--sandbox on or [sandbox] mode = \"on\")"
                } else {
                    "in CI the gate runs the pull request's code only in its sandbox"
                };
                Err(Error::new(
                    Stage::Export,
                    format!("cannot sandbox the pull request's code: {cause}; {why}"),
                )
                .with_advice(fix)
                .with_reproduce("bwrap --unshare-all --share-net --die-with-parent --ro-bind / / --proc /proc --dev /dev true"))
            } else {
                Ok(none(
                    &cause,
                    Some(format!(
                        "the server and its setup commands ran WITHOUT a sandbox: {cause}. To \
                         confine them: {fix}"
                    )),
                ))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Mounts and the argument list (pure)

/// What a sandbox sees of the file system, over a read-only view of the whole machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    /// Replaced by empty private folders (`--tmpfs`).
    pub hide: Vec<PathBuf>,
    /// Shown again read-only inside a hidden folder (tools of the server's PATH).
    pub read_only: Vec<PathBuf>,
    /// Writable: the side's tree, the temporary HOME, the base's package cache.
    pub writable: Vec<PathBuf>,
    /// Read-only even inside a writable folder, mounted last: the repository's git folders.
    pub protect: Vec<PathBuf>,
    /// Files replaced by an empty one (credentials inside a folder shown again).
    pub blank_files: Vec<PathBuf>,
}

/// One command in the sandbox.
#[derive(Debug, Clone, Copy)]
pub struct Invocation<'a> {
    pub network: bool,
    pub unshare_user: bool,
    pub cwd: &'a Path,
    pub program: &'a str,
    pub args: &'a [String],
}

fn depth(path: &Path) -> usize {
    path.components().count()
}

fn inside_any(path: &Path, folders: &[PathBuf]) -> bool {
    folders.iter().any(|f| path.starts_with(f))
}

/// The `bwrap` arguments that run `invocation` confined by `mounts` (everything after the
/// program name). Mounts go from the outermost folder inward, so a folder shown again inside a
/// hidden one, and a git folder inside the writable tree, land on top.
pub fn bwrap_args(mounts: &Mounts, invocation: &Invocation<'_>) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |words: &[&std::ffi::OsStr]| args.extend(words.iter().map(|w| w.to_os_string()));
    push(&[
        "--die-with-parent".as_ref(),
        "--new-session".as_ref(),
        "--unshare-pid".as_ref(),
        "--unshare-ipc".as_ref(),
        "--unshare-uts".as_ref(),
        "--unshare-cgroup-try".as_ref(),
    ]);
    if invocation.unshare_user {
        push(&["--unshare-user".as_ref()]);
    }
    if !invocation.network {
        push(&["--unshare-net".as_ref()]);
    }
    push(&[
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
        "--ro-bind".as_ref(),
        "/".as_ref(),
        "/".as_ref(),
        "--dev".as_ref(),
        "/dev".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
    ]);
    let mut hide = mounts.hide.clone();
    hide.sort_by_key(|p| depth(p));
    hide.dedup();
    for folder in &hide {
        push(&["--tmpfs".as_ref(), folder.as_os_str()]);
    }
    // Shown again and writable folders, outermost first; a read-only one inside a writable
    // folder is writable anyway and skipped, as is one inside another read-only one.
    let mut binds: Vec<(&PathBuf, bool)> = Vec::new();
    for path in &mounts.read_only {
        if !inside_any(path, &mounts.writable)
            && !mounts
                .read_only
                .iter()
                .any(|other| other != path && path.starts_with(other))
            && !binds.iter().any(|(p, _)| *p == path)
        {
            binds.push((path, false));
        }
    }
    for path in &mounts.writable {
        if !binds.iter().any(|(p, _)| *p == path) {
            binds.push((path, true));
        }
    }
    binds.sort_by_key(|(p, _)| depth(p));
    for (path, writable) in binds {
        let option = if writable { "--bind" } else { "--ro-bind" };
        push(&[option.as_ref(), path.as_os_str(), path.as_os_str()]);
    }
    let mut protect = mounts.protect.clone();
    protect.sort_by_key(|p| depth(p));
    protect.dedup();
    for path in &protect {
        push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]);
    }
    for file in &mounts.blank_files {
        push(&["--ro-bind".as_ref(), "/dev/null".as_ref(), file.as_os_str()]);
    }
    push(&[
        "--chdir".as_ref(),
        invocation.cwd.as_os_str(),
        "--".as_ref(),
        invocation.program.as_ref(),
    ]);
    args.extend(invocation.args.iter().map(OsString::from));
    args
}

/// The folder to show again for a tool found in `dir`: a `bin`, `sbin` or `shims` folder's
/// parent (a Node or Python prefix, `~/.pyenv`, `~/.nvm/versions/node/vX`: what the tool's
/// links point into), except when that parent is itself a hidden folder (a home's `~/bin`).
pub fn tool_folder(dir: &Path, hidden: &[PathBuf]) -> PathBuf {
    let is_bin = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| matches!(n, "bin" | "sbin" | "shims"));
    match dir.parent() {
        Some(parent) if is_bin && !hidden.iter().any(|h| h == parent) && depth(parent) > 1 => {
            parent.to_path_buf()
        }
        _ => dir.to_path_buf(),
    }
}

/// The host's folders a sandbox hides: temporary folders, `/run`, and every home folder.
/// `home` is the gate's `$HOME`, `passwd_home` the password database's, `tmpdir` the gate's
/// `$TMPDIR`. System folders are never hidden, whatever those variables say.
pub fn hidden_folders(
    home: Option<&Path>,
    passwd_home: Option<&Path>,
    tmpdir: Option<&Path>,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    const SYSTEM: [&str; 12] = [
        "/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/opt", "/var", "/proc",
        "/dev",
    ];
    let mut hide: Vec<PathBuf> = ["/tmp", "/var/tmp", "/run", "/var/run", "/home", "/root"]
        .iter()
        .map(PathBuf::from)
        .collect();
    for extra in [home, passwd_home, tmpdir].into_iter().flatten() {
        if extra.is_absolute() && !SYSTEM.iter().any(|s| extra == Path::new(s)) {
            hide.push(extra.components().collect());
        }
    }
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in hide {
        if exists(&path) && !kept.iter().any(|k| path.starts_with(k)) {
            kept.retain(|k| !k.starts_with(&path));
            kept.push(path);
        }
    }
    kept
}

// ---------------------------------------------------------------------------------------------
// One side's sandbox

/// How a side may use the persistent package cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    /// The gate's base side (reviewed code): the shared cache, writable, so later runs reuse
    /// what it downloaded.
    Shared,
    /// Any other side (the head, `tdqs-gate export`): a private cache folder in its temporary
    /// HOME, thrown away with it, so nothing the pull request's code writes serves another run
    /// or the other side.
    Private,
}

/// The sandbox of one side's processes: its policy and mounts.
#[derive(Debug)]
pub struct SideSandbox {
    policy: Arc<Policy>,
    mounts: Mounts,
    /// Set when the watchdog stopped a sandbox of this side for too many processes.
    tripped: Arc<AtomicBool>,
}

/// What a side's sandbox is built from.
#[derive(Debug)]
pub struct SideLayout<'a> {
    /// The side's tree (writable).
    pub tree: &'a Path,
    pub cwd: &'a Path,
    /// The temporary HOME (writable), when the home is isolated.
    pub home: Option<&'a Path>,
    /// The persistent package cache root, when used.
    pub cache: Option<&'a Path>,
    pub cache_use: CacheUse,
    /// Programs started by absolute path (the server, setup commands).
    pub programs: Vec<&'a str>,
}

impl SideSandbox {
    /// The sandbox for one side. Rewrites the package cache variables of `env` to a private
    /// folder for [`CacheUse::Private`]; sets `TMPDIR` to the sandbox's own `/tmp`.
    pub fn new(
        policy: Arc<Policy>,
        layout: &SideLayout<'_>,
        env: &mut Vec<(String, String)>,
    ) -> Result<SideSandbox> {
        let gate_home = std::env::var_os("HOME").map(PathBuf::from);
        let gate_tmp = std::env::var_os("TMPDIR").map(PathBuf::from);
        let hide = hidden_folders(
            gate_home.as_deref(),
            passwd_home().as_deref(),
            gate_tmp.as_deref(),
            // A link (`/var/run` → `/run`) is hidden through its target, never mounted over.
            &|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()),
        );
        let mut mounts = Mounts {
            hide: hide.clone(),
            ..Mounts::default()
        };
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let tree = canonical(layout.tree);
        mounts.writable.push(tree.clone());
        if let Some(home) = layout.home {
            mounts.writable.push(canonical(home));
        }
        // Tools of the server's PATH and programs given by absolute path that live in a
        // hidden folder are shown again, read-only.
        let mut tool_dirs: Vec<PathBuf> = Vec::new();
        if let Some((_, path)) = env.iter().find(|(k, _)| k == "PATH") {
            tool_dirs.extend(std::env::split_paths(path).filter(|p| p.is_absolute()));
        }
        for program in &layout.programs {
            let path = Path::new(program);
            if path.is_absolute() {
                if let Some(dir) = path.parent() {
                    tool_dirs.push(dir.to_path_buf());
                }
            }
        }
        if !layout.cwd.starts_with(&tree) && layout.cwd.is_absolute() {
            tool_dirs.push(layout.cwd.to_path_buf());
        }
        for dir in tool_dirs {
            if !dir.is_dir() || !inside_any(&dir, &hide) {
                continue;
            }
            let folder = canonical(&tool_folder(&dir, &hide));
            for secret in ["credentials", "credentials.toml"] {
                let file = folder.join(secret);
                if file.is_file() {
                    mounts.blank_files.push(file);
                }
            }
            mounts.read_only.push(folder);
        }
        // The repository's git folders, read-only: a worktree's `.git` file points into the
        // user's repository, where setup must not delete stashes or branches.
        if let Ok(repo) = git2::Repository::open(&tree) {
            mounts.protect.push(canonical(repo.path()));
            mounts.protect.push(canonical(repo.commondir()));
        }
        let dot_git = tree.join(".git");
        if dot_git.exists() {
            mounts.protect.push(dot_git);
        }
        // The package cache.
        if let Some(cache) = layout.cache {
            match layout.cache_use {
                CacheUse::Shared => mounts.writable.push(canonical(cache)),
                CacheUse::Private => {
                    let private = match layout.home {
                        Some(home) => home.join(".cache").join("tdqs-gate-packages"),
                        None => {
                            return Err(Error::internal(
                                "a private package cache needs the temporary home",
                            ))
                        }
                    };
                    std::fs::create_dir_all(&private).map_err(|e| {
                        Error::io(
                            Stage::Export,
                            format!(
                                "cannot create the private package cache {}",
                                private.display()
                            ),
                            e,
                        )
                    })?;
                    let cache_text = cache.to_string_lossy().into_owned();
                    for (_, value) in env.iter_mut() {
                        if let Some(rest) = value.strip_prefix(&cache_text) {
                            *value = format!("{}{rest}", private.to_string_lossy());
                        }
                    }
                }
            }
        }
        // The sandbox's /tmp is its own; a TMPDIR pointing elsewhere would be read-only there.
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".to_string(), "/tmp".to_string()));
        Ok(SideSandbox {
            policy,
            mounts,
            tripped: Arc::new(AtomicBool::new(false)),
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn mounts(&self) -> &Mounts {
        &self.mounts
    }

    /// The command that runs `program` in this sandbox: `bwrap` with exactly `env` (the
    /// gate's own environment never reaches it), `no_new_privs` set, and for a user other
    /// than root an `RLIMIT_NPROC` the kernel enforces. `setup` commands always get the
    /// network; the server gets it per the policy.
    pub fn command(
        &self,
        setup: bool,
        cwd: &Path,
        env: &[(String, String)],
        program: &str,
        args: &[String],
    ) -> tokio::process::Command {
        let invocation = Invocation {
            network: setup || self.policy.server_network,
            unshare_user: self.policy.unshare_user,
            cwd,
            program,
            args,
        };
        let mut command = tokio::process::Command::new(&self.policy.bwrap);
        command
            .args(bwrap_args(&self.mounts, &invocation))
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir("/");
        let nproc = (!is_root()).then(|| kernel_process_limit(self.policy.max_processes));
        // SAFETY: the closure runs between fork and exec and only makes two system calls
        // (prctl, setrlimit), both async-signal-safe; it allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if let Some(limit) = nproc {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    libc::setrlimit(libc::RLIMIT_NPROC, &rlimit);
                }
                Ok(())
            });
        }
        command
    }

    /// Starts the watchdog for the sandbox whose `bwrap` has pid `pid`; it stops with the
    /// returned guard.
    pub fn watch(&self, pid: u32) -> Watchdog {
        Watchdog::start(pid, self.policy.max_processes, Arc::clone(&self.tripped))
    }

    /// True once the watchdog stopped a sandbox of this side for too many processes.
    pub fn tripped(&self) -> bool {
        self.tripped.load(Ordering::SeqCst)
    }

    /// The sentence for an error when [`SideSandbox::tripped`].
    pub fn limit_note(&self) -> String {
        format!(
            "the sandbox was stopped because more than {} processes ran in it at once (a fork \
             bomb, or a build with very many jobs)",
            self.policy.max_processes
        )
    }
}

/// The kernel's process limit for a sandbox of a user other than root. The kernel counts every
/// thread of the user, inside and outside the sandbox's user namespace, against it, so it is
/// the user's tasks now plus room for four times the watchdog's limit: a backstop that stops a
/// fork bomb before the watchdog's next look, never the limit a build meets.
fn kernel_process_limit(max_processes: u32) -> libc::rlim_t {
    // SAFETY: getuid only reads this process's credentials.
    let uid = unsafe { libc::getuid() };
    let mut tasks: u64 = 0;
    for (pid, _) in crate::platform::procfs::processes() {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        if field("Uid:") == Some(u64::from(uid)) {
            tasks += field("Threads:").unwrap_or(1);
        }
    }
    (tasks + 4 * u64::from(max_processes) + 64) as libc::rlim_t
}

/// The password database's home folder of this user (what `getpwuid` tells a server that
/// ignores `$HOME`).
fn passwd_home() -> Option<PathBuf> {
    // SAFETY: getuid only reads credentials.
    let uid = unsafe { libc::getuid() };
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.len() >= 7 && fields[2].parse::<u32>().ok() == Some(uid))
            .then(|| PathBuf::from(fields[5]))
    })
}

// ---------------------------------------------------------------------------------------------
// The process watchdog

/// Counts the processes of one sandbox and kills it when they pass the limit; stops when
/// dropped or when the sandbox is gone.
#[derive(Debug)]
pub struct Watchdog {
    stop: Arc<AtomicBool>,
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl Watchdog {
    fn start(pid: u32, limit: u32, tripped: Arc<AtomicBool>) -> Watchdog {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let spawned = std::thread::Builder::new()
            .name(format!("sandbox-watch-{pid}"))
            .spawn(move || watch_loop(pid, limit, &stopped, &tripped));
        if spawned.is_err() {
            // No thread: the kernel's limit (for users other than root) still holds.
            stop.store(true, Ordering::SeqCst);
        }
        Watchdog { stop }
    }
}

fn watch_loop(pid: u32, limit: u32, stop: &AtomicBool, tripped: &AtomicBool) {
    let mut init: Option<u32> = None;
    while !stop.load(Ordering::SeqCst) {
        if std::fs::symlink_metadata(format!("/proc/{pid}")).is_err() {
            return;
        }
        if init.is_none() {
            init = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
                .ok()
                .and_then(|text| text.split_whitespace().next()?.parse().ok());
        }
        if let Some(init) = init.filter(|init| sandbox_proc_mounted(*init)) {
            // The sandbox's own /proc, seen through its root, lists exactly its processes.
            if let Ok(entries) = std::fs::read_dir(format!("/proc/{init}/root/proc")) {
                let count = entries
                    .filter_map(|e| e.ok())
                    .filter(|e| {
                        e.file_name()
                            .to_str()
                            .is_some_and(|n| n.parse::<u32>().is_ok())
                    })
                    .count();
                if count > limit as usize {
                    tripped.store(true, Ordering::SeqCst);
                    // SAFETY: kill(2) on the sandbox's bwrap (a child of the gate) and its init;
                    // the namespace's other processes die with its init.
                    unsafe {
                        libc::kill(init as libc::pid_t, libc::SIGKILL);
                        libc::kill(pid as libc::pid_t, libc::SIGKILL);
                    }
                    return;
                }
            }
        }
        std::thread::sleep(WATCH_INTERVAL);
    }
}

/// Whether the sandbox's init already sees its own `/proc`. Until bubblewrap has mounted it and
/// changed root, `/proc/<init>/root/proc` is the host's `/proc`, which lists every process of
/// the machine: counting those would stop a sandbox for the machine's load (a busy CI runner
/// has hundreds of processes), not for what runs in it. A proc file system mounted for another
/// PID namespace is another device.
fn sandbox_proc_mounted(init: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (
        std::fs::metadata(format!("/proc/{init}/root/proc")),
        std::fs::metadata("/proc"),
    ) {
        (Ok(inside), Ok(host)) => inside.dev() != host.dev(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
