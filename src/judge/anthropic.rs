//! The judge over the Anthropic Messages API (`--judge anthropic`).
//!
//! Unlike the Claude Code judge, the system prompt reaches the model with nothing wrapped around it,
//! and the response names the model that really answered, so the pin is enforced exactly. It needs
//! a Console API key: the API refuses the OAuth tokens Claude Code uses.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::header::HeaderValue;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use crate::judge::http::{
    answer_schema, excerpt, parse_json_body, ApiKey, Endpoint, HttpOptions, HttpRequest,
    HttpTransport, Sampling,
};
use crate::judge::{CallFailure, Judge, JudgeInfo, Question, Reply, TokenUsage};
use tdqs_core::error::{Error, Stage};

pub(crate) const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub(crate) const DEFAULT_API_VERSION: &str = "2023-06-01";
pub const DEFAULT_TOKEN_ENV: &str = "ANTHROPIC_API_KEY";
/// Covers adaptive thinking plus the answer, and stays below the size at which the API expects a
/// streaming request for a call that may run past ten minutes.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 16_000;
/// The first API version that refuses `temperature`, `top_p` and `top_k` on every model.
pub(crate) const SAMPLING_FREE_API_VERSION: &str = "2026-10-21";

const MESSAGES_PATH: &str = "/v1/messages";
const BATCHES_PATH: &str = "/v1/messages/batches";

/// Whether the model thinks before answering. Claude Code runs the pinned model with adaptive
/// thinking, so that is the default: the closer the two judges, the more comparable their scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Thinking {
    #[default]
    Adaptive,
    /// No `thinking` field is sent.
    Off,
}

impl Thinking {
    pub fn as_str(self) -> &'static str {
        match self {
            Thinking::Adaptive => "adaptive",
            Thinking::Off => "off",
        }
    }
}

/// Everything that configures the Anthropic judge. [`AnthropicOptions::new`] gives the defaults;
/// the CLI overrides the fields its flags and the pins set.
#[derive(Debug, Clone)]
pub struct AnthropicOptions {
    /// `--base-url`: the API, a gateway, or a loopback stand-in.
    pub base_url: String,
    /// The pinned model; the response must name exactly this one.
    pub model: String,
    /// The `anthropic-version` header.
    pub api_version: String,
    /// `output_config.effort` (the pinned effort); `None` sends no effort.
    pub effort: Option<String>,
    /// `max_tokens`, thinking included.
    pub max_tokens: u32,
    pub thinking: Thinking,
    /// Sampling fields to send; none by default, because the pinned model refuses them.
    pub sampling: Sampling,
    /// Requests JSON shaped by the answer schema (`output_config.format`).
    pub structured_output: bool,
    /// Marks the system prompt cacheable: every tool question shares it, so later calls read it
    /// from the cache at a tenth of the price. It does not change answers.
    pub prompt_cache: bool,
    pub http: HttpOptions,
}

impl AnthropicOptions {
    pub fn new(model: impl Into<String>) -> Self {
        AnthropicOptions {
            base_url: DEFAULT_BASE_URL.to_string(),
            model: model.into(),
            api_version: DEFAULT_API_VERSION.to_string(),
            effort: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            thinking: Thinking::Adaptive,
            sampling: Sampling::none(),
            structured_output: true,
            prompt_cache: true,
            http: HttpOptions::default(),
        }
    }
}

/// The Messages API judge.
#[derive(Debug, Clone)]
pub struct AnthropicJudge {
    options: AnthropicOptions,
    endpoint: Endpoint,
    key: ApiKey,
    transport: HttpTransport,
}

impl AnthropicJudge {
    /// Builds the judge with the key read from the environment variable `token_env`
    /// (`--token-env`, default [`DEFAULT_TOKEN_ENV`]).
    pub fn from_env(options: AnthropicOptions, token_env: &str) -> Result<Self, Error> {
        let key = ApiKey::from_env(token_env).map_err(|e| {
            e.with_advice(format!(
                "--judge anthropic needs a Console API key: export {token_env}=sk-ant-api…, or \
                 name another variable with --token-env NAME; with a Claude subscription use \
                 --judge claude-code instead"
            ))
        })?;
        Self::new(options, key)
    }

