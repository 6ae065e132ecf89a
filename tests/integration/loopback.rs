//! A small HTTP/1.1 server on 127.0.0.1 for tests: canned responses, recorded requests.
//!
//! It runs on its own thread with its own tokio runtime, so plain `#[test]`s and
//! `#[tokio::test]`s can both use it. Every connection carries one request and is closed after
//! the response. Requests are recorded before they are answered, so a request whose response
//! never comes is still counted.
//!
//! ```ignore
//! let server = Loopback::start(|request| match request.path.as_str() {
//!     "/README.md" => Response::ok("text"),
//!     _ => Response::status(404, "not found"),
//! });
//! let url = server.url("/README.md");
//! // ... exercise the code ...
//! assert_eq!(server.request_count(), 1);
//! ```
#![allow(dead_code)] // a shared helper: each test module uses part of it

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Headers larger than this end the connection without an answer.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// One received request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The request target as sent (path and query).
    pub path: String,
    /// Header names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked when it was sent chunked.
    pub body: Vec<u8>,
}

impl Request {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// How the body of a response is sent.
#[derive(Debug, Clone)]
enum Body {
    /// All at once with a `Content-Length`.
    Whole(Vec<u8>),
    /// `Transfer-Encoding: chunked`, each part after its pause (server-sent events, slow streams).
    Chunks(Vec<(Duration, Vec<u8>)>),
    /// Never answer; the connection stays open until the server stops.
    Never,
    /// Close the connection without answering (a reset mid-request).
    HangUp,
}

/// A canned response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    body: Body,
    /// A pause before anything is written.
    pub delay: Duration,
}

impl Response {
    /// 200 with the body.
    pub fn ok(body: impl Into<Vec<u8>>) -> Response {
        Response::status(200, body)
    }

