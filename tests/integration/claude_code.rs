//! The Claude Code judge against a fake `claude` (every refusal, the flags, the working
//! directory, the environment, timeouts) and against the real pinned CLI talking to a loopback
//! stand-in of the Messages API (the flags are accepted, a substituted model is refused, an HTTP
//! 529 is survived).

#[path = "messages_api.rs"]
mod messages_api;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tdqs_core::judge::answer::{parse_coherence_answer, parse_tool_answer};
use tdqs_core::rubric::ToolDimension;
use tdqs_core::spec::signals::ContextSignals;
use tdqs_gate::judge::claude_code::{ClaudeCodeConfig, ClaudeCodeJudge, OauthToken};
use tdqs_gate::judge::{CallFailure, Judge, Question, QuestionKind, Reply, Subject};

use messages_api::{ApiReply, MessagesApi};

const PINNED_MODEL: &str = "claude-opus-5-5";
const PINNED_CLI: &str = "2.1.288";
const TOKEN: &str = "sk-ant-oat01-integration-test-token-0123456789";

/// A stand-in system prompt (the TDQS prompts are not committed); it asks for the same answer
/// format in its own words.
const SYSTEM_PROMPT: &str = "You grade one MCP tool definition for an agent that must pick and call it.\n\
Reply with a JSON object only: \"scores\" holding purpose_clarity, usage_guidelines, \
behavioral_transparency, parameter_semantics, conciseness_structure and contextual_completeness, \
each {\"score\": 1-5, \"justification\": text}; \"annotation_contradiction\" (boolean); \"summary\".\n";

fn tool_prompt(description: &str) -> String {
    format!(
        "Tool name: read_file\nTitle: null\nDescription: \"{description}\"\n<input-schema>\n{{\n  \"type\": \"object\"\n}}\n</input-schema>\nAnswer with JSON only.\n"
    )
}

fn tool_question(description: &str) -> Question {
    Question {
        user_template: None,
        kind: QuestionKind::Tool,
        system: SYSTEM_PROMPT.to_string(),
        user: tool_prompt(description),
        subject: Subject::Tool {
            tool: json!({"name": "read_file", "description": description}),
            siblings: Vec::<String>::new().into(),
            signals: ContextSignals::default(),
        },
    }
}

const GOOD_DESCRIPTION: &str =
    "Returns the text of one file in the workspace. Use this instead of \
list_files when you already know the path; it is read-only and fails with an error when the file \
does not exist. The `path` parameter must be relative, e.g. src/main.rs.";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A directory holding a copy of the fake CLI as `claude`, its control file and its log.
struct FakeCli {
    dir: tempfile::TempDir,
    home: PathBuf,
}

impl FakeCli {
    fn new(control: Value) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fake-claude-")
            .tempdir()
            .unwrap();
        let program = dir.path().join("claude");
        // A copy, not a symlink: the fake finds its control file next to its own resolved path.
        std::fs::copy(env!("CARGO_BIN_EXE_fake-claude"), &program).unwrap();
        std::fs::write(
            dir.path().join("fake-claude.json"),
            serde_json::to_vec(&control).unwrap(),
        )
        .unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        FakeCli { dir, home }
    }

    fn program(&self) -> PathBuf {
        self.dir.path().join("claude")
    }

    fn config(&self, token: bool) -> ClaudeCodeConfig {
        let mut config = ClaudeCodeConfig::new(PINNED_MODEL, PINNED_CLI);
        config.program = Some(self.program());
        config.home = Some(self.home.clone());
        if token {
            config.token = Some(OauthToken::new("TDQS_TEST_TOKEN", TOKEN));
        }
        config
    }

    fn judge(&self, token: bool) -> ClaudeCodeJudge {
        ClaudeCodeJudge::new(self.config(token)).unwrap()
    }

    fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("fake-claude.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn calls(&self) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|r| r["kind"] == "call")
            .collect()
    }
}

fn ask(judge: &ClaudeCodeJudge, question: &Question) -> Result<Reply, CallFailure> {
    runtime().block_on(judge.ask(question))
}

fn refusal(judge: &ClaudeCodeJudge, question: &Question) -> CallFailure {
    match ask(judge, question) {
        Ok(reply) => panic!("expected a refusal, got the answer {:?}", reply.text),
        Err(failure) => failure,
    }
}

