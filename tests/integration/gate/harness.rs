//! What every end-to-end test of the gate needs: a git repository of a stdlib Python MCP server
//! (`examples/issue-tracker/server.py` serving `tools.json`), a scripted fake `claude`, the
//! stand-in specification served on loopback, and the real command line run as a child process
//! with a private temporary folder, so a run that leaves anything behind is caught.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::loopback::{Loopback, Response};
use crate::support::gitrepo::{GitRepo, RepoSnapshot};

pub const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");
pub const FAKE_CLAUDE: &str = env!("CARGO_BIN_EXE_fake-claude");
pub const SPEC_COMMIT: &str = "b9881b0cfec88969e42672c92544487ca191a992";

/// Environment variables of the test process that must not reach the gate: CI sets the GitHub
/// ones (a test run must not write into the real job summary) and may hold real credentials.
const SCRUBBED_ENV: &[&str] = &[
    "GITHUB_STEP_SUMMARY",
    "GITHUB_OUTPUT",
    "GITHUB_ACTIONS",
    "CI",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "TDQS_GATE",
    "XDG_CACHE_HOME",
    "TDQS_GATE_ANSWER_CACHE_KEY",
];

pub fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(relative: &str) -> PathBuf {
    manifest_dir().join("fixtures").join(relative)
}

pub fn standin_pins() -> PathBuf {
    fixture("spec/standin-pins.json")
}

pub fn example_server() -> String {
    std::fs::read_to_string(manifest_dir().join("../examples/issue-tracker/server.py"))
        .expect("examples/issue-tracker/server.py")
}

/// The four-tool set of `tests/fixtures/gate/tools.json`.
pub fn base_tools() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("gate/tools.json")).unwrap()).unwrap()
}

/// The base tools plus eight more, so that one tool's fall hides in the rounded mean.
pub fn twelve_tools() -> Value {
    let mut tools = base_tools();
    let template = tools[0].clone();
    for i in 0..8 {
        let mut t = template.clone();
        t["name"] = json!(format!("extra_tool_{i}"));
        t["description"] = json!(format!(
            "Extra tool number {i}: returns a fixed value for tests."
        ));
        tools.as_array_mut().unwrap().push(t);
    }
    tools
}

/// `tools` with one tool's description replaced.
pub fn with_description(tools: &Value, name: &str, description: &str) -> Value {
    let mut tools = tools.clone();
    let tool = tools
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    tool["description"] = json!(description);
    tools
}

pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

/// The scripted fake `claude`: a copy of the helper binary with its control file beside it.
pub struct FakeClaude {
    dir: PathBuf,
}

impl FakeClaude {
    fn new(dir: PathBuf) -> FakeClaude {
        std::fs::create_dir_all(&dir).unwrap();
        // A copy, not a symlink: the fake reads its control file next to its resolved path.
        std::fs::copy(FAKE_CLAUDE, dir.join("claude")).unwrap();
        let fake = FakeClaude { dir };
        fake.control(json!({}));
        fake
    }

    pub fn program(&self) -> PathBuf {
        self.dir.join("claude")
    }

    /// Replaces the control file (see `tests/helpers/fake_claude.rs`).
    pub fn control(&self, control: Value) {
        std::fs::write(self.dir.join("fake-claude.json"), pretty(&control)).unwrap();
    }

    /// Every record of the fake's log; empty when it never ran.
    pub fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join("fake-claude.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Whether the program was started at all (for a model call, `--version` or `auth status`).
    pub fn ever_started(&self) -> bool {
        self.dir.join("fake-claude.log").exists()
    }

    /// The `-p` runs (model calls), retries included.
    pub fn calls(&self) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|r| r["kind"] == "call")
            .collect()
    }
}

/// A script rule for the tool question of `tool` (optionally only when the prompt also holds
/// `text`), giving every dimension `all`.
pub fn tool_rule(tool: &str, text: Option<&str>, occurrences: Option<&[u64]>, all: u8) -> Value {
    let mut contains = vec![format!("Tool under review: {tool}\n")];
    contains.extend(text.map(String::from));
    let mut rule = json!({"kind": "tool", "contains": contains, "all": all});
    if let Some(o) = occurrences {
        rule["occurrences"] = json!(o);
    }
    rule
}

/// The rules that end every script: any other tool scores 4 everywhere, coherence 4 everywhere.
pub fn default_rules() -> Vec<Value> {
    vec![
        json!({"kind": "tool", "all": 4, "justification": "Scripted default for an unremarkable tool."}),
        json!({"kind": "coherence", "all": 4, "justification": "Scripted default for the set."}),
    ]
}

