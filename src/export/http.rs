//! The Streamable HTTP transport of MCP, as the export client uses it.
//!
//! Every client message is a `POST` to the endpoint with `Accept: application/json,
//! text/event-stream`. The server answers `202 Accepted` (notifications and responses), a JSON
//! body (one message or a batch), or an SSE stream whose `message` events each carry one
//! JSON-RPC message. A `Mcp-Session-Id` header on the answer to `initialize` is sent back on
//! every later request, and the session is `DELETE`d when the export ends. After the handshake
//! every request carries `MCP-Protocol-Version`.
//!
//! Answers are handed to the client as "lines" (one JSON text each), so the same session logic
//! and the same bounds serve stdio and HTTP. Reading a body happens in a task per request, so a
//! server that asks something of the client in the middle of an SSE stream (a `ping`) is answered
//! while the stream is still open.
//!
//! Faults are reported as [`HttpFault`]s, each turned into an INVALID with a cause and a fix by
//! the client.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long the closing `DELETE` of a session may take.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);
/// Redirects followed at most (a `POST` must not wander).
const MAX_REDIRECTS: usize = 3;
/// Bytes of an error body kept for messages.
const ERROR_BODY_CHARS: usize = 500;
/// Answers buffered between the body readers and the client.
const CHANNEL_DEPTH: usize = 64;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";

/// Why talking to an HTTP server failed.
#[derive(Debug, Clone)]
pub enum HttpFault {
    /// No connection could be made (refused, unknown host, TLS failure).
    Connect { err: String },
    /// An answer with a status that is not a success.
    Status {
        status: u16,
        /// The start of the body, for the message (redacted by the caller).
        body: String,
    },
    /// `404` to a request carrying a session id: the server ended the session.
    SessionExpired,
    /// A success answer whose content type is neither JSON nor an event stream.
    ContentType { content_type: String },
    /// An SSE `message` event (or a JSON body) that is not JSON.
    NotJson { sample: String },
    /// One message (a JSON body, an SSE event or line) over the message size limit.
    Oversize { limit: usize },
    /// The body broke off while it was read.
    Body { err: String },
}

/// One endpoint speaking Streamable HTTP.
pub struct HttpConnection {
    client: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    session_id: Option<String>,
    protocol_version: Option<String>,
    tx: mpsc::Sender<Result<Vec<u8>, HttpFault>>,
    rx: mpsc::Receiver<Result<Vec<u8>, HttpFault>>,
    tasks: Vec<JoinHandle<()>>,
    max_message_bytes: usize,
    /// Messages sent so far (the legacy fallback is tried on the first only).
    sent: usize,
    /// Legacy HTTP+SSE: where messages are posted (from the stream's `endpoint` event).
    legacy_endpoint: Option<reqwest::Url>,
}

// Not derived: the headers hold credentials.
impl std::fmt::Debug for HttpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConnection")
            .field("url", &self.url.as_str())
            .field("session", &self.session_id.is_some())
            .finish_non_exhaustive()
    }
}

/// Whether `url` points at this machine (no proxy is used for it).
fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