    pub fn status(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Whole(body.into()),
            delay: Duration::ZERO,
        }
    }

    /// A 200 whose body is sent in chunks, each after its pause.
    pub fn chunked(parts: Vec<(Duration, Vec<u8>)>) -> Response {
        Response {
            status: 200,
            headers: Vec::new(),
            body: Body::Chunks(parts),
            delay: Duration::ZERO,
        }
    }

    /// A request that is never answered (for timeouts).
    pub fn never() -> Response {
        Response {
            status: 0,
            headers: Vec::new(),
            body: Body::Never,
            delay: Duration::ZERO,
        }
    }

    /// Closes the connection without an answer.
    pub fn hang_up() -> Response {
        Response {
            status: 0,
            headers: Vec::new(),
            body: Body::HangUp,
            delay: Duration::ZERO,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Response {
        self.delay = delay;
        self
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A running server; stopped when dropped.
pub struct Loopback {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Option<watch::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl Loopback {
    /// Starts a server that answers every request with `handler`'s response.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Loopback {
        let handler: Arc<Handler> = Arc::new(handler);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = watch::channel(false);
        let std_listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        std_listener
            .set_nonblocking(true)
            .expect("make the listener non-blocking");
        let addr = std_listener.local_addr().expect("listener address");
        let recorded = Arc::clone(&requests);
        let thread = std::thread::Builder::new()
            .name(format!("loopback-{}", addr.port()))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("loopback runtime");
                runtime.block_on(serve(std_listener, handler, recorded, stopped));
                // Dropping the runtime cancels connections still waiting (`Response::never`).
            })
            .expect("spawn the loopback thread");
        Loopback {
            addr,
            requests,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Serves fixed responses by method and exact path; anything else is a 404.
    pub fn routes(routes: Vec<(&str, &str, Response)>) -> Loopback {
        let routes: Vec<(String, String, Response)> = routes
            .into_iter()
            .map(|(method, path, response)| (method.to_string(), path.to_string(), response))
            .collect();
        Loopback::start(move |request| {
            routes
                .iter()
                .find(|(method, path, _)| *method == request.method && *path == request.path)
                .map(|(_, _, response)| response.clone())
                .unwrap_or_else(|| Response::status(404, "no such route"))
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn request_count(&self) -> usize {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// Stops the server and waits for its thread; the port refuses connections afterwards.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A loopback URL on which nothing listens (connection refused).
pub fn refused_url(path: &str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("listener address");
    drop(listener);
    format!("http://{addr}{path}")
}

async fn serve(
    listener: std::net::TcpListener,
    handler: Arc<Handler>,
    requests: Arc<Mutex<Vec<Request>>>,
    mut stopped: watch::Receiver<bool>,
) {
    let listener = TcpListener::from_std(listener).expect("tokio listener");
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let handler = Arc::clone(&handler);
                let requests = Arc::clone(&requests);
                tokio::spawn(async move {
                    let _ = answer(stream, handler, requests).await;
                });
            }
            _ = stopped.changed() => break,
        }
    }
}

async fn answer(
    stream: TcpStream,
    handler: Arc<Handler>,
    requests: Arc<Mutex<Vec<Request>>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader).await? else {
        return Ok(());
    };
    requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(request.clone());
    let response = handler(&request);
    if !response.delay.is_zero() {
        tokio::time::sleep(response.delay).await;
    }
    let stream = reader.get_mut();
    let head_only = request.method == "HEAD";
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Connection: close\r\n");
    match response.body {
        Body::Never => {
            std::future::pending::<()>().await;
        }
        Body::HangUp => return Ok(()),
        Body::Whole(body) => {
            head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
            stream.write_all(head.as_bytes()).await?;
            if !head_only {
                stream.write_all(&body).await?;
            }
        }
        Body::Chunks(parts) => {
            head.push_str("Transfer-Encoding: chunked\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
            stream.flush().await?;
            if !head_only {
                for (pause, part) in parts {
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                    if part.is_empty() {
                        continue; // an empty chunk would end the body
                    }
                    stream
                        .write_all(format!("{:x}\r\n", part.len()).as_bytes())
                        .await?;
                    stream.write_all(&part).await?;
                    stream.write_all(b"\r\n").await?;
                    stream.flush().await?;
                }
                stream.write_all(b"0\r\n\r\n").await?;
            }
        }
    }
    stream.flush().await?;
    stream.shutdown().await
}

async fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    let (method, path) = (method.to_string(), path.to_string());
    let mut headers = Vec::new();
    let mut header_bytes = line.len();
    loop {
        let mut header = String::new();
        let read = reader.read_line(&mut header).await?;
        header_bytes += read;
        if read == 0 || header_bytes > MAX_HEADER_BYTES {
            return Ok(None);
        }
        let header = header.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
    };
    if find("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        reader
            .get_mut()
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await?;
    }
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        loop {
            let mut size_line = String::new();
            if reader.read_line(&mut size_line).await? == 0 {
                return Ok(None);
            }
            let size_text = size_line.trim().split(';').next().unwrap_or("");
            let Ok(size) = usize::from_str_radix(size_text, 16) else {
                return Ok(None);
            };
            if size == 0 {
                // Trailer lines up to the blank line.
                loop {
                    let mut trailer = String::new();
                    if reader.read_line(&mut trailer).await? == 0 || trailer.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let mut chunk = vec![0; size];
            reader.read_exact(&mut chunk).await?;
            body.extend_from_slice(&chunk);
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf).await?;
        }
    } else if let Some(length) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body = vec![0; length];
        reader.read_exact(&mut body).await?;
    }
    Ok(Some(Request {
        method,
        path,
        headers,
        body,
    }))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn raw_exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.write_all(request).unwrap();
        let mut out = String::new();
        stream.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn records_requests_and_serves_routes() {
        let server = Loopback::routes(vec![(
            "POST",
            "/echo",
            Response::ok("done").with_header("Content-Type", "text/plain"),
        )]);
        let reply = raw_exchange(
            server.addr(),
            b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
        assert!(reply.contains("Content-Type: text/plain\r\n"), "{reply}");
        assert!(reply.ends_with("\r\n\r\ndone"), "{reply}");
        let missing = raw_exchange(server.addr(), b"GET /nope HTTP/1.1\r\n\r\n");
        assert!(missing.starts_with("HTTP/1.1 404 "), "{missing}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].method, "POST");
        assert_eq!(requests[0].header("HOST"), Some("x"));
        assert_eq!(requests[0].body_text(), "hello");
        assert_eq!(requests[1].path, "/nope");
    }

    #[test]
    fn decodes_chunked_requests_and_streams_chunked_responses() {
        let server = Loopback::start(|request| {
            Response::chunked(vec![
                (Duration::ZERO, request.body.clone()),
                (Duration::from_millis(10), b"!".to_vec()),
            ])
        });
        let reply = raw_exchange(
            server.addr(),
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        );
        assert!(reply.contains("Transfer-Encoding: chunked"), "{reply}");
        assert!(
            reply.ends_with("5\r\nabcde\r\n1\r\n!\r\n0\r\n\r\n"),
            "{reply}"
        );
        assert_eq!(server.requests()[0].body_text(), "abcde");
    }

    #[test]
    fn head_gets_no_body_and_a_stopped_server_refuses() {
        let server = Loopback::start(|_| Response::ok("body"));
        let reply = raw_exchange(server.addr(), b"HEAD /api/hello HTTP/1.1\r\n\r\n");
        assert!(reply.ends_with("Content-Length: 4\r\n\r\n"), "{reply}");
        let addr = server.addr();
        server.stop();
        assert!(std::net::TcpStream::connect(addr).is_err());
        let refused = refused_url("/x");
        let addr: SocketAddr = refused
            .trim_start_matches("http://")
            .trim_end_matches("/x")
            .parse()
            .unwrap();
        assert!(std::net::TcpStream::connect(addr).is_err());
    }

    #[test]
    fn a_never_answered_request_is_still_recorded_and_stop_does_not_hang() {
        let server = Loopback::start(|_| Response::never());
        let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
        stream.write_all(b"GET /slow HTTP/1.1\r\n\r\n").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while server.request_count() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(server.requests()[0].path, "/slow");
        server.stop();
    }
}
