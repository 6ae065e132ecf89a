//! A fake MCP server speaking Streamable HTTP on 127.0.0.1, for export tests.
//!
//! `fake-http-mcp-server [--port N] [--mode MODE] [--tools FILE] [--page-size N] [--log FILE]`
//! (the port also comes from `PORT`; 0 or none picks one, printed to stdout as `listening PORT`).
//!
//! The tools are the JSON array in FILE, sent byte for byte (key order as written); without a
//! file, two fixed tools. Modes:
//! - `json` (default): every answer is a JSON body;
//! - `sse`: every answer is an SSE stream (a priming event, a ping to the client, then the answer);
//! - `session`: JSON, and requests after `initialize` must carry the `Mcp-Session-Id` it gave;
//! - `expire`: like `session`, but `tools/list` gets 404 (the session is gone);
//! - `status-NNN`: every POST is answered with HTTP NNN;
//! - `stall`: `tools/list` gets an SSE stream that never sends its answer;
//! - `bad-sse`: `tools/list` gets an SSE event whose data is not JSON;
//! - `legacy`: the older HTTP+SSE transport: a POST to the URL gets 405, a GET opens the event
//!   stream whose `endpoint` event names `/messages?session=…`, where messages are posted
//!   (202) and answered on the stream;
//! - `modern`: answers `server/discover` (2026-07-28) and reads `_meta` on requests.
//!
//! `--log FILE` appends one line per request: `METHOD jsonrpc-method session=… version=…`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

const SESSION: &str = "session-7f3a";

/// Legacy mode: the open event stream answers are written to.
static LEGACY_STREAM: std::sync::OnceLock<Mutex<Option<TcpStream>>> = std::sync::OnceLock::new();

struct Config {
    mode: String,
    tools: String,
    page_size: usize,
    log: Option<String>,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let mut config = Config {
        mode: "json".into(),
        tools: r#"[{"name":"zeta","description":"Last by name, first in order.","inputSchema":{"type":"object","properties":{}}},{"name":"alpha","inputSchema":{"type":"object"},"description":"Keys out of the usual order."}]"#.into(),
        page_size: 0,
        log: None,
    };
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match arg.as_str() {
            "--port" => port = value.parse().expect("port"),
            "--mode" => config.mode = value,
            "--tools" => config.tools = std::fs::read_to_string(&value).expect("tools file"),
            "--page-size" => config.page_size = value.parse().expect("page size"),
            "--log" => config.log = Some(value),
            other => panic!("unknown argument {other}"),
        }
    }
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    println!("listening {}", listener.local_addr().expect("addr").port());
    std::io::stdout().flush().ok();
    eprintln!("fake-http-mcp-server: mode {}", config.mode);
    let config = Arc::new(config);
    let log = Arc::new(Mutex::new(()));
    let _ = LEGACY_STREAM.set(Mutex::new(None));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let config = config.clone();
        let log = log.clone();
        std::thread::spawn(move || {
            let _ = handle(stream, &config, &log);
        });
    }
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(stream: &TcpStream) -> std::io::Result<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Request {
        method,
        path,
        headers,
        body,
    })
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

fn sse_head(stream: &mut TcpStream, extra: &[(&str, &str)]) -> std::io::Result<()> {
    let mut head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n".to_string();
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.flush()
}

