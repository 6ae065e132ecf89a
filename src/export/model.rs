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
    pub max_pages: usize,
    pub max_tools: usize,
    /// Bytes of server stderr kept for error messages.
    pub stderr_tail_bytes: usize,
    /// After closing stdin, how long to wait before TERM, and after TERM before KILL.
    pub shutdown_grace: Duration,
}

impl Default for ExportLimits {
    fn default() -> Self {
        ExportLimits {
            startup_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(60),
            setup_timeout: Duration::from_secs(600),
            max_message_bytes: 32 * 1024 * 1024,
            max_pages: 1000,
            max_tools: 10_000,
            stderr_tail_bytes: 64 * 1024,
            shutdown_grace: Duration::from_secs(2),
        }
    }
}