fn env_keys(record: &Value) -> BTreeSet<String> {
    record["env"].as_object().unwrap().keys().cloned().collect()
}

const FIXED_KEYS: &[&str] = &[
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY",
    "CLAUDE_CODE_NO_MODEL_FALLBACK",
    "CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK",
    "ENABLE_CLAUDEAI_MCP_SERVERS",
    "CLAUDE_CODE_MAX_RETRIES",
];

fn expected_argv(system_file: &str) -> Vec<String> {
    [
        "-p",
        "--model",
        PINNED_MODEL,
        "--system-prompt-file",
        system_file,
        "--tools",
        "",
        "--strict-mcp-config",
        "--mcp-config",
        r#"{"mcpServers":{}}"#,
        "--setting-sources",
        "",
        "--safe-mode",
        "--disable-slash-commands",
        "--no-session-persistence",
        "--effort",
        "high",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn token_mode_call_has_the_pinned_flags_an_empty_cwd_and_a_clean_environment() {
    let fake = FakeCli::new(json!({}));
    let judge = fake.judge(true);
    let question = tool_question(GOOD_DESCRIPTION);
    let reply = ask(&judge, &question).unwrap();
    assert_eq!(reply.model.as_deref(), Some(PINNED_MODEL));
    assert_eq!(reply.usage.input_tokens, 1200);
    assert_eq!(reply.usage.output_tokens, 180);
    let answer = parse_tool_answer(&reply.text).unwrap();
    assert_eq!(answer.scores.len(), 6);

    let calls = fake.calls();
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    let argv: Vec<String> = call["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let system_file = argv[4].clone();
    assert_eq!(argv, expected_argv(&system_file));
    assert!(system_file.ends_with("system.txt"), "{system_file}");
    assert_eq!(call["system_prompt"], SYSTEM_PROMPT, "passed byte for byte");
    assert_eq!(call["stdin"], question.user.as_str());

    let cwd = PathBuf::from(call["cwd"].as_str().unwrap());
    assert_eq!(
        call["cwd_entries"],
        json!([]),
        "the working directory is empty"
    );
    assert!(
        !Path::new(&system_file).starts_with(&cwd),
        "the system prompt file is outside the working directory"
    );

    let env = call["env"].as_object().unwrap();
    let mut expected: BTreeSet<String> = FIXED_KEYS.iter().map(|s| s.to_string()).collect();
    expected.extend(
        [
            "PATH",
            "HOME",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CONFIG_DIR",
        ]
        .map(String::from),
    );
    expected.extend(network_keys());
    assert_eq!(env_keys(call), expected);
    assert_eq!(env["CLAUDE_CODE_OAUTH_TOKEN"], TOKEN);
    assert_eq!(env["HOME"], fake.home.to_str().unwrap());
    assert_eq!(env["CLAUDE_CODE_MAX_RETRIES"], "3");
    assert_eq!(env["CLAUDE_CODE_NO_MODEL_FALLBACK"], "1");
    assert_eq!(env["ENABLE_CLAUDEAI_MCP_SERVERS"], "false");
    let config_dir = PathBuf::from(env["CLAUDE_CONFIG_DIR"].as_str().unwrap());
    assert_ne!(config_dir, cwd);
    assert!(
        !config_dir.starts_with(&fake.home),
        "a per-call config dir, not the user's"
    );

    // Everything the call created is gone.
    for path in [&cwd, &config_dir, &PathBuf::from(&system_file)] {
        assert!(!path.exists(), "{} was left behind", path.display());
    }
    assert!(!cwd.parent().unwrap().exists());
}

/// Proxy and CA-certificate variables of this process: they pass through to the CLI.
fn network_keys() -> Vec<String> {
    tdqs_gate::judge::claude_code::NETWORK_ENV
        .iter()
        .filter(|name| std::env::var_os(name).is_some())
        .map(|name| name.to_string())
        .collect()
}

#[test]
fn local_login_mode_passes_home_but_no_token_and_no_config_dir() {
    let fake = FakeCli::new(json!({}));
    let judge = fake.judge(false);
    ask(&judge, &tool_question(GOOD_DESCRIPTION)).unwrap();
    let call = &fake.calls()[0];
    let mut expected: BTreeSet<String> = FIXED_KEYS.iter().map(|s| s.to_string()).collect();
    expected.extend(["PATH", "HOME"].map(String::from));
    expected.extend(network_keys());
    assert_eq!(env_keys(call), expected);
    assert_eq!(call["env"]["HOME"], fake.home.to_str().unwrap());
}

/// Host variables that would change credentials, endpoint or model if they leaked.
const HOST_SECRETS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "sk-ant-api03-host-key-must-not-leak"),
    ("ANTHROPIC_AUTH_TOKEN", "host-bearer-must-not-leak"),
    ("ANTHROPIC_BASE_URL", "http://host-base-url.invalid"),
    ("ANTHROPIC_MODEL", "claude-sonnet-4-6"),
    ("CLAUDE_CODE_USE_BEDROCK", "1"),
    ("CLAUDE_CONFIG_DIR", "/host/claude-config-must-not-leak"),
    (
        "CLAUDE_CODE_OAUTH_TOKEN",
        "sk-ant-oat01-host-token-must-not-leak",
    ),
];

/// Runs [`host_environment_probe`] in a copy of this test binary whose environment holds
/// credentials and model overrides, so that the check does not change this process's
/// environment (other tests read it).
#[test]
fn host_credentials_and_overrides_never_reach_the_cli() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "claude_code::host_environment_probe",
            "--exact",
            "--ignored",
            "--test-threads=1",
        ])
        .envs(HOST_SECRETS.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "probe failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
#[ignore = "run by host_credentials_and_overrides_never_reach_the_cli with a polluted environment"]
fn host_environment_probe() {
    for mode_token in [false, true] {
        let fake = FakeCli::new(json!({}));
        let judge = fake.judge(mode_token);
        ask(&judge, &tool_question(GOOD_DESCRIPTION)).unwrap();
        let call = &fake.calls()[0];
        let env = call["env"].as_object().unwrap();
        for (name, value) in HOST_SECRETS {
            if *name == "CLAUDE_CODE_OAUTH_TOKEN" && mode_token {
                assert_eq!(env[*name], TOKEN, "the judge's token, not the host's");
            } else if *name == "CLAUDE_CONFIG_DIR" && mode_token {
                assert_ne!(env[*name], *value);
            } else {
                assert!(!env.contains_key(*name), "{name} leaked into the CLI");
            }
            // Short values ("1") also occur among the judge's own switches.
            assert!(
                value.len() < 8 || env.values().all(|v| v != value),
                "the host value of {name} leaked"
            );
        }
    }
}

#[test]
fn answers_follow_the_prompt_so_a_worse_description_scores_lower() {
    let fake = FakeCli::new(json!({}));
    let judge = fake.judge(true);
    let total = |description: &str| -> u32 {
        let reply = ask(&judge, &tool_question(description)).unwrap();
        let answer = parse_tool_answer(&reply.text).unwrap();
        ToolDimension::ALL
            .iter()
            .map(|d| u32::from(answer.scores[d].score))
            .sum()
    };
    let good = total(GOOD_DESCRIPTION);
    let poor = total("Reads a file");
    let empty = total("");
    assert!(
        good > poor && poor > empty,
        "good {good}, poor {poor}, empty {empty}"
    );
    assert_eq!(empty, 6, "an empty description scores 1 everywhere");

    let coherence = Question {
        user_template: None,
        kind: QuestionKind::Coherence,
        system: "Judge the tool set. Reply with JSON: scores, shadowing_risks, summary.".into(),
        user: "Server: files\n<tools>\n- read_file: Reads\n- write_file: Writes\n- list_files: Lists\n</tools>\n".into(),
        subject: Subject::Coherence {
            server_name: "files".into(),
            tools: vec![],
            signals: vec![],
            candidates: vec![],
        },
    };
    let reply = ask(&judge, &coherence).unwrap();
    let answer = parse_coherence_answer(&reply.text).unwrap();
    assert_eq!(answer.scores.len(), 4);
}

#[test]
fn garbage_answers_come_back_as_text_the_parser_refuses_then_a_good_one_passes() {
    let fake = FakeCli::new(json!({"calls": ["garbage", "garbage", "answer"]}));
    let judge = fake.judge(true);
    let question = tool_question(GOOD_DESCRIPTION);
    for _ in 0..2 {
        let reply = ask(&judge, &question).unwrap();
        let err = parse_tool_answer(&reply.text).unwrap_err();
        assert!(err.starts_with("the answer is not valid JSON"), "{err}");
        assert!(err.contains("I have reviewed the tool"), "{err}");
    }
    let reply = ask(&judge, &question).unwrap();
    parse_tool_answer(&reply.text).unwrap();
    assert_eq!(fake.calls().len(), 3);
}

#[test]
fn every_refusal_is_a_retryable_call_failure_that_says_why() {
    let cases: &[(&str, &str)] = &[
        (
            "model:claude-sonnet-4-6",
            "the answer came from model `claude-sonnet-4-6`, not the pinned `claude-opus-5-5`",
        ),
        ("synthetic", "model `<synthetic>`"),
        (
            "error:529",
            "Claude Code reported an error (result success, HTTP status 529, exit code 1): API Error: 529 overloaded_error",
        ),
        ("error:401", "HTTP status 401, exit code 1): Failed to authenticate"),
        (
            "not-logged-in",
            "(result success, exit code 1): Not logged in · Please run /login",
        ),
        ("refusal-fallback", "model_refusal_fallback"),
        ("two-results", "2 result lines"),
        (
            "plain",
            "Claude Code's output is not its stream-json stream: line 3 is not a JSON object: \"```json\"",
        ),
        ("crash", "Claude Code failed (exit code 3)"),
    ];
    for (behaviour, expected) in cases {
        let fake = FakeCli::new(json!({"calls": [behaviour]}));
        let judge = fake.judge(true);
        let failure = refusal(&judge, &tool_question(GOOD_DESCRIPTION));
        assert!(failure.retryable, "{behaviour}: {}", failure.message);
        assert!(
            failure.message.contains(expected),
            "{behaviour}\n  got:      {}\n  expected: {expected}",
            failure.message
        );
        for text in [Some(&failure.message), failure.detail.as_ref()]
            .into_iter()
            .flatten()
        {
            assert!(
                !text.contains(TOKEN),
                "{behaviour}: the token leaked: {text}"
            );
        }
        if *behaviour == "crash" {
            assert!(failure
                .detail
                .as_deref()
                .unwrap_or("")
                .contains("crashed on purpose"));
        }
        if *behaviour == "error:401" {
            // The fake echoed the token into the result text and stderr; both are masked.
            assert!(
                failure.message.contains("[REDACTED]"),
                "{}",
                failure.message
            );
            assert!(
                failure
                    .detail
                    .as_deref()
                    .unwrap_or("")
                    .contains("bearer [REDACTED]"),
                "{:?}",
                failure.detail
            );
        }
    }
}

#[test]
fn a_hanging_cli_is_stopped_at_the_timeout_with_everything_it_started() {
    let fake = FakeCli::new(json!({"calls": ["hang"]}));
    let mut config = fake.config(true);
    config.timeout = Duration::from_secs(2);
    let judge = ClaudeCodeJudge::new(config).unwrap();
    let started = Instant::now();
    let failure = refusal(&judge, &tool_question(GOOD_DESCRIPTION));
    let elapsed = started.elapsed();
    assert!(failure.retryable);
    assert!(
        failure.message.contains("did not answer within 2 s"),
        "{}",
        failure.message
    );
    // The fake ignores nothing, so SIGTERM ends it well before the SIGKILL grace runs out.
    assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}");

    let call = &fake.calls()[0];
    let pids = [
        call["pid"].as_u64().unwrap(),
        call["helper_pid"].as_u64().unwrap(),
    ];
    assert_eq!(
        call["pgid"].as_u64().unwrap(),
        pids[0],
        "the CLI leads its own process group"
    );
    for pid in pids {
        assert!(wait_until_gone(pid), "process {pid} is still running");
    }
    let cwd = PathBuf::from(call["cwd"].as_str().unwrap());
    assert!(
        !cwd.parent().unwrap().exists(),
        "the call's directory was left behind"
    );
}

