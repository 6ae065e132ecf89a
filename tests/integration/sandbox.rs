//! The bubblewrap sandbox around the pull request's setup commands and servers
//! (src/platform/sandbox.rs): what hostile code inside it can no longer reach, that it changes
//! nothing a real server lists, and what happens where it cannot run.
//!
//! Needs `bwrap` (`bash tests/setup/bubblewrap.sh`); without it each test is recorded as
//! skipped, and fails under `TDQS_GATE_REQUIRE_EXTERNAL=1` as in CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::gate::harness::*;

fn bwrap_installed() -> bool {
    let works = Command::new("bwrap")
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-pid",
            "--proc",
            "/proc",
            "true",
        ])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    if !works {
        crate::support::skips::skip(
            "bubblewrap (`bwrap`) is not installed or cannot run here; run `bash tests/setup/bubblewrap.sh`",
        );
    }
    works
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `tdqs-gate export <args> -o <out>` in the setup's repository (head = working tree).
fn export(setup: &Setup, args: &[&str], out: &Path, adjust: impl FnOnce(&mut Command)) -> Output {
    let tmp = setup.work().join(format!(
        "export-tmp-{}",
        out.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut all: Vec<String> = vec!["export".into()];
    all.extend(args.iter().map(|a| a.to_string()));
    all.extend(["-o".into(), out.display().to_string()]);
    let mut command = setup.command(&all, &tmp);
    command.env_remove("CI");
    adjust(&mut command);
    command.output().expect("run the gate")
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Live processes (zombies left out) whose command line contains `token`.
fn alive_with(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(") ")
                    .map(|(_, rest)| rest.starts_with('Z'))
            })
            .unwrap_or(true);
        if cmdline.contains(token) && !zombie {
            found.push(format!("{pid}: {cmdline}"));
        }
    }
    found
}

