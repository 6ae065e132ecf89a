//! The export: one side's tool definitions exactly as its server listed them, how the server
//! was probed, and where it came from. It is the input of every later stage (`--base-export` /
//! `--head-export` read it back).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the working tree is named where a revision would be (`ExportSource::revision`, reports).
pub const WORKING_TREE_LABEL: &str = "working tree";

/// Version of the export file format; bumped on any incompatible change.
pub const EXPORT_SCHEMA_VERSION: u32 = 1;

/// Which handshake the client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `server/discover` first (2026-07-28); fall back to `initialize` when it is not understood.
    Auto,
    /// `initialize` + `notifications/initialized` (2024-11-05 … 2025-11-25).
    #[default]
    Legacy,
    /// 2026-07-28: no `initialize`; every request carries `_meta`.
    Modern,
}

/// What the client declares to the server. It can change the tool list (server-everything lists
/// 13, 14 or 19 tools depending on capabilities), so it is fixed, recorded in the export and
/// must be equal on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeProfile {
    /// The protocol version offered in `initialize`.
    pub protocol_version: String,
    pub era: Era,
    pub capabilities: Value,
    pub client_info: Value,
}

impl Default for ProbeProfile {
    fn default() -> Self {
        ProbeProfile {
            protocol_version: "2025-11-25".to_string(),
            era: Era::Legacy,
            capabilities: serde_json::json!({}),
            client_info: serde_json::json!({"name": "tdqs-gate", "version": "1"}),
        }
    }
}

/// Sizes of a side's definitions: reported, never decisive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Size {
    /// Characters (Unicode scalar values) of all descriptions.
    pub description_characters: u64,
    /// Bytes of the `tools` array as compact JSON in listing order.
    pub tools_list_bytes: u64,
    /// Bytes of each tool's canonical definition.
    pub definition_bytes: BTreeMap<String, u64>,
}

/// Where an export came from (not hashed; informational).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportSource {
    /// The revision as given (`origin/master`, `HEAD~1`), or `working tree`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Program and arguments (with `{root}` left as written, so both sides compare equal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Names (never values) of the environment variables given to the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_names: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// What confined the server and its setup commands (absent in exports made before it was
    /// recorded, and for a URL-only server, which the gate does not start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::SandboxRecord>,
}

/// One side's exported tool definitions, exactly as the server listed them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    pub schema_version: u32,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// The protocol version the server answered.
    pub protocol_version: String,
    pub era: Era,
    pub probe: ProbeProfile,
    /// Server `instructions`, if any (hosts show them to the model; not scored by TDQS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Every tool object as received, unknown fields and key order included.
    pub tools: Vec<Value>,
    /// Tool name → SHA-256 of its canonical definition.
    pub hashes: BTreeMap<String, String>,
    /// Tool name → first 16 hex characters of that hash (the TDQS `inputHash`).
    pub input_hashes: BTreeMap<String, String>,
    /// SHA-256 of the sorted definition hashes joined by `\n`.
    pub set_hash: String,
    pub size: Size,
    #[serde(default)]
    pub source: ExportSource,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What the client read from a server, before hashing ([`crate::digest::assemble_export`] turns
/// it into an [`Export`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawListing {
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub protocol_version: String,
    pub era: Era,
    pub instructions: Option<String>,
    /// Every tool object of every page, concatenated in listing order, exactly as received.
    pub tools: Vec<Value>,
    /// Non-fatal observations (junk lines on stdout, an empty cursor, an unknown version).
    pub warnings: Vec<String>,
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
    /// After closing a stdio server's stdin, how long it may take to exit by itself before
    /// SIGTERM. Short, because by then the listing is complete and nothing more is expected: a
    /// server that keeps running after end-of-file (a live thread, an open timer) would
    /// otherwise hold the run for the whole [`ExportLimits::shutdown_grace`].
    pub exit_after_eof: Duration,
    /// After SIGTERM, how long to wait before SIGKILL.
    pub shutdown_grace: Duration,
}

/// Default of [`ExportLimits::exit_after_eof`]: above the slowest exit after end-of-file measured
/// on real servers that do exit (370 ms, server-everything started through `npx`, on a quiet
/// machine), far below the 2 s grace a server that ignores end-of-file used to cost.
pub const DEFAULT_EXIT_AFTER_EOF: Duration = Duration::from_millis(500);

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
            exit_after_eof: DEFAULT_EXIT_AFTER_EOF,
            shutdown_grace: Duration::from_secs(2),
        }
    }
}