impl HttpConnection {
    /// A connection to `url` sending `headers` (already expanded) with every request; `timeout`
    /// bounds one whole request, body included.
    pub fn new(
        url: &str,
        headers: &[(String, String)],
        timeout: Duration,
        max_message_bytes: usize,
    ) -> Result<Self, String> {
        let url = reqwest::Url::parse(url).map_err(|e| format!("the URL is not valid: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "the URL's scheme is `{}`; only http and https are supported",
                url.scheme()
            ));
        }
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("the header name `{name}` is not valid"))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header `{name}` is not a valid header value"))?;
            value.set_sensitive(true);
            map.insert(header, value);
        }
        let mut builder = crate::platform::http_client::builder(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS));
        if is_loopback(&url) {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| format!("the HTTP client could not be built: {e}"))?;
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        Ok(HttpConnection {
            client,
            url,
            headers: map,
            session_id: None,
            protocol_version: None,
            tx,
            rx,
            tasks: Vec::new(),
            max_message_bytes,
            sent: 0,
            legacy_endpoint: None,
        })
    }

    /// The endpoint, for messages.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// `host:port` of the endpoint, for waiting until it accepts connections.
    pub fn socket_address(&self) -> Option<String> {
        let host = self.url.host_str()?;
        let port = self.url.port_or_known_default()?;
        Some(format!("{host}:{port}"))
    }

    /// From now on every request carries `MCP-Protocol-Version: version`.
    pub fn set_protocol_version(&mut self, version: &str) {
        self.protocol_version = Some(version.to_string());
    }

    /// Whether the server speaks the legacy HTTP+SSE transport (found by the fallback).
    pub fn is_legacy(&self) -> bool {
        self.legacy_endpoint.is_some()
    }

    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let url = match (&self.legacy_endpoint, &method) {
            (Some(endpoint), &reqwest::Method::POST) => endpoint.clone(),
            _ => self.url.clone(),
        };
        let mut request = self
            .client
            .request(method, url)
            .headers(self.headers.clone());
        if let Some(id) = &self.session_id {
            request = request.header(SESSION_HEADER, id);
        }
        if let Some(version) = &self.protocol_version {
            request = request.header(VERSION_HEADER, version);
        }
        request
    }

    /// POSTs one message and starts reading its answer; `Ok` once the status and headers are in.
    /// `Err(None)` when `timeout` passed first.
    pub async fn send(
        &mut self,
        message: &[u8],
        timeout: Duration,
    ) -> Result<(), Option<HttpFault>> {
        let first = self.sent == 0;
        self.sent += 1;
        match self.post(message, timeout).await {
            // The specification's backwards compatibility: a 4xx to the first POST may mean a
            // server of the older HTTP+SSE transport; open its event stream and post there.
            Err(Some(HttpFault::Status { status, body }))
                if first && matches!(status, 400 | 404 | 405) =>
            {
                match self.open_legacy(timeout).await {
                    Ok(()) => self.post(message, timeout).await,
                    Err(()) => Err(Some(HttpFault::Status { status, body })),
                }
            }
            other => other,
        }
    }

    /// Legacy HTTP+SSE: GET the event stream and wait for its `endpoint` event.
    async fn open_legacy(&mut self, timeout: Duration) -> Result<(), ()> {
        let request = self
            .request(reqwest::Method::GET)
            .header(ACCEPT, "text/event-stream")
            // The stream carries every answer of the export; the session's own deadlines
            // bound each of them.
            .timeout(Duration::from_secs(24 * 3600));
        let response = match tokio::time::timeout(timeout, request.send()).await {
            Ok(Ok(response)) if response.status().is_success() => response,
            _ => return Err(()),
        };
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
        if !is_stream {
            return Err(());
        }
        let (endpoint_tx, endpoint_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(read_events(
            response,
            self.tx.clone(),
            self.max_message_bytes,
            Some(endpoint_tx),
        ));
        self.tasks.push(task);
        let Ok(Ok(data)) = tokio::time::timeout(timeout, endpoint_rx).await else {
            return Err(());
        };
        let text = String::from_utf8_lossy(&data);
        let endpoint = self.url.join(text.trim()).map_err(|_| ())?;
        // Messages must not be posted to another origin than the one configured.
        if endpoint.origin() != self.url.origin() {
            return Err(());
        }
        self.legacy_endpoint = Some(endpoint);
        Ok(())
    }

    async fn post(&mut self, message: &[u8], timeout: Duration) -> Result<(), Option<HttpFault>> {
        let request = self
            .request(reqwest::Method::POST)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(message.to_vec());
        let had_session = self.session_id.is_some();
        let response = match tokio::time::timeout(timeout, request.send()).await {
            Err(_) => return Err(None),
            Ok(Err(err)) if err.is_timeout() => return Err(None),
            Ok(Err(err)) => {
                return Err(Some(HttpFault::Connect {
                    err: error_chain(&err),
                }))
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND && had_session {
            return Err(Some(HttpFault::SessionExpired));
        }
        if !status.is_success() {
            let body = match tokio::time::timeout(Duration::from_secs(2), response.text()).await {
                Ok(Ok(text)) => text.chars().take(ERROR_BODY_CHARS).collect(),
                _ => String::new(),
            };
            return Err(Some(HttpFault::Status {
                status: status.as_u16(),
                body,
            }));
        }
        if let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            if self.session_id.is_none() {
                self.session_id = Some(id.to_string());
            }
        }
        if status == reqwest::StatusCode::ACCEPTED {
            return Ok(());
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let tx = self.tx.clone();
        let limit = self.max_message_bytes;
        if content_type.starts_with("text/event-stream") {
            self.tasks
                .push(tokio::spawn(read_event_stream(response, tx, limit)));
        } else if content_type.starts_with("application/json") || content_type.contains("+json") {
            self.tasks
                .push(tokio::spawn(read_json_body(response, tx, limit)));
        } else if content_type.is_empty() && response.content_length() == Some(0) {
            // An empty success answer to a notification.
        } else {
            return Err(Some(HttpFault::ContentType { content_type }));
        }
        Ok(())
    }

    /// The next message the server sent, as one JSON text. Cancel-safe.
    pub async fn next_message(&mut self) -> Result<Vec<u8>, HttpFault> {
        match self.rx.recv().await {
            Some(item) => item,
            // The sender half lives in `self`: the channel never closes.
            None => std::future::pending().await,
        }
    }

    /// Stops every body reader and ends the session (`DELETE`, bounded; a `405` means the server
    /// does not let clients end sessions, which is fine).
    pub async fn close(mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        if self.session_id.is_some() {
            let request = self.request(reqwest::Method::DELETE);
            let _ = tokio::time::timeout(DELETE_TIMEOUT, request.send()).await;
        }
    }
}

fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        let more = inner.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = inner.source();
    }
    text
}

