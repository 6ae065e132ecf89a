//! A scriptable MCP stdio server for the export tests.
//!
//! Written in Rust (std + serde_json + libc) rather than as a script so the tests need no
//! interpreter and behave the same everywhere. Behaviour is chosen with `--mode` and refined
//! with options; every mode speaks newline-delimited JSON-RPC 2.0 on stdin/stdout.
//!
//! Modes:
//! - `normal`: answers `initialize` and `tools/list` (one page).
//! - `paginated`: `--page-size` tools per page (default 2), cursors `page-2`, `page-3`, ….
//! - `slow-start`: sleeps `--delay-ms` (default 1500) before reading stdin.
//! - `hang`: never answers `--hang-on` (default `initialize`).
//! - `crash`: on `--crash-on` (default `initialize`) writes `--stderr` text to stderr and exits
//!   with `--exit-code` (default 3), or kills itself with SIGSEGV with `--crash-signal`.
//! - `junk-stdout`: surrounds its answers with a banner, log lines, blank lines, `\r\n` endings,
//!   a byte-order mark, JSON that is not a message, a stray response and notifications.
//! - `huge-output`: adds a tool whose description is `--huge-bytes` long (default 1 MiB); with
//!   `--no-newline` it instead streams bytes without a newline until killed.
//! - `duplicate-names`: lists two tools with the same name.
//! - `looping-cursor`: every page's `nextCursor` is `"same"`.
//! - `grandchild-ignores-term`: starts a grandchild (this binary in `sleeper` mode, which writes
//!   its pid to `--grandchild-pid-file`), ignores SIGTERM and stdin end-of-file itself.
//! - `jsonrpc-error`: answers `--error-on` (default `tools/list`) with error -32603.
//! - `modern`: a dual-era server like the Python SDK 2.x: answers `server/discover` the
//!   2026-07-28 way (the connection is then modern-only and `initialize` gets -32022), or
//!   `initialize` if that comes first.
//! - `malformed`: `--malformed tools|cursor|version|result` breaks that part of an answer;
//!   `--malformed null-id` answers `tools/list` with an error whose id is null.
//! - `raw-answer`: `--raw nan|huge-number|invalid-utf8|lone-surrogate` answers `tools/list`
//!   with a line that is that kind of broken (or, for `lone-surrogate`, questionable) JSON;
//!   `--raw duplicate` answers `initialize` twice.
//! - `sleeper` (internal): the grandchild; writes its pid, ignores SIGTERM, sleeps.
//!
//! Options usable with any mode: `--tools FILE` (a JSON array of tool objects to serve instead
//! of the built-in three), `--pid-file FILE` (own pid), `--record FILE` (every received line is
//! appended), `--env-dump FILE` (cwd and environment as JSON), `--answer-version V`,
//! `--server-requests` (sends `ping` and `roots/list` before answering `tools/list` and checks
//! the replies), `--list-changed`, `--ignore-term`, `--ignore-eof`, `--discover-silent` (never
//! answers `server/discover`), `--stderr TEXT` (written at start-up too).

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

const MODERN: &str = "2026-07-28";
const LEGACY_KNOWN: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[derive(Default)]
struct Options {
    mode: String,
    tools_file: Option<String>,
    page_size: Option<usize>,
    delay_ms: u64,
    hang_on: Option<String>,
    crash_on: Option<String>,
    exit_code: i32,
    crash_signal: bool,
    stderr_text: Option<String>,
    huge_bytes: usize,
    no_newline: bool,
    error_on: Option<String>,
    malformed: Option<String>,
    raw: Option<String>,
    pid_file: Option<String>,
    grandchild_pid_file: Option<String>,
    record: Option<String>,
    env_dump: Option<String>,
    answer_version: Option<String>,
    server_requests: bool,
    list_changed: bool,
    ignore_term: bool,
    ignore_eof: bool,
    discover_silent: bool,
}

