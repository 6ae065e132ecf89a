//! The one pull-request comment holding the summary, created once and then updated, through the
//! runner's GitHub CLI (`gh api`): no HTTP client of our own, no token on a command line (`gh`
//! reads `GH_TOKEN` from its environment).
//!
//! The comment to update is the first one that BOTH starts with the marker line and was written
//! by the author the token acts as (`github-actions[bot]` for the job's token). Anyone can post a
//! comment starting with the marker; updating theirs would let them decide where the verdict
//! is shown, or make the job edit a comment it should not.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// GitHub refuses comment bodies over 65,536 characters; room is kept for the marker and notes.
pub const COMMENT_LIMIT: usize = 60_000;
/// 100 comments a page, at most this many pages (5,000 comments: far beyond a real pull request).
const MAX_PAGES: u32 = 50;
/// The author of comments made with a workflow's `GITHUB_TOKEN`.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// Where the comment goes.
#[derive(Debug, Clone)]
pub struct Target {
    /// `owner/name`.
    pub repository: String,
    pub pull_request: u64,
    /// The first line of the comment, e.g. `<!-- tdqs-gate:tool-definition-score:NAME -->`.
    pub marker: String,
    /// The login the token acts as: only its comments are updated.
    pub author: String,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Posted {
    Updated(u64),
    Created(u64),
}

/// One GitHub REST call: method, path (`repos/o/r/…`), JSON body; the response body, or why
/// the call failed (masked, one line).
pub trait Api {
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String>;
}

/// The runner's `gh`.
pub struct GhCli {
    pub program: PathBuf,
}

impl Api for GhCli {
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let mut command = Command::new(&self.program);
        command
            .args(["api", "--method", method])
            .args(["-H", "Accept: application/vnd.github+json"])
            .args(["-H", "X-GitHub-Api-Version: 2022-11-28"])
            .arg(path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if body.is_some() {
            command.args(["--input", "-"]).stdin(Stdio::piped());
        } else {
            command.stdin(Stdio::null());
        }
        let mut child = command.spawn().map_err(|e| {
            format!(
                "cannot run {} ({e}); GitHub-hosted runners have the GitHub CLI, a self-hosted \
                 runner needs it installed",
                self.program.display()
            )
        })?;
        if let Some(body) = body {
            let mut stdin = child.stdin.take().ok_or("no stdin for gh")?;
            stdin
                .write_all(body.to_string().as_bytes())
                .map_err(|e| format!("cannot write to gh: {e}"))?;
        }
        let output = child
            .wait_with_output()
            .map_err(|e| format!("gh did not finish: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last: String = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no message")
                .chars()
                .take(300)
                .collect();
            return Err(tdqs_core::redact::redact(&format!(
                "gh api {method} {path} failed: {last}"
            )));
        }
        if output.stdout.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&output.stdout)
            .map_err(|e| format!("gh api {method} {path} gave no JSON: {e}"))
    }
}

/// The marker line for an artifact name (checked: it must not end the HTML comment).
pub fn marker(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(format!("<!-- tdqs-gate:tool-definition-score:{name} -->"))
    } else {
        Err(format!(
            "the comment's name {name:?} must be 1 to 100 letters, digits, `-`, `_` or `.`"
        ))
    }
}

/// The comment's text: the marker line, the summary (cut to fit, with a note), the run's link.
pub fn body(marker: &str, markdown: &str, run_url: Option<&str>) -> String {
    let mut text: String = markdown.chars().take(COMMENT_LIMIT).collect();
    if text.len() < markdown.len() {
        text.push_str(
            "\n\n… (cut to fit a comment; the full summary is in the job summary and the report \
             artifact)",
        );
    }
    let mut body = format!("{marker}\n{text}");
    if let Some(url) = run_url {
        body.push_str(&format!("\n\n[Workflow run]({url})"));
    }
    body
}

