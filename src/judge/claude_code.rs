//! The pinned model through the Claude Code command line (`claude -p`).
//!
//! One `claude` process per question (notes `claude-code.md` §3):
//!
//! ```text
//! claude -p --model <pinned> --system-prompt-file <call>/system.txt --tools ""
//!   --strict-mcp-config --mcp-config {"mcpServers":{}} --setting-sources "" --safe-mode
//!   --disable-slash-commands --no-session-persistence --effort <pinned>
//!   --output-format stream-json --verbose          (user prompt on stdin)
//! ```
//!
//! Why each part is there:
//! - The system prompt goes through a file because one argv entry over 128 KiB fails on Linux; the
//!   user prompt goes on stdin because list-taking flags such as `--tools ""` swallow a trailing
//!   prompt argument, and a prompt starting with `/` would run as a slash command.
//! - Each call runs in its own fresh, empty working directory (the CLI reads project settings,
//!   CLAUDE.md and `.mcp.json` from there) which is removed afterwards.
//! - The child's environment is built from nothing: `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN`
//!   silently beat the OAuth token, and `ANTHROPIC_MODEL`, `CLAUDE_CODE_USE_BEDROCK` and the like
//!   change which model answers. Only `PATH`, `HOME`, the token (as `CLAUDE_CODE_OAUTH_TOKEN`, with
//!   an empty per-call `CLAUDE_CONFIG_DIR`), the switches below and the optional base URL go in.
//! - `--output-format stream-json --verbose` is read instead of the JSON envelope because the
//!   envelope's `modelUsage` is keyed by the model that was *asked for*: only the raw assistant
//!   messages' `message.model` shows which model answered.
//!
//! The scorer bounds how many calls run at once and retries refused calls; this module asks once.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Map, Value};
use tokio::process::Command;

use super::{CallFailure, Judge, JudgeInfo, Question, Reply, TokenUsage};
use crate::platform::path_search::{self, is_executable_file, EmptyEntry};
use crate::platform::process;
use tdqs_core::error::{Error, Stage};
use tdqs_core::redact;

mod stream;
use stream::*;

/// The effort the gate pins when the caller does not choose one. Without `--effort` the CLI
/// picks one itself (it sent `medium` in the recorded request), which would make scores depend
/// on the CLI's defaults.
pub const DEFAULT_EFFORT: &str = "high";
/// The values `--effort` accepts in the pinned CLI.
pub(crate) const EFFORT_LEVELS: &[&str] = &["low", "medium", "high", "xhigh", "max"];
/// Per-call limit; a call still running then is stopped and counts as a failed attempt.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(180);
/// `CLAUDE_CODE_MAX_RETRIES` for the CLI's own HTTP retries (its default is 10, which can keep
/// one call busy for minutes; the gate retries refused calls itself).
pub const DEFAULT_CLI_MAX_RETRIES: u32 = 3;
/// The CLI clamps `CLAUDE_CODE_MAX_RETRIES` to this.
const CLI_MAX_RETRIES_CEILING: u32 = 15;
/// Time between SIGTERM and SIGKILL when a call is stopped.
const KILL_GRACE: Duration = Duration::from_secs(3);
/// How long the pipes may stay open after the CLI and its process group are gone.
const PIPE_DRAIN: Duration = Duration::from_secs(5);
/// Limit for `claude --version` and `claude auth status`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);
/// A judge answer is a few kilobytes; a stream larger than this is refused, not buffered.
const STDOUT_LIMIT: usize = 32 * 1024 * 1024;
/// How much of the end of stderr is kept for messages.
const STDERR_TAIL: usize = 16 * 1024;
/// How much of a refused text (a result, stdout) a message quotes.
const QUOTE_LIMIT: usize = 600;

/// Environment switches set for every call (notes `claude-code.md` §3 and §5).
const FIXED_ENV: &[(&str, &str)] = &[
    // No telemetry, error reporting, auto-update or feedback traffic: only the API host is reached.
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    // No CLAUDE.md of any kind (managed ones included) and no auto-memory in the prompt.
    ("CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1"),
    ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1"),
    // Never substitute another model, neither on access problems nor on a refusal.
    ("CLAUDE_CODE_NO_MODEL_FALLBACK", "1"),
    ("CLAUDE_CODE_DISABLE_REFUSAL_FALLBACK", "1"),
    // No claude.ai connectors as MCP servers (belt and braces with --strict-mcp-config).
    ("ENABLE_CLAUDEAI_MCP_SERVERS", "false"),
];