fn parse_options() -> Options {
    let mut o = Options {
        mode: "normal".into(),
        exit_code: 3,
        huge_bytes: 1 << 20,
        ..Options::default()
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| fail(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--mode" => o.mode = value(),
            "--tools" => o.tools_file = Some(value()),
            "--page-size" => o.page_size = Some(number(&value())),
            "--delay-ms" => o.delay_ms = number(&value()) as u64,
            "--hang-on" => o.hang_on = Some(value()),
            "--crash-on" => o.crash_on = Some(value()),
            "--exit-code" => o.exit_code = number(&value()) as i32,
            "--crash-signal" => o.crash_signal = true,
            "--stderr" => o.stderr_text = Some(value()),
            "--huge-bytes" => o.huge_bytes = number(&value()),
            "--no-newline" => o.no_newline = true,
            "--error-on" => o.error_on = Some(value()),
            "--malformed" => o.malformed = Some(value()),
            "--raw" => o.raw = Some(value()),
            "--pid-file" => o.pid_file = Some(value()),
            "--grandchild-pid-file" => o.grandchild_pid_file = Some(value()),
            "--record" => o.record = Some(value()),
            "--env-dump" => o.env_dump = Some(value()),
            "--answer-version" => o.answer_version = Some(value()),
            "--server-requests" => o.server_requests = true,
            "--list-changed" => o.list_changed = true,
            "--ignore-term" => o.ignore_term = true,
            "--ignore-eof" => o.ignore_eof = true,
            "--discover-silent" => o.discover_silent = true,
            other => fail(&format!("unknown argument {other}")),
        }
    }
    match o.mode.as_str() {
        "paginated" => {
            o.page_size.get_or_insert(2);
        }
        "slow-start" if o.delay_ms == 0 => o.delay_ms = 1500,
        "hang" => {
            o.hang_on.get_or_insert_with(|| "initialize".into());
        }
        "crash" => {
            o.crash_on.get_or_insert_with(|| "initialize".into());
        }
        "grandchild-ignores-term" => {
            o.ignore_term = true;
            o.ignore_eof = true;
        }
        "jsonrpc-error" => {
            o.error_on.get_or_insert_with(|| "tools/list".into());
        }
        "malformed" => {
            o.malformed.get_or_insert_with(|| "tools".into());
        }
        _ => {}
    }
    o
}

fn number(text: &str) -> usize {
    text.parse()
        .unwrap_or_else(|_| fail(&format!("not a number: {text}")))
}

fn fail(message: &str) -> ! {
    eprintln!("fake-mcp-server: {message}");
    std::process::exit(64);
}

fn ignore_sigterm() {
    // SAFETY: installing SIG_IGN for SIGTERM has no preconditions.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
}

fn write_file(path: &str, text: &str) {
    // Written whole then renamed, so a test polling the file never reads half of it.
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, text).unwrap_or_else(|e| fail(&format!("write {tmp}: {e}")));
    std::fs::rename(&tmp, path).unwrap_or_else(|e| fail(&format!("rename {tmp}: {e}")));
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn default_tools() -> Vec<Value> {
    // Key order and the unknown fields (`execution`, `x-vendor`, `annotations.futureHint`) are
    // deliberate: the exporter must keep them exactly as sent.
    vec![
        json!({
            "name": "search_issues",
            "title": "Search issues",
            "description": "Search the issue tracker by text. Returns at most `limit` issues, newest first.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
                },
                "required": ["query"]
            },
            "annotations": {"readOnlyHint": true, "futureHint": "kept"},
            "execution": {"taskSupport": "forbidden"}
        }),
        json!({
            "description": "Close an issue by number. Fails if it is already closed.",
            "name": "close_issue",
            "inputSchema": {
                "type": "object",
                "properties": {"number": {"type": "integer"}},
                "required": ["number"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"closed": {"type": "boolean"}, "at": {"type": "string"}}
            },
            "annotations": {"destructiveHint": false, "idempotentHint": true},
            "x-vendor": {"weight": 1.50, "big": 12345678901234567890u64}
        }),
        json!({
            "name": "ping_tracker",
            "description": null,
            "inputSchema": {"type": "object"}
        }),
    ]
}

