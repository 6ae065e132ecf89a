//! Running a side's MCP server (and its setup commands) as a process group the gate fully owns.
//!
//! Every child starts from an empty environment plus exactly [`LaunchSpec::env`], in
//! [`LaunchSpec::cwd`], as the leader of a new process group, through the one process runner of
//! [`crate::platform::process`] (group, TERM → grace → KILL, drop guard, drained pipes).
//!
//! Clean-up happens on every path:
//! - [`ServerProcess::shutdown`] closes stdin, waits
//!   [`tdqs_core::export::ExportLimits::exit_after_eof`] (a short window: the listing is complete
//!   by then), sends SIGTERM to the group, waits
//!   [`tdqs_core::export::ExportLimits::shutdown_grace`], sends SIGKILL, reaps the leader and
//!   finally sweeps the group once more, so members that outlived the leader die too. The order
//!   is the one the MCP specification gives (close stdin, wait, SIGTERM, wait, SIGKILL); only the
//!   first wait is short. A server still running when the window ends is not at fault (the
//!   specification sets no time), so only a SIGKILL becomes a warning ([`Shutdown::forced_note`]).
//! - If a [`ServerProcess`] (or a setup command) is dropped without that — an error returned
//!   early, a panic, a cancelled future on Ctrl-C — a synchronous drop guard SIGKILLs the group.
//! - [`kill_live_groups`] kills every group still owned, for a signal handler that is about to
//!   exit the process without unwinding.
//!
//! The server's stderr is drained all the time into a bounded ring buffer (a chatty server would
//! otherwise block on a full pipe); its redacted tail goes into every error. Stdout is read with a
//! bounded line reader that never buffers more than [`tdqs_core::export::ExportLimits::max_message_bytes`].

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use crate::export::{LaunchSpec, SetupCommand};
use crate::platform::process::{
    finish_drains, run_to_end_watched, spawn_drain, Ended, OutputTail, OwnedChild, RunRequest,
    StdoutTo, Stopped,
};
pub use crate::platform::process::{kill_live_groups, live_group_count};
use tdqs_core::error::{Error, Stage};
use tdqs_core::export::ExportLimits;
use tdqs_core::redact::Redactor;

/// How long to wait, after a group is dead, for the pipe readers to reach end-of-file. Pipes stay
/// open only while some process holds them; this bounds the wait should one escape the group.
const PIPE_DRAIN_WAIT: Duration = Duration::from_millis(500);

// ---------------------------------------------------------------------------------------------
// Bounded line reader

/// One step of reading a server's stdout.
#[derive(Debug, PartialEq, Eq)]
pub enum StdoutLine {
    /// A non-blank line without its terminator, `\r` and byte-order mark.
    Line(Vec<u8>),
    /// The server closed its stdout.
    Eof,
}

/// Why reading stdout failed.
#[derive(Debug)]
pub enum ReadError {
    /// A line grew past the limit. Reported as soon as the limit is crossed, not at the line's
    /// end (which may never come); the rest of that line is discarded if reading continues.
    Oversize {
        limit: usize,
    },
    Io(io::Error),
}

