//! Process-wide defences, set up before the gate starts any child (see docs/security.md).
//!
//! - The gate makes itself non-dumpable (Linux `PR_SET_DUMPABLE` 0): `/proc/<gate pid>/environ`,
//!   `mem`, `maps` and friends become owned by root and unreadable to a same-user child, and such
//!   a child cannot `ptrace` the gate. The servers already start from an empty environment; this
//!   closes the back door through `/proc`. (macOS has no `/proc`; another process's environment
//!   is read there with `sysctl(KERN_PROCARGS2)`, which macOS allows for any process of the same
//!   user: see docs/security.md for what that means.)
//! - The gate becomes a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`): a server or setup
//!   command that detaches (`setsid` plus a double fork) is re-parented to the gate instead of to
//!   init, so [`end_orphans`] finds it and ends it when the run is over.
//! - The values of credential variables in the gate's own environment are registered with
//!   [`tdqs_core::redact`], so that text a server or judge prints (stderr tails, tool texts in
//!   reports, error messages) never carries them, whichever way the server got hold of them.

use tdqs_core::redact::NameContext;

/// Whether the variable `name` of the gate's own environment holds a credential: the one rule
/// of [`tdqs_core::redact::is_credential_name`], in its [`NameContext::GateEnv`] form (names of
/// locations and identifiers such as `SSH_AUTH_SOCK` are left alone). See docs/security.md.
pub(crate) fn is_credential_name(name: &str) -> bool {
    tdqs_core::redact::is_credential_name(name, NameContext::GateEnv)
}

/// Registers the value of every credential variable in the gate's environment for masking.
/// Returns the names registered (never the values).
pub(crate) fn register_environment_credentials() -> Vec<String> {
    let mut names = Vec::new();
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if is_credential_name(name) && !value.trim().is_empty() {
            tdqs_core::redact::register_secret(value);
            names.push(name.to_string());
        }
    }
    names.sort();
    names
}

/// The defences of this module, in the order they must happen: before any thread or child.
pub(crate) fn at_start() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with integer arguments only changes flags of this process.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        }
    }
    register_environment_credentials();
}

/// Whether this process is non-dumpable (Linux; `false` elsewhere).
pub fn is_non_dumpable() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_GET_DUMPABLE only reads a flag.
        unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Ends every process left running below the gate once a run is over: descendants that detached
/// from their server's process group (`setsid`) and were re-parented to the gate as subreaper.
/// Zombies are reaped. Returns a description of each process that had to be killed, for a
/// warning; empty when nothing was left (always on systems without subreapers).
pub fn end_orphans() -> Vec<String> {
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
    #[cfg(target_os = "linux")]
    {
        super::sandbox::wait_for_probe_ahead();
        let mut killed = Vec::new();
        let me = std::process::id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        loop {
            let children = children_of(me);
            if children.is_empty() || std::time::Instant::now() > deadline {
                break;
            }
            // Whether every child found was a zombie, now reaped: then nothing is still dying
            // and the next look can follow at once (the usual end of a run: the sandboxes the
            // gate ended, waiting to be reaped) instead of after a pause.
            let mut only_reaped = true;
            for (pid, zombie, pgrp, exiting) in children {
                only_reaped &= zombie;
                if exiting {
                    // Already being torn down (a sandbox's inner processes die with it a
                    // moment after it): nothing left running; reaped below once it is a zombie.
                } else if !zombie && crate::platform::process::was_killed_on_drop(pgrp) {
                    // Killed by the gate itself when its owner was dropped, and still dying:
                    // not something a server left behind.
                    // SAFETY: kill(2) on a process whose parent is this process.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                } else if !zombie {
                    let command = crate::platform::ownership::command_line(pid);
                    // SAFETY: kill(2) on a process whose parent is this process.
                    if unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) } == 0 {
                        killed.push(format!("pid {pid} ({command})"));
                    }
                }
                let mut status = 0;
                // SAFETY: reaps one child of this process if it has exited; never blocks.
                let reaped =
                    unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
                only_reaped &= reaped == pid as libc::pid_t;
            }
            if !only_reaped {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        killed.extend(std::mem::take(
            &mut *ended_during_run().lock().unwrap_or_else(|e| e.into_inner()),
        ));
        killed.sort();
        killed.dedup();
        killed
    }
}

/// Processes [`end_detached`] ended during the run, for [`end_orphans`]'s report.
fn ended_during_run() -> &'static std::sync::Mutex<Vec<String>> {
    static ENDED: std::sync::OnceLock<std::sync::Mutex<Vec<String>>> = std::sync::OnceLock::new();
    ENDED.get_or_init(Default::default)
}

/// Ends, during a run, every process that detached from the gate's children: direct children of
/// the gate (re-parented to it as subreaper) that lead no process group the gate started.
/// Called once the servers of both sides are stopped, so a daemon left by pull-request code
/// does not keep running (writing into the trees, racing the checks of files the gate reads or
/// writes next) while the judge scores and the report is written. The gate's own children
/// (a Claude Code call in flight) are spared: each is registered with its group under the same
/// lock it is spawned under. Killed processes are not reaped here (the runtime may own some
/// zombie); [`end_orphans`] reaps them and reports them with the rest.
pub fn end_detached() {
    #[cfg(target_os = "linux")]
    {
        super::sandbox::wait_for_probe_ahead();
        let me = std::process::id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            let killed = crate::platform::process::with_live_groups(|live| {
                let mut killed = Vec::new();
                for pid in super::procfs::processes().into_iter().map(|(pid, _)| pid) {
                    let Some(stat) = super::procfs::stat(pid) else {
                        continue;
                    };
                    if stat.ppid != me
                        || stat.is_zombie()
                        || stat.exiting
                        || live.contains(&stat.pgrp)
                        || crate::platform::process::was_killed_on_drop(stat.pgrp)
                    {
                        continue;
                    }
                    let command = crate::platform::ownership::command_line(pid);
                    // SAFETY: kill(2) on a process whose parent is this process.
                    if unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) } == 0 {
                        killed.push(format!("pid {pid} ({command})"));
                    }
                }
                killed
            });
            if killed.is_empty() || std::time::Instant::now() > deadline {
                break;
            }
            ended_during_run()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(killed);
            // Their own children are re-parented to the gate in turn.
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Direct children of `parent` as `(pid, is_zombie, process group, is_exiting)`, read from
/// `/proc`.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<(u32, bool, i32, bool)> {
    super::procfs::processes()
        .into_iter()
        .filter_map(|(pid, _)| {
            let stat = super::procfs::stat(pid)?;
            (stat.ppid == parent).then(|| (pid, stat.is_zombie(), stat.pgrp, stat.exiting))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_recognised_and_locations_are_not() {
        for name in [
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "DB_PASSWORD",
            "MYSQL_ROOT_PASSWORD",
            "STRIPE_SECRET",
            "HF_APITOKEN",
            "SIGNING_PRIVATE_PEM",
            "npm_config__authToken",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "SSH_AUTH_SOCK",
            "KEYBOARD_LAYOUT",
            "GITHUB_SHA",
            "GOOGLE_APPLICATION_CREDENTIALS_FILE",
            "TOKEN_URL",
            "RUNNER_TEMP",
            "PATHEXT",
        ] {
            assert!(!is_credential_name(name), "{name}");
        }
    }
}
