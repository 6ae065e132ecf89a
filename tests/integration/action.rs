//! The GitHub Action (`action.yml` and `action/entrypoint.sh`), run for real.
//!
//! [`runner`] executes `action.yml` the way GitHub's runner executes a composite action: it
//! evaluates the `${{ }}` expressions the file uses (inputs, step outputs and outcomes, `if:`
//! conditions with the status functions), runs each `run:` step with `bash --noprofile --norc -eo
//! pipefail` and only the environment the step declares, gives each step its own `GITHUB_OUTPUT`
//! and `GITHUB_STEP_SUMMARY` files, reads workflow commands from the log (honouring
//! `::stop-commands::`), and stands in for the three `uses:` steps (cache restore and save, and
//! upload-artifact, whose upload is a copy into a folder). Anything else in the file is refused,
//! so the Action cannot drift outside what this runner checks without a test failing.
//!
//! The repositories are built by `tests/fixtures/action/make-repos.sh`, the script the CI job
//! uses on GitHub: shallow clones of one branch each, without the base `origin/main`, so every
//! run goes through the Action's fetch of the base from a local "origin". The gate is this
//! build's binary (`TDQS_GATE_BIN`), the Claude Code CLI the fake one (`TDQS_GATE_CLAUDE_DIR`),
//! and the GitHub API a loopback server.
//!
//! Not run here: the `version: source` build with cargo inside the Action (the cache reuse path
//! is), `npm ci` of the pinned CLI, and GitHub's own runner; see docs/github-action.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::loopback::{refused_url, Loopback, Request, Response};

const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");
const FAKE_CLAUDE: &str = env!("CARGO_BIN_EXE_fake-claude");

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package sits in the repository")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

pub(crate) mod runner {
    //! A composite-action runner for the subset of GitHub Actions `action.yml` uses.

    use super::*;