fn not_json(data: &[u8]) -> HttpFault {
    let text = String::from_utf8_lossy(data);
    let mut sample: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        sample.push('…');
    }
    HttpFault::NotJson { sample }
}

fn is_json(data: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok()
        || crate::export::line_check::repair_lone_surrogates(data).is_some_and(|(fixed, _)| {
            serde_json::from_slice::<serde::de::IgnoredAny>(&fixed).is_ok()
        })
}

/// One read from a response body.
enum Chunk<B> {
    Data(B),
    End,
    /// The transport failed; the fault was already sent to the reader.
    Failed,
}

/// The next piece of `response`'s body; a transport error is sent on `tx` as the body's fault.
async fn next_chunk(
    response: &mut reqwest::Response,
    tx: &mpsc::Sender<Result<Vec<u8>, HttpFault>>,
) -> Chunk<impl std::ops::Deref<Target = [u8]>> {
    match response.chunk().await {
        Ok(Some(chunk)) => Chunk::Data(chunk),
        Ok(None) => Chunk::End,
        Err(err) => {
            let _ = tx
                .send(Err(HttpFault::Body {
                    err: error_chain(&err),
                }))
                .await;
            Chunk::Failed
        }
    }
}

async fn read_json_body(
    mut response: reqwest::Response,
    tx: mpsc::Sender<Result<Vec<u8>, HttpFault>>,
    limit: usize,
) {
    let mut body: Vec<u8> = Vec::new();
    loop {
        match next_chunk(&mut response, &tx).await {
            Chunk::Data(chunk) => {
                if body.len() + chunk.len() > limit {
                    let _ = tx.send(Err(HttpFault::Oversize { limit })).await;
                    return;
                }
                body.extend_from_slice(&chunk);
            }
            Chunk::End => break,
            Chunk::Failed => return,
        }
    }
    let item = if is_json(&body) {
        Ok(body)
    } else {
        Err(not_json(&body))
    };
    let _ = tx.send(item).await;
}

