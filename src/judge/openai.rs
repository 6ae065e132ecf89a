//! The judge over an OpenAI-compatible chat-completions endpoint (`--judge openai`): OpenAI itself,
//! vLLM, llama.cpp's `llama-server`, Ollama, gateways.
//!
//! Such a server can only cooperate with the pin: it reports the model name it was asked for, and
//! some (llama.cpp, Ollama) merely echo it. The judge therefore also records what the server's
//! `GET /v1/models` lists, and warns that the pin cannot be proven.

use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use crate::judge::http::{
    answer_schema, answer_schema_name, excerpt, parse_json_body, ApiKey, Endpoint, HttpOptions,
    HttpRequest, HttpTransport, Sampling,
};
use crate::judge::{CallFailure, Judge, JudgeInfo, Question, Reply, TokenUsage};
use tdqs_core::error::{Error, Stage};

/// The seed sent by default: any fixed value makes sampling repeatable where the server supports
/// seeds; what matters is that it is recorded and equal across runs.
pub(crate) const DEFAULT_SEED: u64 = 42;
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;

const CHAT_PATH: &str = "/v1/chat/completions";
const MODELS_PATH: &str = "/v1/models";

/// How JSON output is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseFormat {
    /// `{"type":"json_schema","json_schema":{"name","schema","strict":true}}`: understood by
    /// OpenAI, vLLM, Ollama and llama.cpp.
    #[default]
    JsonSchema,
    /// `{"type":"json_object"}`, for servers without schema support.
    JsonObject,
    /// No `response_format`: the prompt alone asks for JSON.
    None,
}

impl ResponseFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseFormat::JsonSchema => "json_schema",
            ResponseFormat::JsonObject => "json_object",
            ResponseFormat::None => "none",
        }
    }
}

/// Everything that configures the OpenAI-compatible judge.
#[derive(Debug, Clone)]
pub struct OpenAiOptions {
    /// `--base-url`, with or without the trailing `/v1`.
    pub base_url: String,
    /// `--model`, else the pinned model.
    pub model: String,
    /// Temperature 0 and a fixed seed by default: Ollama substitutes temperature 1.0 when the field
    /// is absent.
    pub sampling: Sampling,
    /// `max_tokens`; `None` leaves the server's default.
    pub max_tokens: Option<u32>,
    pub response_format: ResponseFormat,
    pub http: HttpOptions,
}

impl OpenAiOptions {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiOptions {
            base_url: base_url.into(),
            model: model.into(),
            sampling: Sampling::deterministic(DEFAULT_SEED),
            max_tokens: Some(DEFAULT_MAX_TOKENS),
            response_format: ResponseFormat::JsonSchema,
            http: HttpOptions::default(),
        }
    }
}

/// What the preflight learned from `GET /v1/models`.
#[derive(Debug, Clone, PartialEq)]
struct Listing {
    /// Every model id the server lists, sorted.
    ids: Vec<String>,
    /// The entry of the requested model, without fields that change between calls (`created`:
    /// llama.cpp fills it with the current time).
    entry: Option<Value>,
}

/// The chat-completions judge.
#[derive(Debug)]
pub struct OpenAiJudge {
    options: OpenAiOptions,
    endpoint: Endpoint,
    key: Option<ApiKey>,
    transport: HttpTransport,
    /// Filled by `preflight`; part of the settings, so base and head agree on it.
    listing: Mutex<Option<Listing>>,
}

impl OpenAiJudge {
    /// Builds the judge; with `token_env` the key is read from that variable, which must then be
    /// set (a local server usually needs no key, so there is no default variable).
    pub fn from_env(options: OpenAiOptions, token_env: Option<&str>) -> Result<Self, Error> {
        let key = match token_env {
            Some(var) => Some(ApiKey::from_env(var)?),
            None => None,
        };
        Self::new(options, key)
    }

    pub fn new(options: OpenAiOptions, key: Option<ApiKey>) -> Result<Self, Error> {
        if options.model.trim().is_empty() {
            return Err(
                Error::new(Stage::Usage, "the OpenAI-compatible judge has no model")
                    .with_advice("give --model NAME, exactly as the server lists it"),
            );
        }
        if options.max_tokens == Some(0) {
            return Err(Error::new(Stage::Usage, "max_tokens must be at least 1")
                .with_advice("raise --max-tokens"));
        }
        options.sampling.validate(2.0)?;
        let endpoint = Endpoint::parse(&options.base_url)?;
        let transport = HttpTransport::new(&options.http, key.as_ref())?;
        Ok(OpenAiJudge {
            options,
            endpoint,
            key,
            transport,
            listing: Mutex::new(None),
        })
    }

