//! How a side's server is launched: the command, its environment and working directory, the
//! setup commands run before it, and the bounds it must stay within.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A command run in a side's tree before the server starts (for example a build).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupCommand {
    pub program: String,
    pub args: Vec<String>,
}

/// Everything needed to start one side's server; produced by [`crate::export::launch`].
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub program: String,
    pub args: Vec<String>,
    /// The working directory of the server (and of setup commands).
    pub cwd: PathBuf,
    /// The complete environment of the child: it is started from an empty environment.
    pub env: Vec<(String, String)>,
    /// Run in order in `cwd` before the server; a failure is INVALID.
    pub setup: Vec<SetupCommand>,
    /// Where the command came from, for messages (`--command`, `tdqs-gate.toml [server]`, …).
    pub origin: String,
    /// Names of environment variables whose values are secrets to redact.
    pub secret_env: Vec<String>,
    pub limits: ExportLimits,
    /// Temporary HOME / XDG folders owned by this spec; removed when it is dropped.
    pub temp_home: Option<std::sync::Arc<tempfile::TempDir>>,
    /// The configured variables (a manifest entry's `env`, then `[server] env`) as shell
    /// assignments for "reproduce with" lines: `NAME=value`, with `${VAR}` references kept as
    /// written and never a secret's value.
    pub reproduce_env: Vec<String>,
    /// Set when the server speaks Streamable HTTP: then `program` (when not empty) is started
    /// and the client talks to the URL.
    pub http: Option<HttpTarget>,
}

/// An MCP endpoint reached over HTTP.
#[derive(Clone, PartialEq)]
pub struct HttpTarget {
    /// With `{port}` already replaced.
    pub url: String,
    /// Sent with every request; values expanded (secrets: never shown).
    pub headers: Vec<(String, String)>,
}

// Not derived: header values are credentials.
impl std::fmt::Debug for HttpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpTarget")
            .field("url", &self.url)
            .field("header_names", &names)
            .finish()
    }
}

/// Bounds on a server's behaviour; every one exceeded is INVALID.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportLimits {
    /// From spawn to the end of the handshake (cold `npx` / `uvx` starts are slow).
    pub startup_timeout: Duration,
    /// For each later request (`tools/list` page).
    pub request_timeout: Duration,
    /// For each setup command.
    pub setup_timeout: Duration,
    /// Longest accepted stdout line (one JSON-RPC message).
    pub max_message_bytes: usize,
    /// Most bytes read from the server's stdout over the whole listing (every page, and lines
    /// that are not messages): bounds the memory a side can take.
    pub max_listing_bytes: usize,
    pub max_pages: usize,
    pub max_tools: usize,
    /// Bytes of server stderr kept for error messages.
    pub stderr_tail_bytes: usize,
    /// After closing stdin, how long to wait before TERM, and after TERM before KILL.
    pub shutdown_grace: Duration,
}

/// Default of `--max-message-bytes` / `max-message-bytes`: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Default of `--max-listing-bytes` / `max-listing-bytes`: 32 MiB.
pub const DEFAULT_MAX_LISTING_BYTES: usize = 32 * 1024 * 1024;
/// The largest value either size limit accepts: 1 GiB.
pub const MAX_SIZE_LIMIT: usize = 1024 * 1024 * 1024;
/// The smallest value either size limit accepts: 1 KiB.
pub const MIN_SIZE_LIMIT: usize = 1024;

/// A size limit in bytes, from 1 KiB to 1 GiB.
pub fn parse_size_limit(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (MIN_SIZE_LIMIT..=MAX_SIZE_LIMIT).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a number of bytes from {MIN_SIZE_LIMIT} (1 KiB) to {MAX_SIZE_LIMIT} (1 GiB)"
        )),
    }
}

impl Default for ExportLimits {
    fn default() -> Self {
        ExportLimits {
            startup_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(60),
            setup_timeout: Duration::from_secs(600),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_listing_bytes: DEFAULT_MAX_LISTING_BYTES,
            max_pages: 1000,
            max_tools: 10_000,
            stderr_tail_bytes: 64 * 1024,
            shutdown_grace: Duration::from_secs(2),
        }
    }
}
