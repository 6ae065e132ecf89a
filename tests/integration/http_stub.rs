//! Scripted HTTP responses for the API tests, served by [`crate::loopback`]: responses per method
//! and path, in order, the last one repeating (a [`Script`]), or from any closure, with every
//! request recorded. Nothing here reaches the network.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::loopback::{self, Loopback, Response};

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
    server: Loopback,
}

impl HttpStub {
    /// Serves `script`.
    pub async fn start(script: Script) -> Self {
        Self::with_handler(script.into_handler()).await
    }

    /// Serves whatever `handler` returns for each request.
    pub async fn with_handler(handler: Handler) -> Self {
        let server = Loopback::start(move |request| {
            let stub = handler(&recorded(request));
            if stub.hang_up {
                return Response::hang_up().with_delay(stub.delay);
            }
            let mut response = Response::status(stub.status, stub.body).with_delay(stub.delay);
            for (name, value) in &stub.headers {
                response = response.with_header(name, value);
            }
            response
        });
        HttpStub { server }
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        self.server.url("")
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests().iter().map(recorded).collect()
    }

    /// The requests for one path (query ignored).
    pub fn requests_to(&self, path: &str) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path() == path)
            .collect()
    }
}

fn recorded(request: &loopback::Request) -> RecordedRequest {
    RecordedRequest {
        method: request.method.clone(),
        target: request.path.clone(),
        headers: request.headers.clone(),
        body: request.body.clone(),
    }
}

/// A loopback address where nothing listens: the port of a listener that was just closed.
pub async fn refused_url() -> String {
    loopback::refused_url("")
}
