//! A minimal MCP client that does exactly what a host does before it shows tools to a model:
//! handshake, then `tools/list` through every page. It never calls a tool. It speaks over stdio
//! to a server process it starts, or over Streamable HTTP to a URL (`super::http`); the
//! session logic is the same for both, only the [`Transport`] differs.
//!
//! Messages are JSON-RPC 2.0 (newline-delimited on stdio). The only methods this client sends are
//! `initialize`, `notifications/initialized`, `server/discover` and `tools/list`, plus replies to
//! requests the server makes while it waits (`ping` is answered with `{}`, everything else with
//! `-32601 Method not found`: answering `roots/list` or `sampling/createMessage` would need
//! capabilities the probe profile does not declare).
//!
//! The handshake follows [`ProbeProfile::era`]:
//! - [`Era::Legacy`]: `initialize` offering [`ProbeProfile::protocol_version`], the profile's
//!   capabilities and clientInfo, then `notifications/initialized` (some servers register tools
//!   only when they see it). Any known version the server answers is accepted
//!   ([`KNOWN_PROTOCOL_VERSIONS`]); an unknown one is accepted with a warning.
//! - [`Era::Modern`] (2026-07-28): `server/discover`, and every request carries the protocol
//!   version, client info and client capabilities in `params._meta`.
//! - [`Era::Auto`]: `server/discover` first; a `DiscoverResult` means modern. An
//!   unsupported-version error (-32022) means a modern server without a version in common, which
//!   is INVALID. Any other error, or no answer within [`AUTO_DISCOVER_TIMEOUT`] (or half the
//!   startup timeout, if shorter), means a legacy server: fall back to `initialize` (a discover
//!   answer that arrives late still wins).
//!
//! Every tool object is kept exactly as received (key order and unknown fields included), in
//! listing order; duplicates and tools without a name are kept too (the digest stage judges
//! them).
//!
//! # Lines on stdout that are not JSON-RPC messages
//!
//! The stdio transport forbids anything but JSON-RPC messages on stdout, yet servers that print
//! a start-up banner or a stray log line there still work in hosts, which skip such lines. The
//! gate does the same: a stdout line that is not JSON, or is JSON but neither an object nor a
//! batch array, is skipped and counted. The first [`MAX_STDOUT_SAMPLES`] such lines (each cut to
//! [`STDOUT_SAMPLE_CHARS`] characters, secrets masked) are reported as warnings in the listing
//! and shown in any error. Skipped lines never change the exported tools. Blank lines, a
//! trailing `\r` and a byte-order mark are ignored silently. A line longer than
//! [`ExportLimits::max_message_bytes`] is INVALID, junk or not, because it may be the response.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::time::Instant;

use crate::export::http::HttpFault;
use crate::export::line_check;
use crate::export::process::{
    describe_status, redact_error, reproduce_line, run_setups, shell_command, spec_redactor,
    tail_or_empty, ReadError, ServerProcess, SetupEvent, Shutdown, ShutdownStep, StdoutLine,
    WriteError,
};
use crate::export::transport::{PortWait, RecvError, SendError, Transport};
use crate::export::LaunchSpec;
use tdqs_core::digest::json_kind;
use tdqs_core::error::{Error, Stage};
use tdqs_core::export::ExportLimits;
use tdqs_core::export::{Era, ProbeProfile, RawListing};

mod failure;
use failure::*;

/// Protocol revisions this client knows. The first four use the `initialize` handshake; the
/// last is the modern era.
pub const KNOWN_PROTOCOL_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    MODERN_PROTOCOL_VERSION,
];

/// The modern (per-request `_meta`, no `initialize`) protocol revision.
pub(crate) const MODERN_PROTOCOL_VERSION: &str = "2026-07-28";

/// In [`Era::Auto`], how long `server/discover` may go unanswered before falling back to
/// `initialize` (at most half of the startup timeout, so the fallback has time left).
pub const AUTO_DISCOVER_TIMEOUT: Duration = Duration::from_secs(10);