    /// A value of GitHub's expression language (numbers are not used by the Action).
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) enum Val {
        Null,
        Bool(bool),
        Str(String),
    }

    impl Val {
        pub(crate) fn truthy(&self) -> bool {
            match self {
                Val::Null => false,
                Val::Bool(b) => *b,
                Val::Str(s) => !s.is_empty(),
            }
        }

        pub(crate) fn text(&self) -> String {
            match self {
                Val::Null => String::new(),
                Val::Bool(b) => b.to_string(),
                Val::Str(s) => s.clone(),
            }
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Tok {
        LParen,
        RParen,
        Not,
        And,
        Or,
        Eq,
        Ne,
        Str(String),
        Word(String),
    }

    fn tokenize(expr: &str) -> Vec<Tok> {
        let chars: Vec<char> = expr.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            match c {
                ' ' | '\t' | '\n' => i += 1,
                '(' => {
                    out.push(Tok::LParen);
                    i += 1;
                }
                ')' => {
                    out.push(Tok::RParen);
                    i += 1;
                }
                '!' if next == Some('=') => {
                    out.push(Tok::Ne);
                    i += 2;
                }
                '!' => {
                    out.push(Tok::Not);
                    i += 1;
                }
                '=' if next == Some('=') => {
                    out.push(Tok::Eq);
                    i += 2;
                }
                '&' if next == Some('&') => {
                    out.push(Tok::And);
                    i += 2;
                }
                '|' if next == Some('|') => {
                    out.push(Tok::Or);
                    i += 2;
                }
                '\'' => {
                    // '' inside a literal is one quote.
                    let mut text = String::new();
                    i += 1;
                    loop {
                        match (chars.get(i), chars.get(i + 1)) {
                            (Some('\''), Some('\'')) => {
                                text.push('\'');
                                i += 2;
                            }
                            (Some('\''), _) => {
                                i += 1;
                                break;
                            }
                            (Some(c), _) => {
                                text.push(*c);
                                i += 1;
                            }
                            (None, _) => panic!("unterminated string in expression `{expr}`"),
                        }
                    }
                    out.push(Tok::Str(text));
                }
                c if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' => {
                    let start = i;
                    while i < chars.len()
                        && (chars[i].is_ascii_alphanumeric()
                            || chars[i] == '_'
                            || chars[i] == '-'
                            || chars[i] == '.')
                    {
                        i += 1;
                    }
                    out.push(Tok::Word(chars[start..i].iter().collect()));
                }
                other => panic!("the test runner does not support `{other}` in `{expr}`"),
            }
        }
        out
    }

    /// What expressions can see.
    pub struct Scope<'a> {
        pub inputs: &'a BTreeMap<String, String>,
        pub steps: &'a BTreeMap<String, StepResult>,
        pub github: &'a BTreeMap<String, String>,
        pub runner: &'a BTreeMap<String, String>,
        pub failed: bool,
        /// Further contexts by their dotted path (`needs.JOB.outputs.X`, `secrets.NAME`,
        /// `github.event.…`), for the workflow stand-in.
        pub extra: Option<&'a BTreeMap<String, String>>,
    }

    impl Scope<'_> {
        fn lookup(&self, path: &str) -> Val {
            let parts: Vec<&str> = path.split('.').collect();
            match parts.as_slice() {
                ["true"] => Val::Bool(true),
                ["false"] => Val::Bool(false),
                ["null"] => Val::Null,
                ["inputs", name] => match self.inputs.get(*name) {
                    Some(v) => Val::Str(v.clone()),
                    None => panic!("action.yml reads the undeclared input `{name}`"),
                },
                ["steps", id, "outputs", name] => self
                    .steps
                    .get(*id)
                    .and_then(|s| s.outputs.get(*name))
                    .map(|v| Val::Str(v.clone()))
                    .unwrap_or(Val::Null),
                ["steps", id, "outcome"] | ["steps", id, "conclusion"] => self
                    .steps
                    .get(*id)
                    .map(|s| Val::Str(s.outcome.as_str().to_string()))
                    .unwrap_or(Val::Null),
                ["github", name] => Val::Str(self.github.get(*name).cloned().unwrap_or_default()),
                ["runner", name] => Val::Str(self.runner.get(*name).cloned().unwrap_or_default()),
                _ if self.extra.is_some_and(|e| e.contains_key(path)) => {
                    Val::Str(self.extra.unwrap()[path].clone())
                }
                [first, ..]
                    if self.extra.is_some()
                        && ["github", "needs", "secrets", "inputs"].contains(first) =>
                {
                    Val::Null
                }
                _ => panic!("the test runner does not know the context `{path}`"),
            }
        }
    }

    struct Parser<'s, 'a> {
        toks: Vec<Tok>,
        pos: usize,
        scope: &'s Scope<'a>,
        source: String,
    }

    impl Parser<'_, '_> {
        fn peek(&self) -> Option<&Tok> {
            self.toks.get(self.pos)
        }

        fn bump(&mut self) -> Option<Tok> {
            let t = self.toks.get(self.pos).cloned();
            self.pos += 1;
            t
        }

        fn or(&mut self) -> Val {
            let mut left = self.and();
            while self.peek() == Some(&Tok::Or) {
                self.bump();
                let right = self.and();
                left = if left.truthy() { left } else { right };
            }
            left
        }

        fn and(&mut self) -> Val {
            let mut left = self.unary();
            while self.peek() == Some(&Tok::And) {
                self.bump();
                let right = self.unary();
                left = if left.truthy() { right } else { left };
            }
            left
        }

        fn unary(&mut self) -> Val {
            if self.peek() == Some(&Tok::Not) {
                self.bump();
                return Val::Bool(!self.unary().truthy());
            }
            self.comparison()
        }

        fn comparison(&mut self) -> Val {
            let left = self.primary();
            match self.peek() {
                Some(Tok::Eq) | Some(Tok::Ne) => {
                    let negate = self.bump() == Some(Tok::Ne);
                    let right = self.primary();
                    // GitHub compares strings ignoring case; null equals ''.
                    let equal = left.text().to_lowercase() == right.text().to_lowercase();
                    Val::Bool(equal != negate)
                }
                _ => left,
            }
        }

        fn primary(&mut self) -> Val {
            match self.bump() {
                Some(Tok::LParen) => {
                    let v = self.or();
                    assert_eq!(self.bump(), Some(Tok::RParen), "in `{}`", self.source);
                    v
                }
                Some(Tok::Str(s)) => Val::Str(s),
                Some(Tok::Word(w)) if self.peek() == Some(&Tok::LParen) => {
                    self.bump();
                    assert_eq!(self.bump(), Some(Tok::RParen), "in `{}`", self.source);
                    match w.as_str() {
                        "success" => Val::Bool(!self.scope.failed),
                        "failure" => Val::Bool(self.scope.failed),
                        "always" => Val::Bool(true),
                        "cancelled" => Val::Bool(false),
                        other => panic!("the test runner does not know the function `{other}()`"),
                    }
                }
                Some(Tok::Word(w)) => self.scope.lookup(&w),
                other => panic!("unexpected {other:?} in `{}`", self.source),
            }
        }
    }

    pub(crate) fn evaluate(expr: &str, scope: &Scope) -> Val {
        let mut parser = Parser {
            toks: tokenize(expr),
            pos: 0,
            scope,
            source: expr.to_string(),
        };
        let value = parser.or();
        assert!(
            parser.pos == parser.toks.len(),
            "trailing tokens in `{expr}`"
        );
        value
    }

    /// Replaces every `${{ … }}` in `text`.
    pub fn interpolate(text: &str, scope: &Scope) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..]
                .find("}}")
                .unwrap_or_else(|| panic!("unclosed expression in `{text}`"))
                + start;
            out.push_str(&evaluate(&rest[start + 3..end], scope).text());
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// An `if:`: without a status function it means `success() && (…)`.
    pub(crate) fn condition(text: &str, scope: &Scope) -> bool {
        let text = text.trim();
        let inner = text
            .strip_prefix("${{")
            .and_then(|t| t.strip_suffix("}}"))
            .unwrap_or(text);
        let has_status = ["success(", "failure(", "always(", "cancelled("]
            .iter()
            .any(|f| inner.contains(f));
        let expr = if has_status {
            inner.to_string()
        } else {
            format!("success() && ({inner})")
        };
        evaluate(&expr, scope).truthy()
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Outcome {
        Success,
        Failure,
        Skipped,
    }

    impl Outcome {
        fn as_str(self) -> &'static str {
            match self {
                Outcome::Success => "success",
                Outcome::Failure => "failure",
                Outcome::Skipped => "skipped",
            }
        }
    }

    /// One step as it ran.
    #[derive(Debug, Clone)]
    pub struct StepResult {
        pub id: Option<String>,
        pub name: String,
        pub outcome: Outcome,
        pub exit_code: Option<i32>,
        /// stdout and stderr as the log shows them (one stream, in order).
        pub log: String,
        pub outputs: BTreeMap<String, String>,
        /// The step's declared environment, after evaluation.
        pub env: BTreeMap<String, String>,
        pub uses: Option<String>,
        pub with: BTreeMap<String, String>,
    }

    /// A workflow command the runner would act on (`::error title=…::message`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct Annotation {
        pub level: String,
        pub title: String,
        pub message: String,
        /// The `file` and `line` properties, for an annotation on a line of the diff.
        pub file: Option<String>,
        pub line: Option<u32>,
    }

    /// The whole run.
    pub struct ActionRun {
        pub steps: Vec<StepResult>,
        pub outputs: BTreeMap<String, String>,
        pub failed: bool,
        /// The job summary: every step's summary file, in order.
        pub summary: String,
        pub annotations: Vec<Annotation>,
        /// Where `upload-artifact` copies went: `<artifacts>/<name>/…`.
        pub artifacts: PathBuf,
        _temp: tempfile::TempDir,
    }

    impl ActionRun {
        pub fn step(&self, name_or_id: &str) -> &StepResult {
            self.steps
                .iter()
                .find(|s| s.id.as_deref() == Some(name_or_id) || s.name == name_or_id)
                .unwrap_or_else(|| panic!("no step {name_or_id}"))
        }

        /// Everything the job's log shows.
        pub fn log(&self) -> String {
            self.steps
                .iter()
                .map(|s| format!("--- {} ({:?})\n{}", s.name, s.outcome, s.log))
                .collect::<Vec<_>>()
                .join("\n")
        }

        pub fn errors(&self) -> Vec<&Annotation> {
            self.annotations
                .iter()
                .filter(|a| a.level == "error")
                .collect()
        }
    }

    /// What a job gives the Action.
    pub struct Job {
        pub workspace: PathBuf,
        pub inputs: BTreeMap<String, String>,
        /// Variables every step sees (the runner's GITHUB_* and the job's `env:`).
        pub env: BTreeMap<String, String>,
        pub github_token: String,
    }

    pub(crate) fn parse_outputs(text: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if let Some((name, delimiter)) = line.split_once("<<") {
                if !name.contains('=') {
                    let mut value = Vec::new();
                    for l in lines.by_ref() {
                        if l == delimiter {
                            break;
                        }
                        value.push(l);
                    }
                    out.insert(name.to_string(), value.join("\n"));
                    continue;
                }
            }
            if let Some((name, value)) = line.split_once('=') {
                out.insert(name.to_string(), value.to_string());
            }
        }
        out
    }

    fn unescape(text: &str) -> String {
        text.replace("%0A", "\n")
            .replace("%0D", "\r")
            .replace("%3A", ":")
            .replace("%2C", ",")
            .replace("%25", "%")
    }

    /// Workflow commands in a log, as the runner reads them: nothing between
    /// `::stop-commands::TOKEN` and `::TOKEN::` counts.
    pub fn annotations(log: &str) -> Vec<Annotation> {
        let mut out = Vec::new();
        let mut stopped: Option<String> = None;
        for line in log.lines() {
            if let Some(token) = &stopped {
                if line == format!("::{token}::") {
                    stopped = None;
                }
                continue;
            }
            if let Some(token) = line.strip_prefix("::stop-commands::") {
                stopped = Some(token.to_string());
                continue;
            }
            let Some(rest) = line.strip_prefix("::") else {
                continue;
            };
            let Some((head, message)) = rest.split_once("::") else {
                continue;
            };
            let (level, props) = head.split_once(' ').unwrap_or((head, ""));
            if !["error", "warning", "notice"].contains(&level) {
                continue;
            }
            let title = props
                .split(',')
                .find_map(|p| p.strip_prefix("title="))
                .map(unescape)
                .unwrap_or_default();
            let property = |name: &str| {
                props
                    .split(',')
                    .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
                    .map(unescape)
            };
            out.push(Annotation {
                level: level.to_string(),
                title,
                message: unescape(message),
                file: property("file"),
                line: property("line").and_then(|l| l.parse().ok()),
            });
        }
        out
    }

    pub(crate) fn yaml_str(value: &serde_norway::Value) -> String {
        match value {
            serde_norway::Value::String(s) => s.clone(),
            serde_norway::Value::Bool(b) => b.to_string(),
            serde_norway::Value::Number(n) => n.to_string(),
            serde_norway::Value::Null => String::new(),
            other => panic!("expected a scalar in action.yml, got {other:?}"),
        }
    }

    pub(crate) fn yaml_map(value: Option<&serde_norway::Value>) -> Vec<(String, String)> {
        match value {
            None => Vec::new(),
            Some(serde_norway::Value::Mapping(m)) => {
                m.iter().map(|(k, v)| (yaml_str(k), yaml_str(v))).collect()
            }
            Some(other) => panic!("expected a mapping in action.yml, got {other:?}"),
        }
    }

    pub fn load_action() -> serde_norway::Value {
        serde_norway::from_str(&read(&repo_root().join("action.yml"))).expect("action.yml is YAML")
    }

    /// The folders of a run: the job's (shared by every step, as on a runner) and the Action's.
    pub struct Dirs {
        pub runner_temp: PathBuf,
        pub home: PathBuf,
        pub artifacts: PathBuf,
        /// GITHUB_ACTION_PATH: the Action's own folder.
        pub action_path: PathBuf,
        /// Variables and PATH entries that earlier steps of the job added (GITHUB_ENV,
        /// GITHUB_PATH), and that this run's steps add.
        pub added_env: std::cell::RefCell<BTreeMap<String, String>>,
        pub added_path: std::cell::RefCell<Vec<String>>,
    }

    /// Runs action.yml for `job`, in folders of its own.
    pub fn run(job: &Job) -> ActionRun {
        let temp = tempfile::Builder::new()
            .prefix("action-run-")
            .tempdir()
            .expect("temp folder");
        let dirs = Dirs {
            runner_temp: temp.path().join("runner-temp"),
            home: temp.path().join("home"),
            artifacts: temp.path().join("artifacts"),
            action_path: repo_root(),
            added_env: Default::default(),
            added_path: Default::default(),
        };
        run_in(job, &dirs, temp)
    }

    /// Runs action.yml for `job` in the given folders; `temp` lives as long as the result.
    pub fn run_in(job: &Job, dirs: &Dirs, temp: tempfile::TempDir) -> ActionRun {
        let action: serde_norway::Value =
            serde_norway::from_str(&read(&dirs.action_path.join("action.yml")))
                .expect("action.yml is YAML");
        let (runner_temp, home, artifacts) = (&dirs.runner_temp, &dirs.home, &dirs.artifacts);
        for dir in [runner_temp, home, artifacts] {
            std::fs::create_dir_all(dir).expect("runner folders");
        }
        let mut github = BTreeMap::new();
        github.insert("token".to_string(), job.github_token.clone());
        github.insert("action_repository".to_string(), String::new());
        let mut runner_ctx = BTreeMap::new();
        runner_ctx.insert("temp".to_string(), runner_temp.display().to_string());

        // Inputs: the given ones over the defaults; an unknown name is a test mistake.
        let declared = action["inputs"]
            .as_mapping()
            .expect("action.yml declares inputs");
        for name in job.inputs.keys() {
            assert!(
                declared.contains_key(name.as_str()),
                "the test passes the undeclared input {name}"
            );
        }
        let no_steps = BTreeMap::new();
        let mut inputs = BTreeMap::new();
        for (name, spec) in declared {
            let name = yaml_str(name);
            let value = match job.inputs.get(&name) {
                Some(v) => v.clone(),
                None => {
                    let empty = BTreeMap::new();
                    let scope = Scope {
                        inputs: &empty,
                        steps: &no_steps,
                        github: &github,
                        runner: &runner_ctx,
                        failed: false,
                        extra: None,
                    };
                    interpolate(
                        &spec.get("default").map(yaml_str).unwrap_or_default(),
                        &scope,
                    )
                }
            };
            inputs.insert(name, value);
        }

        let mut results: Vec<StepResult> = Vec::new();
        let mut by_id: BTreeMap<String, StepResult> = BTreeMap::new();
        let mut failed = false;
        let mut summary = String::new();
        let steps = action["runs"]["steps"]
            .as_sequence()
            .expect("runs.steps")
            .clone();
        assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
        for (index, step) in steps.iter().enumerate() {
            let id = step.get("id").map(yaml_str);
            let name = step
                .get("name")
                .map(yaml_str)
                .unwrap_or_else(|| format!("step {index}"));
            let scope = Scope {
                inputs: &inputs,
                steps: &by_id,
                github: &github,
                runner: &runner_ctx,
                failed,
                extra: None,
            };
            let run_it = step
                .get("if")
                .map(|c| condition(&yaml_str(c), &scope))
                .unwrap_or(!failed);
            let env: BTreeMap<String, String> = yaml_map(step.get("env"))
                .into_iter()
                .map(|(k, v)| (k, interpolate(&v, &scope)))
                .collect();
            let with: BTreeMap<String, String> = yaml_map(step.get("with"))
                .into_iter()
                .map(|(k, v)| (k, interpolate(&v, &scope)))
                .collect();
            let uses = step.get("uses").map(yaml_str);
            let mut result = StepResult {
                id: id.clone(),
                name: name.clone(),
                outcome: Outcome::Skipped,
                exit_code: None,
                log: String::new(),
                outputs: BTreeMap::new(),
                env: env.clone(),
                uses: uses.clone(),
                with: with.clone(),
            };
            if run_it {
                if let Some(script) = step.get("run").map(yaml_str) {
                    assert_eq!(
                        step.get("shell").map(yaml_str).as_deref(),
                        Some("bash"),
                        "{name}"
                    );
                    let step_dir = temp.path().join(format!("step-{index}"));
                    std::fs::create_dir_all(&step_dir).expect("step folder");
                    // Where GitHub's runner keeps a step's command files, one set per step.
                    let commands = runner_temp.join("_runner_file_commands");
                    std::fs::create_dir_all(&commands).expect("command files");
                    static STEPS: std::sync::atomic::AtomicU64 =
                        std::sync::atomic::AtomicU64::new(0);
                    let unique = format!(
                        "{}_{index}",
                        STEPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                    );
                    let output_file = commands.join(format!("set_output_{unique}"));
                    let summary_file = commands.join(format!("step_summary_{unique}"));
                    let env_file = commands.join(format!("set_env_{unique}"));
                    let path_file = commands.join(format!("add_path_{unique}"));
                    let script_file = step_dir.join("script.sh");
                    let log_file = step_dir.join("log");
                    for file in [&output_file, &summary_file, &env_file, &path_file] {
                        std::fs::write(file, "").expect("command file");
                    }
                    let mut path_var = dirs.added_path.borrow().clone();
                    path_var.reverse();
                    path_var.push(std::env::var("PATH").unwrap_or_default());
                    std::fs::write(&script_file, &script).expect("script file");
                    let log = std::fs::File::create(&log_file).expect("log file");
                    let mut command = Command::new("bash");
                    command
                        .args(["--noprofile", "--norc", "-eo", "pipefail"])
                        .arg(&script_file)
                        .current_dir(&job.workspace)
                        .env_clear()
                        .env("PATH", path_var.join(":"))
                        .env("HOME", home)
                        .env("XDG_CACHE_HOME", home.join(".cache"))
                        .env("LANG", "C.UTF-8")
                        .env("CI", "true")
                        .env("GITHUB_ACTIONS", "true")
                        .env("GIT_CONFIG_NOSYSTEM", "1")
                        .env("GIT_CONFIG_GLOBAL", "/dev/null")
                        .env("RUNNER_TEMP", runner_temp)
                        .env("GITHUB_WORKSPACE", &job.workspace)
                        .env("GITHUB_ACTION_PATH", &dirs.action_path)
                        .env("GITHUB_OUTPUT", &output_file)
                        .env("GITHUB_STEP_SUMMARY", &summary_file)
                        .env("GITHUB_ENV", &env_file)
                        .env("GITHUB_PATH", &path_file)
                        .envs(&job.env)
                        .envs(dirs.added_env.borrow().iter())
                        .envs(&env)
                        .stdin(std::process::Stdio::null())
                        .stdout(log.try_clone().expect("log handle"))
                        .stderr(log);
                    let status = command.status().expect("bash runs");
                    result.exit_code = status.code();
                    result.outcome = if status.success() {
                        Outcome::Success
                    } else {
                        Outcome::Failure
                    };
                    result.log = read(&log_file);
                    result.outputs = parse_outputs(&read(&output_file));
                    summary.push_str(&read(&summary_file));
                    // As the runner does: what a step adds applies to every later step.
                    dirs.added_env
                        .borrow_mut()
                        .extend(parse_outputs(&read(&env_file)));
                    dirs.added_path.borrow_mut().extend(
                        read(&path_file)
                            .lines()
                            .filter(|l| !l.trim().is_empty())
                            .map(str::to_string),
                    );
                } else if let Some(uses) = &uses {
                    result.outcome = Outcome::Success;
                    if uses.starts_with("actions/cache/restore@") {
                        assert!(with.contains_key("path") && with.contains_key("key"));
                        result
                            .outputs
                            .insert("cache-hit".to_string(), "false".to_string());
                    } else if uses.starts_with("actions/cache/save@") {
                        assert!(with.contains_key("path") && with.contains_key("key"));
                    } else if uses.starts_with("actions/upload-artifact@") {
                        let source = PathBuf::from(&with["path"]);
                        if source.is_dir() {
                            let target = artifacts.join(&with["name"]);
                            std::fs::create_dir_all(&target).expect("artifact folder");
                            for entry in std::fs::read_dir(&source).expect("report folder") {
                                let entry = entry.expect("entry");
                                std::fs::copy(entry.path(), target.join(entry.file_name()))
                                    .expect("copy into the artifact");
                            }
                        } else {
                            result.log = format!(
                                "No files were found with the provided path: {}",
                                source.display()
                            );
                        }
                    } else {
                        panic!("the test runner cannot stand in for `uses: {uses}`");
                    }
                } else {
                    panic!("step {name} has neither run nor uses");
                }
                if result.outcome == Outcome::Failure {
                    failed = true;
                }
            }
            if let Some(id) = id {
                by_id.insert(id, result.clone());
            }
            results.push(result);
        }

        let scope = Scope {
            inputs: &inputs,
            steps: &by_id,
            github: &github,
            runner: &runner_ctx,
            failed,
            extra: None,
        };
        let outputs = action["outputs"]
            .as_mapping()
            .expect("outputs")
            .iter()
            .map(|(k, v)| (yaml_str(k), interpolate(&yaml_str(&v["value"]), &scope)))
            .collect();
        let annotations = results.iter().flat_map(|s| annotations(&s.log)).collect();
        ActionRun {
            steps: results,
            outputs,
            failed,
            summary,
            annotations,
            artifacts: artifacts.clone(),
            _temp: temp,
        }
    }
}