/// Host variables that only say how to reach the network (proxies, extra CA certificates);
/// shared with the servers and setup commands.
pub use tdqs_core::network_env::NETWORK_ENV;

/// A `claude setup-token` token read from a named environment variable.
#[derive(Clone)]
pub struct OauthToken {
    env_name: String,
    value: String,
}

impl std::fmt::Debug for OauthToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OauthToken")
            .field("env_name", &self.env_name)
            .field("value", &redact::MASK)
            .finish()
    }
}

impl OauthToken {
    /// Reads the token from the environment variable `name` (`--token-env NAME`) and registers
    /// it with [`tdqs_core::redact`]. An unset or empty variable is INVALID: silently falling back to
    /// the local login would score with other credentials than the user asked for.
    pub fn from_env(name: &str) -> Result<Self, Error> {
        match std::env::var(name) {
            Ok(value) if !value.trim().is_empty() => Ok(Self::new(name, value)),
            Ok(_) => Err(Error::new(
                Stage::Judge,
                format!("the token variable `{name}` is empty"),
            )
            .with_advice(format!(
                "create a token with `claude setup-token` and store it in `{name}` (in CI, as a secret)"
            ))),
            Err(std::env::VarError::NotPresent) => Err(Error::new(
                Stage::Judge,
                format!("the token variable `{name}` is not set"),
            )
            .with_advice(format!(
                "create a token with `claude setup-token` and store it in `{name}` (in CI, as a secret), or drop `--token-env` to use the local `claude` login"
            ))),
            Err(std::env::VarError::NotUnicode(_)) => Err(Error::new(
                Stage::Judge,
                format!("the token variable `{name}` is not valid UTF-8"),
            )
            .with_advice("store the token exactly as `claude setup-token` printed it")),
        }
    }

    /// A token given directly; `env_name` only names it in messages.
    pub fn new(env_name: impl Into<String>, value: impl Into<String>) -> Self {
        let value = value.into().trim().to_string();
        redact::register_secret(&value);
        OauthToken {
            env_name: env_name.into(),
            value,
        }
    }

    pub fn env_name(&self) -> &str {
        &self.env_name
    }
}

/// How to run the judge.
#[derive(Debug, Clone)]
pub struct ClaudeCodeConfig {
    /// The `claude` to run: a path, or a bare name looked up on `PATH`. `None` means `claude`.
    pub program: Option<PathBuf>,
    /// The pinned model (`claude-opus-5-5`); every answer must come from it.
    pub model: String,
    /// The pinned CLI version (`2.1.288`); another one is a warning, not a failure.
    pub cli_version: String,
    /// `--effort` (`low`, `medium`, `high`, `xhigh`, `max`).
    pub effort: String,
    /// `Some`: token mode. `None`: the local login under `home`.
    pub token: Option<OauthToken>,
    /// The `HOME` the CLI runs with (its local login lives under it). Defaults to the user's home.
    pub home: Option<PathBuf>,
    /// `ANTHROPIC_BASE_URL` for the CLI: an API gateway, or a loopback stand-in in tests. Never
    /// taken from the environment; only this option sets it.
    pub base_url: Option<String>,
    /// Per-call limit (default 180 s).
    pub timeout: Duration,
    /// `CLAUDE_CODE_MAX_RETRIES` (the CLI's own retries of HTTP 429/5xx/529; at most 15).
    pub cli_max_retries: u32,
}

impl ClaudeCodeConfig {
    /// The defaults: `claude` from `PATH`, the local login, effort [`DEFAULT_EFFORT`], timeout
    /// [`DEFAULT_TIMEOUT`], [`DEFAULT_CLI_MAX_RETRIES`] CLI retries.
    pub fn new(model: impl Into<String>, cli_version: impl Into<String>) -> Self {
        ClaudeCodeConfig {
            program: None,
            model: model.into(),
            cli_version: cli_version.into(),
            effort: DEFAULT_EFFORT.to_string(),
            token: None,
            home: dirs::home_dir(),
            base_url: None,
            timeout: DEFAULT_TIMEOUT,
            cli_max_retries: DEFAULT_CLI_MAX_RETRIES,
        }
    }
}