/// Splits a byte stream into newline-delimited lines while holding at most `max_line` bytes of
/// any one line.
///
/// [`LineReader::next_line`] is cancel-safe: all progress is kept in the reader between awaits,
/// so it can be raced against a timeout without losing or duplicating data.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    discarding: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max_line: usize) -> Self {
        LineReader {
            inner: BufReader::new(inner),
            line: Vec::new(),
            max_line,
            discarding: false,
            eof: false,
        }
    }

    pub async fn next_line(&mut self) -> Result<StdoutLine, ReadError> {
        loop {
            if self.eof {
                return Ok(StdoutLine::Eof);
            }
            let available = self.inner.fill_buf().await.map_err(ReadError::Io)?;
            if available.is_empty() {
                self.eof = true;
                let last = std::mem::take(&mut self.line);
                if !self.discarding {
                    if let Some(line) = clean_line(last) {
                        return Ok(StdoutLine::Line(line));
                    }
                }
                continue;
            }
            match available.iter().position(|&b| b == b'\n') {
                Some(newline) => {
                    if self.discarding {
                        self.inner.consume(newline + 1);
                        self.discarding = false;
                        continue;
                    }
                    if self.line.len() + newline > self.max_line {
                        self.inner.consume(newline + 1);
                        self.line = Vec::new();
                        return Err(ReadError::Oversize {
                            limit: self.max_line,
                        });
                    }
                    self.line.extend_from_slice(&available[..newline]);
                    self.inner.consume(newline + 1);
                    let line = std::mem::take(&mut self.line);
                    if let Some(line) = clean_line(line) {
                        return Ok(StdoutLine::Line(line));
                    }
                }
                None => {
                    let len = available.len();
                    if self.discarding {
                        self.inner.consume(len);
                        continue;
                    }
                    if self.line.len() + len > self.max_line {
                        self.inner.consume(len);
                        self.line = Vec::new();
                        self.discarding = true;
                        return Err(ReadError::Oversize {
                            limit: self.max_line,
                        });
                    }
                    self.line.extend_from_slice(available);
                    self.inner.consume(len);
                }
            }
        }
    }

    /// Reads and throws away everything until end-of-file; then never completes. Used while
    /// waiting for a server to exit, so that one blocked on a full stdout pipe can make progress.
    async fn discard_forever(&mut self) {
        if !self.eof {
            loop {
                match self.inner.fill_buf().await {
                    Ok([]) | Err(_) => break,
                    Ok(bytes) => {
                        let len = bytes.len();
                        self.inner.consume(len);
                    }
                }
            }
            self.eof = true;
        }
        std::future::pending::<()>().await;
    }
}

/// Strips a UTF-8 byte-order mark and a trailing `\r`; `None` for a blank line.
fn clean_line(mut line: Vec<u8>) -> Option<Vec<u8>> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.starts_with(b"\xEF\xBB\xBF") {
        line.drain(..3);
    }
    if line.iter().all(|b| b.is_ascii_whitespace()) {
        None
    } else {
        Some(line)
    }
}

// ---------------------------------------------------------------------------------------------
// Exit statuses and commands for messages