use runner::{ActionRun, Job, Outcome};

/// The fixture repositories (see tests/fixtures/action/make-repos.sh).
struct Fixtures {
    dir: tempfile::TempDir,
}

impl Fixtures {
    fn new() -> Fixtures {
        let dir = tempfile::Builder::new()
            .prefix("action-fixtures-")
            .tempdir()
            .expect("temp folder");
        let output = Command::new("bash")
            .arg(repo_root().join("tests/fixtures/action/make-repos.sh"))
            .arg(dir.path())
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "make-repos.sh failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        Fixtures { dir }
    }

    /// A clone: `unchanged`, `worse` or `broken`.
    fn clone(&self, name: &str) -> PathBuf {
        self.dir
            .path()
            .canonicalize()
            .expect("canonical fixtures")
            .join(name)
    }
}

fn git(dir: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).trim().to_string(),
    )
}

/// A copy of the fake Claude Code CLI as `claude` in its own folder.
struct FakeClaude {
    dir: tempfile::TempDir,
}

impl FakeClaude {
    fn new(logged_in: bool) -> FakeClaude {
        let dir = tempfile::Builder::new()
            .prefix("action-claude-")
            .tempdir()
            .expect("temp folder");
        std::fs::copy(FAKE_CLAUDE, dir.path().join("claude")).expect("copy the fake");
        std::fs::write(
            dir.path().join("fake-claude.json"),
            json!({"logged_in": logged_in}).to_string(),
        )
        .expect("control file");
        FakeClaude { dir }
    }