/// The Claude Code judge. Build it with [`ClaudeCodeJudge::new`].
#[derive(Debug)]
pub struct ClaudeCodeJudge {
    config: ClaudeCodeConfig,
    program: PathBuf,
    path_var: Option<OsString>,
    /// What `claude --version` reported (set by the preflight).
    probed_version: OnceLock<String>,
}

impl ClaudeCodeJudge {
    /// Checks the configuration and finds `claude`; it runs nothing yet (see [`Judge::preflight`]).
    pub fn new(config: ClaudeCodeConfig) -> Result<Self, Error> {
        if config.model.trim().is_empty() {
            return Err(Error::new(Stage::Config, "the judge model is empty")
                .with_advice("set `model` in the pins"));
        }
        if !EFFORT_LEVELS.contains(&config.effort.as_str()) {
            return Err(Error::new(
                Stage::Config,
                format!("`{}` is not an effort level of Claude Code", config.effort),
            )
            .with_advice(format!("use one of {}", EFFORT_LEVELS.join(", "))));
        }
        if let Some(url) = &config.base_url {
            check_base_url(url)?;
        }
        let path_var = std::env::var_os("PATH");
        let program = resolve_program(config.program.as_deref(), path_var.as_deref())?;
        Ok(ClaudeCodeJudge {
            config,
            program,
            path_var,
            probed_version: OnceLock::new(),
        })
    }

    /// The resolved `claude` executable.
    pub fn program(&self) -> &Path {
        &self.program
    }

    pub fn config(&self) -> &ClaudeCodeConfig {
        &self.config
    }

    /// The argv after the program for one call.
    fn call_args(&self, system_prompt_file: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::with_capacity(24);
        let mut push = |s: &str| args.push(OsString::from(s));
        push("-p");
        push("--model");
        push(&self.config.model);
        push("--system-prompt-file");
        args.push(system_prompt_file.as_os_str().to_owned());
        for item in [
            "--tools",
            "",
            "--strict-mcp-config",
            "--mcp-config",
            r#"{"mcpServers":{}}"#,
            "--setting-sources",
            "",
            "--safe-mode",
            "--disable-slash-commands",
            "--no-session-persistence",
            "--effort",
            &self.config.effort,
            "--output-format",
            "stream-json",
            "--verbose",
        ] {
            args.push(OsString::from(item));
        }
        args
    }