    /// Builds the judge with a key already at hand. Checks the options and the key; makes no
    /// request.
    pub fn new(options: AnthropicOptions, key: ApiKey) -> Result<Self, Error> {
        if key.is_claude_oauth_token() {
            return Err(Error::new(
                Stage::Judge,
                format!(
                    "{} holds a Claude Code OAuth token (sk-ant-oat…), which the Messages API \
                     does not accept",
                    key.origin()
                ),
            )
            .with_advice(
                "use --judge claude-code --token-env NAME to score with that token, or give \
                 --judge anthropic a Console API key (sk-ant-api…)",
            ));
        }
        validate(&options)?;
        let endpoint = Endpoint::parse(&options.base_url)?;
        let transport = HttpTransport::new(&options.http, Some(&key))?;
        Ok(AnthropicJudge {
            options,
            endpoint,
            key,
            transport,
        })
    }

    pub fn options(&self) -> &AnthropicOptions {
        &self.options
    }

    /// The request body for one question. Public so a batch submission sends exactly what a
    /// direct call would.
    pub fn request_body(&self, question: &Question) -> Value {
        let o = &self.options;
        let mut body = Map::new();
        body.insert("model".into(), json!(o.model));
        body.insert("max_tokens".into(), json!(o.max_tokens));
        if !question.system.is_empty() {
            let system = if o.prompt_cache {
                json!([{
                    "type": "text",
                    "text": question.system,
                    "cache_control": {"type": "ephemeral"}
                }])
            } else {
                json!(question.system)
            };
            body.insert("system".into(), system);
        }
        body.insert(
            "messages".into(),
            json!([{"role": "user", "content": question.user}]),
        );
        let mut output_config = Map::new();
        if let Some(effort) = &o.effort {
            output_config.insert("effort".into(), json!(effort));
        }
        // A selection's `arguments` is open (each tool has its own schema), which structured
        // output refuses: the prompt alone asks for the JSON, and the answer is validated.
        if o.structured_output && !question.kind.open_schema() {
            output_config.insert(
                "format".into(),
                json!({"type": "json_schema", "schema": answer_schema(question.kind)}),
            );
        }
        if !output_config.is_empty() {
            body.insert("output_config".into(), Value::Object(output_config));
        }
        if o.thinking == Thinking::Adaptive {
            body.insert("thinking".into(), json!({"type": "adaptive"}));
        }
        o.sampling.write_into(&mut body);
        body.insert("stream".into(), json!(false));
        Value::Object(body)
    }

    fn request(&self, url_path: &str, body: Option<&Value>) -> HttpRequest {
        let url = self.endpoint.url(url_path);
        let request = match body {
            Some(body) => HttpRequest::post_json(url, body),
            None => HttpRequest::get(url),
        };
        let version = HeaderValue::from_str(&self.options.api_version)
            .unwrap_or_else(|_| HeaderValue::from_static(DEFAULT_API_VERSION));
        request
            .header("x-api-key", self.key.header_value(""))
            .header("anthropic-version", version)
    }

