//! What the Action tests share: the fixture repositories, the fake Claude Code CLI, the pull-request
//! job and its stand-in `gh` and GitHub API, and the assertions every run of the Action makes.

use super::*;

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package sits in the repository")
        .to_path_buf()
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The fixture repositories (see tests/fixtures/action/make-repos.sh).
pub(crate) struct Fixtures {
    dir: tempfile::TempDir,
}

impl Fixtures {
    pub(crate) fn new() -> Fixtures {
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
    pub(crate) fn clone(&self, name: &str) -> PathBuf {
        self.dir
            .path()
            .canonicalize()
            .expect("canonical fixtures")
            .join(name)
    }
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> (bool, String) {
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
pub(crate) struct FakeClaude {
    dir: tempfile::TempDir,
}

impl FakeClaude {
    pub(crate) fn new(logged_in: bool) -> FakeClaude {
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

    pub(crate) fn path(&self) -> String {
        self.dir.path().display().to_string()
    }

    /// Runs the Action for `job` with this fake as its `claude`.
    pub(crate) fn run_action(&self, job: &mut runner::Job) -> ActionRun {
        job.env
            .insert("TDQS_GATE_CLAUDE_DIR".to_string(), self.path());
        runner::run(job)
    }

    /// One record per run of the fake: `kind` is version, auth, call or rejected.
    pub(crate) fn runs(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("fake-claude.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("log line"))
            .collect()
    }
}

/// A pull-request job in `workspace` (the clone of `head`), with the event file in `temp`.
pub(crate) fn pull_request_job(
    workspace: &Path,
    temp: &Path,
    inputs: &[(&str, &str)],
    api_url: &str,
) -> Job {
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
pub(crate) fn fake_gh(dir: &Path) -> PathBuf {
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

pub(crate) fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("action-test-")
        .tempdir()
        .expect("temp folder")
}

/// The assertions every run shares: the step outputs match the composite outputs, the final step
/// exits with the gate's code, and the summary holds exactly one verdict section.
pub(crate) fn assert_consistent(run: &ActionRun, decision: &str, exit_code: i32) {
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

pub(crate) fn comments_api(
    existing: Vec<Value>,
    post_status: u16,
) -> (Loopback, Arc<Mutex<Vec<Request>>>) {
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

pub(crate) fn comment(id: u64, body: &str) -> Value {
    json!({"id": id, "body": body, "user": {"login": "someone"}})
}

pub(crate) const MARKER: &str = "<!-- tdqs-gate:tool-definition-score:tool-definition-score -->";

/// The Action run on `workspace` for a pull request with `inputs` and no GitHub API (every
/// call to it is refused): the job most tests need, set up in one place.
pub(crate) fn run_without_api(workspace: &Path, temp: &Path, inputs: &[(&str, &str)]) -> ActionRun {
    runner::run(&pull_request_job(workspace, temp, inputs, &refused_url("")))
}

/// Runs the Action with `inputs` its first step must refuse, and checks that it did: the
/// `prepare` step fails with an error naming `message`, and the run ends INVALID (exit 2). No
/// gate binary is given, so a run that got past the check would fail differently.
pub(crate) fn assert_inputs_refused(
    workspace: &Path,
    temp: &Path,
    inputs: &[(&str, &str)],
    message: &str,
) {
    let mut job = pull_request_job(workspace, temp, inputs, &refused_url(""));
    job.env.remove("TDQS_GATE_BIN");
    let run = runner::run(&job);
    let log = run.log();
    assert_eq!(run.step("prepare").outcome, Outcome::Failure, "{log}");
    assert!(
        run.errors().iter().any(|a| a.message.contains(message)),
        "{inputs:?}: {log}"
    );
    assert_eq!(run.step("Decide").exit_code, Some(2), "{log}");
}

/// The JSON report the run uploaded as its artifact.
pub(crate) fn uploaded_report(run: &ActionRun) -> Value {
    let path = run
        .artifacts
        .join("tool-definition-score/tool-definition-score.json");
    serde_json::from_str(&read(&path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
