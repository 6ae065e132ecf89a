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
        | QuestionKind::EvalValidate => CoherenceDimension::ALL.iter().map(|d| d.key()).collect(),
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
// Retry policy
// ---------------------------------------------------------------------------------------------

/// A future that waits; boxed so a [`Sleeper`] can be any closure.
pub(crate) type SleepFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How the transport waits between attempts. Tests inject one that records the delays and returns
/// at once, so retry timing is asserted without sleeping.
#[derive(Clone)]
pub struct Sleeper(Arc<dyn Fn(Duration) -> SleepFuture + Send + Sync>);

impl Sleeper {
    /// Waits with `tokio::time::sleep`.
    pub fn tokio() -> Self {
        Sleeper(Arc::new(|d| Box::pin(tokio::time::sleep(d))))
    }

    pub fn new(f: impl Fn(Duration) -> SleepFuture + Send + Sync + 'static) -> Self {
        Sleeper(Arc::new(f))
    }

    pub fn sleep(&self, d: Duration) -> SleepFuture {
        (self.0)(d)
    }
}

impl Default for Sleeper {
    fn default() -> Self {
        Sleeper::tokio()
    }
}

impl fmt::Debug for Sleeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sleeper")
    }
}

/// The transport's retry rules (the official SDKs' rules, with more patience by default).
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retrying.
    pub max_retries: u32,
    /// The first backoff step; step n waits `initial_delay · 2^n`.
    pub initial_delay: Duration,
    /// The cap on one backoff step.
    pub max_delay: Duration,
    /// Each step is shortened by a random fraction up to this (0.25 = up to 25 %), so concurrent
    /// callers do not retry in lockstep.
    pub jitter: f64,
    /// A server's `retry-after` / `retry-after-ms` is honoured up to this; a longer one is
    /// replaced by the computed backoff (as the SDKs do), so one header cannot stall a run.
    pub max_server_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            jitter: 0.25,
            max_server_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (0-based); `unit` is a random number in [0, 1).
    pub fn backoff(&self, retry: u32, unit: f64) -> Duration {
        let factor = 2f64.powi(retry.min(30) as i32);
        let step = (self.initial_delay.as_secs_f64() * factor).min(self.max_delay.as_secs_f64());
        let shortened = step * (1.0 - self.jitter.clamp(0.0, 1.0) * unit.clamp(0.0, 1.0));
        Duration::from_secs_f64(shortened.max(0.0))
    }

    /// The delay a response asks for, when it asks for one we honour.
    pub fn server_delay(&self, headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
        let delay = requested_delay(headers, now)?;
        (delay <= self.max_server_delay).then_some(delay)
    }
}