    /// The complete environment of a child (it starts from nothing). `config_dir` is the empty
    /// per-call `CLAUDE_CONFIG_DIR`, used in token mode only: with the local login the
    /// credentials live in the default one.
    fn child_env(&self, config_dir: Option<&Path>) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        if let Some(path) = &self.path_var {
            env.push(("PATH".into(), path.clone()));
        }
        if let Some(home) = &self.config.home {
            env.push(("HOME".into(), home.as_os_str().to_owned()));
        }
        // Windows programs need these to start at all; none of them carries a credential.
        #[cfg(windows)]
        for name in [
            "SystemRoot",
            "USERPROFILE",
            "APPDATA",
            "LOCALAPPDATA",
            "TEMP",
            "TMP",
        ] {
            if let Some(value) = std::env::var_os(name) {
                env.push((name.into(), value));
            }
        }
        // Behind a corporate proxy or TLS-inspecting gateway the CLI cannot reach the API
        // without these. A proxy URL may carry credentials, so its value is masked like a secret.
        for name in NETWORK_ENV {
            if let Some(value) = std::env::var_os(name) {
                tdqs_core::network_env::register_proxy_secrets(name, &value.to_string_lossy());
                env.push(((*name).into(), value));
            }
        }
        for (name, value) in FIXED_ENV {
            env.push(((*name).into(), (*value).into()));
        }
        env.push((
            "CLAUDE_CODE_MAX_RETRIES".into(),
            self.config
                .cli_max_retries
                .min(CLI_MAX_RETRIES_CEILING)
                .to_string()
                .into(),
        ));
        if let Some(token) = &self.config.token {
            env.push(("CLAUDE_CODE_OAUTH_TOKEN".into(), token.value.clone().into()));
            if let Some(dir) = config_dir {
                env.push(("CLAUDE_CONFIG_DIR".into(), dir.as_os_str().to_owned()));
            }
        }
        if let Some(url) = &self.config.base_url {
            env.push(("ANTHROPIC_BASE_URL".into(), url.into()));
        }
        env
    }

    fn command(&self, args: &[OsString], cwd: &Path, config_dir: Option<&Path>) -> Command {
        let mut command = Command::new(&self.program);
        command.args(args).current_dir(cwd).env_clear();
        command.envs(self.child_env(config_dir));
        command
    }

    /// Runs a short command of the CLI (`--version`, `auth status`) in an empty directory.
    async fn probe(&self, args: &[&str]) -> Result<Finished, Error> {
        let scratch = CallDirs::create(self.config.token.is_some()).map_err(|e| {
            Error::io(
                Stage::Judge,
                "cannot create a temporary directory for the judge",
                e,
            )
        })?;
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let command = self.command(&args, &scratch.work, scratch.config.as_deref());
        let finished = run_bounded(command, &[], PROBE_TIMEOUT)
            .await
            .map_err(|e| {
                self.spawn_error(e)
                    .context(format!("running `claude {}`", display_args(&args)))
            })?;
        scratch.remove();
        Ok(finished)
    }

    fn spawn_error(&self, err: std::io::Error) -> Error {
        Error::new(
            Stage::Judge,
            format!("cannot start `{}`: {err}", self.program.display()),
        )
        .with_advice(INSTALL_ADVICE)
    }

    /// `claude --version`: the first word of its output.
    async fn probe_version(&self) -> Result<String, Error> {
        let finished = self.probe(&["--version"]).await?;
        let stdout = String::from_utf8_lossy(&finished.stdout);
        let version = stdout.split_whitespace().next().unwrap_or("").to_string();
        if finished.timed_out || !finished.succeeded() || version.is_empty() {
            return Err(Error::new(
                Stage::Judge,
                format!(
                    "`{} --version` did not report a version ({})",
                    self.program.display(),
                    finished.outcome()
                ),
            )
            .with_advice(INSTALL_ADVICE)
            .with_detail("stdout", redact::redact(&quote(&stdout)))
            .with_detail("stderr", redact::redact(&finished.stderr_text())));
        }
        Ok(version)
    }

    /// `claude auth status` for the local login: free (no API call) and catches the most common
    /// setup mistake before any export work. It does not validate a token.
    async fn check_login(&self) -> Result<(), Error> {
        let finished = self.probe(&["auth", "status"]).await?;
        let stdout = String::from_utf8_lossy(&finished.stdout);
        let status: Option<Map<String, Value>> = serde_json::from_str(stdout.trim()).ok();
        let logged_in = status
            .as_ref()
            .and_then(|s| s.get("loggedIn"))
            .and_then(Value::as_bool);
        match logged_in {
            Some(true) if !finished.timed_out => Ok(()),
            Some(_) => Err(Error::new(
                Stage::Judge,
                "Claude Code is not logged in on this machine (`claude auth status` reports loggedIn false)",
            )
            .with_advice(NOT_LOGGED_IN_ADVICE)),
            None => Err(Error::new(
                Stage::Judge,
                format!(
                    "`claude auth status` gave no login status ({})",
                    finished.outcome()
                ),
            )
            .with_advice(NOT_LOGGED_IN_ADVICE)
            .with_detail("stdout", redact::redact(&quote(&stdout)))
            .with_detail("stderr", redact::redact(&finished.stderr_text()))),
        }
    }
}

const INSTALL_ADVICE: &str = "install the pinned Claude Code CLI with `npm ci` in the `tdqs/` folder of tdqs-gate and put `tdqs/node_modules/.bin` on PATH (or install @anthropic-ai/claude-code at the pinned version globally)";

const NOT_LOGGED_IN_ADVICE: &str = "log in once with `claude` (then `/login`), or create a long-lived token with `claude setup-token`, store it in an environment variable (a CI secret) and pass `--token-env NAME`";