    fn path(&self) -> String {
        self.dir.path().display().to_string()
    }

    /// One record per run of the fake: `kind` is version, auth, call or rejected.
    fn runs(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("fake-claude.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("log line"))
            .collect()
    }
}

/// A pull-request job in `workspace` (the clone of `head`), with the event file in `temp`.
fn pull_request_job(workspace: &Path, temp: &Path, inputs: &[(&str, &str)], api_url: &str) -> Job {
    let event = temp.join("event.json");
    std::fs::write(
        &event,
        json!({"pull_request": {"number": 7, "head": {"repo": {"fork": true}}}}).to_string(),
    )
    .expect("event file");
    let mut env = BTreeMap::new();
    for (k, v) in [
        ("GITHUB_EVENT_NAME", "pull_request"),
        ("GITHUB_BASE_REF", "main"),
        ("GITHUB_REPOSITORY", "octo/issue-tracker"),
        ("GITHUB_SERVER_URL", "https://github.invalid"),
        ("GITHUB_RUN_ID", "4242"),
        ("TDQS_GATE_BIN", GATE),
    ] {
        env.insert(k.to_string(), v.to_string());
    }
    env.insert("GITHUB_EVENT_PATH".to_string(), event.display().to_string());
    env.insert("GITHUB_API_URL".to_string(), api_url.to_string());
    // The runner's `gh`, talking to the loopback API.
    env.insert("FAKE_GH_API".to_string(), api_url.to_string());
    env.insert(
        "TDQS_GATE_GH".to_string(),
        fake_gh(temp).display().to_string(),
    );
    Job {
        workspace: workspace.to_path_buf(),
        inputs: inputs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        env,
        github_token: "ghs_job_token_for_tests".to_string(),
    }
}

/// A `gh` that forwards `gh api` to the loopback API (`FAKE_GH_API`), as the real one would to
/// api.github.com with GH_TOKEN.
fn fake_gh(dir: &Path) -> PathBuf {
    let path = dir.join("gh");
    std::fs::write(
        &path,
        r#"#!/usr/bin/env bash
set -euo pipefail
[[ "$1" == api ]] || exit 2
shift
method=GET input=""
while (($#)); do
    case "$1" in
        --method) method="$2"; shift 2 ;;
        -H) shift 2 ;;
        --input) input="$2"; shift 2 ;;
        *) path="$1"; shift ;;
    esac
done
args=(-sS -f -X "$method" -H "Authorization: Bearer ${GH_TOKEN}")
[[ -z "$input" ]] || args+=(--data-binary @-)
exec curl "${args[@]}" "${FAKE_GH_API}/${path}"
"#,
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("action-test-")
        .tempdir()
        .expect("temp folder")
}

/// The assertions every run shares: the step outputs match the composite outputs, the final step
/// exits with the gate's code, and the summary holds exactly one verdict section.
fn assert_consistent(run: &ActionRun, decision: &str, exit_code: i32) {
    let log = run.log();
    assert_eq!(run.outputs["decision"], decision, "{log}");
    let decide = run.step("Decide");
    assert_eq!(decide.exit_code, Some(exit_code), "{log}");
    assert_eq!(run.failed, exit_code != 0, "{log}");
    let upper = decision.to_uppercase();
    assert_eq!(
        run.summary
            .matches(&format!("Tool definition score: {upper}"))
            .count(),
        1,
        "one {upper} section in the summary:\n{}",
        run.summary
    );
    assert_eq!(
        run.summary.lines().filter(|l| l.starts_with("## ")).count(),
        1,
        "one verdict heading, not a doubled summary:\n{}",
        run.summary
    );
}

fn comments_api(existing: Vec<Value>, post_status: u16) -> (Loopback, Arc<Mutex<Vec<Request>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&seen);
    let server = Loopback::start(move |request| {
        recorded.lock().unwrap().push(request.clone());
        let path = request.path.as_str();
        match request.method.as_str() {
            "GET" if path.starts_with("/repos/octo/issue-tracker/issues/7/comments") => {
                let page: usize = path
                    .split("&page=")
                    .nth(1)
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1);
                let chunk: Vec<Value> = existing
                    .iter()
                    .skip((page - 1) * 100)
                    .take(100)
                    .cloned()
                    .collect();
                Response::ok(Value::Array(chunk).to_string())
            }
            "POST" if path == "/repos/octo/issue-tracker/issues/7/comments" => {
                Response::status(post_status, json!({"id": 9001}).to_string())
            }
            "PATCH" if path.starts_with("/repos/octo/issue-tracker/issues/comments/") => {
                Response::ok(json!({"id": 1}).to_string())
            }
            _ => Response::status(404, "{}"),
        }
    });
    (server, seen)
}

fn comment(id: u64, body: &str) -> Value {
    json!({"id": id, "body": body, "user": {"login": "someone"}})
}

const MARKER: &str = "<!-- tdqs-gate:tool-definition-score:tool-definition-score -->";

#[test]
fn unchanged_definitions_pass_without_a_token_and_post_the_sticky_comment() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    assert!(!git(&workspace, &["rev-parse", "--verify", "origin/main"]).0);
    let claude = FakeClaude::new(false);
    let (api, requests) = comments_api(vec![comment(1, "LGTM")], 201);
    let t = temp();
    let mut job = pull_request_job(&workspace, t.path(), &[("comment", "true")], &api.url(""));
    job.env
        .insert("TDQS_GATE_CLAUDE_DIR".to_string(), claude.path());
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "pass", 0);
    assert_eq!(run.outputs["scored"], "false");
    assert_eq!(run.outputs["exit-code"], "0");
    // The base was fetched into the shallow clone.
    assert!(
        git(&workspace, &["rev-parse", "--verify", "origin/main"]).0,
        "{log}"
    );
    assert!(
        log.contains("git fetch --no-tags --depth=1 origin"),
        "{log}"
    );
    assert_eq!(run.step("base").outputs["base"], "origin/main");
    // The report is where the output says, and was uploaded.
    let report = PathBuf::from(&run.outputs["report"]);
    assert_eq!(
        report,
        workspace.join(".tool-definition-score/tool-definition-score.json")
    );
    let json: Value = serde_json::from_str(&read(&report)).expect("report JSON");
    assert_eq!(json["decision"], "pass");
    let upload = run.step("Upload the report");
    assert!(upload
        .uses
        .as_deref()
        .is_some_and(|u| u.starts_with("actions/upload-artifact@")));
    assert_eq!(upload.with["include-hidden-files"], "true");
    let uploaded = run.artifacts.join("tool-definition-score");
    assert!(uploaded.join("tool-definition-score.json").is_file());
    assert!(uploaded.join("tool-definition-score.md").is_file());
    // The HTML page travels in the same artifact.
    assert!(uploaded.join("tool-definition-score.html").is_file());
    // No model was needed: the fake CLI was never asked a question.
    assert!(claude.runs().iter().all(|r| r["kind"] != "call"));
    // The given CLI folder is used as is (no npm install).
    assert_eq!(
        run.step("install").outputs.get("claude-dir"),
        Some(&claude.path())
    );
    // One comment posted, with the marker and the summary, authorised with the job's token.
    let requests = requests.lock().unwrap().clone();
    let posts: Vec<&Request> = requests.iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 1, "{requests:?}");
    assert_eq!(
        posts[0].header("authorization"),
        Some("Bearer ghs_job_token_for_tests")
    );
    let body: Value = serde_json::from_slice(&posts[0].body).expect("JSON body");
    let text = body["body"].as_str().expect("body text");
    assert!(text.starts_with(MARKER), "{text}");
    assert!(text.contains("Tool definition score: PASS"), "{text}");
    assert!(
        text.contains("https://github.invalid/octo/issue-tracker/actions/runs/4242"),
        "{text}"
    );
    assert!(!requests.iter().any(|r| r.method == "PATCH"));
    assert!(run
        .annotations
        .iter()
        .any(|a| a.level == "notice" && a.title == "tdqs-gate: PASS"));
}

