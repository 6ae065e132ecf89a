//! A loopback HTTP/1.1 server for tests: it answers from a script and records every request.
//!
//! Bound to 127.0.0.1 on a free port; nothing here reaches the network. Each connection serves
//! one request and is closed (`connection: close`), so clients never race a reused socket.
//! Responses come from a [`Script`] (per method and path, in order, the last one repeating) or from
//! any closure.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Requests whose head exceeds this are answered 431 and closed.
const MAX_HEAD_BYTES: usize = 1024 * 1024;

/// One request as the stub received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target as sent: path and query.
    pub target: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics with the body when it is not JSON.
    pub fn body_json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("request body is not JSON ({e}): {}", self.body_text()))
    }

    /// Every header line and the body, for asserting that a secret appears nowhere.
    pub fn raw_text(&self) -> String {
        let mut out = format!("{} {}\n", self.method, self.target);
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\n"));
        }
        out.push_str(&self.body_text());
        out
    }
}

/// What the stub does with one request.
#[derive(Debug, Clone)]
pub struct StubResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Waits this long before answering (to exercise client timeouts).
    pub delay: Duration,
    /// Closes the connection without answering (a reset mid-request).
    pub hang_up: bool,
}

impl StubResponse {
    pub fn new(status: u16) -> Self {
        StubResponse {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
            hang_up: false,
        }
    }

    pub fn json(status: u16, value: &Value) -> Self {
        Self::new(status)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(value).expect("serialisable"))
    }

    pub fn text(status: u16, text: &str) -> Self {
        Self::new(status)
            .header("content-type", "text/plain; charset=utf-8")
            .body(text.as_bytes().to_vec())
    }

    /// Closes the connection without a response.
    pub fn hang_up() -> Self {
        StubResponse {
            hang_up: true,
            ..Self::new(0)
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

pub type Handler = Arc<dyn Fn(&RecordedRequest) -> StubResponse + Send + Sync>;

/// Responses per method and path, served in order; the last one of a route repeats. A request no
/// route matches gets a 404 naming it, so a wrong path fails loudly.
#[derive(Debug, Clone, Default)]
pub struct Script {
    routes: HashMap<(String, String), Vec<StubResponse>>,
}

impl Script {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds responses for `method path` (path without query).
    pub fn on(mut self, method: &str, path: &str, responses: Vec<StubResponse>) -> Self {
        assert!(!responses.is_empty(), "a route needs at least one response");
        self.routes
            .entry((method.to_ascii_uppercase(), path.to_string()))
            .or_default()
            .extend(responses);
        self
    }

    fn into_handler(self) -> Handler {
        let routes = Mutex::new(self.routes);
        Arc::new(move |request: &RecordedRequest| {
            let mut routes = routes.lock().unwrap_or_else(|e| e.into_inner());
            let key = (request.method.clone(), request.path().to_string());
            match routes.get_mut(&key) {
                Some(queue) if queue.len() > 1 => queue.remove(0),
                Some(queue) => queue[0].clone(),
                None => StubResponse::text(
                    404,
                    &format!(
                        "http_stub: no route for {} {}",
                        request.method, request.target
                    ),
                ),
            }
        })
    }
}

/// A running stub server; stopped when dropped.
pub struct HttpStub {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    task: JoinHandle<()>,
}

impl HttpStub {
    /// Serves `script`.
    pub async fn start(script: Script) -> Self {
        Self::with_handler(script.into_handler()).await
    }

    /// Serves whatever `handler` returns for each request.
    pub async fn with_handler(handler: Handler) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let handler = Arc::clone(&handler);
                let recorded = Arc::clone(&recorded);
                tokio::spawn(async move {
                    serve_connection(stream, handler, recorded).await;
                });
            }
        });
        HttpStub {
            addr,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The requests for one path (query ignored).
    pub fn requests_to(&self, path: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path() == path)
            .collect()
    }
}

impl Drop for HttpStub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A loopback address where nothing listens: the port of a listener that was just closed.
pub async fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{addr}")
}

async fn serve_connection(
    mut stream: TcpStream,
    handler: Handler,
    recorded: Arc<Mutex<Vec<RecordedRequest>>>,
) {
    let Some(request) = read_request(&mut stream).await else {
        let _ = stream
            .write_all(
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            )
            .await;
        return;
    };
    recorded
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(request.clone());
    let response = handler(&request);
    if !response.delay.is_zero() {
        tokio::time::sleep(response.delay).await;
    }
    if response.hang_up {
        let _ = stream.shutdown().await;
        return;
    }
    let mut head = format!(
        "HTTP/1.1 {} {}\r\ncontent-length: {}\r\nconnection: close\r\n",
        response.status,
        reason(response.status),
        response.body.len()
    );
    for (k, v) in &response.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&response.body).await;
    let _ = stream.flush().await;
    let _ = stream.shutdown().await;
}

async fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return None;
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut rest = buf[head_end + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_string();
    let target = request_line.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body = if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        read_chunked(stream, rest).await?
    } else {
        let length: usize = header("content-length")
            .map(|v| v.parse().ok())
            .unwrap_or(Some(0))?;
        while rest.len() < length {
            let mut chunk = vec![0u8; (length - rest.len()).min(65536)];
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            rest.extend_from_slice(&chunk[..n]);
        }
        rest.truncate(length);
        rest
    };
    Some(RecordedRequest {
        method,
        target,
        headers,
        body,
    })
}

async fn read_chunked(stream: &mut TcpStream, mut buf: Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(pos) = find(&buf, b"\r\n") {
                break pos;
            }
            fill(stream, &mut buf).await?;
        };
        let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        buf.drain(..line_end + 2);
        while buf.len() < size + 2 {
            fill(stream, &mut buf).await?;
        }
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
    }
}

async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<()> {
    let mut chunk = [0u8; 8192];
    let n = stream.read(&mut chunk).await.ok()?;
    if n == 0 {
        return None;
    }
    buf.extend_from_slice(&chunk[..n]);
    Some(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