/// A control file: `rules` first, then [`default_rules`].
pub fn script(rules: Vec<Value>) -> Value {
    let mut all = rules;
    all.extend(default_rules());
    json!({"script": all})
}

/// The result of one run of the command line.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub report_dir: PathBuf,
}

impl Run {
    pub fn from_output(output: Output, report_dir: PathBuf) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            report_dir,
        }
    }

    pub fn report_path(&self) -> PathBuf {
        self.report_dir.join("tool-definition-score.json")
    }

    pub fn report(&self) -> Value {
        let text = std::fs::read_to_string(self.report_path())
            .unwrap_or_else(|e| panic!("no report ({e}); {}", self.describe()));
        serde_json::from_str(&text).unwrap()
    }

    pub fn markdown(&self) -> String {
        std::fs::read_to_string(self.report_dir.join("tool-definition-score.md")).unwrap()
    }

    pub fn html(&self) -> String {
        std::fs::read_to_string(self.report_dir.join("tool-definition-score.html")).unwrap()
    }

    pub fn describe(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    pub fn assert_code(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "{}", self.describe());
        self
    }
}

/// A fixture repository with the example server, the fake judge and a loopback specification.
pub struct Setup {
    pub repo: GitRepo,
    pub fake: FakeClaude,
    pub spec: Loopback,
    work: tempfile::TempDir,
    runs: std::cell::Cell<u32>,
}

impl Setup {
    /// `main` holds the server, `tdqs-gate.toml` and `base` as `tools.json`; the working tree is
    /// the same until the test changes it.
    pub fn new(base: &Value) -> Setup {
        let repo = GitRepo::init();
        repo.write("server.py", &example_server());
        repo.write("tools.json", &pretty(base));
        repo.write(
            "tdqs-gate.toml",
            "[server]\ncommand = \"python3 {root}/server.py\"\n",
        );
        repo.commit_all("base tools");
        let work = tempfile::Builder::new()
            .prefix("gate-e2e-")
            .tempdir()
            .unwrap();
        let fake = FakeClaude::new(work.path().join("fake"));
        let readme = std::fs::read_to_string(fixture("spec/standin-readme.md")).unwrap();
        let spec = Loopback::routes(vec![(
            "GET",
            &format!("/{SPEC_COMMIT}/README.md"),
            Response::ok(readme),
        )]);
        Setup {
            repo,
            fake,
            spec,
            work,
            runs: std::cell::Cell::new(0),
        }
    }

    pub fn work(&self) -> &Path {
        self.work.path()
    }

    /// Copies the test server `servers/<name>` of this package into the repository's working
    /// tree and returns `{root}/<name>`, its path in a server command. A sandboxed server sees
    /// only its side's tree: a file of the checkout would be hidden from it when the checkout
    /// is under /tmp or a home folder.
    pub fn test_server_in_tree(&self, name: &str) -> String {
        let text = std::fs::read_to_string(manifest_dir().join("servers").join(name))
            .unwrap_or_else(|e| panic!("servers/{name}: {e}"));
        self.repo.write(name, &text);
        format!("{{root}}/{name}")
    }

    /// Writes the head's `tools.json` into the working tree (uncommitted).
    pub fn set_head(&self, tools: &Value) {
        self.repo.write("tools.json", &pretty(tools));
    }

    /// Commits `tools` on a new branch `name`, which stays checked out.
    pub fn commit_branch(&self, name: &str, tools: &Value) -> String {
        self.repo.git(["checkout", "-q", "-b", name]);
        self.set_head(tools);
        self.repo.commit_all(name)
    }

    pub fn spec_url(&self) -> String {
        self.spec.url(&format!("/{SPEC_COMMIT}/README.md"))
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.work().join("cache")
    }

    /// The arguments naming the fake judge, the stand-in pins, the loopback specification and a
    /// private cache.
    pub fn judge_args(&self) -> Vec<String> {
        vec![
            "--judge".into(),
            "claude-code".into(),
            "--claude".into(),
            self.fake.program().display().to_string(),
            "--pins".into(),
            standin_pins().display().to_string(),
            "--spec-url".into(),
            self.spec_url(),
            "--cache-dir".into(),
            self.cache_dir().display().to_string(),
        ]
    }

