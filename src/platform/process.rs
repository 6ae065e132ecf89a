//! Child processes the gate fully owns, supervised the same way for every caller: a side's MCP
//! server and its setup commands ([`crate::export::process`]) and each call of the Claude Code
//! judge ([`crate::judge::claude_code`]).
//!
//! - **Own process group.** [`OwnedChild::spawn`] makes the child the leader of a new process
//!   group. Package runners (`npx`, `uvx`), shell wrappers and CLIs start helpers as
//!   grandchildren, and signalling only the direct child leaves those running, so every signal
//!   here goes to the whole group.
//! - **TERM → grace → KILL.** [`OwnedChild::terminate`] sends SIGTERM to the group, waits the
//!   caller's grace, sends SIGKILL and reaps the leader within [`REAP_AFTER_KILL_WAIT`].
//!   [`OwnedChild::sweep`] then kills whatever is left in the group, so members that outlived the
//!   leader die too.
//! - **Nothing outlives a drop.** A child dropped without that (an error returned early, a panic,
//!   a cancelled future on Ctrl-C) has its group SIGKILLed by a synchronous drop guard: async
//!   clean-up cannot be relied on there, the runtime may already be shutting down.
//!   [`kill_live_groups`] kills every group still owned, for a handler that exits the process
//!   without unwinding.
//! - **Pipes drained while waiting.** Output is read all the time by tasks of their own, into a
//!   bounded [`OutputTail`] (the end explains a failure) or a bounded head (the start is parsed),
//!   so a chatty child never blocks on a full pipe; while waiting for an exit the caller can keep
//!   draining its own pipe too (see [`OwnedChild::wait_for`]).
//! - **Time limits.** [`run_to_end`] runs a command to its end within a time limit and stops it
//!   (TERM → grace → KILL) when the limit passes.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

/// Upper bound on reaping the leader after SIGKILL (only a process stuck in the kernel takes
/// longer; the group is swept regardless).
pub const REAP_AFTER_KILL_WAIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------------
// Process groups: ownership registry and drop guard

fn live_groups() -> &'static Mutex<HashSet<i32>> {
    static LIVE: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Process groups a drop guard SIGKILLed (an export cancelled, a judge check dropped): their
/// members may still be dying, or unreaped, when the run's last sweep looks for processes that
/// detached, and must not be reported as such.
fn killed_on_drop() -> &'static Mutex<HashSet<i32>> {
    static KILLED: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    KILLED.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Whether `pgid` is a group the gate started and killed when it was dropped.
pub(crate) fn was_killed_on_drop(pgid: i32) -> bool {
    killed_on_drop()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&pgid)
}

/// SIGKILLs every process group the gate started and has not cleaned up yet.
///
/// For a Ctrl-C handler (or any path) that ends the process with `std::process::exit`, where
/// destructors do not run. Safe to call at any time; groups already cleaned up are not touched.
pub fn kill_live_groups() {
    let groups: Vec<i32> = live_groups()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .copied()
        .collect();
    for pgid in groups {
        signal_group(pgid, libc::SIGKILL);
    }
}

/// Runs `f` with the process groups currently owned, holding the registry's lock: no child
/// is spawned meanwhile.
pub(crate) fn with_live_groups<R>(f: impl FnOnce(&HashSet<i32>) -> R) -> R {
    let live = live_groups().lock().unwrap_or_else(|e| e.into_inner());
    f(&live)
}

/// Number of process groups currently owned (started and not yet cleaned up).
pub fn live_group_count() -> usize {
    live_groups()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .len()
}

fn signal_group(pgid: i32, signal: libc::c_int) -> bool {
    // SAFETY: killpg only sends a signal; pgid is a group this process created (> 1).
    pgid > 1 && unsafe { libc::killpg(pgid, signal) } == 0
}

/// True while any process (zombies included) is still in the group.
fn group_has_members(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    pgid > 1 && unsafe { libc::kill(-pgid, 0) } == 0
}

