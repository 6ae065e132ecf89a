//! How a side's server is launched: the command, its environment and working directory, the
//! setup commands run before it, and the bounds it must stay within.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use tdqs_core::export::ExportLimits;

/// A command run in a side's tree before the server starts (for example a build).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetupCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Where it is configured, for messages (`tdqs-gate.toml [server] setup (line 4)`); `None`
    /// falls back to the spec's origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
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
    /// The sandbox the server and setup commands run in (`None`: unconfined).
    pub sandbox: Option<std::sync::Arc<crate::platform::sandbox::SideSandbox>>,
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