    /// Reads a Message object (a direct response, or one line of batch results) into a reply,
    /// enforcing the pin and the stop reason.
    pub fn interpret_message(&self, message: &Value) -> Result<Reply, CallFailure> {
        let redact = |s: String| self.transport.redact(&s);
        let Some(content) = message.get("content").and_then(Value::as_array) else {
            return Err(CallFailure::retryable(redact(
                "the Messages API response has no `content` array".to_string(),
            ))
            .with_detail(redact(excerpt(&message.to_string()))));
        };
        let model = message.get("model").and_then(Value::as_str);
        if model != Some(self.options.model.as_str()) {
            let answered = model.map_or_else(|| "no model".to_string(), |m| format!("{m:?}"));
            return Err(CallFailure::retryable(redact(format!(
                "the answer came from {answered}, not the pinned model {:?}",
                self.options.model
            )))
            .with_detail(
                "help: a gateway or proxy behind --base-url substituted another model; scores \
                 from another model are not comparable",
            ));
        }
        let usage = usage_of(message.get("usage"));
        let stop_reason = message
            .get("stop_reason")
            .and_then(Value::as_str)
            .unwrap_or("");
        match stop_reason {
            "end_turn" | "stop_sequence" => {}
            "max_tokens" => {
                return Err(CallFailure::retryable(format!(
                    "the answer was cut off at max_tokens ({}) before it was complete",
                    self.options.max_tokens
                ))
                .with_detail("help: raise --max-tokens, or lower the pinned effort"));
            }
            "refusal" => {
                return Err(CallFailure::retryable(
                    "the model refused to answer (stop_reason refusal)",
                )
                .with_detail(redact(excerpt(&text_of(content)))));
            }
            other => {
                return Err(CallFailure::retryable(redact(format!(
                    "the answer stopped for an unexpected reason {other:?}"
                ))));
            }
        }
        let text = text_of(content);
        if text.trim().is_empty() {
            return Err(CallFailure::retryable(
                "the answer holds no text block (only thinking or nothing)",
            ));
        }
        Ok(Reply {
            text,
            model: model.map(str::to_string),
            usage,
        })
    }
}

fn validate(o: &AnthropicOptions) -> Result<(), Error> {
    let usage =
        |cause: String, advice: &str| Err(Error::new(Stage::Usage, cause).with_advice(advice));
    if o.model.trim().is_empty() {
        return usage(
            "the Anthropic judge has no model".into(),
            "pin the model in the pins file or give --model",
        );
    }
    if o.max_tokens == 0 {
        return usage("max_tokens must be at least 1".into(), "raise --max-tokens");
    }
    if HeaderValue::from_str(&o.api_version).is_err() || o.api_version.trim().is_empty() {
        return usage(
            format!(
                "the anthropic-version {:?} is not a header value",
                o.api_version
            ),
            "give a version such as 2023-06-01",
        );
    }
    if o.effort.as_deref().is_some_and(|e| e.trim().is_empty()) {
        return usage(
            "the effort is empty".into(),
            "pin an effort such as high, or none",
        );
    }
    if o.sampling.seed.is_some() {
        return usage(
            "the Messages API has no seed parameter".into(),
            "remove the seed from the Anthropic judge's sampling settings",
        );
    }
    o.sampling.validate(1.0)?;
    // Dates compare correctly as strings in their fixed ISO form.
    if !o.sampling.is_empty() && o.api_version.as_str() >= SAMPLING_FREE_API_VERSION {
        return usage(
            format!(
                "anthropic-version {} refuses temperature, top_p and top_k on every model",
                o.api_version
            ),
            "remove the sampling settings, or use an older anthropic-version",
        );
    }
    Ok(())
}

#[async_trait]
impl Judge for AnthropicJudge {
    /// Records what answers depend on. Transport settings (timeouts, retries), prompt caching
    /// and batch delivery do not change an answer, so they are left out: toggling them must not
    /// make two runs incomparable.
    fn info(&self) -> JudgeInfo {
        let o = &self.options;
        JudgeInfo {
            mode: "anthropic".to_string(),
            model: o.model.clone(),
            model_judged: true,
            settings: json!({
                "judge": "anthropic",
                "model": o.model,
                "endpoint": self.endpoint.display(MESSAGES_PATH),
                "apiVersion": o.api_version,
                "effort": o.effort,
                "maxTokens": o.max_tokens,
                "thinking": o.thinking.as_str(),
                "structuredOutput": o.structured_output,
                "sampling": o.sampling.settings(),
            }),
        }
    }

