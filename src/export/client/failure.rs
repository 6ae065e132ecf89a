//! Failures of an export and how they read: the cause and the advice for each way a server can
//! fail to answer (exited, timed out, too large, a remote error, HTTP faults).

use super::*;

/// A deadline together with where it came from, for messages.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wait {
    pub(super) deadline: Instant,
    pub(super) limit: Duration,
    pub(super) setting: &'static str,
}

impl Wait {
    pub(super) fn new(limit: Duration, setting: &'static str) -> Self {
        Wait {
            deadline: Instant::now() + limit,
            limit,
            setting,
        }
    }

    /// A shorter wait inside this one.
    pub(super) fn capped(self, limit: Duration) -> Self {
        let deadline = (Instant::now() + limit).min(self.deadline);
        Wait { deadline, ..self }
    }
}

#[derive(Debug, Clone)]
pub(super) struct RemoteError {
    pub(super) code: i64,
    /// Redacted.
    pub(super) message: String,
    /// `error.data` as received (redacted when shown).
    pub(super) data: Option<Value>,
}

#[derive(Debug)]
pub(super) enum Failure {
    /// Stdout reached end-of-file or stdin broke: the server exited or closed its streams.
    /// `doing` completes "while the gate was …".
    Exited {
        doing: String,
    },
    /// No answer to `request` (a method name in backticks, perhaps with a page number).
    Timeout {
        request: String,
        wait: Wait,
    },
    /// The server did not read its stdin within the deadline.
    StdinStuck {
        sending: String,
        wait: Wait,
    },
    Oversize {
        doing: String,
        limit: usize,
    },
    Io {
        doing: String,
        err: String,
    },
    Remote {
        during: String,
        error: Box<RemoteError>,
    },
    Malformed {
        during: String,
        problem: String,
    },
    CursorRepeated {
        cursor: String,
        page: usize,
    },
    TooManyPages {
        limit: usize,
    },
    ListingTooLarge {
        limit: usize,
    },
    TooManyTools {
        limit: usize,
    },
    /// A 2026-07-28 `input_required` result: the server wants input no host gives at listing.
    InputRequired {
        during: String,
    },
    /// A modern server with no protocol version in common.
    NoCommonVersion {
        offered: String,
        supported: Vec<String>,
    },
    /// HTTP: the endpoint failed (status, connection, stream).
    Http {
        doing: String,
        fault: HttpFault,
    },
    /// HTTP: the started server's port did not open in time.
    PortNeverOpened {
        address: String,
        wait: Wait,
    },
}

/// The error for a failed export: what went wrong and what to do (per failure), then what the
/// server left behind (stderr tail, skipped stdout lines, error data) and the line to reproduce.
pub(super) fn failure_error(
    spec: &LaunchSpec,
    failure: Failure,
    shutdown: Option<&Shutdown>,
    junk: &StdoutJunk,
) -> Error {
    let url = spec.http.as_ref().map(|t| t.url.as_str());
    let server = server_label(spec, url);
    let stderr_tail = shutdown.map(|s| s.stderr_tail.clone());
    let mut extra_details: Vec<(String, String)> = Vec::new();
    let (cause, advice) = cause_and_advice(&server, failure, shutdown, url, &mut extra_details);
    let mut error =
        Error::new(Stage::Export, format!("{cause} (from {})", spec.origin)).with_advice(advice);
    if let Some(tail) = &stderr_tail {
        error = error.with_detail("server stderr (tail)", tail_or_empty(tail));
    }
    if junk.count > 0 {
        error = error.with_detail(
            format!("non-JSON-RPC lines on stdout ({} skipped)", junk.count),
            junk.samples.join("\n"),
        );
    }
    for (label, text) in extra_details {
        error = error.with_detail(label, text);
    }
    let reproduce = match url {
        Some(url) if spec.program.is_empty() => format!("tdqs-gate export --url {url}"),
        _ => reproduce_line(spec, &spec.program, &spec.args),
    };
    redact_error(spec, error.with_reproduce(reproduce))
}