#[test]
fn worse_definitions_block_with_the_static_judge_and_update_the_sticky_comment() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    // 150 comments: the Action's own sits on the second page.
    let mut existing: Vec<Value> = (1..=150).map(|i| comment(i, "a comment")).collect();
    existing[120] = json!({"id": 121, "body": format!("{MARKER}\n## old summary"), "user": {"login": "github-actions[bot]"}});
    existing[10] = comment(11, &format!("> {MARKER} quoted by someone"));
    // Spoofed: the marker line exactly, by someone else, before the Action's own comment.
    existing[20] = comment(21, &format!("{MARKER}\n## PASS, trust me"));
    let (api, requests) = comments_api(existing, 201);
    let t = temp();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[
            ("judge", "static"),
            ("comment", "true"),
            ("concurrency", "2"),
        ],
        &api.url(""),
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "block", 1);
    assert_eq!(run.outputs["scored"], "true");
    assert_eq!(run.step("gate").outcome, Outcome::Success, "{log}");
    assert!(log.contains("--concurrency=2"), "{log}");
    assert!(run.summary.contains("static"), "{}", run.summary);
    let errors = run.errors();
    assert!(
        errors
            .iter()
            .any(|a| a.title == "tdqs-gate: BLOCK" && a.message.contains("mean TDQS fell")),
        "{errors:?}"
    );
    // Each fallen tool defined on a line the pull request changed is annotated on that line.
    let on_lines: Vec<&runner::Annotation> = run
        .annotations
        .iter()
        .filter(|a| a.level == "warning" && a.file.is_some())
        .collect();
    // careless.json replaces every description, so every fallen tool's line changed.
    assert!(!on_lines.is_empty(), "{:?}", run.annotations);
    for a in &on_lines {
        assert_eq!(a.file.as_deref(), Some("tools.json"), "{a:?}");
        assert!(a.line.is_some_and(|l| l > 1), "{a:?}");
        assert!(
            a.title.starts_with("tdqs-gate: ") && a.title.ends_with(" fell"),
            "{a:?}"
        );
        assert!(a.message.starts_with("TDQS of "), "{a:?}");
    }
    // The upload ran although the job fails.
    assert!(run
        .artifacts
        .join("tool-definition-score/tool-definition-score.md")
        .is_file());
    let requests = requests.lock().unwrap().clone();
    let patches: Vec<&Request> = requests.iter().filter(|r| r.method == "PATCH").collect();
    assert_eq!(patches.len(), 1, "{requests:?}");
    assert_eq!(
        patches[0].path,
        "/repos/octo/issue-tracker/issues/comments/121"
    );
    let body: Value = serde_json::from_slice(&patches[0].body).expect("JSON body");
    assert!(body["body"]
        .as_str()
        .unwrap()
        .contains("Tool definition score: BLOCK"));
    assert!(!requests.iter().any(|r| r.method == "POST"));
    assert_eq!(
        requests.iter().filter(|r| r.method == "GET").count(),
        2,
        "{requests:?}"
    );
}

#[test]
fn a_server_that_does_not_start_is_invalid_and_cannot_issue_workflow_commands() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("broken");
    // A fork's read-only token: the comment cannot be posted, which only warns.
    let (api, _requests) = comments_api(Vec::new(), 403);
    let t = temp();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static"), ("comment", "true")],
        &api.url(""),
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(run.outputs["exit-code"], "2");
    assert!(run.summary.contains("INVALID"), "{}", run.summary);
    // The server runs in the export step (which holds no token): its stderr reaches that
    // step's log, and its workflow command stays text.
    let export = run.step("export");
    assert!(
        export.log.contains("cannot load the tool registry"),
        "{}",
        export.log
    );
    assert!(
        export.log.contains("::warning title=injected::"),
        "{}",
        export.log
    );
    // The scoring step says why it is INVALID.
    assert!(
        run.step("gate").log.contains("INVALID: "),
        "{}",
        run.step("gate").log
    );
    assert!(
        !run.annotations.iter().any(|a| a.title == "injected"),
        "{:?}",
        run.annotations
    );
    assert!(run.errors().iter().any(|a| a.title == "tdqs-gate: INVALID"));
    // No fork hint: the judge was not the reason.
    assert!(!log.contains("No Claude Code token reached"), "{log}");
    assert!(run
        .annotations
        .iter()
        .any(|a| a.level == "warning" && a.message.contains("403")));
    assert_eq!(
        run.step("Comment on the pull request").outcome,
        Outcome::Success
    );
}

#[test]
fn changed_definitions_without_a_token_are_invalid_with_the_fork_hint() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    let claude = FakeClaude::new(false);
    let t = temp();
    let mut job = pull_request_job(&workspace, t.path(), &[], &refused_url(""));
    job.env
        .insert("TDQS_GATE_CLAUDE_DIR".to_string(), claude.path());
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(run.outputs["scored"], "false");
    let invalid = run
        .errors()
        .into_iter()
        .find(|a| a.title == "tdqs-gate: INVALID")
        .cloned()
        .unwrap_or_else(|| panic!("no INVALID annotation:\n{log}"));
    assert!(
        invalid.message.contains("judge cannot run"),
        "{}",
        invalid.message
    );
    assert!(invalid.message.contains("fork"), "{}", invalid.message);
    assert!(
        invalid.message.contains("judge: static"),
        "{}",
        invalid.message
    );
    assert!(run
        .summary
        .contains("A pull request from a fork gets no repository secrets"));
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    assert_eq!(report["error"]["stage"], "judge");
    assert!(claude.runs().iter().all(|r| r["kind"] != "call"));
}

#[test]
fn the_token_reaches_only_the_judge_and_never_the_log() {
    const TOKEN: &str = "sk-ant-oat01-action-test-token-value";
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    let claude = FakeClaude::new(false);
    let t = temp();
    let cache = t.path().join("spec cache");
    // Nothing serves the specification, so the run stops at the prompts (INVALID) after the
    // judge's preflight has run with the token. The args input is split like a shell: the quoted
    // folder name with a space stays one word.
    let args = format!(
        "--spec-url '{}' --cache-dir \"{}\"",
        refused_url("/README.md"),
        cache.display()
    );
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("token", TOKEN), ("args", &args)],
        &refused_url(""),
    );
    job.env
        .insert("TDQS_GATE_CLAUDE_DIR".to_string(), claude.path());
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    assert_eq!(report["error"]["stage"], "spec", "{log}");
    assert!(
        log.contains(&format!("copy it into {}", cache.display())),
        "the quoted --cache-dir stays one word:\n{log}"
    );
    // The judge got the token, as CLAUDE_CODE_OAUTH_TOKEN.
    let runs = claude.runs();
    assert!(!runs.is_empty(), "{log}");
    assert!(runs
        .iter()
        .all(|r| r["env"]["CLAUDE_CODE_OAUTH_TOKEN"] == TOKEN));
    // Only the gate step's environment holds it; no log, summary, output or report shows it.
    for step in &run.steps {
        let holds = step.env.values().any(|v| v.contains(TOKEN));
        assert_eq!(holds, step.id.as_deref() == Some("gate"), "{}", step.name);
        assert!(!step.log.contains(TOKEN), "{}:\n{}", step.name, step.log);
    }
    assert!(!run.summary.contains(TOKEN));
    assert!(run.outputs.values().all(|v| !v.contains(TOKEN)));
    for entry in std::fs::read_dir(workspace.join(".tool-definition-score")).unwrap() {
        assert!(!read(&entry.unwrap().path()).contains(TOKEN));
    }
    // The token was given, so no fork hint.
    assert!(!log.contains("No Claude Code token reached"), "{log}");
}