    /// Confirms, with the free model lookup `GET /v1/models/{model}`, that the key is accepted and
    /// the endpoint answers, so a bad key stops the run before any export work. A gateway that
    /// lacks the lookup only earns a warning.
    async fn preflight(&self) -> Result<Vec<String>, Error> {
        let mut warnings = Vec::new();
        if !self.endpoint.is_https() && !self.endpoint.is_loopback() {
            warnings.push(format!(
                "the Anthropic judge sends its API key over cleartext HTTP to {}",
                self.endpoint.display(MESSAGES_PATH)
            ));
        }
        let path = format!("/v1/models/{}", self.options.model);
        match self.transport.send(&self.request(&path, None)).await {
            Ok(_) => {}
            Err(failure) if failure.stops_a_run() => {
                return Err(failure.into_error().context("judge preflight"))
            }
            Err(failure) => warnings.push(format!(
                "could not confirm the model through {}: {}",
                self.endpoint.display(&path),
                failure.message
            )),
        }
        Ok(warnings)
    }

    async fn ask(&self, question: &Question) -> Result<Reply, CallFailure> {
        let body = self.request_body(question);
        let response = self
            .transport
            .send(&self.request(MESSAGES_PATH, Some(&body)))
            .await
            .map_err(|f| f.into_call_failure())?;
        let message = parse_json_body(&self.transport, &response, "Messages API")?;
        self.interpret_message(&message)
    }
}

/// The answer text: every text block in order; thinking blocks are the model's scratch work.
fn text_of(content: &[Value]) -> String {
    content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect()
}

fn usage_of(usage: Option<&Value>) -> TokenUsage {
    let n = |key: &str| {
        usage
            .and_then(|u| u.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    TokenUsage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_read_input_tokens: n("cache_read_input_tokens"),
        cache_creation_input_tokens: n("cache_creation_input_tokens"),
    }
}

// ---------------------------------------------------------------------------------------------
// Message Batches
// ---------------------------------------------------------------------------------------------

/// How questions are scored through the Message Batches API (half the price, answers within
/// 24 hours, most within an hour).
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// [`AnthropicBatchJudge`] submits once no new question has arrived for this long.
    pub collect_window: Duration,
    /// The wait between two status polls.
    pub poll_interval: Duration,
    /// Gives up (and cancels the batch) after polling this long; the API expires a batch after
    /// 24 hours.
    pub max_wait: Duration,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            collect_window: Duration::from_secs(2),
            poll_interval: Duration::from_secs(30),
            max_wait: Duration::from_secs(25 * 3600),
        }
    }
}

/// The result of each question of a batch, in the order the questions were given.
pub(crate) type BatchResults = Vec<Result<Reply, CallFailure>>;

