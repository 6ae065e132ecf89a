//! A loopback stand-in for the Anthropic Messages API, enough for the real Claude Code CLI to run
//! a print-mode call against it (through `ANTHROPIC_BASE_URL`):
//!
//! - `HEAD /api/hello` (the CLI's preconnect) answers 200;
//! - `POST /v1/messages?beta=true` answers with the next scripted [`ApiReply`]: either a streamed
//!   message (server-sent events `message_start`, `content_block_start`, `content_block_delta`,
//!   `content_block_stop`, `message_delta`, `message_stop`) from a chosen model, or an HTTP error
//!   with the API's error body;
//! - anything else answers 404 and is recorded, so a test can see unexpected traffic.
//!
//! Every request is recorded with its headers and JSON body. One thread per connection; each
//! response closes its connection, which keeps the HTTP handling minimal.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

/// What the stand-in answers to one `POST /v1/messages`.
#[derive(Debug, Clone)]
pub enum ApiReply {
    /// A streamed text answer that says it came from `model`.
    Answer { model: String, text: String },
    /// An HTTP error with the API's error body.
    Error {
        status: u16,
        kind: String,
        message: String,
    },
}

impl ApiReply {
    pub fn answer(model: &str, text: &str) -> Self {
        ApiReply::Answer {
            model: model.into(),
            text: text.into(),
        }
    }

    pub fn overloaded() -> Self {
        ApiReply::Error {
            status: 529,
            kind: "overloaded_error".into(),
            message: "Overloaded (stand-in)".into(),
        }
    }
}

/// One request the stand-in received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<ApiReply>,
    fallback: Option<ApiReply>,
    requests: Vec<Recorded>,
    served: u64,
}

pub struct MessagesApi {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl MessagesApi {
    /// Starts on an ephemeral loopback port; `fallback` answers once the script is used up.
    pub fn start(fallback: ApiReply) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stand-in API");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            fallback: Some(fallback),
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let state = Arc::clone(&state);
                    std::thread::spawn(move || {
                        let _ = serve(stream, &state);
                    });
                }
            })
        };
        MessagesApi {
            addr,
            state,
            stop,
            acceptor: Some(acceptor),
        }
    }

    /// Queues replies that come before the fallback, in order.
    pub fn script(&self, replies: impl IntoIterator<Item = ApiReply>) {
        self.state.lock().unwrap().script.extend(replies);
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The `POST /v1/messages` requests only.
    pub fn message_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path.starts_with("/v1/messages"))
            .collect()
    }
}

impl Drop for MessagesApi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocking accept so the thread sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
    }
}

fn serve(stream: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(());
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let body = serde_json::from_slice::<Value>(&body).ok();

    let reply = {
        let mut state = state.lock().unwrap();
        state.requests.push(Recorded {
            method: method.clone(),
            path: path.clone(),
            headers,
            body: body.clone(),
        });
        if method == "POST" && path.starts_with("/v1/messages") {
            state.served += 1;
            let next = state.script.pop_front().or_else(|| state.fallback.clone());
            next.map(|r| (r, state.served))
        } else {
            None
        }
    };

    let mut out = stream;
    match (method.as_str(), path.as_str(), reply) {
        ("HEAD", p, _) if p.starts_with("/api/hello") => {
            out.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
        }
        (_, _, Some((ApiReply::Answer { model, text }, n))) => {
            let input_tokens = body
                .as_ref()
                .map(|b| b.to_string().len() as u64 / 4)
                .unwrap_or(0);
            write_stream(&mut out, n, &model, &text, input_tokens)?;
        }
        (
            _,
            _,
            Some((
                ApiReply::Error {
                    status,
                    kind,
                    message,
                },
                n,
            )),
        ) => {
            let body = json!({"type": "error", "error": {"type": kind, "message": message},
                "request_id": format!("req_standin_{n}")})
            .to_string();
            write!(
                out,
                "HTTP/1.1 {status} Stand-in Error\r\nContent-Type: application/json\r\nrequest-id: req_standin_{n}\r\nretry-after-ms: 20\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )?;
        }
        _ => {
            let body = r#"{"type":"error","error":{"type":"not_found_error","message":"not served by the stand-in"}}"#;
            write!(
                out,
                "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )?;
        }
    }
    out.flush()?;
    let _ = out.shutdown(std::net::Shutdown::Both);
    Ok(())
}

/// The server-sent events of one streamed text message.
fn write_stream(
    out: &mut TcpStream,
    n: u64,
    model: &str,
    text: &str,
    input_tokens: u64,
) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nrequest-id: req_standin_{n}\r\nConnection: close\r\n\r\n"
    )?;
    let output_tokens = (text.len() as u64 / 4).max(1);
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": format!("msg_standin_{n}"), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    // Several deltas, as a real stream sends, so the CLI has to join them.
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(64) {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": piece.iter().collect::<String>()}}),
        ));
    }
    events.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"output_tokens": output_tokens}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    for (name, data) in events {
        write!(out, "event: {name}\ndata: {data}\n\n")?;
    }
    Ok(())
}