#[test]
fn the_token_step_starts_no_server() {
    const TOKEN: &str = "sk-ant-oat01-action-split-token-value";
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    let claude = FakeClaude::new(false);
    let t = temp();
    let args = format!("--spec-url '{}'", refused_url("/README.md"));
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("token", TOKEN), ("args", &args)],
        &refused_url(""),
    );
    job.env
        .insert("TDQS_GATE_CLAUDE_DIR".to_string(), claude.path());
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    // The pull request's code runs in the export step, which holds no token.
    let export = run.step("export");
    assert!(export.env.values().all(|v| !v.contains(TOKEN)), "{log}");
    assert_eq!(
        export.log.matches("tdqs-gate: exported _single").count(),
        2,
        "both servers ran in the export step:\n{log}"
    );
    // The step with the token scores the two files: with both sides given as export files the
    // gate starts no server (and no revision or server flag reaches it).
    let gate = run.step("gate");
    assert!(gate.env.values().any(|v| v.contains(TOKEN)));
    let command = gate
        .log
        .lines()
        .find(|l| l.starts_with("tdqs-gate action: tdqs-gate "))
        .unwrap_or_else(|| panic!("no command line:\n{log}"));
    assert!(command.contains(" ci score --base-dir="), "{command}");
    assert!(command.contains(" --head-dir="), "{command}");
    assert!(!gate.log.contains("tdqs-gate: exported"), "{log}");
    for flag in [
        " --base=",
        " --head ",
        " --head=",
        " --command",
        " --server",
    ] {
        assert!(!command.contains(flag), "{flag} in {command}");
    }
    // The judge still ran with the token (the run stops at the unreachable specification).
    assert!(!claude.runs().is_empty(), "{log}");
}

#[test]
fn a_run_outside_a_pull_request_needs_a_base() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        &refused_url(""),
    );
    job.env.remove("GITHUB_BASE_REF");
    job.env
        .insert("GITHUB_EVENT_NAME".to_string(), "push".to_string());
    let run = runner::run(&job);
    let log = run.log();
    assert!(run.failed);
    assert_eq!(run.step("base").outcome, Outcome::Failure);
    assert_eq!(run.step("gate").outcome, Outcome::Skipped);
    assert_eq!(run.outputs["decision"], "invalid");
    assert_eq!(run.step("Decide").exit_code, Some(2));
    assert!(log.contains("set the action's base input"), "{log}");
    assert!(run
        .errors()
        .iter()
        .any(|a| a.message.contains("tdqs-gate did not run")));

    // With the input, the same run passes; the working directory may be given as an input.
    let parent = workspace.parent().unwrap().to_path_buf();
    let mut job = pull_request_job(
        &parent,
        t.path(),
        &[
            ("judge", "static"),
            ("base", "origin/main"),
            ("working-directory", "unchanged"),
            ("report-dir", "out/report"),
        ],
        &refused_url(""),
    );
    job.env.remove("GITHUB_BASE_REF");
    let run = runner::run(&job);
    assert_consistent(&run, "pass", 0);
    assert_eq!(
        PathBuf::from(&run.outputs["report"]),
        workspace.join("out/report/tool-definition-score.json")
    );
}

#[test]
fn a_crash_of_the_gate_is_invalid_whatever_its_exit_code() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    let crashing = t.path().join("crashing-gate");
    std::fs::write(
        &crashing,
        "#!/bin/sh\necho 'thread main panicked' >&2\nexit 137\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &crashing,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        &refused_url(""),
    );
    job.env
        .insert("TDQS_GATE_BIN".to_string(), crashing.display().to_string());
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(run.outputs["exit-code"], "137");
    assert_eq!(run.outputs["report"], "");
    assert!(run.summary.contains("exit code 137"), "{}", run.summary);
    assert!(run.summary.contains("wrote no report"), "{}", run.summary);
    assert!(log.contains("neither PASS (0) nor BLOCK (1)"), "{log}");
}

#[test]
fn bad_inputs_stop_before_anything_runs() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    for (inputs, message) in [
        (vec![("judge", "gpt")], "judge 'gpt' is not one of"),
        (vec![("concurrency", "0")], "not a positive whole number"),
        (vec![("comment", "yes please")], "must be true or false"),
        (
            vec![("version", "latest")],
            "neither 'source' nor a release",
        ),
        (vec![("working-directory", "no/such/dir")], "does not exist"),
    ] {
        let mut job = pull_request_job(&workspace, t.path(), &inputs, &refused_url(""));
        job.env.remove("TDQS_GATE_BIN");
        let run = runner::run(&job);
        let log = run.log();
        assert_eq!(run.step("prepare").outcome, Outcome::Failure, "{log}");
        assert!(
            run.errors().iter().any(|a| a.message.contains(message)),
            "{inputs:?}: {log}"
        );
        assert_eq!(run.step("Decide").exit_code, Some(2));
    }
    // Unbalanced quotes in args: nothing is exported or scored, INVALID with the cause.
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[
            ("judge", "static"),
            ("args", "--command 'python3 server.py"),
        ],
        &refused_url(""),
    );
    let run = runner::run(&job);
    assert_eq!(run.outputs["decision"], "invalid", "{}", run.log());
    assert!(
        run.outputs["reason"].contains("unbalanced quotes"),
        "{}",
        run.log()
    );
    assert_eq!(run.step("Decide").exit_code, Some(2));
}

/// A release archive of this build's binary, served like a GitHub release.
fn release_server(corrupt_checksum: bool) -> (Loopback, tempfile::TempDir) {
    let dir = temp();
    let target = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        other => panic!("no release target for {other:?}"),
    };
    let gate_version = tdqs_gate_version();
    let staging = dir
        .path()
        .join(format!("tdqs-gate-v{gate_version}-{target}"));
    std::fs::create_dir_all(&staging).unwrap();
    // A launcher of this build stands in for the binary: what is tested is the download, the
    // checksum and the unpacking, and packing a debug build would move hundreds of megabytes.
    crate::support::write_launcher(&staging.join("tdqs-gate"), Path::new(GATE));
    let archive_name = format!("tdqs-gate-v{gate_version}-{target}.tar.gz");
    let archive = dir.path().join(&archive_name);
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .arg(staging.file_name().unwrap())
        .status()
        .expect("tar runs");
    assert!(status.success());
    let bytes = std::fs::read(&archive).unwrap();
    let digest = sha256_hex(&bytes);
    let checksum = if corrupt_checksum {
        format!("{}  {archive_name}\n", "0".repeat(64))
    } else {
        format!("{digest}  {archive_name}\n")
    };
    let server = Loopback::routes(vec![
        (
            "GET",
            &format!("/releases/download/v{gate_version}/{archive_name}"),
            Response::ok(bytes),
        ),
        (
            "GET",
            &format!("/releases/download/v{gate_version}/{archive_name}.sha256"),
            Response::ok(checksum),
        ),
    ]);
    (server, dir)
}

fn tdqs_gate_version() -> String {
    let output = Command::new(GATE).arg("--version").output().unwrap();
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .strip_prefix("tdqs-gate ")
        .expect("`tdqs-gate <version>`")
        .to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum runs");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn a_release_binary_is_downloaded_and_checked() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let version = tdqs_gate_version();
    for corrupt in [false, true] {
        let (server, _dir) = release_server(corrupt);
        let t = temp();
        let mut job = pull_request_job(
            &workspace,
            t.path(),
            &[("judge", "static"), ("version", &version)],
            &refused_url(""),
        );
        job.env.remove("TDQS_GATE_BIN");
        job.env.insert(
            "TDQS_GATE_RELEASE_URL".to_string(),
            server.url("/releases/download"),
        );
        let run = runner::run(&job);
        let log = run.log();
        assert_eq!(run.step("prepare").outputs["install"], "release", "{log}");
        if corrupt {
            assert_eq!(run.step("install").outcome, Outcome::Failure, "{log}");
            assert!(log.contains("the download is not used"), "{log}");
            assert_eq!(run.step("Decide").exit_code, Some(2));
        } else {
            assert_consistent(&run, "pass", 0);
            let bin = &run.step("install").outputs["bin"];
            assert!(
                bin.contains("runner-temp") && bin.ends_with("/tdqs-gate"),
                "{bin}"
            );
        }
    }
}