impl AnthropicJudge {
    /// Scores `questions` as one message batch: creates it, polls until it has ended, and reads
    /// the results by `custom_id`. Each answer gets the same checks as a direct call (pinned model,
    /// stop reason). The outer error is a failure of the batch as a whole (creation, polling,
    /// download, time limit); it is not retryable, like any transport failure.
    pub async fn run_batch(
        &self,
        questions: &[Question],
        options: &BatchOptions,
    ) -> Result<BatchResults, CallFailure> {
        if questions.is_empty() {
            return Ok(Vec::new());
        }
        // Sequential ids: they meet the API's `^[a-zA-Z0-9_-]{1,64}$` and map back by index.
        let ids: Vec<String> = (0..questions.len()).map(|i| format!("q{i:06}")).collect();
        let requests: Vec<Value> = questions
            .iter()
            .zip(&ids)
            .map(|(q, id)| {
                let mut params = self.request_body(q);
                if let Some(o) = params.as_object_mut() {
                    o.remove("stream");
                }
                json!({"custom_id": id, "params": params})
            })
            .collect();
        let created = self
            .batch_call(BATCHES_PATH, Some(&json!({ "requests": requests })))
            .await?;
        let batch_id = created
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| {
                !id.is_empty()
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
            .map(str::to_string)
            .ok_or_else(|| {
                CallFailure::fatal("the batch was created without a usable id")
                    .with_detail(self.transport.redact(&excerpt(&created.to_string())))
            })?;
        let status_path = format!("{BATCHES_PATH}/{batch_id}");
        let mut status = created;
        let mut waited = Duration::ZERO;
        while status.get("processing_status").and_then(Value::as_str) != Some("ended") {
            if waited >= options.max_wait {
                // Best effort: an abandoned batch would still be billed for what it runs.
                let _ = self
                    .batch_call(&format!("{status_path}/cancel"), Some(&json!({})))
                    .await;
                return Err(CallFailure::fatal(format!(
                    "message batch {batch_id} had not ended after {} s; it was cancelled",
                    waited.as_secs()
                )));
            }
            self.options.http.sleeper.sleep(options.poll_interval).await;
            waited += options.poll_interval;
            status = self.batch_call(&status_path, None).await?;
        }
        // The results are read from our own endpoint, not from `results_url`: the key must go
        // only to the host the user named.
        let results_path = format!("{status_path}/results");
        let response = self
            .transport
            .send(&self.request(&results_path, None))
            .await
            .map_err(|f| f.into_call_failure())?;
        let mut by_id: HashMap<String, Value> = HashMap::new();
        for line in String::from_utf8_lossy(&response.body).lines() {
            if line.trim().is_empty() {
                continue;
            }
            let entry: Value = serde_json::from_str(line).map_err(|e| {
                CallFailure::fatal(format!(
                    "a line of the results of message batch {batch_id} is not JSON ({e})"
                ))
                .with_detail(self.transport.redact(&excerpt(line)))
            })?;
            if let Some(id) = entry.get("custom_id").and_then(Value::as_str) {
                by_id.insert(
                    id.to_string(),
                    entry.get("result").cloned().unwrap_or(Value::Null),
                );
            }
        }
        Ok(ids
            .iter()
            .map(|id| match by_id.remove(id) {
                Some(result) => self.batch_result(&batch_id, &result),
                None => Err(CallFailure::retryable(format!(
                    "message batch {batch_id} returned no result for {id}"
                ))),
            })
            .collect())
    }

    async fn batch_call(&self, path: &str, body: Option<&Value>) -> Result<Value, CallFailure> {
        let response = self
            .transport
            .send(&self.request(path, body))
            .await
            .map_err(|f| f.into_call_failure())?;
        parse_json_body(&self.transport, &response, "Message Batches").map_err(|mut f| {
            f.retryable = false;
            f
        })
    }

    /// One result of a batch: `succeeded` with a message, or `errored`, `canceled`, `expired`.
    fn batch_result(&self, batch_id: &str, result: &Value) -> Result<Reply, CallFailure> {
        match result.get("type").and_then(Value::as_str) {
            Some("succeeded") => match result.get("message") {
                Some(message) => self.interpret_message(message),
                None => Err(CallFailure::retryable(
                    "a succeeded batch result carries no message",
                )),
            },
            Some("errored") => {
                let error = result.get("error").map(|e| e.get("error").unwrap_or(e));
                let kind = error
                    .and_then(|e| e.get("type"))
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                let text = error
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let message = self.transport.redact(&format!(
                    "the request failed inside message batch {batch_id} ({kind}): {}",
                    excerpt(text)
                ));
                // A malformed request fails the same way every time; anything else (an
                // overloaded server) may succeed when asked again.
                if kind == "invalid_request_error" {
                    Err(CallFailure::fatal(message))
                } else {
                    Err(CallFailure::retryable(message))
                }
            }
            Some(other @ ("canceled" | "expired")) => Err(CallFailure::retryable(format!(
                "the request was {other} before message batch {batch_id} ran it"
            ))),
            _ => Err(CallFailure::retryable(format!(
                "message batch {batch_id} returned a result of unknown shape"
            ))
            .with_detail(self.transport.redact(&excerpt(&result.to_string())))),
        }
    }
}

/// The Anthropic judge delivering through Message Batches (`--batch`).
///
/// It plugs into the scorer like any judge: questions asked at about the same time (the scorer
/// should run with a concurrency at least the number of questions) are collected until none has
/// arrived for `collect_window`, then sent as one batch. A question asked a second time (the
/// scorer retrying an invalid answer) goes directly to the Messages API, so a retry does not
/// wait another batch round. Scorer-side per-call timeouts must allow for batch latency.
#[derive(Debug)]
pub struct AnthropicBatchJudge {
    inner: AnthropicJudge,
    options: BatchOptions,
    state: Mutex<Collector>,
}

#[derive(Debug)]
struct Collector {
    queue: Vec<(Question, oneshot::Sender<Result<Reply, CallFailure>>)>,
    /// True while one caller is collecting the queue into a batch.
    leader: bool,
    last_arrival: Instant,
    /// Digests of every question already sent in a batch.
    asked: HashSet<[u8; 32]>,
}

impl AnthropicBatchJudge {
    pub fn new(inner: AnthropicJudge, options: BatchOptions) -> Self {
        AnthropicBatchJudge {
            inner,
            options,
            state: Mutex::new(Collector {
                queue: Vec::new(),
                leader: false,
                last_arrival: Instant::now(),
                asked: HashSet::new(),
            }),
        }
    }