    pub fn options(&self) -> &OpenAiOptions {
        &self.options
    }

    /// The request body for one question.
    pub fn request_body(&self, question: &Question) -> Value {
        let o = &self.options;
        let mut messages = Vec::new();
        if !question.system.is_empty() {
            messages.push(json!({"role": "system", "content": question.system}));
        }
        messages.push(json!({"role": "user", "content": question.user}));
        let mut body = Map::new();
        body.insert("model".into(), json!(o.model));
        body.insert("messages".into(), Value::Array(messages));
        o.sampling.write_into(&mut body);
        if let Some(max) = o.max_tokens {
            body.insert("max_tokens".into(), json!(max));
        }
        body.insert("stream".into(), json!(false));
        match o.response_format {
            ResponseFormat::JsonSchema => {
                body.insert(
                    "response_format".into(),
                    json!({
                        "type": "json_schema",
                        "json_schema": {
                            "name": answer_schema_name(question.kind),
                            "schema": answer_schema(question.kind),
                            // A selection's `arguments` is open (each tool has its own
                            // schema), which strict modes refuse.
                            "strict": !question.kind.open_schema()
                        }
                    }),
                );
            }
            ResponseFormat::JsonObject => {
                body.insert("response_format".into(), json!({"type": "json_object"}));
            }
            ResponseFormat::None => {}
        }
        Value::Object(body)
    }

    fn request(&self, path: &str, body: Option<&Value>) -> HttpRequest {
        let url = self.endpoint.url(path);
        let request = match body {
            Some(body) => HttpRequest::post_json(url, body),
            None => HttpRequest::get(url),
        };
        match &self.key {
            Some(key) => request.header("authorization", key.header_value("Bearer ")),
            None => request,
        }
    }

    /// Reads a chat completion into a reply, enforcing the model name and the finish reason.
    pub fn interpret_completion(&self, completion: &Value) -> Result<Reply, CallFailure> {
        let redact = |s: String| self.transport.redact(&s);
        let model = completion.get("model").and_then(Value::as_str);
        if model != Some(self.options.model.as_str()) {
            let answered = model.map_or_else(|| "no model".to_string(), |m| format!("{m:?}"));
            return Err(CallFailure::retryable(redact(format!(
                "the server reports the answer came from {answered}, not the requested model {:?}",
                self.options.model
            )))
            .with_detail(
                "help: give --model exactly as the server reports it (a dated snapshot name, or \
                 the served model name)",
            ));
        }
        let Some(choice) = completion
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Err(
                CallFailure::retryable("the chat completion has no choices".to_string())
                    .with_detail(redact(excerpt(&completion.to_string()))),
            );
        };
        let usage = usage_of(completion.get("usage"));
        let message = choice.get("message");
        let text = message.map(content_text).unwrap_or_default();
        match choice.get("finish_reason").and_then(Value::as_str) {
            Some("length") => {
                let limit = self
                    .options
                    .max_tokens
                    .map_or_else(|| "the server's limit".to_string(), |m| m.to_string());
                return Err(CallFailure::retryable(format!(
                    "the answer was cut off at max_tokens ({limit}) before it was complete"
                ))
                .with_detail("help: raise --max-tokens"));
            }
            Some("content_filter") => {
                return Err(CallFailure::retryable(
                    "the server's content filter stopped the answer",
                ));
            }
            _ => {}
        }
        if let Some(refusal) = message
            .and_then(|m| m.get("refusal"))
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
        {
            return Err(CallFailure::retryable("the model refused to answer")
                .with_detail(redact(excerpt(refusal))));
        }
        if text.trim().is_empty() {
            return Err(CallFailure::retryable(
                "the chat completion's message has no text content",
            ));
        }
        Ok(Reply {
            text,
            model: model.map(str::to_string),
            usage,
        })
    }

    fn listing_settings(&self) -> (Value, Value) {
        let guard = self.listing.lock().unwrap_or_else(|e| e.into_inner());
        match &*guard {
            Some(listing) => (
                json!(listing.ids),
                listing.entry.clone().unwrap_or(Value::Null),
            ),
            None => (Value::Null, Value::Null),
        }
    }
}