/// How many non-message stdout lines are kept as samples.
pub const MAX_STDOUT_SAMPLES: usize = 3;

/// Longest kept sample of a non-message stdout line, in characters.
pub const STDOUT_SAMPLE_CHARS: usize = 200;

/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i64 = -32601;
/// 2026-07-28 `UnsupportedProtocolVersionError`.
const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Runs `spec`'s setup commands, starts its server, and lists its tools as `profile` describes.
///
/// The server is shut down before this returns, on success and on every error (and killed if the
/// future is dropped). Every failure is INVALID with the cause, advice and the server's stderr
/// tail.
pub async fn list_tools(spec: &LaunchSpec, profile: &ProbeProfile) -> Result<RawListing, Error> {
    list_tools_observed(spec, profile, &|_| {}).await
}

/// [`list_tools`], telling `observe` when each setup command starts and ends.
pub(crate) async fn list_tools_observed(
    spec: &LaunchSpec,
    profile: &ProbeProfile,
    observe: &(dyn Fn(SetupEvent) + Send + Sync),
) -> Result<RawListing, Error> {
    run_setups(spec, observe).await?;
    let transport = match &spec.http {
        None => Transport::Stdio(ServerProcess::spawn(spec)?),
        Some(_) => Transport::http(spec)?,
    };
    let mut session = Session::new(transport, &spec.limits, profile);
    let outcome = session.run().await;
    let Session {
        transport,
        stdout_junk,
        mut warnings,
        duplicate_answers,
        repaired_surrogates,
        ..
    } = session;
    if duplicate_answers.0 > 0 {
        let ids: Vec<String> = duplicate_answers.1.iter().map(u64::to_string).collect();
        warnings.push(format!(
            "the server answered a request more than once ({} extra answer(s), request id(s) {}); \
             the first answer was used and the others ignored",
            duplicate_answers.0,
            ids.join(", ")
        ));
    }
    if repaired_surrogates > 0 {
        warnings.push(format!(
            "the server's answers held {repaired_surrogates} lone UTF-16 surrogate escape(s) \
             (such as \"\\ud83d\", text cut inside an emoji); each was replaced by U+FFFD"
        ));
    }
    warnings.extend(transport.note());
    let shutdown = transport.close().await;
    match outcome {
        Ok(mut listing) => {
            warnings.extend(stdout_junk.warnings());
            if let Some(shutdown) = &shutdown {
                warnings.extend(shutdown.forced_note(&spec.limits));
            }
            // Warnings quote the server (its version string, stdout lines): mask secrets.
            let redactor = spec_redactor(spec);
            listing.warnings = warnings
                .iter()
                .map(|w| tdqs_core::redact::redact(&redactor.redact(w)))
                .collect();
            Ok(listing)
        }
        Err(failure) => Err(failure_error(
            spec,
            failure,
            shutdown.as_ref(),
            &stdout_junk,
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Stdout lines that are not messages

#[derive(Debug, Default)]
struct StdoutJunk {
    count: usize,
    samples: Vec<String>,
}

impl StdoutJunk {
    fn note(&mut self, line: &[u8], process: &Transport) {
        self.count += 1;
        if self.samples.len() < MAX_STDOUT_SAMPLES {
            let text = String::from_utf8_lossy(line);
            // Masked before it is cut: cutting first would leave the head of a secret that
            // straddles the cut unmasked. The margin covers any secret starting in the sample.
            let head: String = text.chars().take(STDOUT_SAMPLE_CHARS + 4096).collect();
            let masked = process.redact(&head);
            let mut sample: String = masked.chars().take(STDOUT_SAMPLE_CHARS).collect();
            if masked.chars().count() > STDOUT_SAMPLE_CHARS || text.len() > head.len() {
                sample.push('…');
            }
            self.samples.push(sample);
        }
    }

    fn warnings(&self) -> Vec<String> {
        if self.count == 0 {
            return Vec::new();
        }
        let mut out = vec![format!(
            "the server wrote {} line(s) to stdout that are not JSON-RPC messages; they were \
             skipped (logs belong on stderr)",
            self.count
        )];
        out.extend(
            self.samples
                .iter()
                .map(|s| format!("skipped stdout line: {s}")),
        );
        out
    }
}

// ---------------------------------------------------------------------------------------------
// The session

/// What the handshake established.
#[derive(Debug)]
struct Handshake {
    era: Era,
    protocol_version: String,
    server_name: Option<String>,
    server_version: Option<String>,
    instructions: Option<String>,
}

enum Reply {
    Result(Value),
    Error(RemoteError),
}

/// One message from the server, as far as the waiting request is concerned.
enum Incoming {
    Response(u64, Reply),
    /// An error response with `"id": null`.
    UnattributedError(RemoteError),
    /// Anything else (already handled).
    Other,
}

struct Session<'a> {
    transport: Transport,
    limits: &'a ExportLimits,
    profile: &'a ProbeProfile,
    next_id: u64,
    stdout_junk: StdoutJunk,
    list_changed: bool,
    warnings: Vec<String>,
    /// Bytes read from stdout so far, against [`ExportLimits::max_listing_bytes`].
    received_bytes: usize,
    /// Request ids already answered, to notice a second answer.
    answered: HashSet<u64>,
    /// Second answers to an id: how many, and the first few ids.
    duplicate_answers: (usize, Vec<u64>),
    /// Lone surrogate escapes replaced by U+FFFD.
    repaired_surrogates: usize,
}

impl<'a> Session<'a> {
    fn new(transport: Transport, limits: &'a ExportLimits, profile: &'a ProbeProfile) -> Self {
        Session {
            transport,
            limits,
            profile,
            next_id: 1,
            stdout_junk: StdoutJunk::default(),
            list_changed: false,
            warnings: Vec::new(),
            received_bytes: 0,
            answered: HashSet::new(),
            duplicate_answers: (0, Vec::new()),
            repaired_surrogates: 0,
        }
    }

    async fn run(&mut self) -> Result<RawListing, Failure> {
        // The startup timeout runs from the spawn, so a slow start and a slow handshake count
        // against the same budget.
        let startup = Wait {
            deadline: Instant::from_std(self.transport.started()) + self.limits.startup_timeout,
            limit: self.limits.startup_timeout,
            setting: "startup timeout",
        };
        match self.transport.wait_for_port(startup.deadline).await {
            Ok(()) => {}
            Err(PortWait::Exited) => {
                return Err(Failure::Exited {
                    doing: "waiting for its HTTP port to open".to_string(),
                })
            }
            Err(PortWait::TimedOut { address }) => {
                return Err(Failure::PortNeverOpened {
                    address,
                    wait: startup,
                })
            }
        }
        let handshake = match self.profile.era {
            Era::Legacy => self.legacy_handshake(startup, &[]).await?,
            Era::Modern => self.modern_handshake(startup).await?,
            Era::Auto => self.auto_handshake(startup).await?,
        };
        self.transport
            .set_protocol_version(&handshake.protocol_version);
        let modern_version =
            (handshake.era == Era::Modern).then(|| handshake.protocol_version.clone());
        let tools = self.list_all_tools(modern_version.as_deref()).await?;
        if self.list_changed {
            self.warnings.push(
                "the server sent notifications/tools/list_changed during the export; its tool \
                 list may depend on timing"
                    .to_string(),
            );
        }
        Ok(RawListing {
            server_name: handshake.server_name,
            server_version: handshake.server_version,
            protocol_version: handshake.protocol_version,
            era: handshake.era,
            instructions: handshake.instructions,
            tools,
            warnings: Vec::new(),
        })
    }

    // -- handshakes ------------------------------------------------------------------------------

    /// `initialize` + `notifications/initialized`. `also_waiting` are ids of earlier requests
    /// whose late answer is still of interest (a `server/discover` in auto mode); if one of them
    /// answers first, it is returned instead.
    async fn legacy_handshake(
        &mut self,
        wait: Wait,
        also_waiting: &[u64],
    ) -> Result<Handshake, Failure> {
        let params = json!({
            "protocolVersion": self.profile.protocol_version,
            "capabilities": self.profile.capabilities,
            "clientInfo": self.profile.client_info,
        });
        let init_id = self.send_request("initialize", Some(params), wait).await?;
        let mut waiting: Vec<u64> = also_waiting.to_vec();
        waiting.push(init_id);
        loop {
            let (id, reply) = self.await_reply(&waiting, wait, "`initialize`").await?;
            if id != init_id {
                // A late `server/discover` answer: a result means the server is modern after
                // all; an error is the expected legacy answer and is ignored.
                waiting.retain(|&w| w != id);
                if let Reply::Result(result) = reply {
                    // A malformed late answer is ignored: `initialize` may still succeed.
                    if let Ok(Some(handshake)) = self.read_discover(result, MODERN_PROTOCOL_VERSION)
                    {
                        return Ok(handshake);
                    }
                }
                continue;
            }
            let result = expect_result(reply, "`initialize`")?;
            let handshake = self.read_initialize(result)?;
            // HTTP: every message after `initialize` carries the negotiated version.
            self.transport
                .set_protocol_version(&handshake.protocol_version);
            self.send_notification("notifications/initialized", wait)
                .await?;
            return Ok(handshake);
        }
    }

    fn read_initialize(&mut self, result: Value) -> Result<Handshake, Failure> {
        let during = "`initialize`";
        let Value::Object(result) = result else {
            return Err(malformed(
                during,
                format!("the result is {}, not an object", json_kind(&result)),
            ));
        };
        let protocol_version = match result.get("protocolVersion") {
            Some(Value::String(v)) => v.clone(),
            Some(other) => {
                return Err(malformed(
                    during,
                    format!("`protocolVersion` is {}, not a string", json_kind(other)),
                ))
            }
            None => {
                return Err(malformed(
                    during,
                    "`protocolVersion` is missing".to_string(),
                ))
            }
        };
        if !KNOWN_PROTOCOL_VERSIONS.contains(&protocol_version.as_str()) {
            self.warnings.push(format!(
                "the server answered protocol version {} which this tdqs-gate does not know \
                 (known: {}); the export went ahead",
                Value::String(protocol_version.clone()),
                KNOWN_PROTOCOL_VERSIONS.join(", ")
            ));
        }
        if result
            .get("capabilities")
            .and_then(|c| c.get("tools"))
            .is_none()
        {
            self.warnings.push(
                "the server did not declare the `tools` capability in its `initialize` answer; \
                 `tools/list` was sent anyway"
                    .to_string(),
            );
        }
        let (server_name, server_version) = server_identity(result.get("serverInfo"));
        Ok(Handshake {
            era: Era::Legacy,
            protocol_version,
            server_name,
            server_version,
            instructions: string_field(&result, "instructions"),
        })
    }

    async fn modern_handshake(&mut self, wait: Wait) -> Result<Handshake, Failure> {
        let version = self.modern_version();
        let params = json!({ "_meta": self.modern_meta(&version) });
        let id = self
            .send_request("server/discover", Some(params), wait)
            .await?;
        let (_, reply) = self.await_reply(&[id], wait, "`server/discover`").await?;
        match reply {
            Reply::Result(result) => match self.read_discover(result, &version)? {
                Some(handshake) => Ok(handshake),
                None => Err(Failure::NoCommonVersion {
                    offered: version,
                    supported: Vec::new(),
                }),
            },
            Reply::Error(error) => Err(self.discover_error(error, &version)),
        }
    }

    async fn auto_handshake(&mut self, startup: Wait) -> Result<Handshake, Failure> {
        let version = self.modern_version();
        let params = json!({ "_meta": self.modern_meta(&version) });
        let discover_id = match self
            .send_request("server/discover", Some(params), startup)
            .await
        {
            Ok(id) => id,
            // Over HTTP a server of the `initialize` era may refuse `server/discover` with an
            // HTTP error instead of a JSON-RPC one ("server not initialized", "missing session
            // ID"): that is the legacy answer too. Refused credentials are not.
            Err(Failure::Http {
                fault: HttpFault::Status { status, .. },
                ..
            }) if (400..500).contains(&status) && !matches!(status, 401 | 403) => {
                return self.legacy_handshake(startup, &[]).await;
            }
            Err(failure) => return Err(failure),
        };
        // Half of the startup budget at most, so the fallback keeps time to start.
        let probe = startup.capped(AUTO_DISCOVER_TIMEOUT.min(self.limits.startup_timeout / 2));
        match self
            .await_reply(&[discover_id], probe, "`server/discover`")
            .await
        {
            Ok((_, Reply::Result(result))) => {
                if let Some(handshake) = self.read_discover(result, &version)? {
                    return Ok(handshake);
                }
                self.warnings.push(format!(
                    "the server answered `server/discover` without supporting {version}; fell \
                     back to `initialize`"
                ));
                self.legacy_handshake(startup, &[]).await
            }
            Ok((_, Reply::Error(error))) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
                Err(self.discover_error(error, &version))
            }
            Ok((_, Reply::Error(_))) => self.legacy_handshake(startup, &[]).await,
            Err(Failure::Timeout { .. }) if Instant::now() < startup.deadline => {
                self.legacy_handshake(startup, &[discover_id]).await
            }
            Err(failure) => Err(failure),
        }
    }

    /// The modern revision requested: the profile's version when it is not a legacy one.
    fn modern_version(&self) -> String {
        let requested = self.profile.protocol_version.as_str();
        if KNOWN_PROTOCOL_VERSIONS[..4].contains(&requested) {
            MODERN_PROTOCOL_VERSION.to_string()
        } else {
            requested.to_string()
        }
    }

    fn modern_meta(&self, version: &str) -> Value {
        let mut meta = Map::new();
        meta.insert(META_PROTOCOL_VERSION.into(), Value::String(version.into()));
        meta.insert(META_CLIENT_INFO.into(), self.profile.client_info.clone());
        meta.insert(
            META_CLIENT_CAPABILITIES.into(),
            self.profile.capabilities.clone(),
        );
        Value::Object(meta)
    }

    /// Reads a `DiscoverResult`; `None` when the server does not support `version`.
    fn read_discover(
        &mut self,
        result: Value,
        version: &str,
    ) -> Result<Option<Handshake>, Failure> {
        let during = "`server/discover`";
        let Value::Object(result) = result else {
            return Err(malformed(
                during,
                format!("the result is {}, not an object", json_kind(&result)),
            ));
        };
        check_result_type(&result, during)?;
        let supported = match result.get("supportedVersions") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    malformed(during, "`supportedVersions` holds a non-string".to_string())
                })?,
            Some(other) => {
                return Err(malformed(
                    during,
                    format!("`supportedVersions` is {}, not an array", json_kind(other)),
                ))
            }
            None => {
                return Err(malformed(
                    during,
                    "`supportedVersions` is missing".to_string(),
                ))
            }
        };
        if !supported.iter().any(|v| v == version) {
            return Ok(None);
        }
        let identity = result
            .get("_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
            .or_else(|| result.get("serverInfo"));
        let (server_name, server_version) = server_identity(identity);
        Ok(Some(Handshake {
            era: Era::Modern,
            protocol_version: version.to_string(),
            server_name,
            server_version,
            instructions: string_field(&result, "instructions"),
        }))
    }

    fn discover_error(&self, error: RemoteError, offered: &str) -> Failure {
        if error.code == UNSUPPORTED_PROTOCOL_VERSION {
            let supported = error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            Failure::NoCommonVersion {
                offered: offered.to_string(),
                supported,
            }
        } else {
            Failure::Remote {
                during: "`server/discover`".to_string(),
                error: Box::new(error),
            }
        }
    }

    // -- listing ---------------------------------------------------------------------------------

    async fn list_all_tools(
        &mut self,
        modern_version: Option<&str>,
    ) -> Result<Vec<Value>, Failure> {
        let mut tools: Vec<Value> = Vec::new();
        let mut seen_cursors: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut page = 0usize;
        loop {
            if page == self.limits.max_pages {
                return Err(Failure::TooManyPages {
                    limit: self.limits.max_pages,
                });
            }
            page += 1;
            let during = format!("`tools/list` (page {page})");
            let params = match (modern_version, &cursor) {
                (Some(version), cursor) => {
                    let mut params = Map::new();
                    params.insert("_meta".into(), self.modern_meta(version));
                    if let Some(c) = cursor {
                        params.insert("cursor".into(), Value::String(c.clone()));
                    }
                    Some(Value::Object(params))
                }
                (None, Some(c)) => Some(json!({ "cursor": c })),
                (None, None) => None,
            };
            let wait = Wait::new(self.limits.request_timeout, "request timeout");
            let id = self.send_request("tools/list", params, wait).await?;
            let (_, reply) = self.await_reply(&[id], wait, &during).await?;
            let result = expect_result(reply, &during)?;
            let Value::Object(mut result) = result else {
                return Err(malformed(
                    &during,
                    format!("the result is {}, not an object", json_kind(&result)),
                ));
            };
            check_result_type(&result, &during)?;
            let page_tools = match result.remove("tools") {
                Some(Value::Array(items)) => items,
                Some(other) => {
                    return Err(malformed(
                        &during,
                        format!("`tools` is {}, not an array", json_kind(&other)),
                    ))
                }
                None => return Err(malformed(&during, "`tools` is missing".to_string())),
            };
            if tools.len() + page_tools.len() > self.limits.max_tools {
                return Err(Failure::TooManyTools {
                    limit: self.limits.max_tools,
                });
            }
            tools.extend(page_tools);
            match result.remove("nextCursor") {
                None | Some(Value::Null) => break,
                Some(Value::String(next)) if next.is_empty() => {
                    self.warnings.push(format!(
                        "page {page} of `tools/list` had an empty `nextCursor`; taken as the last \
                         page"
                    ));
                    break;
                }
                Some(Value::String(next)) => {
                    if !seen_cursors.insert(next.clone()) {
                        return Err(Failure::CursorRepeated { cursor: next, page });
                    }
                    cursor = Some(next);
                }
                Some(other) => {
                    return Err(malformed(
                        &during,
                        format!("`nextCursor` is {}, not a string", json_kind(&other)),
                    ))
                }
            }
        }
        Ok(tools)
    }

    // -- JSON-RPC plumbing -----------------------------------------------------------------------

    async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        wait: Wait,
    ) -> Result<u64, Failure> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = Map::new();
        message.insert("jsonrpc".into(), json!("2.0"));
        message.insert("id".into(), json!(id));
        message.insert("method".into(), json!(method));
        if let Some(params) = params {
            message.insert("params".into(), params);
        }
        self.write(&Value::Object(message), wait, &format!("`{method}`"))
            .await?;
        Ok(id)
    }

    async fn send_notification(&mut self, method: &str, wait: Wait) -> Result<(), Failure> {
        let message = json!({ "jsonrpc": "2.0", "method": method });
        self.write(&message, wait, &format!("`{method}`")).await
    }

    async fn write(&mut self, message: &Value, wait: Wait, what: &str) -> Result<(), Failure> {
        let bytes = serde_json::to_vec(message).map_err(|err| Failure::Io {
            doing: format!("encoding {what}"),
            err: err.to_string(),
        })?;
        let remaining = wait.deadline.saturating_duration_since(Instant::now());
        match self.transport.send(&bytes, remaining).await {
            Ok(()) => Ok(()),
            Err(SendError::Write(WriteError::Closed(_))) => Err(Failure::Exited {
                doing: format!("sending {what}"),
            }),
            Err(SendError::Write(WriteError::TimedOut)) => Err(Failure::StdinStuck {
                sending: what.to_string(),
                wait,
            }),
            Err(SendError::NoAnswer) => Err(Failure::Timeout {
                request: what.to_string(),
                wait,
            }),
            Err(SendError::Http(fault)) => Err(Failure::Http {
                doing: format!("sending {what}"),
                fault,
            }),
        }
    }

    /// Reads messages until a response to one of `ids` (requests named `request` in messages)
    /// arrives, answering server requests and skipping notifications, stray responses and
    /// non-message lines on the way.
    async fn await_reply(
        &mut self,
        ids: &[u64],
        wait: Wait,
        request: &str,
    ) -> Result<(u64, Reply), Failure> {
        let doing = || format!("waiting for the answer to {request}");
        loop {
            let line =
                match tokio::time::timeout_at(wait.deadline, self.transport.next_line()).await {
                    Err(_) => {
                        return Err(Failure::Timeout {
                            request: request.to_string(),
                            wait,
                        })
                    }
                    Ok(Err(RecvError::Http(fault))) => {
                        return Err(Failure::Http {
                            doing: doing(),
                            fault,
                        })
                    }
                    Ok(Err(RecvError::Read(ReadError::Oversize { limit }))) => {
                        return Err(Failure::Oversize {
                            doing: doing(),
                            limit,
                        })
                    }
                    Ok(Err(RecvError::Read(ReadError::Io(err)))) => {
                        return Err(Failure::Io {
                            doing: doing(),
                            err: err.to_string(),
                        })
                    }
                    Ok(Ok(StdoutLine::Eof)) => return Err(Failure::Exited { doing: doing() }),
                    Ok(Ok(StdoutLine::Line(line))) => line,
                };
            self.received_bytes = self.received_bytes.saturating_add(line.len() + 1);
            if self.received_bytes > self.limits.max_listing_bytes {
                return Err(Failure::ListingTooLarge {
                    limit: self.limits.max_listing_bytes,
                });
            }
            let parsed = match serde_json::from_slice::<Value>(&line) {
                Ok(value) => Ok(value),
                Err(err) => match line_check::repair_lone_surrogates(&line) {
                    Some((fixed, n)) => serde_json::from_slice::<Value>(&fixed)
                        .inspect(|_| self.repaired_surrogates += n),
                    None => Err(err),
                },
            };
            let parsed = match parsed {
                Err(err) if line_check::looks_like_message(&line) => {
                    // A message the server meant but broke: waiting would only end in a timeout.
                    return Err(Failure::Malformed {
                        during: request.to_string(),
                        problem: line_check::describe(&line, &err),
                    });
                }
                other => other,
            };
            let messages = match parsed {
                Ok(Value::Object(message)) => vec![message],
                Ok(Value::Array(batch))
                    if batch.iter().all(Value::is_object) && !batch.is_empty() =>
                {
                    batch
                        .into_iter()
                        .filter_map(|m| match m {
                            Value::Object(m) => Some(m),
                            _ => None,
                        })
                        .collect()
                }
                _ => {
                    self.stdout_junk.note(&line, &self.transport);
                    continue;
                }
            };
            // Every message of a batch is handled (server requests answered) before returning.
            let mut found = None;
            for message in messages {
                let reply = match self.handle_message(message, wait, &line).await? {
                    Incoming::Response(id, _) if self.answered.contains(&id) => {
                        let (count, first) = &mut self.duplicate_answers;
                        *count += 1;
                        if first.len() < 3 && !first.contains(&id) {
                            first.push(id);
                        }
                        None
                    }
                    Incoming::Response(id, reply) if ids.contains(&id) => Some((id, reply)),
                    // An error without an id (JSON-RPC's answer to a request the server could
                    // not parse) can only concern the newest request still waiting.
                    Incoming::UnattributedError(mut error) => ids.last().map(|&id| {
                        error.message =
                            format!("{} (an error answer without a request id)", error.message);
                        (id, Reply::Error(error))
                    }),
                    Incoming::Response(..) | Incoming::Other => None,
                };
                if found.is_none() {
                    found = reply;
                }
            }
            if let Some(found) = found {
                self.answered.insert(found.0);
                return Ok(found);
            }
        }
    }

    /// Handles one incoming message: answers server requests, notes notifications and
    /// non-messages, and hands responses back.
    async fn handle_message(
        &mut self,
        mut message: Map<String, Value>,
        wait: Wait,
        line: &[u8],
    ) -> Result<Incoming, Failure> {
        if let Some(Value::String(method)) = message.get("method") {
            let method = method.clone();
            match message.remove("id") {
                Some(id) if !id.is_null() => self.answer_server_request(&method, id, wait).await?,
                _ => {
                    if method == "notifications/tools/list_changed" {
                        self.list_changed = true;
                    }
                }
            }
            return Ok(Incoming::Other);
        }
        let is_response = message.contains_key("result") || message.contains_key("error");
        let Some(id) = message.get("id").filter(|_| is_response).cloned() else {
            self.stdout_junk.note(line, &self.transport);
            return Ok(Incoming::Other);
        };
        if let Some(result) = message.remove("result") {
            // Ids this client did not issue (it only uses integers) are stray and skipped.
            return Ok(match id.as_u64() {
                Some(id) => Incoming::Response(id, Reply::Result(result)),
                None => Incoming::Other,
            });
        }
        let error = message.remove("error").unwrap_or(Value::Null);
        let error = RemoteError {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: self.transport.redact(
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)"),
            ),
            data: error.get("data").cloned(),
        };
        Ok(match id {
            Value::Null => Incoming::UnattributedError(error),
            id => match id.as_u64() {
                Some(id) => Incoming::Response(id, Reply::Error(error)),
                None => Incoming::Other,
            },
        })
    }

    async fn answer_server_request(
        &mut self,
        method: &str,
        id: Value,
        wait: Wait,
    ) -> Result<(), Failure> {
        let reply = if method == "ping" {
            json!({ "jsonrpc": "2.0", "id": id, "result": {} })
        } else {
            json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": { "code": METHOD_NOT_FOUND, "message": "Method not found" },
            })
        };
        self.write(
            &reply,
            wait,
            &format!("the reply to the server's `{method}` request"),
        )
        .await
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers

fn expect_result(reply: Reply, during: &str) -> Result<Value, Failure> {
    match reply {
        Reply::Result(result) => Ok(result),
        Reply::Error(error) => Err(Failure::Remote {
            during: during.to_string(),
            error: Box::new(error),
        }),
    }
}

fn malformed(during: &str, problem: String) -> Failure {
    Failure::Malformed {
        during: during.to_string(),
        problem,
    }
}

/// A 2026-07-28 result names its type; an absent type means "complete" (older servers).
fn check_result_type(result: &Map<String, Value>, during: &str) -> Result<(), Failure> {
    match result.get("resultType") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(t)) if t == "complete" => Ok(()),
        Some(Value::String(t)) if t == "input_required" => Err(Failure::InputRequired {
            during: during.to_string(),
        }),
        Some(other) => Err(malformed(during, format!("unknown `resultType` {other}"))),
    }
}

fn server_identity(info: Option<&Value>) -> (Option<String>, Option<String>) {
    let Some(Value::Object(info)) = info else {
        return (None, None);
    };
    (string_field(info, "name"), string_field(info, "version"))
}

fn string_field(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_string)
}