/// "exited with status 3", "was killed by signal 9 (SIGKILL)".
pub(crate) fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        format!("exited with status {code}")
    } else if let Some(signal) = status.signal() {
        match signal_name(signal) {
            Some(name) => format!("was killed by signal {signal} ({name})"),
            None => format!("was killed by signal {signal}"),
        }
    } else {
        format!("ended ({status})")
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

/// Program and arguments quoted for a POSIX shell, for "reproduce with" notes.
pub(crate) fn shell_command(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .map(|word| shlex::try_quote(word).map_or_else(|_| word.to_string(), |q| q.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A "reproduce with" line for a command run in `spec.cwd` (environment values left out: they
/// may be secrets).
pub(crate) fn reproduce_line(spec: &LaunchSpec, program: &str, args: &[String]) -> String {
    let cwd = spec.cwd.display().to_string();
    let cwd = shlex::try_quote(&cwd).map_or_else(|_| cwd.clone(), |q| q.into_owned());
    let mut line = format!("cd {cwd} && ");
    for assignment in &spec.reproduce_env {
        line.push_str(assignment);
        line.push(' ');
    }
    line.push_str(&shell_command(program, args));
    line
}

/// A redactor for everything a child of `spec` writes: the process-wide secrets plus the values
/// of the variables `spec` marks as secret.
pub(crate) fn spec_redactor(spec: &LaunchSpec) -> Redactor {
    let mut redactor = Redactor::new();
    for (name, value) in &spec.env {
        if spec.secret_env.iter().any(|secret| secret == name) {
            redactor.add(value);
        }
    }
    redactor
}

fn redact_with(redactor: &Redactor, text: &str) -> String {
    tdqs_core::redact::redact(&redactor.redact(text))
}

/// Masks `spec`'s secrets (and the process-wide ones) in every text of an error: a secret can
/// reach the cause or the reproduce line through the command's own arguments.
pub(crate) fn redact_error(spec: &LaunchSpec, error: Error) -> Error {
    let redactor = spec_redactor(spec);
    let mask = |text: String| redact_with(&redactor, &text);
    Error {
        stage: error.stage,
        cause: mask(error.cause),
        advice: error.advice.map(mask),
        details: error
            .details
            .into_iter()
            .map(|(label, text)| (label, mask(text)))
            .collect(),
        reproduce: error.reproduce.map(mask),
    }
}

/// The command for `program`: in the side's sandbox when it has one (see
/// [`crate::platform::sandbox`]; `setup` commands always get the network there), otherwise
/// directly, with the spec's environment only.
fn base_command(spec: &LaunchSpec, program: &str, args: &[String], setup: bool) -> Command {
    if let Some(sandbox) = &spec.sandbox {
        return sandbox.command(setup, &spec.cwd, &spec.env, program, args);
    }
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd);
    command
}

fn spawn_error(
    spec: &LaunchSpec,
    (what, origin): (&str, &str),
    program: &str,
    err: &io::Error,
) -> Error {
    let advice = match err.kind() {
        io::ErrorKind::NotFound if !spec.cwd.is_dir() => format!(
            "the working directory {} does not exist; fix `cwd` of the server configuration",
            spec.cwd.display()
        ),
        io::ErrorKind::NotFound => format!(
            "`{program}` was not found: install it, or give its full path; the child's PATH is \
             the one in the server environment ({}), not necessarily the gate's",
            if spec.env.iter().any(|(k, _)| k == "PATH") {
                "PATH is set there"
            } else {
                "PATH is not set there"
            }
        ),
        io::ErrorKind::PermissionDenied => {
            format!("`{program}` is not executable: check its file mode in this revision")
        }
        _ => "check the command and the working directory of the server configuration".to_string(),
    };
    let error = Error::new(
        Stage::Export,
        format!("could not start {what} `{program}` (from {origin}): {err}"),
    )
    .with_advice(advice)
    .with_reproduce(reproduce_line(spec, program, &[]));
    redact_error(spec, error)
}

// ---------------------------------------------------------------------------------------------
// The sandbox

/// Puts `spec`'s processes into the run's sandbox (`decision`): `tree` (the side's `{root}`)
/// writable, the package cache shared (the gate's base side) or private (any other side).
/// Returns what the export records; `None` when nothing is started (a URL only) or nothing
/// was decided.
pub(crate) fn confine(
    spec: &mut LaunchSpec,
    tree: &std::path::Path,
    decision: Option<&crate::platform::sandbox::Decision>,
    package_cache: Option<&std::path::Path>,
    cache_use: crate::platform::sandbox::CacheUse,
) -> Result<Option<tdqs_core::sandbox::SandboxRecord>, Error> {
    use crate::platform::sandbox::{Decision, SideLayout, SideSandbox};
    let Some(decision) = decision else {
        return Ok(None);
    };
    if spec.program.is_empty() {
        return Ok(None);
    }
    let Decision::Confined(policy) = decision else {
        return Ok(Some(decision.record()));
    };
    let home = spec.temp_home.as_ref().map(|h| h.path().to_path_buf());
    let mut programs: Vec<String> = vec![spec.program.clone()];
    programs.extend(spec.setup.iter().map(|s| s.program.clone()));
    let layout = SideLayout {
        tree,
        cwd: &spec.cwd,
        home: home.as_deref(),
        cache: package_cache,
        cache_use,
        programs: programs.iter().map(String::as_str).collect(),
    };
    let mut env = spec.env.clone();
    let sandbox = SideSandbox::new(std::sync::Arc::clone(policy), &layout, &mut env)?;
    spec.env = env;
    spec.sandbox = Some(std::sync::Arc::new(sandbox));
    Ok(Some(decision.record()))
}

/// A sandboxed server's failure, told with the files its plan names that the sandbox hides
/// ([`crate::platform::sandbox::hidden_paths`]): a server started with `/home/me/server.js` or
/// `CONFIG=/tmp/x.json` otherwise fails with a bare "no such file" that does not say why the file
/// the user can see is missing. Values of secret variables are not looked at.
pub(crate) fn explain_hidden_paths(error: Error, spec: &LaunchSpec) -> Error {
    let Some(sandbox) = &spec.sandbox else {
        return error;
    };
    let mut words: Vec<&str> = vec![spec.program.as_str()];
    words.extend(spec.args.iter().map(String::as_str));
    for setup in &spec.setup {
        words.push(setup.program.as_str());
        words.extend(setup.args.iter().map(String::as_str));
    }
    words.extend(
        spec.env
            .iter()
            .filter(|(name, _)| !spec.secret_env.contains(name))
            .map(|(_, value)| value.as_str()),
    );
    let hidden = crate::platform::sandbox::hidden_paths::hidden_paths_named(
        sandbox.mounts(),
        words,
        &|path| path.exists(),
    );
    if hidden.is_empty() {
        return error;
    }
    let list: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
    let (them, they) = if list.len() == 1 {
        ("it", "it lies")
    } else {
        ("them", "they lie")
    };
    let mut error = error;
    error.cause = format!(
        "{}; the sandbox hides {} from the server: {they} outside the side's tree, in a folder \
         the sandbox replaces with an empty one (/tmp, /home, /root, the gate's HOME or TMPDIR)",
        error.cause,
        list.join(", ")
    );
    let before = error
        .advice
        .take()
        .map(|a| format!(" (if that is not the cause: {a})"))
        .unwrap_or_default();
    error.advice = Some(format!(
        "put what the server needs in the repository and name {them} with {{root}} (the side's \
         tree), or, for a trusted local run, turn the sandbox off: --sandbox off, or \
         `[sandbox] mode = \"off\"` in tdqs-gate.toml{before}"
    ));
    redact_error(spec, error)
}

// ---------------------------------------------------------------------------------------------
// The server process

/// How a server's process group ended.
#[derive(Debug, Clone)]
pub struct Shutdown {
    /// The leader's exit status, when it could be reaped.
    pub status: Option<ExitStatus>,
    /// Which step ended it.
    pub step: ShutdownStep,
    /// The redacted stderr tail, complete up to the end of the process.
    pub stderr_tail: String,
}

/// The step of the shutdown sequence at which the leader was gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownStep {
    /// It had already exited before shutdown began.
    AlreadyExited,
    /// It exited after its stdin was closed (the graceful path).
    StdinClosed,
    /// It was still running [`ExportLimits::exit_after_eof`] after its stdin closed and ended
    /// on SIGTERM.
    Terminated,
    /// It needed SIGKILL.
    Killed,
}

impl Shutdown {
    /// A sentence for warnings when stopping the server meant something: only a SIGKILL. A
    /// server still running a moment after its stdin closed gets SIGTERM early from the gate,
    /// which says nothing about it (a host stops it the same way); one that ignores SIGTERM too
    /// needs killing in every host.
    pub fn forced_note(&self, limits: &ExportLimits) -> Option<String> {
        match self.step {
            ShutdownStep::AlreadyExited | ShutdownStep::StdinClosed | ShutdownStep::Terminated => {
                None
            }
            ShutdownStep::Killed => Some(format!(
                "the server ignored stdin closing and SIGTERM and was killed with SIGKILL \
                 (SIGTERM {} after stdin closed, SIGKILL {} later)",
                humantime::format_duration(limits.exit_after_eof),
                humantime::format_duration(limits.shutdown_grace)
            )),
        }
    }
}

/// Why writing to the server's stdin failed.
#[derive(Debug)]
pub enum WriteError {
    /// The server stopped reading (it exited or closed stdin).
    Closed(io::Error),
    /// The write did not complete in time (the server does not read its stdin).
    TimedOut,
}

/// A running MCP server: its process group, stdin, a bounded stdout reader and the stderr tail.
pub struct ServerProcess {
    process: OwnedChild,
    stdin: Option<ChildStdin>,
    stdout: LineReader<ChildStdout>,
    stderr: OutputTail,
    stderr_task: Option<JoinHandle<()>>,
    redactor: Redactor,
    /// How long it may take to exit after its stdin closes, before SIGTERM.
    exit_after_eof: Duration,
    /// How long after SIGTERM before SIGKILL.
    grace: Duration,
    started: Instant,
    /// Skip waiting for an exit after stdin closes (a server speaking HTTP does not read it).
    skip_stdin_wait: bool,
    sandbox: Option<std::sync::Arc<crate::platform::sandbox::SideSandbox>>,
    /// Counts the sandbox's processes while the server runs.
    _watchdog: Option<crate::platform::sandbox::Watchdog>,
}

// Not derived: the redactor holds secret values.
impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProcess")
            .field("pid", &self.process.pid())
            .field("stdin_open", &self.stdin.is_some())
            .finish_non_exhaustive()
    }
}

impl ServerProcess {
    /// Starts `spec`'s server: empty environment plus `spec.env`, `spec.cwd`, its own process
    /// group, all three standard streams piped.
    pub fn spawn(spec: &LaunchSpec) -> Result<Self, Error> {
        let mut command = base_command(spec, &spec.program, &spec.args, false);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut process = OwnedChild::spawn(&mut command).map_err(|err| {
            spawn_error(spec, ("the MCP server", &spec.origin), &spec.program, &err)
        })?;
        let watchdog = spec.sandbox.as_ref().map(|s| s.watch(process.pid()));
        let (Some(stdin), Some(stdout), Some(stderr_pipe)) = process.take_pipes() else {
            return Err(Error::internal(
                "a spawned server is missing a piped stream",
            ));
        };
        let stderr = OutputTail::new(spec.limits.stderr_tail_bytes);
        let stderr_task = spawn_drain(stderr_pipe, stderr.clone());
        Ok(ServerProcess {
            process,
            stdin: Some(stdin),
            stdout: LineReader::new(stdout, spec.limits.max_message_bytes),
            stderr,
            stderr_task: Some(stderr_task),
            redactor: spec_redactor(spec),
            exit_after_eof: spec.limits.exit_after_eof,
            grace: spec.limits.shutdown_grace,
            started: Instant::now(),
            skip_stdin_wait: false,
            sandbox: spec.sandbox.clone(),
            _watchdog: watchdog,
        })
    }

    /// The leader's pid, which is also the process group id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// When the process was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Writes `message` plus a newline to the server's stdin, giving up after `timeout`.
    pub async fn send(&mut self, message: &[u8], timeout: Duration) -> Result<(), WriteError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(WriteError::Closed(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stdin already closed",
            )));
        };
        let write = async {
            stdin.write_all(message).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(WriteError::Closed(err)),
            Err(_) => Err(WriteError::TimedOut),
        }
    }

    /// The next non-blank stdout line. Cancel-safe (see [`LineReader`]).
    pub async fn next_line(&mut self) -> Result<StdoutLine, ReadError> {
        self.stdout.next_line().await
    }

    /// Reads and drops stdout until it closes (a server that speaks HTTP may log there; an
    /// unread pipe would block it). Cancel-safe.
    pub async fn discard_stdout(&mut self) {
        self.stdout.discard_forever().await;
    }

    /// Shutdown goes to SIGTERM as soon as stdin is closed: for servers that speak HTTP, whose
    /// stdin means nothing.
    pub fn skip_stdin_wait(&mut self) {
        self.skip_stdin_wait = true;
    }

    /// The leader's exit status, if it has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.process.try_wait()
    }

    /// The stderr tail so far, redacted; it says so first when the sandbox was stopped for too
    /// many processes (the server then seems merely to have died).
    pub fn stderr_tail(&self) -> String {
        let tail = redact_with(&self.redactor, &self.stderr.text());
        match &self.sandbox {
            Some(sandbox) if sandbox.tripped() => format!("[{}]\n{tail}", sandbox.limit_note()),
            _ => tail,
        }
    }

    /// Masks secrets in text that came from the server (stdout samples, error messages).
    pub fn redact(&self, text: &str) -> String {
        redact_with(&self.redactor, text)
    }

    /// Ends the server and everything in its process group; see the module documentation for
    /// the sequence. Never fails: every step is bounded.
    pub async fn shutdown(mut self) -> Shutdown {
        let (status, step) = self.stop_group().await;
        self.process.sweep();
        if let Some(task) = self.stderr_task.take() {
            finish_drains(vec![task], PIPE_DRAIN_WAIT).await;
        }
        Shutdown {
            status,
            step,
            stderr_tail: self.stderr_tail(),
        }
    }

    async fn stop_group(&mut self) -> (Option<ExitStatus>, ShutdownStep) {
        if let Some(status) = self.process.try_wait() {
            return (Some(status), ShutdownStep::AlreadyExited);
        }
        self.stdin = None;
        let stdin_wait = if self.skip_stdin_wait {
            Duration::ZERO
        } else {
            self.exit_after_eof
        };
        // Stdout is read and dropped while waiting: a server blocked on a full pipe can then exit.
        let mut drain = std::pin::pin!(self.stdout.discard_forever());
        if let Some(Ok(status)) = self.process.wait_for(stdin_wait, drain.as_mut()).await {
            return (Some(status), ShutdownStep::StdinClosed);
        }
        let (status, stopped) = self.process.terminate(self.grace, drain).await;
        let step = match stopped {
            Stopped::Terminated => ShutdownStep::Terminated,
            Stopped::Killed => ShutdownStep::Killed,
        };
        (status, step)
    }
}