#[test]
fn helpers_the_cli_leaves_behind_are_killed_and_do_not_delay_the_answer() {
    let fake = FakeCli::new(json!({"calls": ["answer-leaving-helper"]}));
    let mut config = fake.config(true);
    config.timeout = Duration::from_secs(20);
    let judge = ClaudeCodeJudge::new(config).unwrap();
    let started = Instant::now();
    let reply = ask(&judge, &tool_question(GOOD_DESCRIPTION)).unwrap();
    parse_tool_answer(&reply.text).unwrap();
    // The helper holds the output pipes open; waiting for them to close would last until the
    // time limit (20 s; the bound leaves room for a loaded machine).
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    let helper = fake.calls()[0]["helper_pid"].as_u64().unwrap();
    assert!(wait_until_gone(helper), "helper {helper} is still running");
}

/// True once `pid` no longer runs (gone, or a zombie waiting for a reaper that is not us).
fn wait_until_gone(pid: u64) -> bool {
    // Generous for a loaded machine: the poll ends as soon as the process is gone.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let running = match stat {
            Err(_) => false,
            Ok(stat) => {
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z') && !state.starts_with('X')
            }
        };
        if !running {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn calls_run_concurrently_each_in_its_own_directory() {
    // Long enough that one after the other (4 × 1.5 s) cannot pass for at once (1.5 s) even on
    // a loaded machine.
    let fake = FakeCli::new(json!({"latency_ms": 1500}));
    let judge = fake.judge(true);
    let question = tool_question(GOOD_DESCRIPTION);
    let started = Instant::now();
    let (a, b, c, d) = runtime().block_on(async {
        tokio::join!(
            judge.ask(&question),
            judge.ask(&question),
            judge.ask(&question),
            judge.ask(&question)
        )
    });
    let replies = [a, b, c, d];
    let elapsed = started.elapsed();
    assert!(replies.iter().all(Result::is_ok));
    assert!(
        elapsed < Duration::from_millis(4 * 1500),
        "took {elapsed:?}"
    );
    let cwds: BTreeSet<String> = fake
        .calls()
        .iter()
        .map(|c| c["cwd"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(cwds.len(), 4);
}

#[test]
fn a_slash_prompt_is_refused_without_running_the_cli() {
    let fake = FakeCli::new(json!({}));
    let judge = fake.judge(true);
    let mut question = tool_question(GOOD_DESCRIPTION);
    question.user = "/context".into();
    let failure = refusal(&judge, &question);
    assert!(!failure.retryable);
    assert!(failure.message.contains("slash command"));
    assert!(fake.log().is_empty());
}

#[test]
fn preflight_warns_on_another_cli_version_and_records_it() {
    let fake = FakeCli::new(json!({"version": "2.1.332 (Claude Code)"}));
    let judge = fake.judge(true);
    assert_eq!(judge.info().settings["cliVersion"], Value::Null);
    let warnings = runtime().block_on(judge.preflight()).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("2.1.332") && warnings[0].contains("2.1.288"));
    let info = judge.info();
    assert_eq!(info.mode, "claude-code");
    assert_eq!(info.model, PINNED_MODEL);
    assert!(info.model_judged);
    assert_eq!(info.settings["cliVersion"], "2.1.332");
    assert_eq!(info.settings["effort"], "high");
    assert!(!info.settings.to_string().contains(TOKEN));

    let fake = FakeCli::new(json!({}));
    let judge = fake.judge(true);
    assert!(runtime().block_on(judge.preflight()).unwrap().is_empty());
    // Token mode: no `auth status` (it cannot validate a token anyway).
    let kinds: Vec<Value> = fake.log().iter().map(|r| r["kind"].clone()).collect();
    assert_eq!(kinds, vec![json!("version")]);
    // The probe runs with the same clean environment and an empty directory.
    let probe = &fake.log()[0];
    assert_eq!(probe["cwd_entries"], json!([]));
    assert!(!env_keys(probe).iter().any(|k| k.starts_with("ANTHROPIC_")));
}

#[test]
fn preflight_checks_the_local_login_with_auth_status() {
    let fake = FakeCli::new(json!({"logged_in": false}));
    let judge = fake.judge(false);
    let err = runtime().block_on(judge.preflight()).unwrap_err();
    assert!(err.cause.contains("not logged in"), "{}", err.cause);
    let advice = err.advice.unwrap();
    assert!(
        advice.contains("claude setup-token") && advice.contains("--token-env"),
        "{advice}"
    );
    let kinds: Vec<Value> = fake.log().iter().map(|r| r["kind"].clone()).collect();
    assert_eq!(kinds, vec![json!("version"), json!("auth")]);
    assert_eq!(fake.log()[1]["argv"], json!(["auth", "status"]));

    let fake = FakeCli::new(json!({"logged_in": true}));
    assert!(runtime()
        .block_on(fake.judge(false).preflight())
        .unwrap()
        .is_empty());
}

#[test]
fn a_missing_cli_is_invalid_with_install_advice() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ClaudeCodeConfig::new(PINNED_MODEL, PINNED_CLI);
    config.program = Some(dir.path().join("claude"));
    let err = ClaudeCodeJudge::new(config).unwrap_err();
    assert!(err.cause.contains("not found"), "{}", err.cause);
    assert!(err.advice.unwrap().contains("npm ci"));
}

// ---------------------------------------------------------------------------------------------
// The real pinned CLI against the loopback Messages API stand-in.

/// The CLI installed by `tests/setup/claude-cli.sh`, or `None` (the test then skips) unless
/// `TDQS_GATE_REQUIRE_EXTERNAL=1`, which makes a missing install a failure.
fn real_cli() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tdqs/node_modules/.bin/claude");
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "the pinned Claude Code CLI is not installed at {}; run tests/setup/claude-cli.sh",
        path.display()
    );
    crate::support::skips::skip(&message);
    None
}