/// `retry-after-ms` (milliseconds), else `retry-after` (seconds or an HTTP date).
pub(crate) fn requested_delay(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if let Some(delay) = delay_of_seconds(ms / 1000.0) {
            return Some(delay);
        }
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return delay_of_seconds(secs);
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A non-negative, finite number of seconds as a delay; one too large for a `Duration` (`1e300`)
/// saturates, so the caller's cap replaces it. Negative values and NaN ask for nothing.
fn delay_of_seconds(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 requires senders to
/// use for `retry-after`.
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let rest = text.trim().split_once(", ")?.1;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if *zone != "GMT" {
        return None;
    }
    let day: u32 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u32
        + 1;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<u32> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // Years outside 1..=9999 are no date a server means; they would also overflow the arithmetic.
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *s > 60 || !(1..=9999).contains(&year) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(*h) * 3600 + i64::from(*m) * 60 + i64::from(*s);
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What to do with a non-success response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// A transient condition: try again after a delay.
    Retry,
    /// Retrying cannot help: fail now.
    Fail,
    /// A 429 for an exhausted spend limit: no retry until someone raises the limit.
    SpendLimit,
}

/// Marker of an exhausted monthly spend limit in a 429 body (`error.details.error_code`).
const SPEND_LIMIT_CODE: &str = "enforced_spend_limit_reached";

/// Classifies a non-success status with its headers and body.
///
/// The statuses that can never succeed on a retry (400, 401, 402, 403, 404, 413) and an exhausted
/// spend limit fail even when `x-should-retry: true` says otherwise: repeating them only burns
/// time. Otherwise `x-should-retry` decides when present; without it 408, 409, 429 and 5xx
/// (529 overloaded included) are retried.
pub(crate) fn classify(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Disposition {
    let code = status.as_u16();
    if code == 429 && contains(body, SPEND_LIMIT_CODE.as_bytes()) {
        return Disposition::SpendLimit;
    }
    if matches!(code, 400 | 401 | 402 | 403 | 404 | 413) {
        return Disposition::Fail;
    }
    match headers
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
    {
        Some(v) if v.eq_ignore_ascii_case("true") => return Disposition::Retry,
        Some(v) if v.eq_ignore_ascii_case("false") => return Disposition::Fail,
        _ => {}
    }
    if matches!(code, 408 | 409 | 429) || status.is_server_error() {
        Disposition::Retry
    } else {
        Disposition::Fail
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

// ---------------------------------------------------------------------------------------------
// Transport
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
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(
                HeaderName::from_static(k),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn backoff_doubles_from_half_a_second_and_caps_at_eight() {
        let p = RetryPolicy::default();
        let steps: Vec<f64> = (0..7).map(|n| p.backoff(n, 0.0).as_secs_f64()).collect();
        assert_eq!(steps, vec![0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]);
    }

    #[test]
    fn jitter_shortens_a_step_by_at_most_a_quarter() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(2, 1.0), Duration::from_millis(1500));
        assert_eq!(p.backoff(2, 0.5), Duration::from_millis(1750));
        for n in 0..10 {
            let d = p.backoff(n, fastrand::f64());
            assert!(d <= Duration::from_secs(8));
            assert!(d >= p.backoff(n, 0.0).mul_f64(0.75));
        }
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after() {
        let now = SystemTime::now();
        let h = headers(&[("retry-after-ms", "250"), ("retry-after", "9")]);
        assert_eq!(requested_delay(&h, now), Some(Duration::from_millis(250)));
        let h = headers(&[("retry-after", "3")]);
        assert_eq!(requested_delay(&h, now), Some(Duration::from_secs(3)));
    }

    #[test]
    fn absurd_retry_headers_never_panic() {
        let now = SystemTime::now();
        let p = RetryPolicy::default();
        for (name, value) in [
            ("retry-after-ms", "1e300"),
            ("retry-after-ms", "-5"),
            ("retry-after-ms", "NaN"),
            ("retry-after-ms", "inf"),
            ("retry-after", "1e30"),
            ("retry-after", "1e400"),
            ("retry-after", "-1"),
            ("retry-after", "nan"),
            ("retry-after", "18446744073709551616"),
            ("retry-after", "Sun, 06 Nov 999999999999999 08:49:37 GMT"),
            ("retry-after", "Sun, 06 Nov -999999999999999 08:49:37 GMT"),
            ("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
        ] {
            let h = headers(&[(name, value)]);
            let delay = p.server_delay(&h, now);
            assert!(
                delay.is_none_or(|d| d <= p.max_server_delay),
                "{name}: {value} gave {delay:?}"
            );
        }
        let h = headers(&[("retry-after-ms", "1e300")]);
        assert_eq!(requested_delay(&h, now), Some(Duration::MAX));
    }

    #[test]
    fn retry_after_as_http_date() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        let h = headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT")]);
        assert_eq!(requested_delay(&h, now), Some(Duration::from_secs(10)));
        // A date in the past means "now".
        let h = headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:00 GMT")]);
        assert_eq!(requested_delay(&h, now), Some(Duration::ZERO));
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
        assert_eq!(parse_http_date("yesterday"), None);
        assert_eq!(
            parse_http_date("Thu, 29 Feb 2024 00:00:00 GMT"),
            Some(UNIX_EPOCH + Duration::from_secs(1_709_164_800))
        );
    }

    #[test]
    fn an_overlong_server_delay_falls_back_to_backoff() {
        let p = RetryPolicy::default();
        let h = headers(&[("retry-after", "3600")]);
        assert_eq!(p.server_delay(&h, SystemTime::now()), None);
        let h = headers(&[("retry-after", "60")]);
        assert_eq!(
            p.server_delay(&h, SystemTime::now()),
            Some(Duration::from_secs(60))
        );
    }

    #[test]
    fn classification_follows_the_sdk_rules() {
        let none = HeaderMap::new();
        let s = |c: u16| StatusCode::from_u16(c).unwrap();
        for code in [408, 409, 429, 500, 502, 503, 529] {
            assert_eq!(classify(s(code), &none, b""), Disposition::Retry, "{code}");
        }
        for code in [400, 401, 402, 403, 404, 413, 422, 301] {
            assert_eq!(classify(s(code), &none, b""), Disposition::Fail, "{code}");
        }
        let spend = br#"{"type":"error","error":{"type":"rate_limit_error","message":"limit","details":{"error_code":"enforced_spend_limit_reached"}}}"#;
        assert_eq!(classify(s(429), &none, spend), Disposition::SpendLimit);
    }

    #[test]
    fn x_should_retry_forces_or_forbids_but_never_revives_a_hard_status() {
        let yes = headers(&[("x-should-retry", "true")]);
        let no = headers(&[("x-should-retry", "false")]);
        let s = |c: u16| StatusCode::from_u16(c).unwrap();
        assert_eq!(classify(s(529), &no, b""), Disposition::Fail);
        assert_eq!(classify(s(422), &yes, b""), Disposition::Retry);
        assert_eq!(classify(s(401), &yes, b""), Disposition::Fail);
    }

    #[test]
    fn endpoint_drops_a_trailing_v1_and_hides_credentials_and_query() {
        let e = Endpoint::parse("http://user:pass-word-123@127.0.0.1:8080/v1/?key=abc#x").unwrap();
        assert_eq!(
            e.url("/v1/models").as_str(),
            "http://user:pass-word-123@127.0.0.1:8080/v1/models?key=abc"
        );
        assert_eq!(e.display("/v1/models"), "http://127.0.0.1:8080/v1/models");
        assert!(e.is_loopback());
        let e = Endpoint::parse("https://gateway.example/anthropic").unwrap();
        assert_eq!(
            e.display("/v1/messages"),
            "https://gateway.example/anthropic/v1/messages"
        );
        assert!(!e.is_loopback());
        assert!(Endpoint::parse("ftp://x").is_err());
        let err = Endpoint::parse("not a url?secret=1").unwrap_err();
        assert!(!err.cause.contains("secret"), "{}", err.cause);
    }

    #[test]
    fn answer_schemas_require_every_key() {
        let tool = answer_schema(QuestionKind::Tool);
        assert_eq!(
            tool["properties"]["scores"]["required"]
                .as_array()
                .unwrap()
                .len(),
            6
        );
        assert_eq!(
            tool["properties"]["scores"]["properties"]["purpose_clarity"]["properties"]["score"]
                ["enum"],
            json!([1, 2, 3, 4, 5])
        );
        let coherence = answer_schema(QuestionKind::Coherence);
        assert_eq!(
            coherence["required"],
            json!(["scores", "shadowing_risks", "summary"])
        );
        assert_eq!(
            coherence["properties"]["scores"]["required"],
            json!([
                "disambiguation",
                "naming_consistency",
                "tool_count_appropriateness",
                "completeness"
            ])
        );
    }

    #[test]
    fn api_key_debug_hides_the_value_and_refuses_header_breakers() {
        let key = ApiKey::new("  sk-ant-api03-test-value-1234\n").unwrap();
        assert!(!format!("{key:?}").contains("test-value"));
        assert_eq!(key.expose(), "sk-ant-api03-test-value-1234");
        assert!(!key.is_claude_oauth_token());
        assert!(ApiKey::new("two words-here").is_err());
        assert!(ApiKey::new("   ").is_err());
        assert!(ApiKey::new("sk-ant-oat01-abcdefgh")
            .unwrap()
            .is_claude_oauth_token());
    }

    #[test]
    fn server_errors_of_each_dialect_are_read() {
        let a = ServerError::parse(
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#,
        );
        assert_eq!(a.error_type.as_deref(), Some("overloaded_error"));
        assert_eq!(a.message.as_deref(), Some("Overloaded"));
        assert_eq!(a.request_id.as_deref(), Some("req_1"));
        let o = ServerError::parse(
            br#"{"error":{"message":"model not found","type":null,"code":"model_not_found"}}"#,
        );
        assert_eq!(o.error_type.as_deref(), Some("model_not_found"));
        let ollama = ServerError::parse(br#"{"error":"model \"x\" not found"}"#);
        assert_eq!(ollama.message.as_deref(), Some("model \"x\" not found"));
    }
}
