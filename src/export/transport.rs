//! What the export client talks through: a server process's stdin/stdout, or an HTTP endpoint
//! (perhaps served by a process the gate started). The client's session logic (handshakes,
//! paging, bounds) is the same for both; only sending and receiving differ.

use std::time::{Duration, Instant};

use tdqs_core::redact::Redactor;

use crate::export::http::{HttpConnection, HttpFault};
use crate::export::process::{
    spec_redactor, ReadError, ServerProcess, Shutdown, StdoutLine, WriteError,
};
use crate::export::LaunchSpec;

/// Why sending a message failed.
#[derive(Debug)]
pub enum SendError {
    /// Stdio: the server's stdin.
    Write(WriteError),
    /// HTTP: no status line within the wait.
    NoAnswer,
    Http(HttpFault),
}

/// Why receiving a message failed.
#[derive(Debug)]
pub enum RecvError {
    Read(ReadError),
    Http(HttpFault),
}

/// Why the port of a started HTTP server did not open.
#[derive(Debug)]
pub enum PortWait {
    /// The server exited first.
    Exited,
    /// Nothing listened in time.
    TimedOut { address: String },
}

pub enum Transport {
    Stdio(ServerProcess),
    Http {
        connection: Box<HttpConnection>,
        /// The server the gate started for this endpoint, if any.
        process: Option<ServerProcess>,
        started: Instant,
        redactor: Redactor,
    },
}

impl Transport {
    /// An HTTP transport for `spec` (whose `http` is set), starting its command if it has one.
    pub fn http(spec: &LaunchSpec) -> Result<Transport, tdqs_core::error::Error> {
        let Some(target) = &spec.http else {
            return Err(tdqs_core::error::Error::internal(
                "an HTTP transport for a spec without a URL",
            ));
        };
        let timeout = spec.limits.startup_timeout.max(spec.limits.request_timeout);
        let connection = HttpConnection::new(
            &target.url,
            &target.headers,
            timeout,
            spec.limits.max_message_bytes,
        )
        .map_err(|problem| {
            crate::export::process::redact_error(
                spec,
                tdqs_core::error::Error::new(
                    tdqs_core::error::Stage::Export,
                    format!("cannot use the server URL {} ({problem})", target.url),
                )
                .with_advice(format!(
                    "fix the URL or the headers in {}: an http:// or https:// URL and header \
                     values without line breaks",
                    spec.origin
                )),
            )
        })?;
        let process = if spec.program.is_empty() {
            None
        } else {
            let mut process = ServerProcess::spawn(spec)?;
            process.skip_stdin_wait();
            Some(process)
        };
        Ok(Transport::Http {
            connection: Box::new(connection),
            started: process
                .as_ref()
                .map_or_else(Instant::now, ServerProcess::started),
            process,
            redactor: spec_redactor(spec),
        })
    }

    pub fn started(&self) -> Instant {
        match self {
            Transport::Stdio(process) => process.started(),
            Transport::Http { started, .. } => *started,
        }
    }

    pub fn redact(&self, text: &str) -> String {
        match self {
            Transport::Stdio(process) => process.redact(text),
            Transport::Http { redactor, .. } => tdqs_core::redact::redact(&redactor.redact(text)),
        }
    }

    /// The endpoint URL, for HTTP.
    pub fn url(&self) -> Option<&str> {
        match self {
            Transport::Stdio(_) => None,
            Transport::Http { connection, .. } => Some(connection.url()),
        }
    }

    /// A warning about how the server was reached, if any.
    pub fn note(&self) -> Option<String> {
        match self {
            Transport::Http { connection, .. } if connection.is_legacy() => Some(
                "the server answered the first POST with an error and speaks the legacy HTTP+SSE \
                 transport (an event stream with an `endpoint` event); the export used it"
                    .to_string(),
            ),
            _ => None,
        }
    }

    /// After the handshake: HTTP requests carry the negotiated version from now on.
    pub fn set_protocol_version(&mut self, version: &str) {
        if let Transport::Http { connection, .. } = self {
            connection.set_protocol_version(version);
        }
    }

    pub async fn send(&mut self, message: &[u8], timeout: Duration) -> Result<(), SendError> {
        match self {
            Transport::Stdio(process) => process
                .send(message, timeout)
                .await
                .map_err(SendError::Write),
            Transport::Http {
                connection,
                process,
                ..
            } => {
                let send = connection.send(message, timeout);
                tokio::select! {
                    result = send => result.map_err(|fault| match fault {
                        None => SendError::NoAnswer,
                        Some(fault) => SendError::Http(fault),
                    }),
                    () = drain(process) => unreachable!("draining stdout never ends"),
                }
            }
        }
    }

    /// The next message (stdio: the next non-blank stdout line). Cancel-safe.
    pub async fn next_line(&mut self) -> Result<StdoutLine, RecvError> {
        match self {
            Transport::Stdio(process) => process.next_line().await.map_err(RecvError::Read),
            Transport::Http {
                connection,
                process,
                ..
            } => {
                tokio::select! {
                    result = connection.next_message() => result
                        .map(StdoutLine::Line)
                        .map_err(RecvError::Http),
                    () = drain(process) => unreachable!("draining stdout never ends"),
                }
            }
        }
    }

    /// For a started HTTP server: waits until something accepts connections on the URL's port,
    /// until `deadline`. Nothing to do otherwise.
    pub async fn wait_for_port(&mut self, deadline: tokio::time::Instant) -> Result<(), PortWait> {
        let Transport::Http {
            connection,
            process: Some(process),
            ..
        } = self
        else {
            return Ok(());
        };
        let address = connection.socket_address();
        loop {
            if process.exited().is_some() {
                return Err(PortWait::Exited);
            }
            if let Some(address) = &address {
                let attempt = tokio::time::timeout(
                    Duration::from_millis(500),
                    tokio::net::TcpStream::connect(address.as_str()),
                );
                if let Ok(Ok(_)) = attempt.await {
                    return Ok(());
                }
            } else {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(PortWait::TimedOut {
                    address: address.unwrap_or_default(),
                });
            }
            let pause = tokio::time::sleep(Duration::from_millis(50));
            tokio::select! {
                () = pause => {}
                () = process.discard_stdout() => unreachable!("draining stdout never ends"),
            }
        }
    }

    /// Ends the session (HTTP `DELETE`) and the process group, if any.
    pub async fn close(self) -> Option<Shutdown> {
        match self {
            Transport::Stdio(process) => Some(process.shutdown().await),
            Transport::Http {
                connection,
                process,
                ..
            } => {
                (*connection).close().await;
                match process {
                    Some(process) => Some(process.shutdown().await),
                    None => None,
                }
            }
        }
    }
}

async fn drain(process: &mut Option<ServerProcess>) {
    match process {
        Some(process) => process.discard_stdout().await,
        None => std::future::pending().await,
    }
}
