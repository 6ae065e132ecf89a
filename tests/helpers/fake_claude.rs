//! A stand-in for the Claude Code CLI (`claude`) that speaks its `--output-format stream-json
//! --verbose` format, for the judge's integration tests.
//!
//! The judge runs `claude` with an environment built from nothing, so the fake cannot be steered
//! through environment variables. It reads its instructions from the directory it runs from:
//! tests copy this binary as `claude` into a temporary directory and put beside it
//!
//! - `fake-claude.json` (optional) — what to do:
//!   `{"version": "2.1.288 (Claude Code)", "logged_in": true, "latency_ms": 0,
//!     "auth_waits_for": "/path/that/appears/later",
//!     "calls": ["garbage", "garbage", "answer"]}`.
//!   Call number i (counted from 0 across all `-p` runs from that directory) behaves as
//!   `calls[min(i, len - 1)]`; the default is `["answer"]`. Behaviours:
//!   - `answer`: a valid answer whose scores follow the prompt (see `tool_answer`), from the
//!     model named by `--model`;
//!   - `garbage`: a well-formed stream whose answer text is not JSON;
//!   - `model:NAME`: a valid answer, but the assistant message says model NAME (the envelope's
//!     `modelUsage` still names the requested model, as the real CLI does);
//!   - `synthetic`: an assistant message from `<synthetic>` with a non-error result;
//!   - `error:STATUS`: an API error result (`is_error` true, `api_error_status` STATUS, exit 1)
//!     whose text, for 401, echoes the OAuth token, and stderr too, like a careless gateway;
//!   - `not-logged-in`: the "Not logged in" error result (status null, exit 1);
//!   - `refusal-fallback`: a `model_refusal_fallback` system event before the answer;
//!   - `two-results`: two result lines;
//!   - `plain`: plain text on stdout, exit 0;
//!   - `crash`: a message on stderr, nothing on stdout, exit 3;
//!   - `hang`: starts a helper process (it stays in the fake's process group), then never answers;
//!   - `answer-leaving-helper`: starts a helper that keeps stdout open, answers well and exits.
//!
//!   `script` (optional): a list of rules for `-p` calls, tried in order before `calls`:
//!   `{"kind": "tool"|"coherence", "contains": ["Tool under review: b_tool\n", "text"],
//!     "occurrences": [2, 3], "behaviour": "answer", "all": 4, "scores": {"purpose_clarity": 2},
//!     "justification": "…", "summary": "…", "latency_ms": 50}`.
//!   A rule applies when every key it has matches: `kind` is the question's kind (coherence
//!   when the prompts name the set-level dimensions or list a catalogue), each `contains`
//!   string occurs in the user prompt (stdin), and `occurrences` lists how many times this
//!   exact prompt (system and user text) has been asked so far, this call included, counted
//!   across runs from the directory (a retry is a new occurrence). The first rule that applies
//!   gives the call's behaviour (default `answer`); its answer starts from the prompt-derived
//!   one, sets every dimension of the kind to `all`, then each dimension named in `scores`
//!   (a number, or `{"score", "justification"}`). `latency_ms` replaces the global latency.
//!   A call no rule applies to behaves as `calls` says.
//!
//!   `select` (optional): how a selection question of `tdqs-gate eval` is answered (a question
//!   whose system prompt names the "tool-selection step"): a list of
//!   `{"request": "…", "tool": "NAME or NO_TOOL", "arguments": {…}}`; the entry whose `request`
//!   equals the question's user request gives the answer (confidence 0.9), and a request no
//!   entry names is answered `NO_TOOL`. The question's kind is logged as `selection`.
//!   A rewrite request of `tdqs-gate suggest` (a system prompt that opens "You revise one MCP
//!   tool definition") is logged as `rewrite` and answered by `rewrite_answer`; a script rule
//!   of kind `rewrite` chooses the revision with `"rewrite": "better" | "worse" | "params" |
//!   "rename" | "reshape"`.
//!   `noise` (optional): seeded answers that vary between calls like a judge's (see
//!   `fake_claude_noise.rs`). The noisy answer replaces the prompt-derived one, a script rule
//!   still lays its scores over it, and the log records the draw under `noise`.
//! - `fake-claude.log` — written by the fake: one JSON line per run with its argv, cwd, the
//!   entries of the cwd at start, the complete environment, stdin, the system prompt file's
//!   contents, its pid and process group (and the helper's pid for `hang`); for `-p` runs also
//!   `call_index`, `behaviour`, `question` (its kind), `occurrence` and `rule` (the index of the
//!   script rule that applied, or null).
//! - `fake-claude.calls/` and `fake-claude.seen/` — the fake's counters (one empty file per
//!   call, and per occurrence of each distinct prompt).
//!
//! It also answers `--version` and `auth status` (exit 1 when `logged_in` is false), and, like
//! the real CLI, refuses unknown options and `stream-json` without `--verbose`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Map, Value};

