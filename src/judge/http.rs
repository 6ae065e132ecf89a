//! What the HTTP judges share: API keys, endpoints, the reqwest client, the transport retry policy,
//! error mapping, sampling settings and the JSON schemas of the TDQS answers.
//!
//! Two layers of retry exist and stay separate. This module retries the *transport* (connection
//! errors, 408/409/429/5xx) with capped exponential backoff, honouring the server's hints. The
//! scoring stage retries *answers* (wrong model, invalid JSON) up to the pinned number of retries.
//! A transport failure that survives this module's retries, or one that must never be retried
//! (400/401/402/403/404/413, an exhausted spend limit), reaches the scorer as a non-retryable
//! [`CallFailure`], so a run with a bad key stops at its first call.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde_json::{json, Map, Value};

use crate::judge::{CallFailure, QuestionKind};
use tdqs_core::error::{Error, Stage};
use tdqs_core::redact::{self, Redactor};
use tdqs_core::rubric::{CoherenceDimension, ToolDimension};

mod retry;
use retry::*;
pub use retry::{RetryPolicy, Sleeper};

/// Prefix of the OAuth tokens `claude setup-token` issues; the Messages API refuses them.
pub(crate) const CLAUDE_OAUTH_TOKEN_PREFIX: &str = "sk-ant-oat";

/// A response body larger than this is refused: a judge's answer is a few kilobytes, and an
/// unbounded read would let a misbehaving endpoint exhaust memory.
pub(crate) const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// How much of an unparseable body is quoted in a failure message.
const BODY_EXCERPT_CHARS: usize = 600;

// ---------------------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------------------

/// A credential for an HTTP judge. Registered with [`tdqs_core::redact`] on creation; its `Debug` form
/// never shows the value.
#[derive(Clone)]
pub struct ApiKey {
    value: String,
    /// The environment variable it came from, for messages (`None` when given directly).
    source: Option<String>,
}

impl ApiKey {
    /// Wraps a key given directly. Surrounding whitespace (a trailing newline from a secrets file)
    /// is removed.
    pub fn new(value: &str) -> Result<Self, Error> {
        Self::build(value, None)
    }

    /// Reads the key from the environment variable `var`; a missing or empty variable is an error.
    pub fn from_env(var: &str) -> Result<Self, Error> {
        match Self::from_env_optional(var)? {
            Some(key) => Ok(key),
            None => Err(Error::new(
                Stage::Judge,
                format!("the environment variable {var} holding the judge's API key is not set"),
            )
            .with_advice(format!(
                "export {var}=<your key>, or name another variable with --token-env NAME"
            ))),
        }
    }

    /// Reads the key from `var` when it is set and not empty.
    pub fn from_env_optional(var: &str) -> Result<Option<Self>, Error> {
        match std::env::var(var) {
            Ok(value) if value.trim().is_empty() => Ok(None),
            Ok(value) => Self::build(&value, Some(var.to_string())).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(Error::new(
                Stage::Judge,
                format!(
                    "the environment variable {var} is not valid UTF-8, so it cannot be an API key"
                ),
            )
            .with_advice(format!(
                "set {var} to the key exactly as the provider issued it"
            ))),
        }
    }

    fn build(value: &str, source: Option<String>) -> Result<Self, Error> {
        let value = value.trim();
        let origin = source
            .as_deref()
            .map(|v| format!("the value of {v}"))
            .unwrap_or_else(|| "the API key".to_string());
        if value.is_empty() {
            return Err(Error::new(Stage::Judge, format!("{origin} is empty"))
                .with_advice("give the judge a non-empty API key"));
        }
        // A key is sent in a header; refuse what a header cannot carry instead of failing later
        // with an error that might quote it.
        if HeaderValue::from_str(value).is_err() || value.chars().any(char::is_whitespace) {
            return Err(Error::new(
                Stage::Judge,
                format!("{origin} contains characters an HTTP header cannot carry"),
            )
            .with_advice("check that the variable holds only the key, without quotes or spaces"));
        }
        redact::register_secret(value);
        Ok(ApiKey {
            value: value.to_string(),
            source,
        })
    }