fn wait_until_none_alive(token: &str, limit: Duration) -> Vec<String> {
    let start = Instant::now();
    loop {
        let alive = alive_with(token);
        if alive.is_empty() || start.elapsed() > limit {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A server that first reads the environment of every process it can see in `/proc`, and
/// counts those processes, into files of its tree (the working tree, which `export` runs in).
fn snooping_server(setup: &Setup) {
    setup.repo.write(
        "snoop.sh",
        "for p in /proc/[0-9]*; do tr '\\000' '\\n' < $p/environ; done > seen.txt 2>/dev/null\n\
         ls /proc | grep -c '^[0-9]' > count.txt\n\
         exec python3 \"$(dirname \"$0\")/server.py\"\n",
    );
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"sh {root}/snoop.sh\"\n",
    );
}

const CANARY: &str = "canary-7f3a9c1e5b2d4f60";

/// Run from a shell that holds a credential (as a CI step or a pre-push hook would be), the
/// server reads `/proc/<pid>/environ` of every process it sees. Unsandboxed (as root here) it
/// finds the credential in the ancestor shell; in the sandbox it sees only itself.
#[test]
fn sandbox_a_hostile_server_finds_no_ancestor_environment() {
    if !bwrap_installed() {
        return;
    }
    let setup = Setup::new(&base_tools());
    snooping_server(&setup);
    setup.repo.commit_all("snooping server");
    let run = |mode: &str| {
        let out = setup.work().join(format!("snoop-{mode}.json"));
        // The shell stays the gate's parent (`; true` keeps it from exec-ing the gate).
        let output = export(&setup, &["--sandbox", mode], &out, |command| {
            let mut shell = Command::new("sh");
            shell
                .arg("-c")
                .arg(format!("DEPLOY_PASSWORD={CANARY} \"$0\" \"$@\"; true"))
                .arg(command.get_program())
                .args(command.get_args());
            *command = rebuild(shell, command);
        });
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
        let seen = std::fs::read_to_string(setup.repo.path.join("seen.txt")).unwrap();
        let count: usize = std::fs::read_to_string(setup.repo.path.join("count.txt"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        (json(&out), seen, count)
    };
    let (export, seen, count) = run("on");
    assert!(
        !seen.contains(CANARY),
        "the sandboxed server read the ancestor's environment"
    );
    assert!(
        count <= 4,
        "the sandbox shows only its own processes, not {count}"
    );
    assert_eq!(export["source"]["sandbox"]["kind"], "bubblewrap");
    // The same server without the sandbox: as root it reads the ancestor's credential, which
    // is what the sandbox removes (an unprivileged gate sees it too: the shell is dumpable).
    let (export, seen, count) = run("off");
    assert!(
        seen.contains(CANARY),
        "control: the unsandboxed server saw {count} processes and no credential"
    );
    assert_eq!(export["source"]["sandbox"]["kind"], "none");
}

/// A copy of `original`'s environment and folder on a new program.
fn rebuild(mut program: Command, original: &Command) -> Command {
    for (name, value) in original.get_envs() {
        match value {
            Some(value) => program.env(name, value),
            None => program.env_remove(name),
        };
    }
    if let Some(dir) = original.get_current_dir() {
        program.current_dir(dir);
    }
    program.stdin(Stdio::null());
    program
}

/// A setup command that starts a chain of 400 nested processes, and one that forks 500: both
/// pass the sandbox's process limit, are stopped, and nothing of them is alive once the gate
/// has exited (the sandbox's PID namespace ends with it).
#[test]
fn sandbox_a_process_chain_and_a_fork_bomb_die_with_the_sandbox() {
    if !bwrap_installed() {
        return;
    }
    for (name, script) in [
        (
            "chain",
            "n=$1; if [ \"$n\" -gt 0 ]; then sh ./TOKEN.sh $((n-1)) & fi; sleep 30; wait",
        ),
        (
            "forks",
            "cp \"$(command -v sleep)\" ./TOKEN-sleep; i=0; while [ $i -lt 500 ]; do \
             ./TOKEN-sleep 30 & i=$((i+1)); done; wait",
        ),
    ] {
        let token = format!("sbx-{name}-{}", std::process::id());
        let setup = Setup::new(&base_tools());
        setup
            .repo
            .write(&format!("{token}.sh"), &script.replace("TOKEN", &token));
        setup.repo.write(
            "tdqs-gate.toml",
            &format!(
                "[server]\ncommand = \"python3 {{root}}/server.py\"\nsetup = [\"sh ./{token}.sh 400\"]\n"
            ),
        );
        setup.repo.commit_all(name);
        let out = setup.work().join(format!("{name}.json"));
        let started = Instant::now();
        let output = export(&setup, &["--sandbox", "on"], &out, |_| {});
        let report = text(&output);
        assert_eq!(output.status.code(), Some(2), "{report}");
        assert!(
            report.contains("more than 256 processes"),
            "the limit is named: {report}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(25),
            "stopped at the limit, not by a timeout: {report}"
        );
        let alive = wait_until_none_alive(&token, Duration::from_secs(30));
        assert!(alive.is_empty(), "{name}: still alive: {alive:?}");
    }
}

/// SIGKILL of the gate while its setup runs 100 processes: `--die-with-parent` takes the
/// sandbox, and with it every process in it, down too.
#[test]
fn sandbox_processes_die_when_the_gate_is_killed() {
    if !bwrap_installed() {
        return;
    }
    let token = format!("sbx-killed-{}", std::process::id());
    let setup = Setup::new(&base_tools());
    setup.repo.write(
        &format!("{token}.sh"),
        &format!(
            "cp \"$(command -v sleep)\" ./{token}-sleep; i=0; while [ $i -lt 100 ]; do \
             ./{token}-sleep 60 & i=$((i+1)); done; wait"
        ),
    );
    setup.repo.write(
        "tdqs-gate.toml",
        &format!(
            "[server]\ncommand = \"python3 {{root}}/server.py\"\nsetup = [\"sh ./{token}.sh\"]\n"
        ),
    );
    setup.repo.commit_all("sleepers");
    let tmp = setup.work().join("killed-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = setup.work().join("killed.json");
    let args: Vec<String> = vec![
        "export".into(),
        "--sandbox".into(),
        "on".into(),
        "-o".into(),
        out.display().to_string(),
    ];
    let mut command = setup.command(&args, &tmp);
    let log = setup.work().join("killed.log");
    command
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut gate = command.spawn().unwrap();
    let start = Instant::now();
    while alive_with(&token).len() < 50 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the setup never started its processes: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    gate.kill().unwrap();
    gate.wait().unwrap();
    let alive = wait_until_none_alive(&token, Duration::from_secs(30));
    assert!(
        alive.is_empty(),
        "alive after SIGKILL of the gate: {alive:?}"
    );
}

fn example_tools(file: &str) -> Value {
    let path = manifest_dir().join("../examples/issue-tracker").join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn careful_tools() -> Value {
    example_tools("careful.json")
}

fn careless_tools() -> Value {
    example_tools("careless.json")
}

/// The careful example tools on `main`, the careless ones on the head: a real regression.
fn regression_setup() -> Setup {
    let setup = Setup::new(&careful_tools());
    setup.set_head(&careless_tools());
    setup
}

/// The head's server overwrites the base's tree (the gate's temporary worktrees) with its own
/// tools and kills every other `server.py` it sees: in the sandbox it finds neither, the base
/// lists its own tools and the regression is blocked. The report records the sandbox.
#[test]
fn sandbox_the_head_cannot_write_the_base_tree_or_signal_the_base_server() {
    if !bwrap_installed() {
        return;
    }
    let setup = regression_setup();
    setup.set_head(&careful_tools());
    // The gate's temporary folders are `<work>/tmp-N` (see the harness).
    setup.repo.write(
        "attack.sh",
        &format!(
            "for d in {work}/tmp-*/tdqs-gate-*/; do cp \"$(dirname \"$0\")/tools.json\" \"$d\"; done\n\
             for p in /proc/[0-9]*; do\n\
               case \"$(tr '\\000' ' ' < $p/cmdline)\" in\n\
                 *server.py*) [ \"${{p#/proc/}}\" = $$ ] || kill -9 \"${{p#/proc/}}\";;\n\
               esac\n\
             done 2>/dev/null\n\
             exec python3 \"$(dirname \"$0\")/server.py\"\n",
            work = setup.work().display()
        ),
    );
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"sh {root}/attack.sh\"\n",
    );
    setup.repo.commit_all("both sides attack");
    setup.set_head(&careless_tools());
    let run = setup.run(&["--base", "main", "--judge", "static", "--sandbox", "on"]);
    run.assert_code(1);
    let report = run.report();
    for side in ["base", "head"] {
        assert_eq!(
            report[side]["source"]["sandbox"]["kind"],
            "bubblewrap",
            "{side}: {}",
            run.describe()
        );
    }
    assert!(
        run.markdown().contains("Sandbox: bubblewrap"),
        "{}",
        run.markdown()
    );
}

/// Setup in the base's temporary worktree runs `git stash clear`, `git branch -D` and
/// `git tag` — the worktree's `.git` file points into the user's repository. In the sandbox
/// that repository is read-only: the stash, the branch and the tags are intact.
#[test]
fn sandbox_setup_cannot_change_the_users_git_repository() {
    if !bwrap_installed() {
        return;
    }
    let setup = Setup::new(&base_tools());
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nsetup = [\"sh -c 'git stash clear; \
         git branch -D keep; git tag evil; git update-ref -d refs/heads/main; true'\"]\n",
    );
    setup.repo.commit_all("destructive setup");
    setup.repo.git(["branch", "keep"]);
    setup.repo.write("tools.json", "[]");
    setup.repo.git(["stash"]);
    let stash = setup.repo.git(["stash", "list"]);
    assert!(!stash.is_empty());
    let run = setup.run(&["--base", "main", "--judge", "static", "--sandbox", "on"]);
    run.assert_code(0);
    assert_eq!(
        setup.repo.git(["stash", "list"]),
        stash,
        "the stash is kept"
    );
    let branches = setup.repo.git(["branch", "--list"]);
    assert!(
        branches.contains("keep") && branches.contains("main"),
        "{branches}"
    );
    assert!(setup.repo.git(["tag", "--list"]).is_empty());
}

/// A committed symbolic link to a folder outside the tree: setup writing through it reaches
/// nothing (the folder is not in the sandbox), and the folder stays empty.
#[test]
fn sandbox_a_committed_link_cannot_make_setup_write_outside_the_tree() {
    if !bwrap_installed() {
        return;
    }
    let setup = Setup::new(&base_tools());
    let outside = setup.work().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    setup.repo.symlink("out", outside.to_str().unwrap());
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nsetup = [\"sh -c 'echo pwned > \
         out/pwned.txt; true'\"]\n",
    );
    setup.repo.commit_all("link out");
    let run = setup.run(&["--base", "main", "--judge", "static", "--sandbox", "on"]);
    run.assert_code(0);
    let written: Vec<PathBuf> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(written.is_empty(), "written outside the tree: {written:?}");
}

/// Without a working `bwrap`: in CI (and with `--sandbox on`) INVALID naming the cause and the
/// fix; outside CI the export runs unconfined, says so in a warning and records why.
#[test]
fn sandbox_missing_bubblewrap_is_invalid_in_ci_with_the_fix() {
    let setup = Setup::new(&base_tools());
    let out = setup.work().join("nobwrap.json");
    let missing = |command: &mut Command| {
        command.env("TDQS_GATE_BWRAP", "/nonexistent/bwrap");
    };
    let output = export(&setup, &[], &out, |command| {
        missing(command);
        command.env("CI", "true");
    });
    let report = text(&output);
    assert_eq!(output.status.code(), Some(2), "{report}");
    for needle in [
        "not installed",
        "apt-get install -y bubblewrap",
        "--sandbox off",
    ] {
        assert!(report.contains(needle), "{needle}: {report}");
    }
    assert!(!out.exists());
    let output = export(&setup, &["--sandbox", "on"], &out, missing);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    // The workflow's explicit opt-out is honoured in CI.
    let output = export(&setup, &["--sandbox", "off"], &out, |command| {
        missing(command);
        command.env("CI", "true");
    });
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(
        json(&out)["source"]["sandbox"]["reason"],
        "turned off by --sandbox off"
    );
    // Outside CI: unconfined, with a warning in the export.
    let output = export(&setup, &[], &out, missing);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let exported = json(&out);
    assert_eq!(exported["source"]["sandbox"]["kind"], "none");
    let warnings = exported["warnings"].to_string();
    assert!(warnings.contains("WITHOUT a sandbox"), "{warnings}");
    // In CI the configuration alone cannot turn the sandbox off.
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\n[sandbox]\nmode = \"off\"\n",
    );
    let output = export(&setup, &[], &out, |command| {
        command.env("CI", "true");
    });
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains("only the workflow"),
        "{}",
        text(&output)
    );
}

/// The export of `command` (run in the setup's repository) with the sandbox on and off.
fn hashes(setup: &Setup, name: &str, args: &[&str]) -> (Value, Value) {
    let run = |mode: &str| {
        let out = setup.work().join(format!("{name}-{mode}.json"));
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--sandbox", mode]);
        let output = export(setup, &all, &out, |_| {});
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name} {mode}: {}",
            text(&output)
        );
        json(&out)
    };
    (run("on"), run("off"))
}

fn assert_same_listing(name: &str, boxed: &Value, open: &Value) {
    assert_eq!(boxed["source"]["sandbox"]["kind"], "bubblewrap", "{name}");
    assert_eq!(open["source"]["sandbox"]["kind"], "none", "{name}");
    assert_eq!(
        boxed["setHash"], open["setHash"],
        "{name}: the sandbox changed the listing"
    );
    assert!(
        boxed["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "{name}"
    );
}

/// Acceptance: every real server the tests install, and the example servers, list exactly the
/// same tools (equal set hash) in the sandbox as without it.
#[test]
fn sandbox_real_and_example_servers_export_the_same_set_hash() {
    if !bwrap_installed() {
        return;
    }
    let setup = Setup::new(&base_tools());
    let mut cases: Vec<(&str, String)> = Vec::new();
    if let Some(program) = crate::export::installed("npm/node_modules/.bin/mcp-server-everything") {
        cases.push(("server-everything", program.display().to_string()));
    }
    if let Some(program) = crate::export::installed("venv/bin/mcp-server-time") {
        cases.push((
            "mcp-server-time",
            format!("{} --local-timezone UTC", program.display()),
        ));
    }
    if let Some(program) = crate::export::installed("venv/bin/mcp-server-git") {
        cases.push(("mcp-server-git", program.display().to_string()));
    }
    if let Some(python) = crate::export::installed("venv/bin/python") {
        let server = setup.test_server_in_tree("fastmcp_server.py");
        cases.push(("fastmcp", format!("{} {server}", python.display())));
    }
    for (name, command) in &cases {
        let (boxed, open) = hashes(&setup, name, &["--command", command]);
        assert_same_listing(name, &boxed, &open);
    }
    // The Python example, as the gate's own fixture runs it (from tdqs-gate.toml).
    let (boxed, open) = hashes(&setup, "issue-tracker", &[]);
    assert_same_listing("issue-tracker", &boxed, &open);
}

/// The Node example builds in setup (`npm ci`, `npm run build`, with the network) and lists
/// the same tools in the sandbox as without it.
#[test]
fn sandbox_the_node_example_builds_and_exports_the_same_set_hash() {
    if !bwrap_installed() {
        return;
    }
    if Command::new("npm").arg("--version").output().is_err() {
        crate::support::skips::skip("npm is not installed");
        return;
    }
    let setup = Setup::new(&base_tools());
    let example = manifest_dir().join("../examples/issue-tracker-node");
    for file in [
        "build.js",
        "package.json",
        "package-lock.json",
        "tools.json",
        "tdqs-gate.toml",
    ] {
        setup
            .repo
            .write(file, &std::fs::read_to_string(example.join(file)).unwrap());
    }
    for entry in std::fs::read_dir(example.join("src")).unwrap().flatten() {
        let name = format!("src/{}", entry.file_name().to_string_lossy());
        setup
            .repo
            .write(&name, &std::fs::read_to_string(entry.path()).unwrap());
    }
    setup.repo.commit_all("node example");
    let (boxed, open) = hashes(&setup, "issue-tracker-node", &[]);
    assert_same_listing("issue-tracker-node", &boxed, &open);
}

/// A plan that names a file outside the side's tree, in a folder the sandbox hides (here the
/// gate's own TMPDIR), fails with an error that names the file, says the sandbox hides it and
/// gives both fixes; `--sandbox off` (a trusted local run) then works.
#[test]
fn a_file_the_sandbox_hides_is_named_with_the_fix() {
    if !bwrap_installed() {
        return;
    }
    let setup = Setup::new(&base_tools());
    let out = setup.work().join("hidden.json");
    // `export` gives the gate this folder as its TMPDIR, which the sandbox always hides,
    // wherever the repository and the test's own temporary folder are.
    let outside = setup.work().join("export-tmp-hidden").join("server");
    std::fs::create_dir_all(&outside).unwrap();
    for file in ["server.py", "tools.json"] {
        std::fs::copy(setup.repo.path.join(file), outside.join(file)).unwrap();
    }
    let server = outside.join("server.py").display().to_string();
    let command = format!("python3 {server}");
    let output = export(
        &setup,
        &["--sandbox", "on", "--command", &command],
        &out,
        |_| {},
    );
    let report = text(&output);
    assert_eq!(output.status.code(), Some(2), "{report}");
    for needle in [
        format!("the sandbox hides {server} from the server"),
        "{root}".to_string(),
        "--sandbox off".to_string(),
        "[sandbox] mode = \"off\"".to_string(),
    ] {
        assert!(report.contains(&needle), "{needle}: {report}");
    }
    assert!(!out.exists());
    let output = export(
        &setup,
        &["--sandbox", "off", "--command", &command],
        &out,
        |_| {},
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
}