#[path = "fake_claude_noise.rs"]
mod noise;

use noise::Noise;

const SLEEPER_ARG: &str = "__fake_claude_sleeper";

struct Control {
    version: String,
    logged_in: bool,
    latency: Duration,
    calls: Vec<String>,
    script: Vec<Value>,
    select: Vec<Value>,
    noise: Option<Noise>,
    /// `auth status` answers only once this path exists (at most 30 s): a test makes a
    /// slow login check that is still running when something else happens.
    auth_waits_for: Option<PathBuf>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(SLEEPER_ARG) {
        std::thread::sleep(Duration::from_secs(3600));
        return;
    }
    let home = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    let control = read_control(&home);
    let code = run(&home, &control, &args);
    std::process::exit(code);
}

fn read_control(home: &Path) -> Control {
    let value: Value = std::fs::read_to_string(home.join("fake-claude.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let calls: Vec<String> = value
        .get("calls")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .filter(|v: &Vec<String>| !v.is_empty())
        .unwrap_or_else(|| vec!["answer".to_string()]);
    Control {
        version: value
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("2.1.288 (Claude Code)")
            .to_string(),
        logged_in: value
            .get("logged_in")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        latency: Duration::from_millis(
            value.get("latency_ms").and_then(Value::as_u64).unwrap_or(0),
        ),
        calls,
        script: value
            .get("script")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        select: value
            .get("select")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        noise: Noise::from_control(&value),
        auth_waits_for: value
            .get("auth_waits_for")
            .and_then(Value::as_str)
            .map(PathBuf::from),
    }
}

fn run(home: &Path, control: &Control, args: &[String]) -> i32 {
    if args.iter().any(|a| a == "--version" || a == "-v") {
        log(home, "version", args, "", None, Map::new());
        println!("{}", control.version);
        return 0;
    }
    if args.first().map(String::as_str) == Some("auth") {
        log(home, "auth", args, "", None, Map::new());
        if let Some(path) = &control.auth_waits_for {
            let start = std::time::Instant::now();
            while !path.exists() && start.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if args.get(1).map(String::as_str) != Some("status") {
            eprintln!("error: unknown command 'auth {}'", args[1..].join(" "));
            return 1;
        }
        let method = if std::env::var_os("CLAUDE_CODE_OAUTH_TOKEN").is_some() {
            "oauth_token"
        } else if control.logged_in {
            "claude.ai"
        } else {
            "none"
        };
        let logged_in = control.logged_in || method == "oauth_token";
        let status =
            json!({"loggedIn": logged_in, "authMethod": method, "apiProvider": "firstParty"});
        println!("{}", serde_json::to_string_pretty(&status).unwrap());
        return if logged_in { 0 } else { 1 };
    }

    let options = match parse_print_options(args) {
        Ok(o) => o,
        Err(message) => {
            log(home, "rejected", args, "", None, Map::new());
            eprintln!("error: {message}");
            return 1;
        }
    };
    let mut stdin = String::new();
    let _ = std::io::stdin().read_to_string(&mut stdin);
    let system_prompt = options
        .get("--system-prompt-file")
        .and_then(|p| std::fs::read_to_string(p).ok());
    let index = claim_call_index(home);
    let system_text = system_prompt.clone().unwrap_or_default();
    let kind = question_kind(&system_text, &stdin);
    let occurrence = claim_occurrence(home, &system_text, &stdin);
    let rule = control
        .script
        .iter()
        .position(|r| rule_applies(r, kind, &stdin, occurrence));
    let scripted = rule.map(|i| &control.script[i]);
    let behaviour = match scripted {
        Some(r) => r
            .get("behaviour")
            .and_then(Value::as_str)
            .unwrap_or("answer")
            .to_string(),
        None => control.calls[index.min(control.calls.len() - 1)].clone(),
    };
    let latency = scripted
        .and_then(|r| r.get("latency_ms"))
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .unwrap_or(control.latency);

    let mut extra = Map::new();
    extra.insert("call_index".into(), json!(index));
    extra.insert("behaviour".into(), json!(behaviour));
    extra.insert("question".into(), json!(kind));
    extra.insert("occurrence".into(), json!(occurrence));
    extra.insert("rule".into(), json!(rule));
    let mut derived = derived_answer(kind, &stdin);
    if let Some(noise) = &control.noise {
        let draw = noise.apply(&mut derived, kind, &system_text, &stdin, occurrence);
        extra.insert("noise".into(), draw);
    }
    if behaviour == "hang" || behaviour == "answer-leaving-helper" {
        // The helper inherits stdout and stderr, so those pipes stay open as long as it runs.
        // It is left behind on purpose: the judge must clean it up.
        #[expect(clippy::zombie_processes)]
        let sleeper = std::process::Command::new(std::env::current_exe().unwrap())
            .arg(SLEEPER_ARG)
            .spawn()
            .expect("start the sleeper");
        extra.insert("helper_pid".into(), json!(sleeper.id()));
    }
    log(home, "call", args, &stdin, system_prompt.as_deref(), extra);
    if behaviour == "hang" {
        std::thread::sleep(Duration::from_secs(3600));
        return 0;
    }

    if stdin.trim().is_empty() {
        eprintln!("Error: Input must be provided either through stdin or as a prompt argument when using --print");
        return 1;
    }
    std::thread::sleep(latency);

    let requested = options
        .get("--model")
        .cloned()
        .unwrap_or_else(|| "claude-opus-5-5".to_string());
    let mut out = Stream::new(&requested, &control.version, &options);
    let good_answer = || {
        if kind == "selection" {
            selection_answer(&stdin, &control.select)
        } else if kind == "rewrite" {
            rewrite_answer(&stdin, scripted)
        } else {
            answer_for(derived.clone(), scripted)
        }
    };

    match behaviour.as_str() {
        "answer" | "answer-leaving-helper" => out.answer(&requested, &good_answer()),
        "garbage" => out.answer(
            &requested,
            "I have reviewed the tool and it looks reasonable to me.",
        ),
        "synthetic" => out.answer("<synthetic>", "No response requested."),
        "refusal-fallback" => {
            out.line(
                json!({"type": "system", "subtype": "model_refusal_fallback",
                "from_model": requested, "to_model": "claude-sonnet-4-6"}),
            );
            out.answer(&requested, &good_answer())
        }
        "two-results" => {
            let code = out.answer(&requested, &good_answer());
            out.result(false, &good_answer(), Value::Null, true);
            code
        }
        "not-logged-in" => out.error(None, "Not logged in · Please run /login"),
        "plain" => {
            println!("{}", good_answer());
            0
        }
        "crash" => {
            eprintln!("Error: the fake CLI crashed on purpose");
            3
        }
        other => {
            if let Some(model) = other.strip_prefix("model:") {
                out.answer(model, &good_answer())
            } else if let Some(status) = other.strip_prefix("error:") {
                let status: u16 = status.parse().unwrap_or(500);
                let text = match status {
                    401 => {
                        let token = std::env::var("CLAUDE_CODE_OAUTH_TOKEN").unwrap_or_default();
                        eprintln!("[fake] request rejected for bearer {token}");
                        format!("Failed to authenticate. API Error: 401 {{\"type\":\"error\",\"error\":{{\"type\":\"authentication_error\",\"message\":\"invalid bearer token {token}\"}}}}")
                    }
                    529 => {
                        for attempt in 1..=2 {
                            out.line(json!({"type": "system", "subtype": "api_retry", "attempt": attempt,
                                "max_retries": 2, "retry_delay_ms": 500, "error_status": 529, "error": "overloaded"}));
                        }
                        "API Error: 529 overloaded_error. This is a server-side issue, usually temporary; try again in a moment.".to_string()
                    }
                    _ => format!("API Error: {status} fake failure"),
                };
                out.error(Some(status), &text)
            } else {
                eprintln!("fake-claude: unknown behaviour {other:?}");
                2
            }
        }
    }
}

/// Parses the print-mode command line the way the real CLI does for the options the judge uses.
fn parse_print_options(args: &[String]) -> Result<BTreeMap<String, String>, String> {
    const WITH_VALUE: &[&str] = &[
        "--model",
        "--system-prompt-file",
        "--tools",
        "--mcp-config",
        "--setting-sources",
        "--effort",
        "--output-format",
    ];
    const FLAGS: &[&str] = &[
        "-p",
        "--print",
        "--strict-mcp-config",
        "--safe-mode",
        "--disable-slash-commands",
        "--no-session-persistence",
        "--verbose",
    ];
    let mut options = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if WITH_VALUE.contains(&arg) {
            let value = args
                .get(i + 1)
                .ok_or_else(|| format!("option '{arg}' argument missing"))?;
            options.insert(arg.to_string(), value.clone());
            i += 2;
        } else if FLAGS.contains(&arg) {
            options.insert(arg.to_string(), String::new());
            i += 1;
        } else if arg.starts_with('-') {
            return Err(format!("unknown option '{arg}'"));
        } else {
            return Err(format!(
                "the fake takes its prompt on stdin only, got argument '{arg}'"
            ));
        }
    }
    if !options.contains_key("-p") && !options.contains_key("--print") {
        return Err("the fake only supports print mode (-p)".into());
    }
    if options.get("--output-format").map(String::as_str) == Some("stream-json")
        && !options.contains_key("--verbose")
    {
        return Err("When using --print, --output-format=stream-json requires --verbose".into());
    }
    Ok(options)
}

/// Takes the next call number atomically, so concurrent runs each get their own.
fn claim_call_index(home: &Path) -> usize {
    let dir = home.join("fake-claude.calls");
    let _ = std::fs::create_dir_all(&dir);
    (0..)
        .find(|n| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dir.join(n.to_string()))
                .is_ok()
        })
        .unwrap()
}