/// How the error names the server: by its command for stdio, by its URL for HTTP (with the
/// command that started it, if the gate started it).
pub(super) fn server_label(spec: &LaunchSpec, url: Option<&str>) -> String {
    match url {
        None => format!(
            "the MCP server `{}`",
            shell_command(&spec.program, &spec.args)
        ),
        Some(url) if spec.program.is_empty() => format!("the MCP server at {url}"),
        Some(url) => format!(
            "the MCP server at {url} (started as `{}`)",
            shell_command(&spec.program, &spec.args)
        ),
    }
}

/// The cause and the advice for one failure; a failure with more to show (a JSON-RPC error's
/// data) adds it to `extra_details`.
pub(super) fn cause_and_advice(
    server: &str,
    failure: Failure,
    shutdown: Option<&Shutdown>,
    url: Option<&str>,
    extra_details: &mut Vec<(String, String)>,
) -> (String, String) {
    match failure {
        Failure::Exited { doing } => exited_cause(server, &doing, shutdown, url),
        Failure::Timeout { request, wait } => timeout_cause(server, &request, &wait, url),
        Failure::StdinStuck { sending, wait } => (
            format!(
                "{server} stopped reading its stdin while the gate was sending {sending} (nothing \
                 accepted within {})",
                humantime::format_duration(wait.limit)
            ),
            "the server must keep reading JSON-RPC messages from stdin; check that the command \
             really starts an MCP stdio server"
                .to_string(),
        ),
        Failure::Oversize { doing, limit } => oversize_cause(server, &doing, limit),
        Failure::Io { doing, err } => (
            format!("talking to {server} failed while the gate was {doing}: {err}"),
            "run the command below to see whether the server works on its own".to_string(),
        ),
        Failure::Remote { during, error } => remote_cause(server, &during, &error, extra_details),
        Failure::Malformed { during, problem } => (
            format!("{server} sent a malformed answer to {during}: {problem}"),
            "the answer does not follow the MCP schema, so hosts would reject it too: fix the \
             server"
                .to_string(),
        ),
        Failure::CursorRepeated { cursor, page } => (
            format!(
                "{server} returned the `tools/list` cursor {} again on page {page}, so \
                 paging would never end",
                Value::String(cursor)
            ),
            "fix the server's pagination: every `nextCursor` must lead to a new page and the \
             last page must have no `nextCursor`"
                .to_string(),
        ),
        Failure::TooManyPages { limit } => (
            format!("{server} returned more than {limit} pages of `tools/list`"),
            format!(
                "check the server's pagination (it may never end); if it really has more than \
                 {limit} pages, raise the page limit"
            ),
        ),
        Failure::ListingTooLarge { limit } => listing_too_large_cause(server, limit),
        Failure::TooManyTools { limit } => (
            format!("{server} listed more than {limit} tools"),
            format!(
                "check that the server is not repeating pages; if it really has more than \
                 {limit} tools, raise the tool limit"
            ),
        ),
        Failure::InputRequired { during } => (
            format!("{server} asked for client input (`resultType: input_required`) in answer to {during}"),
            "listing tools must not depend on client input: fix the server so `tools/list` \
             completes on its own"
                .to_string(),
        ),
        Failure::Http { doing, fault } => http_cause(server, &doing, fault, url),
        Failure::PortNeverOpened { address, wait } => port_never_opened_cause(server, &address, &wait),
        Failure::NoCommonVersion { offered, supported } => {
            no_common_version_cause(server, &offered, &supported)
        }
    }
}

/// The server's streams closed: say how it ended (its exit status when the gate saw it exit).
pub(super) fn exited_cause(
    server: &str,
    doing: &str,
    shutdown: Option<&Shutdown>,
    url: Option<&str>,
) -> (String, String) {
    let how = match shutdown.map(|s| (s.step, s.status)) {
        Some((ShutdownStep::AlreadyExited | ShutdownStep::StdinClosed, Some(status))) => {
            describe_status(status)
        }
        _ if url.is_some() => "exited".to_string(),
        _ => "closed its stdout without exiting".to_string(),
    };
    (
        format!("{server} {how} while the gate was {doing}"),
        "the server crashed or could not start: read its stderr above and run the \
         command below in that tree; if it needs a build or installed dependencies \
         first, add `setup` commands to the `[server]` table of tdqs-gate.toml"
            .to_string(),
    )
}