struct Server {
    o: Options,
    tools: Vec<Value>,
    out: std::io::Stdout,
    initialized: bool,
    initialized_notified: bool,
    modern_only: bool,
    junk_sent: bool,
    pending_server_requests: BTreeMap<String, String>,
    /// A `tools/list` request waiting for the server's own requests to be answered.
    parked_list: Option<Value>,
}

impl Server {
    fn send(&mut self, message: &Value) {
        let ending = if self.o.mode == "junk-stdout" {
            "\r\n"
        } else {
            "\n"
        };
        let mut lock = self.out.lock();
        let text = message.to_string();
        let ok = write!(lock, "{text}{ending}").and_then(|()| lock.flush());
        if ok.is_err() {
            // The client closed our stdout; nothing more can be said.
            std::process::exit(0);
        }
    }

    fn send_raw(&mut self, text: &str) {
        let mut lock = self.out.lock();
        let _ = lock.write_all(text.as_bytes()).and_then(|()| lock.flush());
    }

    fn result(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&mut self, id: &Value, code: i64, message: &str, data: Option<Value>) {
        let mut error = json!({"code": code, "message": message});
        if let Some(data) = data {
            error["data"] = data;
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    fn junk_before_first_answer(&mut self) {
        if self.o.mode != "junk-stdout" || self.junk_sent {
            return;
        }
        self.junk_sent = true;
        self.send_raw("Fake MCP server 1.2.3 starting on stdio...\n");
        self.send_raw("\n   \n");
        self.send_raw("42\n");
        self.send_raw("{\"not\": \"a message\"}\n");
        self.send_raw("[INFO] loaded 3 tools\r\n");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "hello"}}));
        self.send(&json!({"jsonrpc": "2.0", "id": 9999, "result": {"stray": true}}));
        // A byte-order mark in front of the next real message.
        self.send_raw("\u{feff}");
    }

    fn handle(&mut self, line: &str) {
        let message: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => fail(&format!("client sent non-JSON: {line}")),
        };
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let id = message.get("id").cloned();
        let Some(method) = method else {
            self.handle_reply(&message);
            return;
        };
        if self.o.crash_on.as_deref() == Some(method.as_str()) {
            let text =
                self.o.stderr_text.clone().unwrap_or_else(|| {
                    "fatal: could not open database /nonexistent/fake.db".into()
                });
            eprintln!("{text}");
            eprintln!("fake-mcp-server: giving up");
            if self.o.crash_signal {
                // SAFETY: restoring the default action and raising a signal in this process.
                unsafe {
                    libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                    libc::raise(libc::SIGSEGV);
                }
            }
            std::process::exit(self.o.exit_code);
        }
        let Some(id) = id else {
            if method == "notifications/initialized" {
                self.initialized_notified = true;
            }
            return;
        };
        if self.o.hang_on.as_deref() == Some(method.as_str()) {
            return;
        }
        if self.o.error_on.as_deref() == Some(method.as_str()) {
            self.error(
                &id,
                -32603,
                "internal error: tool registry unavailable",
                Some(json!({"retryAfter": 5})),
            );
            return;
        }
        self.junk_before_first_answer();
        match method.as_str() {
            "initialize" => self.initialize(&id, &message),
            "server/discover" => self.discover(&id, &message),
            "tools/list" => {
                if self.o.server_requests && self.parked_list.is_none() && !self.pending_done() {
                    self.parked_list = Some(message.clone());
                    self.pending_server_requests
                        .insert("srv-ping".into(), "ping".into());
                    self.pending_server_requests
                        .insert("srv-roots".into(), "roots/list".into());
                    self.send(&json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}));
                    self.send(
                        &json!({"jsonrpc": "2.0", "id": "srv-roots", "method": "roots/list"}),
                    );
                    return;
                }
                self.tools_list(&id, &message);
            }
            "tools/call" => fail("the client sent tools/call, which an exporter must never do"),
            _ => self.error(&id, -32601, "Method not found", None),
        }
    }

    fn pending_done(&self) -> bool {
        self.parked_list.is_some() && self.pending_server_requests.is_empty()
    }

    fn handle_reply(&mut self, message: &Value) {
        let id = message.get("id").and_then(Value::as_str).unwrap_or("");
        let Some(method) = self.pending_server_requests.remove(id) else {
            fail(&format!("unexpected reply from the client: {message}"));
        };
        let ok = match method.as_str() {
            "ping" => message.get("result") == Some(&json!({})),
            _ => message.pointer("/error/code") == Some(&json!(-32601)),
        };
        if !ok {
            fail(&format!("bad reply to {method}: {message}"));
        }
        if self.pending_server_requests.is_empty() {
            if let Some(parked) = self.parked_list.take() {
                let id = parked.get("id").cloned().unwrap_or(Value::Null);
                self.tools_list(&id, &parked);
            }
        }
    }

    fn initialize(&mut self, id: &Value, message: &Value) {
        if self.modern_only {
            self.error(
                id,
                -32022,
                "this connection is serving the 2026-07-28 protocol",
                Some(json!({"supported": [MODERN], "requested": "initialize"})),
            );
            return;
        }
        let requested = message
            .pointer("/params/protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let answer = match &self.o.answer_version {
            Some(v) => v.clone(),
            None if LEGACY_KNOWN.contains(&requested) => requested.to_string(),
            None => "2025-11-25".into(),
        };
        self.initialized = true;
        let mut result = json!({
            "protocolVersion": answer,
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "fake-mcp-server", "version": "1.2.3"},
            "instructions": "Fake server for the tdqs-gate tests."
        });
        if self.o.malformed.as_deref() == Some("version") {
            result["protocolVersion"] = json!(20251125);
        }
        if self.o.raw.as_deref() == Some("duplicate") {
            self.result(id, result.clone());
        }
        self.result(id, result);
    }

    fn discover(&mut self, id: &Value, message: &Value) {
        if self.o.discover_silent {
            return;
        }
        if self.o.mode != "modern" {
            self.error(id, -32601, "Method not found", None);
            return;
        }
        let requested = message
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if requested != MODERN {
            self.error(
                id,
                -32022,
                "unsupported protocol version",
                Some(json!({"supported": [MODERN], "requested": requested})),
            );
            return;
        }
        self.modern_only = true;
        self.result(
            id,
            json!({
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-modern", "version": "2.0.0"}},
                "instructions": "Modern fake."
            }),
        );
    }

    fn tools_list(&mut self, id: &Value, message: &Value) {
        if self.modern_only {
            let version = message
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .and_then(Value::as_str);
            if version != Some(MODERN) {
                self.error(id, -32602, "missing _meta protocol version", None);
                return;
            }
        } else if !(self.initialized && self.initialized_notified) {
            self.error(id, -32002, "server not initialized", None);
            return;
        }
        if self.o.list_changed {
            self.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
        }
        if self.o.mode == "huge-output" && self.o.no_newline {
            let chunk = vec![b'x'; 64 * 1024];
            let mut lock = self.out.lock();
            loop {
                if lock.write_all(&chunk).is_err() {
                    std::process::exit(0);
                }
            }
        }
        if let Some(raw) = self.o.raw.clone().filter(|r| r != "duplicate") {
            let description: &[u8] = match raw.as_str() {
                "nan" => br#""x","inputSchema":{"type":"object","default":NaN}"#,
                "huge-number" => br#""x","inputSchema":{"type":"object","maximum":1e400}"#,
                "invalid-utf8" => b"\"cut \xff\xfe here\",\"inputSchema\":{\"type\":\"object\"}",
                "lone-surrogate" => br#""cut \ud83d","inputSchema":{"type":"object"}"#,
                other => fail(&format!("unknown --raw {other}")),
            };
            let mut line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"a","description":"#
            )
            .into_bytes();
            line.extend_from_slice(description);
            line.extend_from_slice(b"}]}}\n");
            let mut lock = self.out.lock();
            let _ = lock.write_all(&line).and_then(|()| lock.flush());
            return;
        }
        let cursor = message.pointer("/params/cursor").and_then(Value::as_str);
        let mut result = if self.o.mode == "looping-cursor" {
            json!({"tools": [self.tools[0].clone()], "nextCursor": "same"})
        } else if let Some(size) = self.o.page_size {
            let page: usize = match cursor {
                None => 1,
                Some(c) => c
                    .strip_prefix("page-")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| fail(&format!("unknown cursor {c}"))),
            };
            let start = (page - 1) * size;
            let chunk: Vec<Value> = self.tools.iter().skip(start).take(size).cloned().collect();
            let mut result = json!({ "tools": chunk });
            if start + size < self.tools.len() {
                result["nextCursor"] = json!(format!("page-{}", page + 1));
            }
            result
        } else {
            json!({ "tools": self.tools })
        };
        if self.o.malformed.as_deref() == Some("null-id") {
            self.send(&json!({"jsonrpc": "2.0", "id": null,
                              "error": {"code": -32700, "message": "Parse error"}}));
            return;
        }
        match self.o.malformed.as_deref() {
            Some("tools") => result["tools"] = json!({"search_issues": {}}),
            Some("cursor") => result["nextCursor"] = json!(42),
            Some("result") => result = json!("tools"),
            _ => {}
        }
        if self.modern_only {
            result["resultType"] = json!("complete");
        }
        self.result(id, result);
    }
}