    pub fn inner(&self) -> &AnthropicJudge {
        &self.inner
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Collector> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until no question has arrived for the collect window, then takes the queue.
    async fn collect(&self) -> Vec<(Question, oneshot::Sender<Result<Reply, CallFailure>>)> {
        let mut guard = LeaderGuard {
            judge: self,
            armed: true,
        };
        loop {
            let wait = {
                let mut state = self.lock();
                let quiet = state.last_arrival.elapsed();
                if quiet >= self.options.collect_window {
                    state.leader = false;
                    guard.armed = false;
                    return std::mem::take(&mut state.queue);
                }
                self.options.collect_window - quiet
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// Releases the queue when the collecting call is cancelled mid-wait: the waiting callers get a
/// retryable failure instead of waiting for a batch nobody will send.
struct LeaderGuard<'a> {
    judge: &'a AnthropicBatchJudge,
    armed: bool,
}

impl Drop for LeaderGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let mut state = self.judge.lock();
            state.leader = false;
            state.queue.clear();
        }
    }
}

fn question_digest(q: &Question) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(format!("{:?}", q.kind).as_bytes());
    hasher.update([0]);
    hasher.update(q.system.as_bytes());
    hasher.update([0]);
    hasher.update(q.user.as_bytes());
    hasher.finalize().into()
}

#[async_trait]
impl Judge for AnthropicBatchJudge {
    fn info(&self) -> JudgeInfo {
        self.inner.info()
    }

    async fn preflight(&self) -> Result<Vec<String>, Error> {
        self.inner.preflight().await
    }

    async fn ask(&self, question: &Question) -> Result<Reply, CallFailure> {
        let queued = {
            let mut state = self.lock();
            if state.asked.insert(question_digest(question)) {
                let (tx, rx) = oneshot::channel();
                state.queue.push((question.clone(), tx));
                state.last_arrival = Instant::now();
                let leads = !state.leader;
                state.leader = true;
                Some((rx, leads))
            } else {
                None
            }
        };
        let Some((rx, leads)) = queued else {
            return self.inner.ask(question).await;
        };
        if leads {
            let pending = self.collect().await;
            let (questions, senders): (Vec<Question>, Vec<_>) = pending.into_iter().unzip();
            match self.inner.run_batch(&questions, &self.options).await {
                Ok(results) => {
                    for (tx, result) in senders.into_iter().zip(results) {
                        let _ = tx.send(result);
                    }
                }
                Err(failure) => {
                    for tx in senders {
                        let _ = tx.send(Err(failure.clone()));
                    }
                }
            }
        }
        rx.await.unwrap_or_else(|_| {
            Err(CallFailure::retryable(
                "the call collecting this question into a batch was cancelled",
            ))
        })
    }
}
