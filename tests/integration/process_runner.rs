//! The one process runner (`tdqs_gate::platform::process`) that the server launcher, the setup
//! commands and the Claude Code judge share: own process group, TERM → grace →
//! KILL, pipes drained while waiting, the stderr tail kept, time limits.

use std::time::{Duration, Instant};

use tdqs_gate::platform::process::{run_to_end, Ended, RunOutput, RunRequest, StdoutTo};
use tokio::process::Command;

fn request(timeout: Duration, stdout: StdoutTo) -> RunRequest<'static> {
    RunRequest {
        input: None,
        stdout,
        tail_bytes: 64,
        timeout,
        grace: Duration::from_millis(300),
        drain_wait: Duration::from_millis(500),
    }
}

fn run(script: &str, request: RunRequest<'_>) -> RunOutput {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(script);
    runtime
        .block_on(run_to_end(command, request))
        .expect("starts")
}

/// Living (not zombie) members of process group `pgid`.
fn live_members(pgid: i32) -> Vec<u32> {
    tdqs_gate::platform::procfs::processes()
        .into_iter()
        .filter_map(|(pid, _)| Some((pid, tdqs_gate::platform::procfs::stat(pid)?)))
        .filter(|(_, stat)| stat.pgrp == pgid && !stat.is_zombie())
        .map(|(pid, _)| pid)
        .collect()
}

fn assert_group_gone(pgid: i32) {
    let start = Instant::now();
    while !live_members(pgid).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "group {pgid} outlived the run: {:?}",
            live_members(pgid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_command_past_its_limit_is_stopped_term_then_kill_with_its_group() {
    // The shell and its background child ignore SIGTERM, so only SIGKILL ends them.
    let started = Instant::now();
    let out = run(
        "trap '' TERM; echo $$; sleep 30 & sleep 30",
        request(Duration::from_millis(300), StdoutTo::Head(64)),
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    let Ended::TimedOut(status) = out.ended else {
        panic!("not stopped: {:?}", out.ended);
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    let pgid: i32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the shell printed its pid");
    assert_group_gone(pgid);
}

#[test]
fn what_a_finished_command_left_in_its_group_is_killed() {
    let out = run(
        "echo $$; sleep 30 & exit 3",
        request(Duration::from_secs(10), StdoutTo::Head(64)),
    );
    let Ended::Exited(status) = out.ended else {
        panic!("{:?}", out.ended);
    };
    assert_eq!(status.code(), Some(3));
    let pgid: i32 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("pid");
    assert_group_gone(pgid);
}

#[test]
fn stdout_head_and_stderr_tail_are_bounded_and_pipes_never_block() {
    // 1 MiB on stdout (far past a pipe's buffer) and 100 lines on stderr: the command must
    // finish, keeping the first bytes of stdout and the last of stderr.
    let out = run(
        "head -c 1048576 /dev/zero | tr '\\0' x; i=0; while [ $i -lt 100 ]; do echo line$i >&2; \
         i=$((i+1)); done",
        request(Duration::from_secs(20), StdoutTo::Head(16)),
    );
    assert!(
        matches!(out.ended, Ended::Exited(s) if s.success()),
        "{:?}",
        out.ended
    );
    assert_eq!(out.stdout, b"xxxxxxxxxxxxxxxx");
    assert!(out.stdout_overflow);
    let tail = out.tail.text();
    assert!(tail.ends_with("line98\nline99\n"), "{tail}");
    assert!(tail.starts_with("[… "), "{tail}");
    assert!(out.tail.bytes().len() <= 64);
}

#[test]
fn input_is_fed_and_stdout_can_share_the_tail() {
    let out = run(
        "cat; echo done >&2",
        RunRequest {
            input: Some(b"hello from stdin\n"),
            ..request(Duration::from_secs(10), StdoutTo::Tail)
        },
    );
    assert!(
        matches!(out.ended, Ended::Exited(s) if s.success()),
        "{:?}",
        out.ended
    );
    assert!(out.stdout.is_empty());
    assert_eq!(out.tail.text(), "hello from stdin\ndone\n");
}