fn main() {
    let o = parse_options();
    if let Some(path) = &o.pid_file {
        write_file(path, &std::process::id().to_string());
    }
    if o.mode == "sleeper" {
        ignore_sigterm();
        sleep_forever();
    }
    if o.ignore_term {
        ignore_sigterm();
    }
    if let Some(path) = &o.env_dump {
        let env: BTreeMap<String, String> = std::env::vars().collect();
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        write_file(path, &json!({"cwd": cwd, "env": env}).to_string());
    }
    if let Some(text) = &o.stderr_text {
        eprintln!("{text}");
    }
    if let Some(path) = &o.grandchild_pid_file {
        let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("current_exe: {e}")));
        // Never waited for on purpose: it stands for the real server under `npx`/`sh`, which the
        // exporter must kill through the process group.
        #[expect(
            clippy::zombie_processes,
            reason = "the grandchild must outlive this process"
        )]
        let _grandchild = Command::new(exe)
            .args(["--mode", "sleeper", "--pid-file", path])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| fail(&format!("spawn grandchild: {e}")));
        // Wait until the grandchild is really there, so a test never races its start.
        for _ in 0..500 {
            if std::path::Path::new(path).exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    if o.delay_ms > 0 {
        std::thread::sleep(Duration::from_millis(o.delay_ms));
    }
    let mut tools = match &o.tools_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|e| fail(&format!("read {path}: {e}")));
            match serde_json::from_str(&text) {
                Ok(Value::Array(tools)) => tools,
                _ => fail(&format!("{path} is not a JSON array of tools")),
            }
        }
        None => default_tools(),
    };
    match o.mode.as_str() {
        "duplicate-names" => {
            let mut twin = tools[0].clone();
            twin["description"] = json!("A second tool with the same name.");
            tools.push(twin);
        }
        "huge-output" if !o.no_newline => tools.push(json!({
            "name": "huge",
            "description": "y".repeat(o.huge_bytes),
            "inputSchema": {"type": "object"}
        })),
        _ => {}
    }
    let mut server = Server {
        tools,
        out: std::io::stdout(),
        initialized: false,
        initialized_notified: false,
        modern_only: false,
        junk_sent: false,
        pending_server_requests: BTreeMap::new(),
        parked_list: None,
        o,
    };
    let mut record = server.o.record.as_ref().map(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap_or_else(|e| fail(&format!("open {path}: {e}")))
    });
    let stdin = std::io::stdin();
    let mut line = String::new();
    loop {
        line.clear();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let trimmed = line.trim_end_matches(['\n', '\r']);
        if let Some(file) = record.as_mut() {
            let _ = writeln!(file, "{trimmed}");
        }
        if !trimmed.is_empty() {
            server.handle(trimmed);
        }
    }
    if server.o.ignore_eof {
        sleep_forever();
    }
}