fn tool_answer_json() -> String {
    let entry = |s: u8| json!({"score": s, "justification": "From the stand-in API."});
    json!({
        "scores": {
            "purpose_clarity": entry(4), "usage_guidelines": entry(3),
            "behavioral_transparency": entry(4), "parameter_semantics": entry(2),
            "conciseness_structure": entry(5), "contextual_completeness": entry(3)
        },
        "annotation_contradiction": false,
        "summary": "Answered by the loopback stand-in."
    })
    .to_string()
}

fn real_judge(program: PathBuf, api: &MessagesApi, home: &Path) -> ClaudeCodeJudge {
    let mut config = ClaudeCodeConfig::new(PINNED_MODEL, PINNED_CLI);
    config.program = Some(program);
    config.home = Some(home.to_path_buf());
    config.token = Some(OauthToken::new("TDQS_TEST_TOKEN", TOKEN));
    config.base_url = Some(api.base_url());
    config.timeout = Duration::from_secs(120);
    ClaudeCodeJudge::new(config).unwrap()
}

#[test]
fn real_cli_accepts_the_gate_flags_and_returns_the_pinned_model_answer() {
    let Some(cli) = real_cli() else { return };
    let api = MessagesApi::start(ApiReply::answer(PINNED_MODEL, &tool_answer_json()));
    let home = tempfile::tempdir().unwrap();
    let judge = real_judge(cli, &api, home.path());
    let rt = runtime();
    let warnings = rt.block_on(judge.preflight()).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(judge.info().settings["cliVersion"], PINNED_CLI);

    let question = tool_question(GOOD_DESCRIPTION);
    let started = Instant::now();
    let reply = rt
        .block_on(judge.ask(&question))
        .unwrap_or_else(|f| panic!("{}\n{}", f.message, f.detail.unwrap_or_default()));
    eprintln!("real CLI call took {:?}", started.elapsed());
    assert_eq!(reply.text, tool_answer_json());
    assert_eq!(reply.model.as_deref(), Some(PINNED_MODEL));
    assert!(reply.usage.input_tokens > 0);
    parse_tool_answer(&reply.text).unwrap();

    // What the CLI sent: our model, our system prompt verbatim, our user prompt, no tools, the
    // pinned effort, the token as a bearer and no API key.
    let requests = api.message_requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let request = &requests[0];
    let body = request.body.as_ref().unwrap();
    assert_eq!(body["model"], PINNED_MODEL);
    assert_eq!(body["stream"], true);
    let system_texts: Vec<&str> = body["system"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert!(
        system_texts.contains(&SYSTEM_PROMPT),
        "system blocks: {system_texts:#?}"
    );
    let first = &body["messages"][0];
    assert_eq!(first["role"], "user");
    let user_text = match &first["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("unexpected content {other}"),
    };
    assert!(user_text.contains(&question.user), "{user_text}");
    assert_eq!(body["tools"], json!([]));
    assert_eq!(body["output_config"]["effort"], "high");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(request.header("x-api-key"), None);
    let unexpected: Vec<String> = api
        .requests()
        .iter()
        .filter(|r| !r.path.starts_with("/v1/messages") && !r.path.starts_with("/api/hello"))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(unexpected.is_empty(), "unexpected requests: {unexpected:?}");

    // Token mode keeps the CLI's state in the per-call config directory, not under HOME.
    let left: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "the CLI wrote into HOME: {left:?}");
}