/// No answer in time: the advice depends on the transport and on which wait ran out (a slow
/// start, a request that never returns, a stalled HTTP stream).
pub(super) fn timeout_cause(
    server: &str,
    request: &str,
    wait: &Wait,
    url: Option<&str>,
) -> (String, String) {
    (
        format!(
            "{server} did not answer {request} within {} ({})",
            humantime::format_duration(wait.limit),
            wait.setting
        ),
        if url.is_some() {
            format!(
                "the endpoint accepted the request but sent no answer in time (an answer \
                 stream that stalls counts too): check that the URL is the server's MCP \
                 endpoint (often ending in /mcp) and that it answers `{}` promptly; raise the \
                 {} in the `[server]` table of tdqs-gate.toml or with --timeout if it is only \
                 slow",
                request.trim_matches('`'),
                wait.setting
            )
        } else if wait.setting == "startup timeout" {
            "check that the command starts an MCP server speaking stdio (not an HTTP or SSE \
             server, and not a program waiting for input or a login); a cold `npx`/`uvx` \
             start can be slow: raise the startup timeout in the `[server]` table of \
             tdqs-gate.toml"
                .to_string()
        } else {
            "the server accepted the connection but does not answer `tools/list` in time: \
             fix the server, or raise the request timeout in the `[server]` table of \
             tdqs-gate.toml"
                .to_string()
        },
    )
}

/// One stdout line over the message limit: usually a bug or missing newlines, so the advice
/// says that before how to raise the limit.
pub(super) fn oversize_cause(server: &str, doing: &str, limit: usize) -> (String, String) {
    (
        format!(
            "{server} wrote a stdout line longer than the limit of {limit} bytes while the \
             gate was {doing}"
        ),
        format!(
            "one JSON-RPC message this large is usually a bug, or output without newlines \
             on stdout (logs belong on stderr); if the tool list really is this large, raise \
             the limit with --max-message-bytes or `max-message-bytes` in the `[server]` \
             table of tdqs-gate.toml (now {limit} bytes)"
        ),
    )
}

/// A JSON-RPC error answer: its `data` goes into the details, and a missing method gets its own
/// advice.
pub(super) fn remote_cause(
    server: &str,
    during: &str,
    error: &RemoteError,
    extra_details: &mut Vec<(String, String)>,
) -> (String, String) {
    if let Some(data) = &error.data {
        let text = serde_json::to_string_pretty(data).unwrap_or_default();
        extra_details.push(("error data".to_string(), text));
    }
    let advice = if error.code == METHOD_NOT_FOUND {
        "the server does not implement this method: an MCP server must answer it for a \
         host to see its tools; check the command starts the right server"
    } else {
        "the server rejected a request every host makes when it connects: fix the server \
         (its stderr is above); tdqs-gate cannot export tools the server fails to list"
    };
    (
        format!(
            "{server} answered {during} with JSON-RPC error {}: {}",
            error.code, error.message
        ),
        advice.to_string(),
    )
}

/// More stdout than one listing may take: usually repetition or logs, so the advice says that
/// before how to raise the limit.
pub(super) fn listing_too_large_cause(server: &str, limit: usize) -> (String, String) {
    (
        format!(
            "{server} wrote more than {limit} bytes to stdout while listing its tools, the \
             limit of one listing"
        ),
        format!(
            "a listing this large is usually a server repeating itself or writing logs to \
             stdout; if its tools really take this much, raise the limit with \
             --max-listing-bytes or `max-listing-bytes` in the `[server]` table of \
             tdqs-gate.toml (now {limit} bytes; the gate holds a few copies of the listing \
             in memory)"
        ),
    )
}

