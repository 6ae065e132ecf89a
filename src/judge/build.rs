//! Building the judge the options ask for, and the digest that makes scores comparable.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::anthropic::{AnthropicBatchJudge, AnthropicJudge, AnthropicOptions, BatchOptions};
use super::claude_code::{ClaudeCodeConfig, ClaudeCodeJudge, OauthToken};
use super::openai::{OpenAiJudge, OpenAiOptions};
use super::static_judge::StaticJudge;
use super::{Judge, JudgeInfo};
use tdqs_core::error::{Error, Stage};
use tdqs_core::spec::pins::{digest_value, Pins};

/// Which judge answers the questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JudgeMode {
    #[default]
    ClaudeCode,
    Anthropic,
    Openai,
    Static,
}

impl JudgeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeMode::ClaudeCode => "claude-code",
            JudgeMode::Anthropic => "anthropic",
            JudgeMode::Openai => "openai",
            JudgeMode::Static => "static",
        }
    }
}

/// The judge and how it is reached, as the command line and `tdqs-gate.toml` resolve them.
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    pub mode: JudgeMode,
    pub pins: Option<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    pub spec_url: Option<String>,
    pub token_env: Option<String>,
    pub concurrency: usize,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub claude: Option<PathBuf>,
    pub call_timeout: Option<Duration>,
    /// Anthropic Message Batches instead of one request per question.
    pub batch: bool,
}

impl JudgeOptions {
    /// Questions asked at once. A batch must see every question of a pair together.
    pub fn effective_concurrency(&self) -> usize {
        if self.batch {
            100_000
        } else {
            self.concurrency.max(1)
        }
    }
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            mode: JudgeMode::ClaudeCode,
            pins: None,
            cache_dir: None,
            spec_url: None,
            token_env: None,
            concurrency: 6,
            model: None,
            base_url: None,
            claude: None,
            call_timeout: None,
            batch: false,
        }
    }
}

/// The default credential variable of each judge.
pub(crate) fn default_token_env(mode: JudgeMode) -> Option<&'static str> {
    match mode {
        JudgeMode::Anthropic => Some("ANTHROPIC_API_KEY"),
        // Without --token-env the Claude Code judge uses the local login.
        JudgeMode::ClaudeCode | JudgeMode::Openai | JudgeMode::Static => None,
    }
}

/// Names of environment variables that carry the gate's secrets: never passed to a server.
pub(crate) fn secret_env_names(opts: &JudgeOptions) -> Vec<String> {
    let mut names = vec![
        "ANTHROPIC_API_KEY".to_string(),
        "ANTHROPIC_AUTH_TOKEN".to_string(),
        "CLAUDE_CODE_OAUTH_TOKEN".to_string(),
        "OPENAI_API_KEY".to_string(),
        // Signs the answer cache: a server that read it could forge answers the gate trusts.
        crate::score::answer_cache::KEY_ENV.to_string(),
    ];
    if let Some(name) = &opts.token_env {
        names.push(name.clone());
    }
    names
}

/// Builds the judge. Nothing is run yet; see [`Judge::preflight`].
pub fn build(opts: &JudgeOptions, pins: &Pins) -> Result<Arc<dyn Judge>, Error> {
    let token_env = opts
        .token_env
        .clone()
        .or_else(|| default_token_env(opts.mode).map(str::to_string));
    match opts.mode {
        JudgeMode::Static => Ok(Arc::new(StaticJudge::new())),
        JudgeMode::ClaudeCode => {
            if opts.model.is_some() {
                return Err(Error::usage(
                    "--model does not apply to the Claude Code judge: it always asks the pinned model",
                )
                .with_advice("drop --model, or use --pins with another model"));
            }
            let mut config = ClaudeCodeConfig::new(pins.model(), pins.cli_version());
            config.effort = pins.judge().effort.clone();
            config.program = opts.claude.clone();
            config.base_url = opts.base_url.clone();
            if let Some(t) = opts.call_timeout {
                config.timeout = t;
            }
            if let Some(name) = &token_env {
                config.token = Some(OauthToken::from_env(name)?);
            }
            Ok(Arc::new(ClaudeCodeJudge::new(config)?))
        }
        JudgeMode::Anthropic => {
            let mut options = AnthropicOptions::new(pins.model());
            if opts.model.is_some() {
                return Err(Error::usage(
                    "--model does not apply to the Anthropic judge: it asks the pinned model",
                )
                .with_advice("drop --model, or use --pins with another model"));
            }
            options.effort = Some(pins.judge().effort.clone());
            if let Some(url) = &opts.base_url {
                options.base_url = url.clone();
            }
            if let Some(t) = opts.call_timeout {
                options.http.timeout = t;
            }
            let name = token_env.as_deref().unwrap_or("ANTHROPIC_API_KEY");
            let judge = AnthropicJudge::from_env(options, name)?;
            if opts.batch {
                Ok(Arc::new(AnthropicBatchJudge::new(
                    judge,
                    BatchOptions::default(),
                )))
            } else {
                Ok(Arc::new(judge))
            }
        }
        JudgeMode::Openai => {
            let Some(url) = &opts.base_url else {
                return Err(
                    Error::new(Stage::Config, "--judge openai needs the server's address")
                        .with_advice(
                            "pass --base-url, e.g. --base-url http://127.0.0.1:11434 for Ollama",
                        ),
                );
            };
            let model = opts
                .model
                .clone()
                .unwrap_or_else(|| pins.model().to_string());
            let mut options = OpenAiOptions::new(url.clone(), model);
            if let Some(t) = opts.call_timeout {
                options.http.timeout = t;
            }
            Ok(Arc::new(OpenAiJudge::from_env(
                options,
                token_env.as_deref(),
            )?))
        }
    }
}

/// SHA-256 of the pins digest and the judge's identity and settings: two scorings are
/// comparable only under equal digests.
pub(crate) fn scoring_digest(pins: &Pins, judge: &JudgeInfo) -> String {
    // Where the CLI is installed differs between machines and changes no answer.
    let mut settings = judge.settings.clone();
    if let Some(map) = settings.as_object_mut() {
        map.remove("cli");
    }
    digest_value(&json!({
        "versionDigest": pins.digest(),
        "judge": {
            "mode": judge.mode,
            "model": judge.model,
            "modelJudged": judge.model_judged,
            "settings": settings,
        }
    }))
}