// ---------------------------------------------------------------------------------------------
// Setup commands

/// What happens to the setup commands of a side, for progress display (the library prints
/// nothing itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupEvent {
    /// Command `index` (from 1) of `total` starts; `command` is shown as a shell would quote it.
    Started {
        index: usize,
        total: usize,
        command: String,
    },
    /// It ended after `elapsed`; `ok` is false when it failed or timed out (the error, with the
    /// output tail, follows).
    Finished {
        index: usize,
        total: usize,
        command: String,
        elapsed: Duration,
        ok: bool,
    },
}

/// Runs every setup command of `spec` in order, telling `observe` when each starts and ends.
pub(crate) async fn run_setups(
    spec: &LaunchSpec,
    observe: &(dyn Fn(SetupEvent) + Send + Sync),
) -> Result<(), Error> {
    let total = spec.setup.len();
    let redactor = spec_redactor(spec);
    for (i, setup) in spec.setup.iter().enumerate() {
        let command = redact_with(&redactor, &shell_command(&setup.program, &setup.args));
        observe(SetupEvent::Started {
            index: i + 1,
            total,
            command: command.clone(),
        });
        let started = std::time::Instant::now();
        let result = run_setup(spec, setup).await;
        observe(SetupEvent::Finished {
            index: i + 1,
            total,
            command,
            elapsed: started.elapsed(),
            ok: result.is_ok(),
        });
        result?;
    }
    Ok(())
}