fn log(
    home: &Path,
    kind: &str,
    args: &[String],
    stdin: &str,
    system_prompt: Option<&str>,
    extra: Map<String, Value>,
) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut cwd_entries: Vec<String> = std::fs::read_dir(&cwd)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    cwd_entries.sort();
    let env: BTreeMap<String, String> = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    #[cfg(unix)]
    // SAFETY: getpgrp has no preconditions.
    let pgid = Some(unsafe { libc::getpgrp() });
    #[cfg(not(unix))]
    let pgid: Option<i32> = None;
    let mut record = json!({
        "kind": kind,
        "argv": args,
        "cwd": cwd,
        "cwd_entries": cwd_entries,
        "env": env,
        "stdin": stdin,
        "system_prompt": system_prompt,
        "pid": std::process::id(),
        "pgid": pgid,
    });
    record.as_object_mut().unwrap().extend(extra);
    let mut line = record.to_string();
    line.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(home.join("fake-claude.log"))
        .expect("open the fake's log");
    file.write_all(line.as_bytes())
        .expect("write the fake's log");
}

/// Writes stream-json lines in the shape the real CLI uses.
struct Stream {
    session: String,
    requested: String,
    serial: u32,
}

impl Stream {
    fn new(requested: &str, version: &str, options: &BTreeMap<String, String>) -> Self {
        let mut stream = Stream {
            session: format!("fake-session-{}", std::process::id()),
            requested: requested.to_string(),
            serial: 0,
        };
        if options.contains_key("--safe-mode") {
            stream
                .line(json!({"type": "system", "subtype": "ui_invalidate", "event": "ui.render"}));
        }
        let tools: Vec<&str> = match options.get("--tools").map(String::as_str) {
            Some("") => vec![],
            _ => vec!["Bash", "Edit", "Read"],
        };
        let cwd = std::env::current_dir().unwrap_or_default();
        stream.line(json!({
            "type": "system", "subtype": "init", "cwd": cwd, "tools": tools, "mcp_servers": [],
            "model": requested, "permissionMode": "auto",
            "slash_commands": if options.contains_key("--disable-slash-commands") { json!([]) } else { json!(["context"]) },
            "apiKeySource": "none",
            "claude_code_version": version.split_whitespace().next().unwrap_or(""),
            "analytics_disabled": true,
        }));
        stream
    }