fn handle(mut stream: TcpStream, config: &Config, log: &Mutex<()>) -> std::io::Result<()> {
    let request = read_request(&stream)?;
    if request.method.is_empty() {
        // A connection that only checked the port is open.
        return Ok(());
    }
    let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let rpc_method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("-")
        .to_string();
    if let Some(path) = &config.log {
        let _guard = log.lock().unwrap();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        writeln!(
            file,
            "{} {} session={} version={} accept={} auth={}",
            request.method,
            rpc_method,
            request.header("mcp-session-id").unwrap_or("-"),
            request.header("mcp-protocol-version").unwrap_or("-"),
            request.header("accept").unwrap_or("-").replace(' ', ""),
            request
                .header("authorization")
                .unwrap_or("-")
                .replace(' ', "_"),
        )?;
    }
    let sessions = matches!(config.mode.as_str(), "session" | "expire");
    let legacy = config.mode == "legacy";
    if legacy && request.method == "GET" {
        sse_head(&mut stream, &[])?;
        stream.write_all(b"event: endpoint\ndata: /messages?session=legacy-1\n\n")?;
        stream.flush()?;
        *LEGACY_STREAM.get().unwrap().lock().unwrap() = Some(stream);
        return Ok(());
    }
    if legacy && request.method == "POST" && !request.path.starts_with("/messages") {
        return respond(&mut stream, 405, &[], "");
    }
    if request.method == "DELETE" {
        return respond(&mut stream, if sessions { 200 } else { 405 }, &[], "");
    }
    if request.method != "POST" {
        return respond(&mut stream, 405, &[], "");
    }
    if let Some(code) = config.mode.strip_prefix("status-") {
        let code: u16 = code.parse().expect("status");
        return respond(
            &mut stream,
            code,
            &[("Content-Type", "text/plain")],
            "no MCP here for you",
        );
    }
    // As the TypeScript SDK's servers do: a request before `initialize` is an HTTP 400.
    if sessions && rpc_method == "server/discover" {
        return respond(
            &mut stream,
            400,
            &[],
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#,
        );
    }
    if sessions && rpc_method != "initialize" {
        let ok = request.header("mcp-session-id") == Some(SESSION);
        if !ok || (config.mode == "expire" && rpc_method == "tools/list") {
            return respond(&mut stream, 404, &[], "session not found");
        }
    }
    let Some(id) = message.get("id").cloned() else {
        // A notification or a response: accepted.
        return respond(&mut stream, 202, &[], "");
    };
    if message.get("method").is_none() {
        return respond(&mut stream, 202, &[], "");
    }
    let answer = match rpc_method.as_str() {
        "initialize" => {
            let version = message["params"]["protocolVersion"].clone();
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":{version},"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"fake-http","version":"1.0.0"}}}}}}"#
            )
        }
        "server/discover" if config.mode == "modern" => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"fake-http","version":"1.0.0"}}}}}}"#
        ),
        "tools/list" => {
            if config.mode == "modern"
                && message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
                    != json!("2026-07-28")
            {
                return respond(&mut stream, 400, &[], "missing _meta");
            }
            tools_page(config, &message, &id)
        }
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"Method not found"}}}}"#
        ),
    };
    if legacy {
        if let Some(events) = LEGACY_STREAM.get().unwrap().lock().unwrap().as_mut() {
            events.write_all(format!("event: message\ndata: {answer}\n\n").as_bytes())?;
            events.flush()?;
        }
        return respond(&mut stream, 202, &[], "");
    }
    let mut extra: Vec<(&str, &str)> = Vec::new();
    if sessions && rpc_method == "initialize" {
        extra.push(("Mcp-Session-Id", SESSION));
    }
    let streamed = config.mode == "sse"
        || (rpc_method == "tools/list" && matches!(config.mode.as_str(), "stall" | "bad-sse"));
    if !streamed {
        extra.push(("Content-Type", "application/json"));
        return respond(&mut stream, 200, &extra, &answer);
    }
    sse_head(&mut stream, &extra)?;
    stream.write_all(b"id: prime-1\ndata:\n\n: a comment\n\n")?;
    match config.mode.as_str() {
        "stall" => {
            stream.flush()?;
            std::thread::sleep(Duration::from_secs(120));
            return Ok(());
        }
        "bad-sse" => {
            stream.write_all(b"event: message\ndata: this is not json\n\n")?;
            stream.flush()?;
            std::thread::sleep(Duration::from_secs(120));
            return Ok(());
        }
        _ => {}
    }
    stream.write_all(
        b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n",
    )?;
    // The answer split over two data lines, as SSE allows.
    // Split after a comma between members: the line break is JSON whitespace there.
    let cut = answer.find("},").map_or(answer.len(), |at| at + 2);
    let (first, second) = answer.split_at(cut);
    stream.write_all(
        format!("event: message\r\ndata: {first}\r\ndata: {second}\r\n\r\n").as_bytes(),
    )?;
    stream.flush()
}

/// The tools page asked for: all tools (the file's text as written), or `page_size` of them with
/// a cursor.
fn tools_page(config: &Config, message: &Value, id: &Value) -> String {
    let meta = if config.mode == "modern" {
        r#","resultType":"complete""#
    } else {
        ""
    };
    if config.page_size == 0 {
        return format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{}{meta}}}}}"#,
            config.tools.trim()
        );
    }
    // serde_json keeps key order here (preserve_order).
    let tools: Vec<Value> = serde_json::from_str(&config.tools).expect("tools array");
    let start: usize = message["params"]["cursor"]
        .as_str()
        .and_then(|c| c.strip_prefix("page-"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let end = (start + config.page_size).min(tools.len());
    let items: Vec<String> = tools[start..end].iter().map(Value::to_string).collect();
    let next = if end < tools.len() {
        format!(r#","nextCursor":"page-{end}""#)
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]{next}{meta}}}}}"#,
        items.join(",")
    )
}