/// Owns a process group: SIGKILLs it when dropped unless it was swept after a complete
/// shutdown.
#[derive(Debug)]
struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl GroupGuard {
    /// The final sweep: whatever is left of the group after the leader was reaped is killed.
    fn sweep_and_release(&mut self) {
        if group_has_members(self.pgid) {
            signal_group(self.pgid, libc::SIGKILL);
        }
        self.release();
    }

    fn release(&mut self) {
        if self.armed {
            self.armed = false;
            live_groups()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            signal_group(self.pgid, libc::SIGKILL);
            // Recorded before the group leaves the live registry, and without holding both
            // locks at once, so a sweep sees it in one of the two.
            killed_on_drop()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(self.pgid);
            self.release();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The owned child

/// At which step [`OwnedChild::terminate`] saw the leader gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It exited after SIGTERM.
    Terminated,
    /// It needed SIGKILL.
    Killed,
}

/// A child that leads its own process group, which the gate kills when the child is dropped.
#[derive(Debug)]
pub struct OwnedChild {
    child: Child,
    pid: u32,
    guard: GroupGuard,
}

impl OwnedChild {
    /// Starts `command` as the leader of a new process group (its environment, directory and
    /// pipes are the caller's choice).
    pub fn spawn(command: &mut Command) -> io::Result<Self> {
        command.process_group(0).kill_on_drop(true);
        // Spawned and registered under the registry's lock: a sweep of detached processes
        // (`harden::end_detached`) never sees one of ours unregistered.
        let mut live = live_groups().lock().unwrap_or_else(|e| e.into_inner());
        let child = command.spawn()?;
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("a just-spawned child has no pid"))?;
        // The group id equals the leader's pid because of process_group(0).
        live.insert(pid as i32);
        drop(live);
        let guard = GroupGuard {
            pgid: pid as i32,
            armed: true,
        };
        Ok(OwnedChild { child, pid, guard })
    }

    /// The leader's pid, which is also the process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The piped standard streams, each once.
    pub fn take_pipes(&mut self) -> (Option<ChildStdin>, Option<ChildStdout>, Option<ChildStderr>) {
        (
            self.child.stdin.take(),
            self.child.stdout.take(),
            self.child.stderr.take(),
        )
    }

    /// The leader's exit status, if it has exited.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `limit` for the leader to exit (`None`: still running) while polling
    /// `alongside`, which keeps a pipe the caller reads drained. `alongside` must never complete
    /// (drain to end-of-file, then stay pending; `std::future::pending()` for nothing); it is
    /// polled again by later waits, so it is passed pinned.
    pub async fn wait_for<F: Future<Output = ()>>(
        &mut self,
        limit: Duration,
        mut alongside: Pin<&mut F>,
    ) -> Option<io::Result<ExitStatus>> {
        tokio::select! {
            status = self.child.wait() => Some(status),
            () = alongside.as_mut() => None,
            () = tokio::time::sleep(limit) => None,
        }
    }

    /// SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL and up to
    /// [`REAP_AFTER_KILL_WAIT`] to reap it, polling `alongside` all along (see
    /// [`OwnedChild::wait_for`]). Never fails: every step is bounded; the status is `None` when
    /// the leader could not be reaped.
    pub async fn terminate<F: Future<Output = ()>>(
        &mut self,
        grace: Duration,
        mut alongside: Pin<&mut F>,
    ) -> (Option<ExitStatus>, Stopped) {
        signal_group(self.pid as i32, libc::SIGTERM);
        if let Some(Ok(status)) = self.wait_for(grace, alongside.as_mut()).await {
            return (Some(status), Stopped::Terminated);
        }
        signal_group(self.pid as i32, libc::SIGKILL);
        let status = self.wait_for(REAP_AFTER_KILL_WAIT, alongside).await;
        (status.and_then(Result::ok), Stopped::Killed)
    }

    /// Kills whatever is left in the group (the leader is gone or about to be) and gives up
    /// ownership: call it after the leader exited or was stopped.
    pub fn sweep(&mut self) {
        self.guard.sweep_and_release();
    }
}

// ---------------------------------------------------------------------------------------------
// Draining pipes

/// The last `capacity` bytes a process wrote, shared with the task that drains the pipe.
#[derive(Debug, Clone)]
pub struct OutputTail {
    inner: Arc<Mutex<Ring>>,
}

#[derive(Debug)]
struct Ring {
    bytes: VecDeque<u8>,
    capacity: usize,
    dropped: u64,
}

impl OutputTail {
    pub fn new(capacity: usize) -> Self {
        OutputTail {
            inner: Arc::new(Mutex::new(Ring {
                bytes: VecDeque::new(),
                capacity,
                dropped: 0,
            })),
        }
    }

    pub fn push(&self, chunk: &[u8]) {
        let mut ring = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let capacity = ring.capacity;
        if capacity == 0 {
            ring.dropped += chunk.len() as u64;
            return;
        }
        let chunk = if chunk.len() > capacity {
            ring.dropped += (chunk.len() - capacity) as u64;
            &chunk[chunk.len() - capacity..]
        } else {
            chunk
        };
        let overflow = (ring.bytes.len() + chunk.len()).saturating_sub(capacity);
        if overflow > 0 {
            ring.bytes.drain(..overflow);
            ring.dropped += overflow as u64;
        }
        ring.bytes.extend(chunk);
    }

    /// The kept bytes, as written.
    pub fn bytes(&self) -> Vec<u8> {
        let ring = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        ring.bytes.iter().copied().collect()
    }

    /// The kept bytes as text (invalid UTF-8 replaced). When earlier output was dropped, the
    /// partial first line is cut off and a note says how much is missing.
    pub fn text(&self) -> String {
        let ring = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Vec<u8> = ring.bytes.iter().copied().collect();
        if ring.dropped == 0 {
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        let (skipped, rest) = match bytes.iter().position(|&b| b == b'\n') {
            Some(newline) => (newline + 1, &bytes[newline + 1..]),
            None => (0, &bytes[..]),
        };
        // What is kept may begin inside a secret: a long line (no newline kept) or a secret of
        // several lines (a PEM key) cut by the ring. Its end part is masked here, where the cut
        // is known; whole secrets are masked by the callers as before.
        format!(
            "[… {} earlier bytes not shown]\n{}",
            ring.dropped + skipped as u64,
            tdqs_core::redact::redact_cut_start(&String::from_utf8_lossy(rest))
        )
    }

    pub fn is_empty(&self) -> bool {
        let ring = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        ring.bytes.is_empty() && ring.dropped == 0
    }
}

/// The first `limit` bytes of a stream, and whether more came.
#[derive(Debug, Default)]
struct Head {
    bytes: Vec<u8>,
    overflow: bool,
}

/// Reads `pipe` to its end into `tail`.
pub(crate) fn spawn_drain<R>(pipe: R, tail: OutputTail) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    spawn_reader(pipe, move |chunk| tail.push(chunk))
}

/// Reads `pipe` to its end, keeping the first `limit` bytes in `head`; the rest is read and
/// dropped so the child never blocks on a full pipe.
fn spawn_head<R>(pipe: R, head: Arc<Mutex<Head>>, limit: usize) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    spawn_reader(pipe, move |chunk| {
        let mut head = head.lock().unwrap_or_else(|e| e.into_inner());
        let room = limit.saturating_sub(head.bytes.len());
        head.bytes
            .extend_from_slice(&chunk[..chunk.len().min(room)]);
        head.overflow |= chunk.len() > room;
    })
}