    fn line(&mut self, mut value: Value) {
        self.serial += 1;
        let object = value.as_object_mut().unwrap();
        object.insert("session_id".into(), json!(self.session));
        object.insert(
            "uuid".into(),
            json!(format!("fake-{}-{}", std::process::id(), self.serial)),
        );
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{value}").unwrap();
        stdout.flush().unwrap();
    }

    fn assistant(&mut self, model: &str, text: &str, error: Option<&str>) {
        let mut line = json!({
            "type": "assistant",
            "message": {"id": format!("msg_fake_{}", self.serial), "type": "message", "role": "assistant",
                "model": model, "content": [{"type": "text", "text": text}],
                "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 1200, "output_tokens": 1, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 0}},
            "parent_tool_use_id": null,
        });
        if let Some(error) = error {
            line["error"] = json!(error);
            line["is_api_error_message"] = json!(true);
        }
        self.line(line);
    }

    fn result(&mut self, is_error: bool, text: &str, status: Value, used_model: bool) {
        let model_usage = if used_model {
            json!({ self.requested.clone(): {"inputTokens": 1200, "outputTokens": 180,
                "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0, "costUSD": 0.02} })
        } else {
            json!({})
        };
        let (input, output) = if used_model { (1200, 180) } else { (0, 0) };
        self.line(json!({
            "type": "result", "subtype": "success", "is_error": is_error,
            "api_error_status": status, "result": text, "num_turns": 1,
            "stop_reason": if is_error { "stop_sequence" } else { "end_turn" },
            "terminal_reason": if is_error { "api_error" } else { "completed" },
            "duration_ms": 40, "duration_api_ms": 30, "total_cost_usd": 0.02,
            "usage": {"input_tokens": input, "output_tokens": output, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "iterations": [], "service_tier": "standard"},
            "modelUsage": model_usage, "permission_denials": [],
        }));
    }

    /// A completed turn whose assistant message claims `model`; exit code 0.
    fn answer(&mut self, model: &str, text: &str) -> i32 {
        self.assistant(model, text, None);
        self.line(json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed", "isUsingOverage": false}}));
        // The real CLI keys modelUsage by the requested model, whoever answered.
        self.result(false, text, Value::Null, true);
        0
    }

    /// An API error as the CLI reports it: a synthetic message, an error result, exit 1.
    fn error(&mut self, status: Option<u16>, text: &str) -> i32 {
        self.assistant("<synthetic>", text, Some("api_error"));
        self.result(true, text, status.map_or(Value::Null, |s| json!(s)), false);
        1
    }
}

/// Which question a call asks: `coherence` when the prompts name the set-level answer or list a
/// catalogue of tools, else `tool`.
fn question_kind(system_prompt: &str, user_prompt: &str) -> &'static str {
    if system_prompt.contains("tool-selection step") {
        return "selection";
    }
    if system_prompt.contains("You revise one MCP tool definition") {
        return "rewrite";
    }
    let coherence = [system_prompt, user_prompt].iter().any(|p| {
        p.contains("shadowing_risks")
            || p.contains("<shadow-candidates>")
            || p.contains("<tools>")
            || p.contains("naming_consistency")
            || p.contains("[catalogue]")
    });
    if coherence {
        "coherence"
    } else {
        "tool"
    }
}

/// Counts this call as the next occurrence of its exact prompt; returns it, from 1.
fn claim_occurrence(home: &Path, system_prompt: &str, user_prompt: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    system_prompt.hash(&mut hasher);
    user_prompt.hash(&mut hasher);
    let key = hasher.finish();
    let dir = home.join("fake-claude.seen");
    let _ = std::fs::create_dir_all(&dir);
    (1..)
        .find(|n| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dir.join(format!("{key:016x}-{n}")))
                .is_ok()
        })
        .unwrap()
}

fn rule_applies(rule: &Value, kind: &str, user_prompt: &str, occurrence: u64) -> bool {
    if let Some(wanted) = rule.get("kind").and_then(Value::as_str) {
        if wanted != kind {
            return false;
        }
    }
    let contains: Vec<&str> = match rule.get("contains") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !contains.iter().all(|c| user_prompt.contains(c)) {
        return false;
    }
    match rule.get("occurrences").and_then(Value::as_array) {
        Some(list) => list.iter().any(|n| n.as_u64() == Some(occurrence)),
        None => true,
    }
}

/// The answer to a selection question: the `select` entry naming the request, else `NO_TOOL`.
fn selection_answer(user_prompt: &str, select: &[Value]) -> String {
    let request = user_prompt
        .split("User request:\n")
        .nth(1)
        .unwrap_or("")
        .trim_end();
    let entry = select
        .iter()
        .find(|e| e.get("request").and_then(Value::as_str) == Some(request));
    let tool = entry
        .and_then(|e| e.get("tool"))
        .and_then(Value::as_str)
        .unwrap_or("NO_TOOL");
    let arguments = entry
        .and_then(|e| e.get("arguments"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    json!({"tool": tool, "arguments": arguments, "confidence": 0.9, "reason": "scripted by the fake"})
        .to_string()
}

/// The deterministic answer derived from the prompt.
fn derived_answer(kind: &str, user_prompt: &str) -> Value {
    if kind == "coherence" {
        coherence_answer(user_prompt)
    } else {
        tool_answer(user_prompt)
    }
}

/// The answer text: `value` (derived from the prompt, noisy in noise mode) with a script rule's
/// scores laid over it.
fn answer_for(mut value: Value, rule: Option<&Value>) -> String {
    if let Some(rule) = rule {
        apply_scores(&mut value, rule);
    }
    format!(
        "```json\n{}\n```",
        serde_json::to_string_pretty(&value).unwrap()
    )
}

fn apply_scores(answer: &mut Value, rule: &Value) {
    let default_why = rule
        .get("justification")
        .and_then(Value::as_str)
        .map(String::from);
    let scores = answer["scores"].as_object_mut().unwrap();
    let dimensions: Vec<String> = scores.keys().cloned().collect();
    let mut set = |dimension: &str, score: u64, why: Option<String>| {
        let why = why
            .or_else(|| default_why.clone())
            .unwrap_or_else(|| format!("Scripted {dimension} score {score}."));
        scores.insert(
            dimension.to_string(),
            json!({"score": score, "justification": why}),
        );
    };
    if let Some(all) = rule.get("all").and_then(Value::as_u64) {
        for dimension in &dimensions {
            set(dimension, all, None);
        }
    }
    if let Some(map) = rule.get("scores").and_then(Value::as_object) {
        for (dimension, entry) in map {
            let (score, why) = match entry {
                Value::Object(o) => (
                    o.get("score").and_then(Value::as_u64).unwrap_or(0),
                    o.get("justification")
                        .and_then(Value::as_str)
                        .map(String::from),
                ),
                other => (other.as_u64().unwrap_or(0), None),
            };
            set(dimension, score, why);
        }
    }
    if let Some(summary) = rule.get("summary").and_then(Value::as_str) {
        answer["summary"] = json!(summary);
    }
}

/// The description in a tool prompt: the text of the first `Label: "…"` line (it may run over
/// several lines), or the whole prompt when there is no such line.
fn extract_description(prompt: &str) -> String {
    let lines: Vec<&str> = prompt.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let starts_with_label = line.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        let Some(pos) = line.find(": \"").filter(|_| starts_with_label) else {
            continue;
        };
        let mut text = line[pos + 3..].to_string();
        let mut j = i;
        while !text.trim_end().ends_with('"') && j + 1 < lines.len() {
            j += 1;
            text.push('\n');
            text.push_str(lines[j]);
        }
        let text = text.trim_end();
        return text.strip_suffix('"').unwrap_or(text).to_string();
    }
    // A label line of its own, then the quoted text on the lines after it.
    for (i, line) in lines.iter().enumerate().skip(1) {
        if !(line.starts_with('"') && lines[i - 1].trim_end().ends_with(':')) {
            continue;
        }
        let mut text = line[1..].to_string();
        let mut j = i;
        while !text.trim_end().ends_with('"') && j + 1 < lines.len() {
            j += 1;
            text.push('\n');
            text.push_str(lines[j]);
        }
        let text = text.trim_end();
        return text.strip_suffix('"').unwrap_or(text).to_string();
    }
    prompt.to_string()
}

/// Scores that reward what TDQS rewards, so a longer, more specific description scores higher
/// and an empty one scores 1 everywhere.
fn tool_answer(user_prompt: &str) -> Value {
    let description = extract_description(user_prompt);
    let lower = description.to_lowercase();
    let words = description.split_whitespace().count() as u64;
    let hits = |keys: &[&str]| keys.iter().filter(|k| lower.contains(*k)).count() as u64;
    let scores: [(&str, u64); 5] = if words == 0 {
        [
            ("purpose_clarity", 1),
            ("usage_guidelines", 1),
            ("behavioral_transparency", 1),
            ("parameter_semantics", 1),
            ("conciseness_structure", 1),
        ]
    } else {
        [
            (
                "purpose_clarity",
                match words {
                    1..=3 => 2,
                    4..=9 => 3,
                    10..=24 => 4,
                    _ => 5,
                },
            ),
            (
                "usage_guidelines",
                (1 + hits(&[
                    "use when",
                    "use this",
                    "instead",
                    "do not",
                    "don't",
                    "prefer",
                    "only when",
                    "before",
                ]))
                .min(5),
            ),
            (
                "behavioral_transparency",
                (1 + hits(&[
                    "returns",
                    "read-only",
                    "error",
                    "fails",
                    "side effect",
                    "idempotent",
                    "rate limit",
                    "deletes",
                    "modifies",
                ]))
                .min(5),
            ),
            (
                "parameter_semantics",
                (1 + hits(&[
                    "parameter",
                    "argument",
                    "`",
                    "e.g.",
                    "for example",
                    "format",
                    "must be",
                    "defaults to",
                ]))
                .min(5),
            ),
            (
                "conciseness_structure",
                match words {
                    1..=3 => 2,
                    4..=9 => 3,
                    10..=150 => 5,
                    151..=300 => 4,
                    _ => 3,
                },
            ),
        ]
    };
    let mut map = Map::new();
    let mut total = 0;
    for (key, score) in scores {
        total += score;
        map.insert(
            key.into(),
            json!({"score": score, "justification": format!("The fake judged {words} words of description for {key}.")}),
        );
    }
    map.insert(
        "contextual_completeness".into(),
        json!({"score": (total / 5).clamp(1, 5), "justification": "The mean of the other dimensions."}),
    );
    let claims_read_only = user_prompt.contains("\"readOnlyHint\": true");
    let mutates = hits(&["delete", "remove", "create", "write", "update"]) > 0;
    json!({
        "scores": map,
        "annotation_contradiction": claims_read_only && mutates,
        "summary": format!("A deterministic fake answer for a description of {words} words."),
    })
}

/// The answer to a rewrite request of `tdqs-gate suggest`: the definition between the
/// `<tool-definition>` tags, revised as the script rule's `rewrite` says — `better` (default:
/// usage, behaviour and failure sentences appended to the description), `worse` (the
/// description cut to its first word), `params` (better, and every parameter described),
/// `rename` (better, and the name changed) or `reshape` (better, and a parameter added).
fn rewrite_answer(user_prompt: &str, rule: Option<&Value>) -> String {
    let start = user_prompt.find("<tool-definition>\n").map(|i| i + 18);
    let end = user_prompt.find("\n</tool-definition>");
    let mut tool: Value = match (start, end) {
        (Some(s), Some(e)) if s <= e => {
            serde_json::from_str(&user_prompt[s..e]).unwrap_or(Value::Null)
        }
        _ => Value::Null,
    };
    if !tool.is_object() {
        return "I could not find the definition.".to_string();
    }
    let how = rule
        .and_then(|r| r.get("rewrite"))
        .and_then(Value::as_str)
        .unwrap_or("better");
    let old = tool["description"]
        .as_str()
        .unwrap_or("")
        .trim()
        .to_string();
    if how == "worse" {
        let first = old.split_whitespace().next().unwrap_or("Tool").to_string();
        tool["description"] = json!(first);
    } else {
        tool["description"] = json!(format!(
            "{old} Use this when the task needs exactly this; use a sibling instead otherwise. \
             Returns the result as JSON and fails with an error for invalid input."
        ));
    }
    match how {
        "rename" => {
            let name = tool["name"].as_str().unwrap_or("tool").to_string();
            tool["name"] = json!(format!("{name}_v2"));
        }
        "reshape" => {
            tool["inputSchema"]["properties"]["verbose"] = json!({"type": "boolean"});
        }
        "params" => {
            if let Some(properties) = tool["inputSchema"]["properties"].as_object_mut() {
                for (name, schema) in properties.iter_mut() {
                    schema["description"] =
                        json!(format!("The `{name}` argument, e.g. as listed."));
                }
            }
        }
        _ => {}
    }
    format!(
        "```json\n{}\n```",
        serde_json::to_string_pretty(&json!({"tool": tool})).unwrap()
    )
}

fn coherence_answer(user_prompt: &str) -> Value {
    let tools = user_prompt
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            (l.starts_with("- ") || l.starts_with("* ")) && l != "- ..."
        })
        .count();
    let count_score = match tools {
        0 => 1,
        1..=2 => 4,
        3..=15 => 5,
        16..=25 => 3,
        26..=49 => 2,
        _ => 1,
    };
    let entry = |score: u64, why: &str| json!({"score": score, "justification": why});
    json!({
        "scores": {
            "disambiguation": entry(4, "The fake sees distinct names."),
            "naming_consistency": entry(4, "The fake sees one naming style."),
            "tool_count_appropriateness": entry(count_score, &format!("The fake counted {tools} tools.")),
            "completeness": entry(4, "The fake assumes the set is complete."),
        },
        "shadowing_risks": [],
        "summary": format!("A deterministic fake coherence answer for {tools} tools."),
    })
}