    /// A command for the gate binary in the repository, with a private `TMPDIR` and a scrubbed
    /// environment.
    pub fn command(&self, args: &[String], tmp: &Path) -> Command {
        let mut command = Command::new(GATE);
        command
            .args(args)
            .current_dir(&self.repo.path)
            .env("TMPDIR", tmp)
            // The persistent package cache stays inside the test's folder.
            .env("TDQS_GATE_PACKAGE_CACHE", self.work().join("packages"))
            // Runs ask afresh unless a test names an answer cache (`--answer-cache` wins).
            .env("TDQS_GATE_ANSWER_CACHE", "off")
            .stdin(Stdio::null());
        for name in SCRUBBED_ENV {
            command.env_remove(name);
        }
        command
    }

    fn fresh_dir(&self, what: &str) -> PathBuf {
        let n = self.runs.get() + 1;
        self.runs.set(n);
        let dir = self.work().join(format!("{what}-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Runs `tdqs-gate-dup <args> --report-dir <fresh dir>` and checks that the run left the
    /// repository exactly as it was (worktrees, branches, refs, index, files) and its temporary
    /// folder empty. A `check` (or `--check`) writes no report and takes no `--report-dir`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, |_| {})
    }

    pub fn run_with(&self, args: &[&str], adjust: impl FnOnce(&mut Command)) -> Run {
        let report_dir = self.fresh_dir("report");
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let checking = args.first() == Some(&"check")
            || args
                .iter()
                .any(|a| *a == "--check" || a.starts_with("--check="));
        if !checking {
            all.extend(["--report-dir".to_string(), report_dir.display().to_string()]);
        }
        self.run_raw(&all, report_dir, adjust)
    }

    /// Runs exactly `args` (no report directory added), with the same checks as [`Self::run`].
    pub fn run_raw(
        &self,
        args: &[String],
        report_dir: PathBuf,
        adjust: impl FnOnce(&mut Command),
    ) -> Run {
        let tmp = self.fresh_dir("tmp");
        let before = self.repo.snapshot();
        let mut command = self.command(args, &tmp);
        adjust(&mut command);
        let output = command.output().expect("run tdqs-gate-dup");
        let run = Run::from_output(output, report_dir);
        self.assert_left_nothing(&before, &tmp, &run);
        run
    }

    /// The gate's arguments with the fake judge: `--base main` plus [`Self::judge_args`] plus
    /// `extra` (e.g. `--sandbox off --command …` for a server that reaches outside its tree).
    pub fn gate_args(&self, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = vec!["--base".into(), "main".into()];
        args.extend(self.judge_args());
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// Exports `main` and the working tree with `tdqs-gate export` into `dir` as `base.json` and
    /// `head.json`: the two export files a CI job hands the gate.
    pub fn export_base_and_head(&self, dir: &Path) -> (PathBuf, PathBuf) {
        std::fs::create_dir_all(dir).unwrap();
        let base = dir.join("base.json");
        let head = dir.join("head.json");
        for (args, file) in [(vec!["--rev", "main"], &base), (vec![], &head)] {
            let mut all = vec!["export".to_string()];
            all.extend(args.iter().map(|s| s.to_string()));
            all.extend(["-o".into(), file.display().to_string()]);
            self.run_raw(&all, self.work().into(), |_| {})
                .assert_code(0);
        }
        (base, head)
    }

    /// The gate's arguments for deciding on the export files `base` and `head` with the fake
    /// judge ([`Self::judge_args`]), then `extra`.
    pub fn export_file_args(&self, base: &Path, head: &Path, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            "--base-export".to_string(),
            base.display().to_string(),
            "--head-export".to_string(),
            head.display().to_string(),
        ];
        args.extend(self.judge_args());
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    /// The gate with the fake judge ([`Self::gate_args`]), run by [`Self::run`].
    pub fn gate(&self, extra: &[&str]) -> Run {
        self.gate_with(extra, |_| {})
    }

    /// [`Self::gate`] with the command adjusted first (its environment, say).
    pub fn gate_with(&self, extra: &[&str], adjust: impl FnOnce(&mut Command)) -> Run {
        let args = self.gate_args(extra);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run_with(&refs, adjust)
    }

    pub fn assert_left_nothing(&self, before: &RepoSnapshot, tmp: &Path, run: &Run) {
        let after = self.repo.snapshot();
        assert_eq!(
            before.worktree_list,
            after.worktree_list,
            "a worktree was left behind: {}",
            run.describe()
        );
        assert_eq!(before.branches, after.branches, "{}", run.describe());
        assert_eq!(before.refs, after.refs, "{}", run.describe());
        assert_eq!(before.status, after.status, "{}", run.describe());
        assert_eq!(before.index, after.index, "{}", run.describe());
        assert_eq!(before.files, after.files, "{}", run.describe());
        assert!(
            after.temp_worktrees.is_empty(),
            "temporary worktrees left: {:?}",
            after.temp_worktrees
        );
        // Linked worktree records must be pruned (an empty folder is harmless).
        assert!(
            after
                .worktree_entries
                .as_ref()
                .is_none_or(|entries| entries.is_empty()),
            "worktree records left in .git/worktrees: {:?}",
            after.worktree_entries
        );
        let left: Vec<String> = std::fs::read_dir(tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            left.is_empty(),
            "the run left {left:?} in its temporary folder; {}",
            run.describe()
        );
    }
}

/// The committed report schema, compiled once.
fn schema() -> &'static jsonschema::Validator {
    static SCHEMA: OnceLock<jsonschema::Validator> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let text =
            std::fs::read_to_string(manifest_dir().join("../schemas/report.schema.json")).unwrap();
        jsonschema::validator_for(&serde_json::from_str(&text).unwrap())
            .expect("schemas/report.schema.json compiles")
    })
}