#[test]
fn real_cli_answer_from_a_substituted_model_is_refused() {
    let Some(cli) = real_cli() else { return };
    let api = MessagesApi::start(ApiReply::answer("claude-sonnet-4-6", &tool_answer_json()));
    let home = tempfile::tempdir().unwrap();
    let judge = real_judge(cli, &api, home.path());
    let failure = match runtime().block_on(judge.ask(&tool_question(GOOD_DESCRIPTION))) {
        Ok(reply) => panic!("a substituted model was accepted: {:?}", reply.text),
        Err(failure) => failure,
    };
    eprintln!("refusal: {}", failure.message);
    assert!(failure.retryable);
    assert!(
        failure.message.contains(
            "the answer came from model `claude-sonnet-4-6`, not the pinned `claude-opus-5-5`"
        ),
        "{}\n{:?}",
        failure.message,
        failure.detail
    );
}

#[test]
fn real_cli_survives_an_overloaded_api_by_retrying() {
    let Some(cli) = real_cli() else { return };
    let api = MessagesApi::start(ApiReply::answer(PINNED_MODEL, &tool_answer_json()));
    api.script([ApiReply::overloaded()]);
    let home = tempfile::tempdir().unwrap();
    let judge = real_judge(cli, &api, home.path());
    let started = Instant::now();
    let reply = runtime()
        .block_on(judge.ask(&tool_question(GOOD_DESCRIPTION)))
        .unwrap_or_else(|f| panic!("{}\n{}", f.message, f.detail.unwrap_or_default()));
    eprintln!("answered after {:?}", started.elapsed());
    assert_eq!(reply.text, tool_answer_json());
    assert_eq!(api.message_requests().len(), 2, "one 529, one success");
}