#[test]
fn a_source_build_of_the_same_digest_is_reused_from_the_cache() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    let cache = t.path().join("build-cache");
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        &refused_url(""),
    );
    job.env.remove("TDQS_GATE_BIN");
    job.env.insert(
        "TDQS_GATE_ACTION_CACHE".to_string(),
        cache.display().to_string(),
    );
    // The steps get a fresh HOME; rustup still has to find the toolchain (GitHub's runners set
    // these too), or the digest would name no compiler.
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".rustup"));
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cargo"));
    job.env
        .insert("RUSTUP_HOME".to_string(), rustup.display().to_string());
    job.env
        .insert("CARGO_HOME".to_string(), cargo.display().to_string());
    // The cargo build itself is not run by the tests (it is on GitHub): the prepare step alone
    // gives the key of this source, and the cache is seeded with this build under it.
    let output_file = t.path().join("prepare-output");
    let output = Command::new("bash")
        .arg(repo_root().join("action/entrypoint.sh"))
        .arg("prepare")
        .current_dir(&workspace)
        .env("GITHUB_ACTION_PATH", repo_root())
        .env("GITHUB_OUTPUT", &output_file)
        .env("TDQS_GATE_ACTION_CACHE", &cache)
        .env("INPUT_VERSION", "source")
        .env("RUSTUP_HOME", &rustup)
        .env("CARGO_HOME", &cargo)
        .env_remove("TDQS_GATE_BIN")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let prepared: BTreeMap<String, String> = read(&output_file)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let key = prepared["cache-key"].clone();
    let digest = key.rsplit('-').next().unwrap().to_string();
    assert_eq!(digest.len(), 64, "{key}");
    assert_eq!(prepared["cache-path"], cache.display().to_string());
    assert!(key.starts_with(&prepared["cache-restore-key"]));
    std::fs::create_dir_all(cache.join("bin")).unwrap();
    crate::support::write_launcher(&cache.join("bin/tdqs-gate"), Path::new(GATE));
    std::fs::write(cache.join("bin/source-digest"), format!("{digest}\n")).unwrap();
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "pass", 0);
    assert!(log.contains("reusing the cached build"), "{log}");
    assert_eq!(run.step("install").outputs["built"], "false");
    // Nothing new was built, so the save step is skipped; the restore step ran with the key.
    assert_eq!(
        run.step("Save the tdqs-gate build cache").outcome,
        Outcome::Skipped
    );
    let restore = run.step("Restore the tdqs-gate build cache");
    assert_eq!(restore.outcome, Outcome::Success);
    assert_eq!(restore.with["key"], key);
}

#[test]
fn a_long_summary_is_cut_to_fit_one_comment() {
    let t = temp();
    let report_dir = t.path().join("report");
    std::fs::create_dir_all(&report_dir).unwrap();
    let long = format!(
        "## ❌ Tool definition score: BLOCK\n\n{}",
        "| `tool` | 4.0 | 3.0 | -0.1 |\n".repeat(4000)
    );
    std::fs::write(report_dir.join("tool-definition-score.md"), &long).unwrap();
    let event = t.path().join("event.json");
    std::fs::write(&event, json!({"pull_request": {"number": 7}}).to_string()).unwrap();
    let (api, requests) = comments_api(Vec::new(), 201);
    let output = Command::new("bash")
        .arg(repo_root().join("action/entrypoint.sh"))
        .arg("comment")
        .env("GH_TOKEN", "ghs_x")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "octo/issue-tracker")
        .env("FAKE_GH_API", api.url(""))
        .env("TDQS_GATE_GH", fake_gh(t.path()))
        .env("GATE_BIN", GATE)
        .env("ARTIFACT_NAME", "tool-definition-score")
        .env("COMMENT_AUTHOR", "github-actions[bot]")
        .env("REPORT_DIR", &report_dir)
        .env("RUNNER_TEMP", t.path())
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = requests.lock().unwrap().clone();
    let post = requests
        .iter()
        .find(|r| r.method == "POST")
        .expect("posted");
    let body: Value = serde_json::from_slice(&post.body).unwrap();
    let text = body["body"].as_str().unwrap();
    assert!(long.len() > 65_536);
    assert!(text.chars().count() <= 65_536, "{}", text.chars().count());
    assert!(text.starts_with(MARKER));
    assert!(
        text.contains("cut to fit a comment"),
        "{}",
        &text[text.len() - 300..]
    );
}

/// `git push` in a fixture clone, with the hook installed by `tdqs-gate install-hook`.
fn push_with_hook(workspace: &Path, install_args: &[&str], branch: &str) -> std::process::Output {
    assert!(
        git(
            workspace,
            &[
                "fetch",
                "-q",
                "--depth=1",
                "origin",
                "+refs/heads/main:refs/remotes/origin/main"
            ]
        )
        .0
    );
    let install = Command::new(GATE)
        .arg("install-hook")
        .args(["--base", "origin/main", "--args", "--judge static"])
        .args(install_args)
        .current_dir(workspace)
        .output()
        .expect("install-hook runs");
    assert!(install.status.success(), "{install:?}");
    assert!(String::from_utf8_lossy(&install.stdout).contains("installed the pre-push hook"));
    Command::new("git")
        .args(["push", "origin", &format!("HEAD:refs/heads/{branch}")])
        .current_dir(workspace)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("TDQS_GATE", GATE)
        .output()
        .expect("git push runs")
}

#[test]
fn the_pre_push_hook_refuses_block_and_lets_invalid_through_unless_strict() {
    let fixtures = Fixtures::new();
    let refused = push_with_hook(&fixtures.clone("worse"), &[], "worse");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("tdqs-gate: BLOCK"), "{stderr}");

    let passed = push_with_hook(&fixtures.clone("unchanged"), &[], "unchanged");
    assert!(passed.status.success(), "{passed:?}");

    let broken = fixtures.clone("broken");
    let warned = push_with_hook(&broken, &[], "broken");
    let stderr = String::from_utf8_lossy(&warned.stderr);
    assert!(warned.status.success(), "{stderr}");
    assert!(stderr.contains("the push goes through"), "{stderr}");
    // The hook is tdqs-gate's own, so it is replaced without --force.
    let strict = push_with_hook(&broken, &["--strict"], "broken-strict");
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(!strict.status.success(), "{stderr}");
    assert!(
        stderr.contains("push refused because the hook is strict"),
        "{stderr}"
    );
}

// --- static checks: the YAML, the scripts, the docs ---------------------------------------

fn workflow_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(".github/workflows"))
        .expect(".github/workflows")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    files.push(root.join("docs/examples/tool-definition-score.yml"));
    files
}

/// Every `run:` text in a workflow or action file.
fn run_texts(value: &serde_norway::Value, out: &mut Vec<String>) {
    match value {
        serde_norway::Value::Mapping(m) => {
            for (k, v) in m {
                if k.as_str() == Some("run") {
                    if let Some(s) = v.as_str() {
                        out.push(s.to_string());
                    }
                }
                run_texts(v, out);
            }
        }
        serde_norway::Value::Sequence(s) => s.iter().for_each(|v| run_texts(v, out)),
        _ => {}
    }
}

#[test]
fn inputs_reach_scripts_only_through_env_and_the_token_only_the_gate() {
    let text = read(&repo_root().join("action.yml"));
    let action = runner::load_action();
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let mut runs = Vec::new();
    run_texts(&action, &mut runs);
    let mut all_runs = runs.clone();
    for file in workflow_files() {
        let yaml: serde_norway::Value = serde_norway::from_str(&read(&file)).expect("YAML");
        run_texts(&yaml, &mut all_runs);
    }
    for run in &all_runs {
        assert!(
            !run.contains("${{"),
            "an expression inside a run: text; pass it through env: instead:\n{run}"
        );
    }
    // Every run step is a subcommand of the entry script.
    let script = read(&repo_root().join("action/entrypoint.sh"));
    for run in &runs {
        let sub = run
            .strip_prefix("bash \"$GITHUB_ACTION_PATH/action/entrypoint.sh\" ")
            .unwrap_or_else(|| panic!("unexpected run text: {run}"));
        assert!(
            script.contains(&format!(" {sub}) cmd_")),
            "entrypoint.sh has no `{sub}` command"
        );
    }
    // Every input is used, and only in env/with/if/outputs (never run texts, checked above).
    for (name, _) in action["inputs"].as_mapping().unwrap() {
        let name = name.as_str().unwrap();
        assert!(
            text.contains(&format!("inputs.{name} ")) || text.contains(&format!("inputs.{name}}}")),
            "the input {name} is never used"
        );
    }
    // The token: in the gate step's env as INPUT_TOKEN, and elsewhere only as "was one given".
    for step in steps {
        let id = step.get("id").and_then(|v| v.as_str()).unwrap_or("");
        let rendered = serde_norway::to_string(step).unwrap();
        for line in rendered.lines().filter(|l| l.contains("inputs.token")) {
            let allowed = (id == "gate" && line.trim() == "INPUT_TOKEN: ${{ inputs.token }}")
                || (id == "install" && line.trim() == "HAS_TOKEN: ${{ inputs.token != '' }}");
            assert!(allowed, "step {id:?} reads the token: {line}");
        }
    }
}