/// Fails, listing every violation, when a report does not match `schemas/report.schema.json`.
pub fn assert_schema_valid(report: &Value) {
    let errors: Vec<String> = schema()
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the report does not match schemas/report.schema.json:\n{}",
        errors.join("\n")
    );
}

#[cfg(target_os = "linux")]
/// Whether a process exists and is not a zombie waiting for a parent that will never reap it.
pub fn alive(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(true),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
/// Live (non-zombie) members of a process group.
pub fn group_members(pgid: i64) -> Vec<i64> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i64>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // Fields after the name: state, ppid, pgrp, …
        if fields.len() > 2 && fields[2].parse::<i64>().ok() == Some(pgid) && fields[0] != "Z" {
            members.push(pid);
        }
    }
    members
}

/// Polls `check` until it holds or `limit` passes.
pub fn wait_for(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    check()
}

/// Replaces what changes between machines and versions in a rendered report: hexadecimal ids of
/// twelve digits or more (commits, digests), the generator's version and the work folder.
pub fn redact(text: &str, version: &str, work: &Path) -> String {
    let text = text
        .replace(&work.display().to_string(), "<work>")
        .replace(&format!("tdqs-gate {version}"), "tdqs-gate <version>");
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let boundary_before = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        let run = chars[i..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || ('a'..='f').contains(*c))
            .count();
        let boundary_after = chars
            .get(i + run)
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        if boundary_before && run >= 12 && boundary_after {
            out.push_str("<hex>");
            i += run;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Compares a whole rendered page with its committed snapshot,
/// `tests/integration/snapshots/<name>.snap` (insta). Redact paths, versions and times first.
/// A difference fails the test: under CI (`CI=true`, set by `.ci/run`) nothing is written; on a
/// developer's machine insta writes `<name>.snap.new` beside it, to review with `cargo insta
/// review` (or to accept by renaming it) after checking the change.
pub fn assert_snapshot(name: &str, actual: &str) {
    insta::with_settings!({
        snapshot_path => manifest_dir().join("integration/snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, actual);
    });
}

/// A gate run in the background, in a process group of its own, for interruption tests. If the
/// test fails before interrupting it, it is interrupted (so it cleans up what it started) and
/// then killed.
pub struct Running {
    child: Option<Child>,
    pub pid: i64,
    report_dir: PathBuf,
}

impl Running {
    pub fn spawn(mut command: Command, report_dir: PathBuf) -> Running {
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tdqs-gate-dup");
        Running {
            pid: i64::from(child.id()),
            child: Some(child),
            report_dir,
        }
    }

    /// Sends SIGINT (what Ctrl-C sends) to the gate process alone and waits for it to exit.
    pub fn interrupt(mut self) -> Run {
        let child = self.child.take().unwrap();
        // SAFETY: kill only sends a signal, to a child this test started.
        assert_eq!(unsafe { libc::kill(self.pid as i32, libc::SIGINT) }, 0);
        let output = child.wait_with_output().unwrap();
        Run::from_output(output, self.report_dir.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SAFETY: signals to a child this test started, and to its own process group.
        unsafe { libc::kill(self.pid as i32, libc::SIGINT) };
        let exited = wait_for(Duration::from_secs(10), || {
            child.try_wait().ok().flatten().is_some()
        });
        if !exited {
            unsafe { libc::kill(-(self.pid as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}