    /// True for a Claude Code OAuth token (`sk-ant-oat…`).
    pub fn is_claude_oauth_token(&self) -> bool {
        self.value.starts_with(CLAUDE_OAUTH_TOKEN_PREFIX)
    }

    /// Where the key came from, for messages: `ANTHROPIC_API_KEY` or `the API key`.
    pub fn origin(&self) -> String {
        match &self.source {
            Some(var) => format!("${var}"),
            None => "the API key".to_string(),
        }
    }

    pub(crate) fn expose(&self) -> &str {
        &self.value
    }

    pub(crate) fn header_value(&self, prefix: &str) -> HeaderValue {
        // `build` checked that the key is a valid header value; the prefix is ASCII.
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.value))
            .unwrap_or_else(|_| HeaderValue::from_static(""));
        value.set_sensitive(true);
        value
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiKey")
            .field("value", &redact::MASK)
            .field("source", &self.source)
            .finish()
    }
}

// ---------------------------------------------------------------------------------------------
// Endpoints
// ---------------------------------------------------------------------------------------------

/// A judge's base URL, normalised: no trailing slash and no trailing `/v1` (both `http://h:11434`
/// and `http://h:11434/v1` mean the same server), credentials in the URL kept for requests only.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    base: Url,
}

impl Endpoint {
    pub fn parse(base_url: &str) -> Result<Self, Error> {
        let trimmed = base_url.trim();
        let mut base = Url::parse(trimmed).map_err(|e| {
            Error::new(
                Stage::Usage,
                format!(
                    "the judge base URL {:?} is not a URL: {e}",
                    display_url_text(trimmed)
                ),
            )
            .with_advice("give --base-url as http(s)://host[:port][/path]")
        })?;
        if base.scheme() != "http" && base.scheme() != "https" {
            return Err(Error::new(
                Stage::Usage,
                format!(
                    "the judge base URL uses the scheme {:?}; only http and https are supported",
                    base.scheme()
                ),
            )
            .with_advice("give --base-url as http(s)://host[:port][/path]"));
        }
        if base.host_str().is_none_or(str::is_empty) {
            return Err(Error::new(Stage::Usage, "the judge base URL has no host")
                .with_advice("give --base-url as http(s)://host[:port][/path]"));
        }
        if let Some(password) = base.password() {
            redact::register_secret(password);
        }
        let mut path = base.path().trim_end_matches('/').to_string();
        if path.ends_with("/v1") {
            path.truncate(path.len() - 3);
        }
        base.set_path(&path);
        base.set_fragment(None);
        Ok(Endpoint { base })
    }

    /// The URL of `path` (which starts with `/v1/…`) on this server, with the base's query kept.
    pub fn url(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        let joined = format!("{}{}", self.base.path().trim_end_matches('/'), path);
        url.set_path(&joined);
        url
    }

    /// `url(path)` without user name, password or query: the form recorded in reports.
    pub fn display(&self, path: &str) -> String {
        public_url(&self.url(path))
    }

    /// True when the host is this machine, where cleartext HTTP is not a risk to a key.
    pub fn is_loopback(&self) -> bool {
        let host = self.base.host_str().unwrap_or("");
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        match bare.parse::<std::net::IpAddr>() {
            Ok(ip) => ip.is_loopback(),
            Err(_) => bare.eq_ignore_ascii_case("localhost"),
        }
    }

    pub fn is_https(&self) -> bool {
        self.base.scheme() == "https"
    }
}

/// A URL as it may appear in reports and messages: without credentials, query or fragment.
pub(crate) fn public_url(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// A URL the user typed, trimmed of anything after `?` and of user info, for an error message.
fn display_url_text(text: &str) -> String {
    let without_query = text.split(['?', '#']).next().unwrap_or("");
    match without_query.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://{host}"),
            None => without_query.to_string(),
        },
        None => without_query.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Sampling
// ---------------------------------------------------------------------------------------------

/// Sampling parameters sent with every request. `None` means the field is not sent at all: the
/// pinned Anthropic model rejects `temperature`, and API version 2026-10-21 rejects every sampling
/// field, so the Anthropic judge sends none unless the pins say the model accepts them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<u32>,
    pub seed: Option<u64>,
}