/// Finds the author's comment with the marker (page by page) and updates it, or creates one.
pub fn post_or_update(api: &dyn Api, target: &Target, body: &str) -> Result<Posted, String> {
    let payload = serde_json::json!({ "body": body });
    let mut existing = None;
    for page in 1..=MAX_PAGES {
        let path = format!(
            "repos/{}/issues/{}/comments?per_page=100&page={page}",
            target.repository, target.pull_request
        );
        let listed = api.call("GET", &path, None)?;
        let comments = listed.as_array().cloned().unwrap_or_default();
        existing = comments
            .iter()
            .find(|c| is_ours(c, target))
            .and_then(|c| c["id"].as_u64());
        if existing.is_some() || comments.len() < 100 {
            break;
        }
    }
    if let Some(id) = existing {
        let path = format!("repos/{}/issues/comments/{id}", target.repository);
        // Deleted meanwhile, or not editable: a new one is posted.
        if api.call("PATCH", &path, Some(&payload)).is_ok() {
            return Ok(Posted::Updated(id));
        }
    }
    let path = format!(
        "repos/{}/issues/{}/comments",
        target.repository, target.pull_request
    );
    let created = api.call("POST", &path, Some(&payload))?;
    Ok(Posted::Created(created["id"].as_u64().unwrap_or(0)))
}

/// A comment of the author whose first line is the marker.
fn is_ours(comment: &Value, target: &Target) -> bool {
    let author = comment["user"]["login"].as_str().unwrap_or("");
    let body = comment["body"].as_str().unwrap_or("");
    author.eq_ignore_ascii_case(&target.author)
        && body.lines().next().map(str::trim_end) == Some(target.marker.as_str())
}

/// The pull request's number from the event file (`GITHUB_EVENT_PATH`), read bounded; `None`
/// outside a pull request.
pub fn pull_request_number(event: &Path) -> Option<u64> {
    use crate::platform::safe_file::{read_regular, Links};
    let bytes = read_regular(event, Links::Follow, 32 * 1024 * 1024).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    value["pull_request"]["number"].as_u64().or_else(|| {
        value["number"]
            .as_u64()
            .filter(|_| value.get("pull_request").is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    struct Fake {
        comments: Vec<Value>,
        calls: RefCell<Vec<(String, String)>>,
    }

    impl Api for Fake {
        fn call(&self, method: &str, path: &str, _body: Option<&Value>) -> Result<Value, String> {
            self.calls
                .borrow_mut()
                .push((method.to_string(), path.to_string()));
            match method {
                "GET" => {
                    let page: usize = path.rsplit("page=").next().unwrap().parse().unwrap();
                    Ok(Value::Array(
                        self.comments
                            .iter()
                            .skip((page - 1) * 100)
                            .take(100)
                            .cloned()
                            .collect(),
                    ))
                }
                "POST" => Ok(serde_json::json!({"id": 77})),
                _ => Ok(Value::Null),
            }
        }
    }

    fn target() -> Target {
        Target {
            repository: "o/r".into(),
            pull_request: 7,
            marker: marker("tool-definition-score").unwrap(),
            author: ACTIONS_BOT.into(),
        }
    }

    #[test]
    fn a_comment_with_the_marker_by_someone_else_is_not_updated() {
        let m = target().marker;
        let fake = Fake {
            comments: (1..=150u64)
                .map(|i| match i {
                    // Spoofed: the marker, by a user.
                    3 => serde_json::json!({"id": i, "body": format!("{m}\nspoofed"), "user": {"login": "mallory"}}),
                    // Ours, on the second page.
                    120 => serde_json::json!({"id": i, "body": format!("{m}\nold"), "user": {"login": ACTIONS_BOT}}),
                    _ => serde_json::json!({"id": i, "body": "hi", "user": {"login": "x"}}),
                })
                .collect(),
            calls: RefCell::new(Vec::new()),
        };
        let posted = post_or_update(&fake, &target(), "b").unwrap();
        assert_eq!(posted, Posted::Updated(120));
        let only_spoofed = Fake {
            comments: vec![
                serde_json::json!({"id": 3, "body": format!("{m}\nspoofed"), "user": {"login": "mallory"}}),
            ],
            calls: RefCell::new(Vec::new()),
        };
        assert_eq!(
            post_or_update(&only_spoofed, &target(), "b").unwrap(),
            Posted::Created(77)
        );
    }

    #[test]
    fn a_long_summary_is_cut_and_a_bad_name_refused() {
        let text = body("<!-- m -->", &"x".repeat(70_000), Some("https://run"));
        assert!(text.chars().count() <= 65_536);
        assert!(text.contains("cut to fit a comment"));
        assert!(marker("a --> b").is_err());
    }
}