/// The started HTTP server never listened: most often it was not told the port.
pub(super) fn port_never_opened_cause(
    server: &str,
    address: &str,
    wait: &Wait,
) -> (String, String) {
    (
        format!(
            "{server} did not open its port ({address}) within {} ({})",
            humantime::format_duration(wait.limit),
            wait.setting
        ),
        "the command must listen on the port the gate gives it: put `{port}` in the URL \
         and pass it to the server in its arguments or env (for example `PORT = \"{port}\"` \
         in `[server] env`); if the server is only slow to start, raise the startup timeout"
            .to_string(),
    )
}

/// A modern server and the gate share no protocol version: name what each side offered.
pub(super) fn no_common_version_cause(
    server: &str,
    offered: &str,
    supported: &[String],
) -> (String, String) {
    (
        format!(
            "{server} supports none of the protocol versions the gate speaks (offered \
             {offered}; it supports {})",
            if supported.is_empty() {
                "nothing it named".to_string()
            } else {
                supported.join(", ")
            }
        ),
        "use the legacy era (`initialize`) in the probe profile, or update tdqs-gate to a \
         version that knows the server's protocol"
            .to_string(),
    )
}

/// Cause and advice for an HTTP fault.
pub(super) fn http_cause(
    server: &str,
    doing: &str,
    fault: HttpFault,
    url: Option<&str>,
) -> (String, String) {
    let url = url.unwrap_or("the URL");
    match fault {
        HttpFault::Connect { err } => (
            format!("could not connect to {server} while the gate was {doing}: {err}"),
            format!(
                "check that a server listens at {url} (connection refused means nothing does); \
                 with a `command`, the server must listen on the `{{port}}` the gate gives it"
            ),
        ),
        HttpFault::Status { status, body } => {
            let advice = match status {
                401 | 403 => "the endpoint wants credentials: set `headers` in the `[server]` \
                              table of tdqs-gate.toml (for example `Authorization = \"Bearer \
                              ${TOKEN}\"`, with the token in the gate's environment) or in the \
                              manifest entry"
                    .to_string(),
                404 => format!(
                    "nothing answers MCP at {url}: check the path (servers often use /mcp, \
                     legacy SSE servers /sse)"
                ),
                405 => "the endpoint does not accept POST: check that it is a Streamable HTTP \
                        MCP endpoint"
                    .to_string(),
                500..=599 => "the server failed on its side: read its stderr and fix the \
                              server"
                    .to_string(),
                _ => "check that the URL is the server's MCP endpoint".to_string(),
            };
            let body = body.trim();
            let shown = if body.is_empty() {
                String::new()
            } else {
                format!(": {body}")
            };
            (
                format!("{server} answered HTTP {status} while the gate was {doing}{shown}"),
                advice,
            )
        }
        HttpFault::SessionExpired => (
            format!(
                "{server} answered 404 to a request in its session while the gate was {doing}: \
                 the session expired or the server forgot it"
            ),
            "the server must keep a session for the whole listing (a few requests in a row): \
             fix its session handling, or run it stateless"
                .to_string(),
        ),
        HttpFault::ContentType { content_type } => (
            format!(
                "{server} answered with content type `{content_type}` while the gate was \
                 {doing}, neither JSON nor an event stream"
            ),
            "check that the URL is the server's MCP endpoint, not a web page".to_string(),
        ),
        HttpFault::NotJson { sample } => (
            format!(
                "{server} sent a message that is not JSON while the gate was {doing}: {sample}"
            ),
            "every `message` event and JSON body must hold one JSON-RPC message: fix the server"
                .to_string(),
        ),
        HttpFault::Oversize { limit } => (
            format!(
                "{server} sent one message longer than the limit of {limit} bytes while the gate \
                 was {doing}"
            ),
            format!(
                "if the tool list really is this large, raise --max-message-bytes or \
                 `max-message-bytes` in the `[server]` table of tdqs-gate.toml (now {limit} bytes)"
            ),
        ),
        HttpFault::Body { err } => (
            format!("{server} broke off its answer while the gate was {doing}: {err}"),
            "the server closed the connection mid-answer: read its stderr and fix the server"
                .to_string(),
        ),
    }
}