impl Sampling {
    /// Sends nothing: the server's defaults apply.
    pub fn none() -> Self {
        Sampling::default()
    }

    /// Greedy decoding with a fixed seed, for OpenAI-compatible servers. Ollama substitutes
    /// temperature 1.0 when the field is absent, so it must always be sent.
    pub fn deterministic(seed: u64) -> Self {
        Sampling {
            temperature: Some(0.0),
            top_p: None,
            top_k: None,
            seed: Some(seed),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.temperature.is_none()
            && self.top_p.is_none()
            && self.top_k.is_none()
            && self.seed.is_none()
    }

    /// Checks the ranges every API shares; `max_temperature` differs (Anthropic 1, OpenAI 2).
    pub(crate) fn validate(&self, max_temperature: f64) -> Result<(), Error> {
        if let Some(t) = self.temperature {
            if !(0.0..=max_temperature).contains(&t) {
                return Err(Error::new(
                    Stage::Usage,
                    format!("temperature {t} is outside 0–{max_temperature}"),
                ));
            }
        }
        if let Some(p) = self.top_p {
            if !(p > 0.0 && p <= 1.0) {
                return Err(Error::new(
                    Stage::Usage,
                    format!("top_p {p} is outside (0, 1]"),
                ));
            }
        }
        if self.top_k == Some(0) {
            return Err(Error::new(Stage::Usage, "top_k must be at least 1"));
        }
        Ok(())
    }

    /// Writes the fields that are set into a request body.
    pub(crate) fn write_into(&self, body: &mut Map<String, Value>) {
        if let Some(t) = self.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(p) = self.top_p {
            body.insert("top_p".into(), json!(p));
        }
        if let Some(k) = self.top_k {
            body.insert("top_k".into(), json!(k));
        }
        if let Some(s) = self.seed {
            body.insert("seed".into(), json!(s));
        }
    }

    /// The settings record: every field, `null` when not sent, so "not sent" is recorded too.
    pub fn settings(&self) -> Value {
        json!({
            "temperature": self.temperature,
            "topP": self.top_p,
            "topK": self.top_k,
            "seed": self.seed,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Answer schemas
// ---------------------------------------------------------------------------------------------

/// The name under which the answer schema of `kind` is sent (OpenAI's `json_schema.name`).
pub(crate) fn answer_schema_name(kind: QuestionKind) -> &'static str {
    match kind {
        QuestionKind::Tool => "tdqs_tool_answer",
        QuestionKind::Coherence => "tdqs_coherence_answer",
        QuestionKind::Selection => "tdqs_selection_answer",
        QuestionKind::EvalDraft => "tdqs_eval_draft_answer",
        QuestionKind::EvalValidate => "tdqs_eval_validation_answer",
        QuestionKind::Rewrite => "tdqs_rewrite_answer",
    }
}

/// The JSON schema of the answer the TDQS prompts ask for, for structured output. It lists every
/// key as required and forbids extra ones (what strict modes demand), and bounds scores with an
/// `enum` rather than `minimum`/`maximum`, which structured-output implementations do not all
/// accept. The scorer still validates every answer: the schema only steers the model.
pub fn answer_schema(kind: QuestionKind) -> Value {
    let judged = json!({
        "type": "object",
        "properties": {
            "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "justification": {"type": "string"}
        },
        "required": ["score", "justification"],
        "additionalProperties": false
    });
    let keys: Vec<&str> = match kind {
        QuestionKind::Tool => ToolDimension::ALL.iter().map(|d| d.key()).collect(),
        QuestionKind::Coherence
        | QuestionKind::Selection
        | QuestionKind::EvalDraft
        | QuestionKind::EvalValidate
        | QuestionKind::Rewrite => CoherenceDimension::ALL.iter().map(|d| d.key()).collect(),
    };
    let mut score_properties = Map::new();
    for key in &keys {
        score_properties.insert((*key).to_string(), judged.clone());
    }
    let scores = json!({
        "type": "object",
        "properties": Value::Object(score_properties),
        "required": keys,
        "additionalProperties": false
    });
    match kind {
        QuestionKind::Tool => json!({
            "type": "object",
            "properties": {
                "scores": scores,
                "annotation_contradiction": {"type": "boolean"},
                "summary": {"type": "string"}
            },
            "required": ["scores", "annotation_contradiction", "summary"],
            "additionalProperties": false
        }),
        QuestionKind::Selection => tdqs_core::eval::answer::selection_answer_schema(),
        QuestionKind::EvalDraft => tdqs_core::eval::draft::draft_answer_schema(),
        QuestionKind::EvalValidate => tdqs_core::eval::draft::validation_answer_schema(),
        QuestionKind::Rewrite => json!({
            "type": "object",
            "properties": {"tool": {"type": "object"}},
            "required": ["tool"]
        }),
        QuestionKind::Coherence => json!({
            "type": "object",
            "properties": {
                "scores": scores,
                "shadowing_risks": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "tool": {"type": "string"},
                            "cheaper_sibling": {"type": "string"},
                            "justification": {"type": "string"}
                        },
                        "required": ["tool", "cheaper_sibling", "justification"],
                        "additionalProperties": false
                    }
                },
                "summary": {"type": "string"}
            },
            "required": ["scores", "shadowing_risks", "summary"],
            "additionalProperties": false
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Transport (the retry policy is `retry`)
// ---------------------------------------------------------------------------------------------

/// Client settings shared by both judges. None of them changes an answer, so none is recorded in
/// the judge's settings.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The whole of one attempt: connect, send, wait, read.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub retry: RetryPolicy,
    pub sleeper: Sleeper,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            sleeper: Sleeper::tokio(),
        }
    }
}

/// One request, built once and sent as often as the retry policy allows.
#[derive(Debug, Clone)]
pub(crate) struct HttpRequest {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    /// A JSON body, serialised once.
    pub body: Option<Vec<u8>>,
}

impl HttpRequest {
    pub fn get(url: Url) -> Self {
        HttpRequest {
            method: Method::GET,
            url,
            headers: HeaderMap::new(),
            body: None,
        }
    }

    pub fn post_json(url: Url, body: &Value) -> Self {
        HttpRequest {
            method: Method::POST,
            url,
            headers: HeaderMap::new(),
            // Serialising a `Value` cannot fail.
            body: Some(serde_json::to_vec(body).unwrap_or_default()),
        }
    }

    pub fn header(mut self, name: &'static str, value: HeaderValue) -> Self {
        self.headers.insert(HeaderName::from_static(name), value);
        self
    }
}

/// A successful (2xx) response.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// Attempts it took, 1 when the first one succeeded.
    pub attempts: u32,
}

impl HttpResponse {
    /// The request id the server assigned (`request-id`, `x-request-id`), for messages.
    pub fn request_id(&self) -> Option<String> {
        request_id(&self.headers, None)
    }
}

/// Why a request finally failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureKind {
    /// No HTTP response: connection refused or reset, DNS, TLS, timeout.
    Transport,
    /// A non-success status.
    Status(u16),
    /// A 429 for an exhausted spend limit.
    SpendLimit,
}