#[async_trait]
impl Judge for ClaudeCodeJudge {
    fn info(&self) -> JudgeInfo {
        let mut settings = Map::new();
        settings.insert(
            "cli".into(),
            Value::String(self.program.display().to_string()),
        );
        settings.insert(
            "cliVersion".into(),
            self.probed_version
                .get()
                .map(|v| Value::String(v.clone()))
                .unwrap_or(Value::Null),
        );
        settings.insert("pinnedCliVersion".into(), json!(self.config.cli_version));
        settings.insert("effort".into(), json!(self.config.effort));
        if let Some(url) = &self.config.base_url {
            settings.insert("baseUrl".into(), json!(strip_userinfo(url)));
        }
        JudgeInfo {
            mode: "claude-code".to_string(),
            model: self.config.model.clone(),
            model_judged: true,
            settings: Value::Object(settings),
        }
    }

    async fn preflight(&self) -> Result<Vec<String>, Error> {
        let mut warnings = Vec::new();
        let version = match self.probed_version.get() {
            Some(v) => v.clone(),
            None => {
                let v = self.probe_version().await?;
                let _ = self.probed_version.set(v.clone());
                v
            }
        };
        if let Some(warning) = version_warning(&version, &self.config.cli_version) {
            warnings.push(warning);
        }
        if self.config.token.is_none() {
            self.check_login().await?;
        }
        Ok(warnings)
    }

    async fn ask(&self, question: &Question) -> Result<Reply, CallFailure> {
        check_prompts(question)?;
        let dirs = CallDirs::create(self.config.token.is_some()).map_err(|e| {
            CallFailure::fatal(format!(
                "cannot create a temporary directory for the judge: {e}"
            ))
        })?;
        std::fs::write(&dirs.system_prompt, question.system.as_bytes()).map_err(|e| {
            CallFailure::fatal(format!(
                "cannot write the system prompt to {}: {e}",
                dirs.system_prompt.display()
            ))
        })?;
        let args = self.call_args(&dirs.system_prompt);
        let command = self.command(&args, &dirs.work, dirs.config.as_deref());
        let finished = run_bounded(command, question.user.as_bytes(), self.config.timeout)
            .await
            .map_err(|e| {
                CallFailure::fatal(redact::redact(&format!(
                    "cannot start `{}`: {e}",
                    self.program.display()
                )))
            });
        dirs.remove();
        let finished = finished?;
        evaluate_call(&finished, &self.config.model, self.config.timeout).map_err(|failure| {
            CallFailure {
                message: redact::redact(&failure.message),
                retryable: failure.retryable,
                detail: failure.detail.map(|d| redact::redact(&d)),
            }
        })
    }
}

/// Refuses questions the CLI would mishandle: it needs a system prompt, and a user prompt that
/// starts with `/` runs as a slash command even with `--disable-slash-commands` (it is then
/// answered locally, without the model).
fn check_prompts(question: &Question) -> Result<(), CallFailure> {
    if question.system.trim().is_empty() {
        return Err(CallFailure::fatal(
            "the judge was asked a question without a system prompt",
        ));
    }
    if question.user.trim().is_empty() {
        return Err(CallFailure::fatal(
            "the judge was asked a question with an empty user prompt",
        ));
    }
    if question.user.trim_start().starts_with('/') {
        return Err(CallFailure::fatal(
            "the user prompt starts with `/`, which Claude Code would run as a slash command instead of asking the model",
        ));
    }
    Ok(())
}

/// The warning for a CLI of another version than the pinned one.
fn version_warning(reported: &str, pinned: &str) -> Option<String> {
    (reported != pinned).then(|| {
        format!(
            "the Claude Code CLI reports version {reported}, but the pins name {pinned}: the request the model sees differs between versions, so these scores may not match the calibrated ones (install the pinned one with `npm ci` in tdqs/)"
        )
    })
}