/// Runs one setup command (for example a build) in `spec.cwd` with `spec.env`, within
/// [`tdqs_core::export::ExportLimits::setup_timeout`]. Its stdout and stderr are captured together (bounded by
/// [`tdqs_core::export::ExportLimits::stderr_tail_bytes`]) and their tail is shown if it fails. It runs in its own
/// process group, and whatever it leaves running in that group is killed when it ends.
pub(crate) async fn run_setup(spec: &LaunchSpec, setup: &SetupCommand) -> Result<(), Error> {
    let timeout = spec.limits.setup_timeout;
    let run = run_to_end_watched(
        base_command(spec, &setup.program, &setup.args, true),
        RunRequest {
            input: None,
            stdout: StdoutTo::Tail,
            tail_bytes: spec.limits.stderr_tail_bytes,
            timeout,
            grace: spec.limits.shutdown_grace,
            drain_wait: PIPE_DRAIN_WAIT,
        },
        |pid| spec.sandbox.as_ref().map(|s| s.watch(pid)),
    )
    .await
    .map_err(|err| {
        let origin = setup.origin.as_deref().unwrap_or(&spec.origin);
        spawn_error(spec, ("the setup command", origin), &setup.program, &err)
    })?;

    let shown = shell_command(&setup.program, &setup.args);
    let origin = setup.origin.as_deref().unwrap_or(&spec.origin);
    let tail = run.tail.text();
    let fail = |cause: String| {
        Error::new(Stage::Export, cause)
            .with_advice(
                "fix the setup command (or what it builds) for this revision; run the command \
                 below in that tree to see the whole output",
            )
            .with_detail("setup command output (tail)", tail_or_empty(&tail))
            .with_reproduce(reproduce_line(spec, &setup.program, &setup.args))
    };
    let result = match run.ended {
        Ended::Exited(status) if status.success() => Ok(()),
        Ended::Exited(status) => Err(fail(format!(
            "setup command `{shown}` (from {}) {}{}",
            origin,
            describe_status(status),
            match &spec.sandbox {
                Some(sandbox) if sandbox.tripped() => format!(": {}", sandbox.limit_note()),
                _ => String::new(),
            }
        ))),
        Ended::WaitFailed(err) => Err(fail(format!(
            "could not wait for setup command `{shown}`: {err}"
        ))),
        Ended::TimedOut(_) => Err(fail(format!(
            "setup command `{shown}` (from {}) did not finish within {} and was stopped",
            origin,
            humantime::format_duration(timeout)
        ))
        .with_advice(
            "make the setup command finish on its own (it must not start a server or wait for \
             input), or raise the setup timeout in the `[server]` table of tdqs-gate.toml",
        )),
    };
    result.map_err(|error| redact_error(spec, error))
}