/// A request that failed for good. `message` is complete and redacted.
#[derive(Debug, Clone)]
pub struct HttpFailure {
    pub kind: FailureKind,
    /// The error type the server named (`overloaded_error`, `invalid_request_error`).
    pub error_type: Option<String>,
    pub request_id: Option<String>,
    pub attempts: u32,
    /// True when the condition was transient but the retries ran out.
    pub exhausted: bool,
    pub message: String,
    pub advice: String,
}

impl HttpFailure {
    pub fn status(&self) -> Option<u16> {
        match self.kind {
            FailureKind::Status(s) => Some(s),
            FailureKind::SpendLimit => Some(429),
            FailureKind::Transport => None,
        }
    }

    /// True when no call can succeed until the user acts: the server is unreachable, refuses the
    /// credentials, or the spend limit is exhausted. Preflights stop the run on these.
    pub fn stops_a_run(&self) -> bool {
        match self.kind {
            FailureKind::Transport | FailureKind::SpendLimit => true,
            FailureKind::Status(s) => (401..=403).contains(&s),
        }
    }

    /// The failure as the scorer sees it. Never retryable: the transport already retried what
    /// could be retried, and a hard error (bad key, bad request) must stop the run at once.
    pub fn into_call_failure(self) -> CallFailure {
        CallFailure::fatal(self.message).with_detail(format!("help: {}", self.advice))
    }