fn spawn_reader<R, K>(mut pipe: R, mut keep: K) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    K: FnMut(&[u8]) + Send + 'static,
{
    tokio::spawn(async move {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => keep(&chunk[..n]),
            }
        }
    })
}

/// Waits up to `wait` in all for the readers to reach end-of-file, so what a process wrote just
/// before it died is kept; then stops them. Pipes stay open only while some process holds them,
/// and the group is dead by now: the wait only matters if one escaped the group.
pub async fn finish_drains(tasks: Vec<JoinHandle<()>>, wait: Duration) {
    let deadline = tokio::time::Instant::now() + wait;
    for mut task in tasks {
        if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
            task.abort();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running a command to its end

/// Where a command's stdout goes in [`run_to_end`].
#[derive(Debug, Clone, Copy)]
pub enum StdoutTo {
    /// Its first n bytes are kept (the caller parses the stream from the start).
    Head(usize),
    /// Into the same tail as stderr (a build log: the end explains a failure).
    Tail,
}

/// What [`run_to_end`] does.
#[derive(Debug, Clone, Copy)]
pub struct RunRequest<'a> {
    /// Written to stdin (which is then closed); `None`: stdin is `/dev/null`.
    pub input: Option<&'a [u8]>,
    pub stdout: StdoutTo,
    /// Bytes of the end of stderr (and of stdout with [`StdoutTo::Tail`]) kept.
    pub tail_bytes: usize,
    /// Time from start to exit; then the group is stopped.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// For the pipes to reach end-of-file once the group is gone (see [`finish_drains`]).
    pub drain_wait: Duration,
}

/// How a command run by [`run_to_end`] ended.
#[derive(Debug)]
pub enum Ended {
    Exited(ExitStatus),
    /// Waiting for it failed; its group was killed.
    WaitFailed(io::Error),
    /// It ran past the time limit and was stopped (TERM → grace → KILL); the status is `None`
    /// when the leader could not be reaped even then.
    TimedOut(Option<ExitStatus>),
}

/// What a command run by [`run_to_end`] left.
#[derive(Debug)]
pub struct RunOutput {
    pub ended: Ended,
    /// With [`StdoutTo::Head`]: the first bytes of stdout.
    pub stdout: Vec<u8>,
    /// With [`StdoutTo::Head`]: stdout went past the limit (the excess was read and dropped).
    pub stdout_overflow: bool,
    /// The end of stderr (and stdout with [`StdoutTo::Tail`]).
    pub tail: OutputTail,
}

/// Runs `command` in its own process group to its end or to `request.timeout`, with its pipes
/// drained all along; whatever it left running in its group is killed when it is done, so no
/// process outlives the call. Only starting it can fail; everything after is bounded.
pub async fn run_to_end(command: Command, request: RunRequest<'_>) -> io::Result<RunOutput> {
    run_to_end_watched(command, request, |_| ()).await
}

/// [`run_to_end`], calling `on_spawn` with the leader's pid as soon as it started and keeping
/// what it returns (a sandbox's watchdog) until the command's group is gone.
pub async fn run_to_end_watched<W>(
    mut command: Command,
    request: RunRequest<'_>,
    on_spawn: impl FnOnce(u32) -> W,
) -> io::Result<RunOutput> {
    command
        .stdin(if request.input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = OwnedChild::spawn(&mut command)?;
    let watch = on_spawn(child.pid());
    let (stdin, stdout, stderr) = child.take_pipes();

    // The pipes are served by their own tasks so that a child blocked on a full stdout, or one
    // that reads its input only after writing, always makes progress.
    let feeder = match (stdin, request.input) {
        (Some(mut pipe), Some(input)) => {
            let input = input.to_vec();
            Some(tokio::spawn(async move {
                // A child that exits without reading its input closes the pipe: not a failure.
                let _ = pipe.write_all(&input).await;
                let _ = pipe.shutdown().await;
            }))
        }
        _ => None,
    };
    let tail = OutputTail::new(request.tail_bytes);
    let head = Arc::new(Mutex::new(Head::default()));
    let mut readers = Vec::new();
    if let Some(pipe) = stdout {
        readers.push(match request.stdout {
            StdoutTo::Head(limit) => spawn_head(pipe, Arc::clone(&head), limit),
            StdoutTo::Tail => spawn_drain(pipe, tail.clone()),
        });
    }
    if let Some(pipe) = stderr {
        readers.push(spawn_drain(pipe, tail.clone()));
    }

    let nothing = std::pin::pin!(std::future::pending::<()>());
    let ended = match child.wait_for(request.timeout, nothing).await {
        Some(Ok(status)) => Ended::Exited(status),
        Some(Err(err)) => Ended::WaitFailed(err),
        None => {
            let nothing = std::pin::pin!(std::future::pending::<()>());
            Ended::TimedOut(child.terminate(request.grace, nothing).await.0)
        }
    };
    // Anything left behind in the group goes now; that also closes the pipes it held.
    child.sweep();
    drop(watch);
    if let Some(feeder) = feeder {
        feeder.abort();
    }
    finish_drains(readers, request.drain_wait).await;
    let head = std::mem::take(&mut *head.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(RunOutput {
        ended,
        stdout: head.bytes,
        stdout_overflow: head.overflow,
        tail,
    })
}

#[cfg(test)]
mod tests {
    // No test here starts a process: `export::process` has the one unit test that does, because
    // `kill_live_groups` kills every group the test process owns. The runner is tested end to end
    // in tests/integration/process_runner.rs.
    use super::*;

    #[test]
    fn tail_keeps_the_last_bytes_and_says_how_many_were_dropped() {
        let tail = OutputTail::new(10);
        tail.push(b"line one\nline two\n");
        tail.push(b"end\n");
        let text = tail.text();
        assert!(text.starts_with("[… "), "{text}");
        assert!(text.ends_with("end\n"), "{text}");
        assert_eq!(tail.bytes(), b"e two\nend\n");
        let small = OutputTail::new(100);
        small.push(b"all of it");
        assert_eq!(small.text(), "all of it");
        assert!(OutputTail::new(4).is_empty());
    }
}