#[test]
fn real_cli_error_results_are_refused_with_status_and_no_token() {
    let Some(cli) = real_cli() else { return };
    let api = MessagesApi::start(ApiReply::Error {
        status: 401,
        kind: "authentication_error".into(),
        message: format!("invalid bearer token {TOKEN}"),
    });
    let home = tempfile::tempdir().unwrap();
    let judge = real_judge(cli, &api, home.path());
    let failure = match runtime().block_on(judge.ask(&tool_question(GOOD_DESCRIPTION))) {
        Ok(reply) => panic!("an API error was accepted: {:?}", reply.text),
        Err(failure) => failure,
    };
    eprintln!(
        "refusal after {} request(s): {}\n{}",
        api.message_requests().len(),
        failure.message,
        failure.detail.as_deref().unwrap_or("")
    );
    assert!(
        failure.message.contains("HTTP status 401"),
        "{}",
        failure.message
    );
    for text in [Some(&failure.message), failure.detail.as_ref()]
        .into_iter()
        .flatten()
    {
        assert!(!text.contains(TOKEN), "the token leaked: {text}");
    }
}

#[test]
fn real_cli_local_login_preflight_refuses_an_empty_home() {
    let Some(cli) = real_cli() else { return };
    let home = tempfile::tempdir().unwrap();
    let mut config = ClaudeCodeConfig::new(PINNED_MODEL, PINNED_CLI);
    config.program = Some(cli);
    config.home = Some(home.path().to_path_buf());
    let judge = ClaudeCodeJudge::new(config).unwrap();
    let err = runtime().block_on(judge.preflight()).unwrap_err();
    eprintln!("{}", err.render());
    assert!(err.cause.contains("not logged in"), "{}", err.render());
}