    pub fn into_error(self) -> Error {
        Error::new(Stage::Judge, self.message).with_advice(self.advice)
    }
}

/// A reqwest client with the retry policy, redacting everything it reports.
#[derive(Debug, Clone)]
pub(crate) struct HttpTransport {
    client: reqwest::Client,
    retry: RetryPolicy,
    sleeper: Sleeper,
    redactor: Redactor,
    timeout: Duration,
    /// What the credential is called in advice (`$ANTHROPIC_API_KEY`).
    key_origin: Option<String>,
}

impl HttpTransport {
    pub fn new(options: &HttpOptions, key: Option<&ApiKey>) -> Result<Self, Error> {
        let client = crate::platform::http_client::builder(options.timeout)
            .connect_timeout(options.connect_timeout)
            // A redirected POST loses its body or its method, and a redirect to another host
            // would carry the key there: report the new address instead of following it.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                Error::new(
                    Stage::Judge,
                    format!("cannot build the HTTP client: {}", error_chain(&e)),
                )
                .with_advice("check the TLS set-up of this machine (system certificates)")
            })?;
        let mut redactor = Redactor::new();
        if let Some(key) = key {
            redactor.add(key.expose());
        }
        Ok(HttpTransport {
            client,
            retry: options.retry.clone(),
            sleeper: options.sleeper.clone(),
            redactor,
            timeout: options.timeout,
            key_origin: key.map(ApiKey::origin),
        })
    }

    /// Masks the key and every process-wide secret.
    pub fn redact(&self, text: &str) -> String {
        redact::redact(&self.redactor.redact(text))
    }

    /// Sends `request`, retrying transient failures per the policy.
    pub async fn send(&self, request: &HttpRequest) -> Result<HttpResponse, HttpFailure> {
        let mut retries = 0u32;
        loop {
            let attempts = retries + 1;
            let can_retry = retries < self.retry.max_retries;
            match self.send_once(request).await {
                Ok((status, headers, body)) if status.is_success() => {
                    return Ok(HttpResponse {
                        status,
                        headers,
                        body,
                        attempts,
                    });
                }
                Ok((status, headers, body)) => {
                    let disposition = classify(status, &headers, &body);
                    if disposition == Disposition::Retry && can_retry {
                        let delay = self
                            .retry
                            .server_delay(&headers, SystemTime::now())
                            .unwrap_or_else(|| self.retry.backoff(retries, fastrand::f64()));
                        self.sleeper.sleep(delay).await;
                        retries += 1;
                        continue;
                    }
                    return Err(self.status_failure(
                        request,
                        status,
                        &headers,
                        &body,
                        disposition,
                        attempts,
                    ));
                }
                Err(err) => {
                    if can_retry {
                        self.sleeper
                            .sleep(self.retry.backoff(retries, fastrand::f64()))
                            .await;
                        retries += 1;
                        continue;
                    }
                    return Err(self.transport_failure(request, &err, attempts));
                }
            }
        }
    }

    async fn send_once(
        &self,
        request: &HttpRequest,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>), TransportError> {
        let mut builder = self
            .client
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone());
        if let Some(body) = &request.body {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        let mut response = builder.send().await.map_err(TransportError::Reqwest)?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(TransportError::Reqwest)? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(TransportError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, headers, body))
    }

    fn status_failure(
        &self,
        request: &HttpRequest,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
        disposition: Disposition,
        attempts: u32,
    ) -> HttpFailure {
        let parsed = ServerError::parse(body);
        let request_id = request_id(headers, parsed.request_id.as_deref());
        let mut message = format!(
            "{} {} failed with HTTP {}",
            request.method,
            public_url(&request.url),
            status_text(status)
        );
        if let Some(t) = &parsed.error_type {
            message.push_str(&format!(" ({t})"));
        }
        match &parsed.message {
            Some(m) => message.push_str(&format!(": {m}")),
            None if !body.is_empty() => {
                message.push_str(&format!(": {}", excerpt(&String::from_utf8_lossy(body))))
            }
            None => {}
        }
        if status.is_redirection() {
            if let Some(location) = headers.get("location").and_then(|v| v.to_str().ok()) {
                message.push_str(&format!(" (redirected to {})", display_url_text(location)));
            }
        }
        if let Some(id) = &request_id {
            message.push_str(&format!(" [request-id {id}]"));
        }
        let exhausted = disposition == Disposition::Retry;
        if exhausted {
            message.push_str(&attempts_note(attempts));
        }
        let kind = if disposition == Disposition::SpendLimit {
            FailureKind::SpendLimit
        } else {
            FailureKind::Status(status.as_u16())
        };
        let advice = self.advice_for(&kind, status);
        HttpFailure {
            kind,
            error_type: parsed.error_type,
            request_id,
            attempts,
            exhausted,
            message: self.redact(&message),
            advice: self.redact(&advice),
        }
    }

    fn transport_failure(
        &self,
        request: &HttpRequest,
        err: &TransportError,
        attempts: u32,
    ) -> HttpFailure {
        let (what, advice) = match err {
            TransportError::Reqwest(e) if e.is_timeout() => (
                format!("timed out after {}", seconds(self.timeout)),
                "the server did not answer in time: raise --timeout, or check the server's load",
            ),
            TransportError::Reqwest(e) if e.is_connect() => (
                format!("could not connect: {}", error_chain(e)),
                "check that --base-url points at a running server this machine can reach \
                 (address, port, proxy, TLS certificates)",
            ),
            TransportError::Reqwest(e) => (
                format!("the connection failed: {}", error_chain(e)),
                "the server or a proxy dropped the connection; check the server's logs",
            ),
            TransportError::TooLarge => (
                format!("the response exceeded {MAX_RESPONSE_BYTES} bytes"),
                "check that --base-url points at the judge's API, not another service",
            ),
        };
        let message = format!(
            "{} {} failed: {what}{}",
            request.method,
            public_url(&request.url),
            attempts_note(attempts)
        );
        HttpFailure {
            kind: FailureKind::Transport,
            error_type: None,
            request_id: None,
            attempts,
            exhausted: true,
            message: self.redact(&message),
            advice: advice.to_string(),
        }
    }

    fn advice_for(&self, kind: &FailureKind, status: StatusCode) -> String {
        let key = self
            .key_origin
            .clone()
            .unwrap_or_else(|| "the API key (--token-env)".to_string());
        if *kind == FailureKind::SpendLimit {
            return "the account's spend limit is exhausted: raise it in the provider's console \
                    or wait for it to reset; retrying cannot help"
                .to_string();
        }
        match status.as_u16() {
            300..=399 => "point --base-url at the address the server redirects to".to_string(),
            400 | 422 => "the server refused the request; check --model, --max-tokens and the \
                          sampling settings against what this server accepts"
                .to_string(),
            401 => format!("the server refused the credentials: check {key}"),
            402 => {
                "the account has a billing problem; fix it in the provider's console".to_string()
            }
            403 => format!("{key} is not allowed to use this model or endpoint"),
            404 => "check --base-url and --model: the server knows no such endpoint or model"
                .to_string(),
            413 => "the prompt is too large for this endpoint".to_string(),
            408 | 409 | 429 => {
                "the server kept refusing for rate or capacity reasons; lower --concurrency or \
                 run again later"
                    .to_string()
            }
            500..=599 => "the server kept failing or is overloaded; run again later".to_string(),
            _ => "check --base-url, --model and the server's logs".to_string(),
        }
    }
}