/// The text for a captured-output detail; says so explicitly when the process wrote nothing, so
/// a reader does not wonder whether output was lost.
pub(crate) fn tail_or_empty(tail: &str) -> String {
    if tail.trim().is_empty() {
        "(nothing was written)".to_string()
    } else {
        tail.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8], max: usize) -> Vec<Result<StdoutLine, String>> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            match reader.next_line().await {
                Ok(StdoutLine::Eof) => {
                    out.push(Ok(StdoutLine::Eof));
                    break;
                }
                Ok(line) => out.push(Ok(line)),
                Err(ReadError::Oversize { limit }) => out.push(Err(format!("oversize {limit}"))),
                Err(ReadError::Io(err)) => {
                    out.push(Err(err.to_string()));
                    break;
                }
            }
        }
        out
    }

    fn line(text: &str) -> Result<StdoutLine, String> {
        Ok(StdoutLine::Line(text.as_bytes().to_vec()))
    }

    #[tokio::test]
    async fn reader_strips_bom_and_carriage_returns_and_skips_blank_lines() {
        let got = lines_of(b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \r\n{\"b\":2}\nlast", 64).await;
        assert_eq!(
            got,
            vec![
                line("{\"a\":1}"),
                line("{\"b\":2}"),
                line("last"),
                Ok(StdoutLine::Eof)
            ]
        );
    }

    #[tokio::test]
    async fn reader_reports_oversize_then_resumes_after_the_long_line() {
        let mut input = vec![b'x'; 40];
        input.extend_from_slice(b"\nok\n");
        let got = lines_of(&input, 16).await;
        assert_eq!(
            got,
            vec![Err("oversize 16".into()), line("ok"), Ok(StdoutLine::Eof)]
        );
    }

    #[tokio::test]
    async fn reader_accepts_a_line_of_exactly_the_limit() {
        let mut input = vec![b'y'; 16];
        input.push(b'\n');
        let got = lines_of(&input, 16).await;
        assert_eq!(got, vec![line(&"y".repeat(16)), Ok(StdoutLine::Eof)]);
    }

    #[tokio::test]
    async fn reader_fails_fast_on_an_endless_line_without_newline() {
        // A reader that yields one small chunk at a time: the error must come as soon as the
        // limit is crossed, long before the input ends.
        let (mut writer, reader) = tokio::io::duplex(64);
        let producer = tokio::spawn(async move {
            let chunk = [b'z'; 32];
            for _ in 0..1000 {
                if writer.write_all(&chunk).await.is_err() {
                    break;
                }
            }
        });
        let mut reader = LineReader::new(reader, 100);
        let first = reader.next_line().await;
        assert!(matches!(first, Err(ReadError::Oversize { limit: 100 })));
        drop(reader);
        producer.await.expect("producer task");
    }

    #[test]
    fn statuses_name_the_signal() {
        assert_eq!(
            describe_status(ExitStatus::from_raw(3 << 8)),
            "exited with status 3"
        );
        assert_eq!(
            describe_status(ExitStatus::from_raw(libc::SIGKILL)),
            "was killed by signal 9 (SIGKILL)"
        );
    }

    fn alive_in_group(pgid: i32) -> bool {
        // Zombies do not count: they are dead, merely not reaped yet.
        crate::platform::procfs::processes()
            .into_iter()
            .filter_map(|(pid, _)| crate::platform::procfs::stat(pid))
            .any(|stat| stat.state != "Z" && stat.pgrp == pgid)
    }

    // The only test in this crate that starts a server process, because `kill_live_groups`
    // kills every group the test process owns.
    #[tokio::test]
    async fn kill_live_groups_kills_groups_that_were_not_shut_down() {
        let spec = LaunchSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "sleep 30 & sleep 30".into()],
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            setup: Vec::new(),
            origin: "a unit test".into(),
            secret_env: Vec::new(),
            limits: tdqs_core::export::ExportLimits::default(),
            temp_home: None,
            reproduce_env: Vec::new(),
            http: None,
            sandbox: None,
        };
        let process = ServerProcess::spawn(&spec).expect("spawn");
        let pgid = process.pid() as i32;
        assert!(live_group_count() >= 1);
        kill_live_groups();
        let start = Instant::now();
        while alive_in_group(pgid) {
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "group {pgid} survived"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let shutdown = process.shutdown().await;
        assert_eq!(
            shutdown.status.and_then(|s| s.signal()),
            Some(libc::SIGKILL)
        );
        assert_eq!(live_group_count(), 0);
    }

    #[test]
    fn shell_command_quotes_words_with_spaces() {
        assert_eq!(
            shell_command("npx", &["-y".into(), "a b".into()]),
            "npx -y 'a b'"
        );
    }
}