#[async_trait]
impl Judge for OpenAiJudge {
    fn info(&self) -> JudgeInfo {
        let o = &self.options;
        let (served, entry) = self.listing_settings();
        JudgeInfo {
            mode: "openai".to_string(),
            model: o.model.clone(),
            model_judged: true,
            settings: json!({
                "judge": "openai",
                "model": o.model,
                "endpoint": self.endpoint.display(CHAT_PATH),
                "maxTokens": o.max_tokens,
                "responseFormat": o.response_format.as_str(),
                "sampling": o.sampling.settings(),
                "servedModels": served,
                "servedModel": entry,
            }),
        }
    }

    /// Reads `GET /v1/models` once and records it in the settings. A server without the listing
    /// earns a warning; an unreachable server or a refused key stops the run here.
    async fn preflight(&self) -> Result<Vec<String>, Error> {
        let mut warnings = vec![format!(
            "the OpenAI-compatible judge cannot prove which weights answered: the server only \
             reports the model name {:?}; the pin is as good as the server behind {}",
            self.options.model,
            self.endpoint.display(CHAT_PATH)
        )];
        if self.key.is_some() && !self.endpoint.is_https() && !self.endpoint.is_loopback() {
            warnings.push(format!(
                "the judge sends its API key over cleartext HTTP to {}",
                self.endpoint.display(CHAT_PATH)
            ));
        }
        let listing = match self.transport.send(&self.request(MODELS_PATH, None)).await {
            Ok(response) => match serde_json::from_slice::<Value>(&response.body) {
                Ok(value) => Some(read_listing(&value, &self.options.model)),
                Err(_) => {
                    warnings.push(format!(
                        "{} did not answer with JSON; the served models are not recorded",
                        self.endpoint.display(MODELS_PATH)
                    ));
                    None
                }
            },
            Err(failure) if failure.stops_a_run() => {
                return Err(failure.into_error().context("judge preflight"))
            }
            Err(failure) => {
                warnings.push(format!(
                    "the server's model listing is unavailable, so the served models are not \
                     recorded: {}",
                    failure.message
                ));
                None
            }
        };
        if let Some(listing) = &listing {
            if listing.entry.is_none() {
                warnings.push(self.transport.redact(&format!(
                    "the server does not list the model {:?}; it lists: {}",
                    self.options.model,
                    if listing.ids.is_empty() {
                        "nothing".to_string()
                    } else {
                        listing.ids.join(", ")
                    }
                )));
            }
        }
        *self.listing.lock().unwrap_or_else(|e| e.into_inner()) = listing;
        Ok(warnings)
    }

    async fn ask(&self, question: &Question) -> Result<Reply, CallFailure> {
        let body = self.request_body(question);
        let response = self
            .transport
            .send(&self.request(CHAT_PATH, Some(&body)))
            .await
            .map_err(|f| f.into_call_failure())?;
        let completion = parse_json_body(&self.transport, &response, "chat completions")?;
        self.interpret_completion(&completion)
    }
}

fn read_listing(value: &Value, model: &str) -> Listing {
    let data = value
        .get("data")
        .or_else(|| value.get("models"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let id_of = |m: &Value| {
        m.get("id")
            .or_else(|| m.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut ids: Vec<String> = data.iter().filter_map(id_of).collect();
    ids.sort();
    ids.dedup();
    let entry = data
        .iter()
        .find(|m| id_of(m).as_deref() == Some(model))
        .map(|m| {
            let mut m = m.clone();
            if let Some(o) = m.as_object_mut() {
                o.remove("created");
            }
            m
        });
    Listing { ids, entry }
}

/// The message text: a string, or the text parts of a content array.
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// OpenAI counts cached prompt tokens inside `prompt_tokens`; they are split out so the totals
/// mean the same as the Anthropic judge's (`input_tokens` excludes cache reads).
fn usage_of(usage: Option<&Value>) -> TokenUsage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
    let prompt = n(usage.and_then(|u| u.get("prompt_tokens")));
    let cached = n(usage
        .and_then(|u| u.get("prompt_tokens_details"))
        .and_then(|d| d.get("cached_tokens")))
    .min(prompt);
    TokenUsage {
        input_tokens: prompt - cached,
        output_tokens: n(usage.and_then(|u| u.get("completion_tokens"))),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    }
}