enum TransportError {
    Reqwest(reqwest::Error),
    TooLarge,
}

fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// An error and its causes on one line, without the URL reqwest puts in its own message.
/// The causes of a reqwest error on one line. reqwest's own message names the URL (already in
/// ours) and hyper adds `client error (…)` wrappers that say nothing to a user: both are dropped.
pub(crate) fn error_chain(err: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = std::error::Error::source(err);
    while let Some(e) = current {
        let text = e.to_string();
        if !text.starts_with("client error (") && !parts.contains(&text) {
            parts.push(text);
        }
        current = e.source();
    }
    if parts.is_empty() {
        parts.push(kind_label(err).to_string());
    }
    parts.join(": ")
}

/// What kind of failure a reqwest error without causes was.
fn kind_label(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "operation timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "error reading the response body"
    } else if e.is_request() {
        "error sending the request"
    } else {
        "HTTP error"
    }
}

fn attempts_note(attempts: u32) -> String {
    if attempts == 1 {
        String::new()
    } else {
        format!("; gave up after {attempts} attempts")
    }
}

fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs} s")
    }
}

/// The request id: from the headers, else from the error body.
fn request_id(headers: &HeaderMap, from_body: Option<&str>) -> Option<String> {
    ["request-id", "x-request-id"]
        .iter()
        .find_map(|name| headers.get(*name).and_then(|v| v.to_str().ok()))
        .map(str::to_string)
        .or_else(|| from_body.map(str::to_string))
}