/// Finds the executable to run. A bare name is looked up on `path_var`; a path is taken as is.
fn resolve_program(program: Option<&Path>, path_var: Option<&OsStr>) -> Result<PathBuf, Error> {
    let requested = program.unwrap_or(Path::new("claude"));
    let found = if requested.components().count() > 1 || requested.is_absolute() {
        is_executable_file(requested).then(|| requested.to_path_buf())
    } else {
        search_path(requested.as_os_str(), path_var)
    };
    let Some(found) = found else {
        let cause = if program.is_none() {
            "the Claude Code CLI `claude` was not found on PATH".to_string()
        } else {
            format!(
                "the Claude Code CLI `{}` was not found or is not executable",
                requested.display()
            )
        };
        return Err(Error::new(Stage::Judge, cause).with_advice(INSTALL_ADVICE));
    };
    if cfg!(windows) && is_batch_wrapper(&found) {
        return Err(Error::new(
            Stage::Judge,
            format!(
                "`{}` is a batch-file wrapper, which cannot pass the prompts to Claude Code intact",
                found.display()
            ),
        )
        .with_advice(
            "point the judge at the native executable, node_modules/@anthropic-ai/claude-code/bin/claude.exe in tdqs/",
        ));
    }
    Ok(found)
}

/// True for `.cmd` and `.bat` files: Windows runs them through `cmd.exe`, whose quoting rules
/// mangle arguments such as the empty `--tools ""` and the JSON of `--mcp-config`.
pub(crate) fn is_batch_wrapper(path: &Path) -> bool {
    path.extension()
        .and_then(OsStr::to_str)
        .is_some_and(|ext| ext.eq_ignore_ascii_case("cmd") || ext.eq_ignore_ascii_case("bat"))
}

fn search_path(name: &OsStr, path_var: Option<&OsStr>) -> Option<PathBuf> {
    // On Windows the CLI is `claude.exe`; `.cmd`/`.bat` are found too, so that they can be
    // refused with a clear message instead of "not found".
    let suffixes: &[&str] = if cfg!(windows) {
        &["", ".exe", ".cmd", ".bat"]
    } else {
        &[""]
    };
    path_search::find_on_path(name, path_var?, EmptyEntry::Skipped, None, suffixes)
}

/// Accepts `http://` and `https://` URLs; anything else is a usage error. Credentials in the
/// URL are registered as secrets so that they never show.
fn check_base_url(url: &str) -> Result<(), Error> {
    let lower = url.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return Err(Error::usage(format!(
            "the judge base URL `{}` is not an http:// or https:// URL",
            strip_userinfo(url)
        ))
        .with_advice("give the API's base URL, e.g. https://gateway.example/anthropic"));
    };
    if rest.is_empty() || rest.starts_with('/') {
        return Err(Error::usage(format!(
            "the judge base URL `{}` has no host",
            strip_userinfo(url)
        )));
    }
    if let Some(userinfo) = userinfo(url) {
        redact::register_secret(userinfo);
    }
    Ok(())
}

use tdqs_core::network_env::{strip_userinfo, userinfo};

/// The per-call temporary directory:
/// `<tmp>/tdqs-judge-XXXX/{system.txt, work/, config/}`. `work` is the CLI's empty working
/// directory (the system prompt file sits outside it, so it stays empty); `config` is the empty
/// `CLAUDE_CONFIG_DIR` in token mode.
struct CallDirs {
    root: tempfile::TempDir,
    work: PathBuf,
    system_prompt: PathBuf,
    config: Option<PathBuf>,
    /// The owner marker (outside `work`), locked while the call runs, so that a later run can
    /// remove the folder should this one be killed.
    _claim: Option<crate::platform::ownership::Claim>,
}

impl CallDirs {
    fn create(with_config_dir: bool) -> std::io::Result<Self> {
        let root = tempfile::Builder::new().prefix("tdqs-judge-").tempdir()?;
        let claim = crate::platform::ownership::claim(root.path(), "").ok();
        let work = root.path().join("work");
        std::fs::create_dir(&work)?;
        let config = if with_config_dir {
            let dir = root.path().join("config");
            std::fs::create_dir(&dir)?;
            Some(dir)
        } else {
            None
        };
        Ok(CallDirs {
            system_prompt: root.path().join("system.txt"),
            root,
            work,
            config,
            _claim: claim,
        })
    }

    /// Removes the directory now. A failure cannot be reported usefully from here; the
    /// `TempDir` would try again on drop anyway.
    fn remove(self) {
        let _ = self.root.close();
    }
}

/// What a bounded child run produced.
#[derive(Debug)]
struct Finished {
    /// `None` only when the call was stopped at the time limit and could not be reaped.
    status: Option<ExitStatus>,
    stdout: Vec<u8>,
    /// True when stdout went past [`STDOUT_LIMIT`] (the excess was discarded).
    stdout_overflow: bool,
    stderr_tail: Vec<u8>,
    timed_out: bool,
}