/// Splits an event stream into events and hands on the data of each `message` event (events
/// without a name are messages too). Comments, `id`, `retry` and empty events are skipped.
async fn read_event_stream(
    response: reqwest::Response,
    tx: mpsc::Sender<Result<Vec<u8>, HttpFault>>,
    limit: usize,
) {
    read_events(response, tx, limit, None).await;
}

/// [`read_event_stream`], also handing the data of the first `endpoint` event to `endpoint`
/// (the legacy HTTP+SSE transport).
async fn read_events(
    mut response: reqwest::Response,
    tx: mpsc::Sender<Result<Vec<u8>, HttpFault>>,
    limit: usize,
    mut endpoint: Option<tokio::sync::oneshot::Sender<Vec<u8>>>,
) {
    let mut parser = SseParser::new(limit);
    loop {
        let chunk = match next_chunk(&mut response, &tx).await {
            Chunk::Data(chunk) => chunk,
            Chunk::End | Chunk::Failed => return,
        };
        let events = match parser.push(&chunk) {
            Ok(events) => events,
            Err(fault) => {
                let _ = tx.send(Err(fault)).await;
                return;
            }
        };
        for event in events {
            if event.name.as_deref() == Some("endpoint") {
                if let Some(endpoint) = endpoint.take() {
                    let _ = endpoint.send(event.data);
                }
                continue;
            }
            if event.name.as_deref().is_some_and(|n| n != "message") || event.data.is_empty() {
                continue;
            }
            let item = if is_json(&event.data) {
                Ok(event.data)
            } else {
                Err(not_json(&event.data))
            };
            let stop = item.is_err();
            if tx.send(item).await.is_err() || stop {
                return;
            }
        }
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub name: Option<String>,
    pub data: Vec<u8>,
}

/// An incremental `text/event-stream` parser with a bound on a line and on an event's data.
#[derive(Debug)]
pub(crate) struct SseParser {
    limit: usize,
    line: Vec<u8>,
    name: Option<String>,
    data: Vec<u8>,
    has_data: bool,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl SseParser {
    pub fn new(limit: usize) -> Self {
        SseParser {
            limit,
            line: Vec::new(),
            name: None,
            data: Vec::new(),
            has_data: false,
            after_cr: false,
        }
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, HttpFault> {
        let mut events = Vec::new();
        for &byte in bytes {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\r' | b'\n' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line_done(&line)? {
                        events.push(event);
                    }
                }
                _ => {
                    if self.line.len() >= self.limit {
                        return Err(HttpFault::Oversize { limit: self.limit });
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(events)
    }

    fn line_done(&mut self, line: &[u8]) -> Result<Option<SseEvent>, HttpFault> {
        if line.is_empty() {
            let event = SseEvent {
                name: self.name.take(),
                data: std::mem::take(&mut self.data),
            };
            let had = std::mem::replace(&mut self.has_data, false);
            return Ok(had.then_some(event));
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.name = Some(String::from_utf8_lossy(value).into_owned()),
            b"data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(HttpFault::Oversize { limit: self.limit });
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_line_endings_are_parsed() {
        let mut parser = SseParser::new(1024);
        let mut events = parser.push(b": comment\r\nid: 1\r\nevent: mess").unwrap();
        events.extend(parser.push(b"age\r\ndata: {\"a\":\r").unwrap());
        events.extend(
            parser
                .push(b"\ndata: 1}\r\n\r\nid: 2\n\ndata:[]\n\n")
                .unwrap(),
        );
        assert_eq!(
            events,
            vec![
                SseEvent {
                    name: Some("message".into()),
                    data: b"{\"a\":\n1}".to_vec()
                },
                SseEvent {
                    name: None,
                    data: b"[]".to_vec()
                },
            ]
        );
    }

    #[test]
    fn a_line_over_the_limit_is_an_oversize_fault() {
        let mut parser = SseParser::new(8);
        assert!(matches!(
            parser.push(b"data: 0123456789"),
            Err(HttpFault::Oversize { limit: 8 })
        ));
    }
}