/// The error object of either API: Anthropic's `{"type":"error","error":{"type","message"},
/// "request_id"}`, OpenAI's `{"error":{"message","type","code"}}`, Ollama's `{"error":"…"}`.
#[derive(Debug, Default)]
struct ServerError {
    error_type: Option<String>,
    message: Option<String>,
    request_id: Option<String>,
}

impl ServerError {
    fn parse(body: &[u8]) -> Self {
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return ServerError::default();
        };
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let error = value.get("error");
        let (error_type, message) = match error {
            Some(Value::Object(o)) => (
                text(o.get("type")).or_else(|| text(o.get("code"))),
                text(o.get("message")),
            ),
            Some(Value::String(s)) => (None, Some(s.clone())),
            _ => (None, text(value.get("message"))),
        };
        ServerError {
            error_type,
            message: message.map(|m| excerpt(&m)),
            request_id: text(value.get("request_id")),
        }
    }
}

/// The start of a text, on one line, for a message.
pub(crate) fn excerpt(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = one_line.trim();
    if trimmed.chars().count() > BODY_EXCERPT_CHARS {
        let cut: String = trimmed.chars().take(BODY_EXCERPT_CHARS).collect();
        format!("{cut}…")
    } else {
        trimmed.to_string()
    }
}

/// Parses a 2xx body as JSON; a body that is not JSON is a retryable answer failure (a proxy's
/// error page, a truncated reply).
pub(crate) fn parse_json_body(
    transport: &HttpTransport,
    response: &HttpResponse,
    what: &str,
) -> Result<Value, CallFailure> {
    serde_json::from_slice(&response.body).map_err(|e| {
        let id = response
            .request_id()
            .map(|id| format!(" [request-id {id}]"))
            .unwrap_or_default();
        CallFailure::retryable(
            transport.redact(&format!("the {what} response is not JSON ({e}){id}")),
        )
        .with_detail(transport.redact(&excerpt(&String::from_utf8_lossy(&response.body))))
    })
}

#[cfg(test)]
mod tests;