impl Finished {
    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr_tail)
            .trim()
            .to_string()
    }

    fn succeeded(&self) -> bool {
        self.status.is_some_and(|status| status.success())
    }

    /// "exit status 1", "stopped after the time limit", …
    fn outcome(&self) -> String {
        if self.timed_out {
            return "stopped at the time limit".to_string();
        }
        match self.status {
            Some(status) => match status.code() {
                Some(code) => format!("exit code {code}"),
                None => format!("{status}"),
            },
            None => "no exit status".to_string(),
        }
    }
}

/// Runs `command` with `input` on stdin through the one process runner
/// ([`crate::platform::process::run_to_end`]): its own process group, stdout (up to
/// [`STDOUT_LIMIT`]) and the tail of stderr collected while it runs, stopped TERM →
/// [`KILL_GRACE`] → KILL after `limit`. Whatever the child started is killed when it is done, so
/// no process outlives the call.
async fn run_bounded(command: Command, input: &[u8], limit: Duration) -> std::io::Result<Finished> {
    let run = process::run_to_end(
        command,
        process::RunRequest {
            input: Some(input),
            stdout: process::StdoutTo::Head(STDOUT_LIMIT),
            tail_bytes: STDERR_TAIL,
            timeout: limit,
            grace: KILL_GRACE,
            drain_wait: PIPE_DRAIN,
        },
    )
    .await?;
    let (status, timed_out) = match run.ended {
        process::Ended::Exited(status) => (Some(status), false),
        process::Ended::TimedOut(status) => (status, true),
        process::Ended::WaitFailed(err) => return Err(err),
    };
    Ok(Finished {
        status,
        stdout: run.stdout,
        stdout_overflow: run.stdout_overflow,
        // text(): a cut first line is left out and a cut secret masked.
        stderr_tail: run.tail.text().into_bytes(),
        timed_out,
    })
}

/// Judges a finished call: the stream must prove that the pinned model answered, once, without
/// error. Every refusal is retryable (a later attempt may succeed); messages are not yet redacted.
fn evaluate_call(finished: &Finished, pinned: &str, limit: Duration) -> Result<Reply, CallFailure> {
    let stderr = finished.stderr_text();
    let with_stderr = |failure: CallFailure| {
        if stderr.is_empty() {
            failure
        } else {
            failure.with_detail(format!(
                "claude stderr (last lines):\n{}",
                tail_lines(&stderr, 20)
            ))
        }
    };
    if finished.timed_out {
        return Err(with_stderr(CallFailure::retryable(format!(
            "Claude Code did not answer within {} s and was stopped",
            limit.as_secs()
        ))));
    }
    if finished.stdout_overflow {
        return Err(CallFailure::retryable(format!(
            "Claude Code wrote more than {} MiB to stdout; a judge answer is never that long",
            STDOUT_LIMIT / (1024 * 1024)
        )));
    }
    let stdout = String::from_utf8_lossy(&finished.stdout);
    let stream = parse_stream(&stdout);

    // An error result explains itself better than the exit code does, so it comes first.
    if let Ok(events) = &stream {
        if let Some(result) = events.results.first() {
            if result.get("is_error").and_then(Value::as_bool) != Some(false) {
                return Err(with_stderr(CallFailure::retryable(describe_error_result(
                    result, finished,
                ))));
            }
        }
    }
    if !finished.succeeded() {
        let problem = match &stream {
            Ok(_) => String::new(),
            Err(problem) => format!("; {problem}"),
        };
        return Err(with_stderr(CallFailure::retryable(format!(
            "Claude Code failed ({}){problem}",
            finished.outcome()
        ))));
    }
    let events = stream.map_err(|problem| {
        with_stderr(CallFailure::retryable(format!(
            "Claude Code's output is not its stream-json stream: {problem}"
        )))
    })?;
    check_events(&events, pinned).map_err(with_stderr)
}

fn shorten(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= QUOTE_LIMIT {
        return text.to_string();
    }
    let mut out: String = text.chars().take(QUOTE_LIMIT).collect();
    out.push('…');
    out
}

fn quote(text: &str) -> String {
    format!("{:?}", shorten(text))
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn display_args(args: &[OsString]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