#[test]
fn every_third_party_action_is_pinned_to_a_full_commit() {
    let mut files = workflow_files();
    files.push(repo_root().join("action.yml"));
    let mut checked = 0;
    for file in files {
        for (n, line) in read(&file).lines().enumerate() {
            let Some(rest) = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses: ")
            else {
                continue;
            };
            checked += 1;
            if rest.starts_with("./") {
                continue;
            }
            let (target, comment) = rest.split_once(" # ").unwrap_or((rest, ""));
            let (_, sha) = target
                .split_once('@')
                .unwrap_or_else(|| panic!("{}:{}: no @ref", file.display(), n + 1));
            assert!(
                sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                "{}:{}: `{target}` is not pinned to a 40-hex commit",
                file.display(),
                n + 1
            );
            assert!(
                !comment.is_empty(),
                "{}:{}: say which version the commit is (`# vX`)",
                file.display(),
                n + 1
            );
        }
    }
    assert!(checked >= 8, "found only {checked} uses: lines");
}

/// The folder of the pinned actionlint and shellcheck, or `None` (skip) when missing; with
/// TDQS_GATE_REQUIRE_EXTERNAL=1 a missing install fails.
fn lint_tools() -> Option<PathBuf> {
    let bin = repo_root().join("tests/.cache/actionlint/bin");
    if bin.join("actionlint").is_file() && bin.join("shellcheck").is_file() {
        let stamp = read(&repo_root().join("tests/.cache/actionlint/.installed"));
        eprintln!("actionlint from {}", stamp.lines().nth(1).unwrap_or("?"));
        return Some(bin);
    }
    let message = "actionlint is not installed: run tests/setup/actionlint.sh";
    crate::support::skips::skip(message);
    None
}

#[test]
fn workflows_pass_actionlint() {
    let Some(bin) = lint_tools() else { return };
    let output = Command::new(bin.join("actionlint"))
        .arg("-shellcheck")
        .arg(bin.join("shellcheck"))
        .arg("-pyflakes=")
        .args(workflow_files())
        .current_dir(repo_root())
        .output()
        .expect("actionlint runs");
    assert!(
        output.status.success(),
        "actionlint:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_action_scripts_pass_shellcheck() {
    let Some(bin) = lint_tools() else { return };
    let root = repo_root();
    let output = Command::new(bin.join("shellcheck"))
        .args([
            "action/entrypoint.sh",
            "tests/fixtures/action/make-repos.sh",
            "tests/setup/actionlint.sh",
            "tests/setup/chromium.sh",
        ])
        .current_dir(&root)
        .output()
        .expect("shellcheck runs");
    assert!(
        output.status.success(),
        "shellcheck:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Every long flag of every subcommand's `--help`.
pub(crate) fn flags_of(subcommand: Option<&str>) -> Vec<String> {
    let mut command = Command::new(GATE);
    if let Some(sub) = subcommand {
        command.arg(sub);
    }
    let output = command.arg("--help").output().expect("tdqs-gate --help");
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut flags: Vec<String> = help
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| {
            l.split(|c: char| c.is_whitespace() || c == ',' || c == '=' || c == '<' || c == '[')
                .find(|w| w.starts_with("--") && w.len() > 2)
                .map(|w| w.trim_end_matches("...").to_string())
        })
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

#[test]
fn the_reference_documents_every_flag_and_every_action_input() {
    let reference = read(&repo_root().join("docs/reference.md"));
    let mut missing = Vec::new();
    for sub in [
        None,
        Some("export"),
        Some("score"),
        Some("suggest"),
        Some("lint"),
        Some("eval"),
        Some("install-hook"),
        Some("check"),
        Some("calibrate"),
    ] {
        let flags = flags_of(sub);
        assert!(flags.len() > 2, "{sub:?}: {flags:?}");
        for flag in flags {
            if !reference.contains(&format!("`{flag}")) {
                missing.push(format!("{} {flag}", sub.unwrap_or("(gate)")));
            }
        }
    }
    assert!(missing.is_empty(), "docs/reference.md lacks: {missing:?}");
    let guide = read(&repo_root().join("docs/github-action.md"));
    let action = runner::load_action();
    for section in ["inputs", "outputs"] {
        for (name, _) in action[section].as_mapping().unwrap() {
            let name = name.as_str().unwrap();
            assert!(
                guide.contains(&format!("`{name}`")),
                "docs/github-action.md does not describe the {section} `{name}`"
            );
        }
    }
}

#[test]
fn the_eval_input_runs_the_selection_check() {
    let fixtures = Fixtures::new();
    let t = temp();
    // Bad values stop in the first step, before anything runs.
    let workspace = fixtures.clone("unchanged");
    for (inputs, message) in [
        (
            vec![("judge", "static"), ("eval", "model")],
            "eval 'model' is not one of synthetic, live_model",
        ),
        (
            vec![("judge", "static"), ("eval", "live_model")],
            "the static judge cannot select",
        ),
    ] {
        let mut job = pull_request_job(&workspace, t.path(), &inputs, &refused_url(""));
        job.env.remove("TDQS_GATE_BIN");
        let run = runner::run(&job);
        let log = run.log();
        assert_eq!(run.step("prepare").outcome, Outcome::Failure, "{log}");
        assert!(
            run.errors().iter().any(|a| a.message.contains(message)),
            "{inputs:?}: {log}"
        );
        assert_eq!(run.step("Decide").exit_code, Some(2));
    }

    // eval: synthetic on the careless rewrite (most tools renamed): the careful suite, in the
    // head's tree, loses cases on the head (a case naming a tool the head does not list is a
    // miss), and the report, the summary and the page show the check with its mode.
    let workspace = fixtures.clone("worse");
    std::fs::copy(
        repo_root().join("examples/issue-tracker/eval-careful.toml"),
        workspace.join("tdqs-eval.toml"),
    )
    .unwrap();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static"), ("eval", "synthetic")],
        &refused_url(""),
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "block", 1);
    assert!(log.contains("--eval=synthetic"), "{log}");
    let dir = run.artifacts.join("tool-definition-score");
    let report: Value =
        serde_json::from_str(&read(&dir.join("tool-definition-score.json"))).unwrap();
    let check = &report["eval"];
    assert_eq!(check["mode"], "synthetic", "{report:#}");
    // 12 cases fell and none rose: p = 0.0005, a significant fall, so the check blocks too.
    assert_eq!(
        (
            check["test"]["worse"].as_u64(),
            check["test"]["better"].as_u64()
        ),
        (Some(12), Some(0)),
        "{check:#}"
    );
    assert_eq!(check["blocks"], true, "{check:#}");
    assert!(
        check["headSelection"]["hit"].as_u64() < check["baseSelection"]["hit"].as_u64(),
        "{check:#}"
    );
    assert!(
        run.summary.contains("### Selection check (synthetic)"),
        "{}",
        run.summary
    );
    assert!(read(&dir.join("tool-definition-score.html"))
        .contains("<div class=\"selection-check\" data-mode=\"synthetic\" data-blocks=\"true\">"));

    // Without the input, the same run has no selection check.
    let workspace = fixtures.clone("worse");
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        &refused_url(""),
    );
    let run = runner::run(&job);
    assert_consistent(&run, "block", 1);
    assert!(!run.log().contains("--eval"), "{}", run.log());
    let report: Value = serde_json::from_str(&read(
        &run.artifacts
            .join("tool-definition-score/tool-definition-score.json"),
    ))
    .unwrap();
    assert!(report.get("eval").is_none());
}

mod monorepo;
mod reusable_workflow;
mod suggest_input;
