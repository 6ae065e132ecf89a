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

impl Dirs {
    /// A fresh job's folders (runner temp, home, artifacts) inside `machine`, running the
    /// Action checked out at `action_path`.
    pub fn on_machine(machine: &Path, action_path: PathBuf) -> Dirs {
        Dirs {
            runner_temp: machine.join("runner-temp"),
            home: machine.join("home"),
            artifacts: machine.join("artifacts"),
            action_path,
            added_env: Default::default(),
            added_path: Default::default(),
        }
    }
}

/// Runs action.yml for `job`, in folders of its own.
pub fn run(job: &Job) -> ActionRun {
    let temp = tempfile::Builder::new()
        .prefix("action-run-")
        .tempdir()
        .expect("temp folder");
    let dirs = Dirs::on_machine(temp.path(), repo_root());
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
                static STEPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
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
