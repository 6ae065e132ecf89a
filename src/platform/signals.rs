//! The signals that end a run early, as the operating system delivers them.

/// The handlers of Ctrl-C, SIGTERM (how CI systems cancel a job), SIGHUP (the terminal closed)
/// and SIGQUIT, installed when this is made — before the command starts, so a signal at any
/// moment after it (a worktree half made included) ends the run through cleanup, never by the
/// default action. A handler that cannot be installed leaves that signal's default action.
pub struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    quit: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Installs the handlers; call inside the runtime's context.
    pub fn install() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Signals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
                quit: signal(SignalKind::quit()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    /// Resolves on the first of the signals, naming it. All four end the run the same way:
    /// cleanup, then INVALID.
    pub async fn interrupted(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            async fn recv(stream: &mut Option<tokio::signal::unix::Signal>) {
                match stream {
                    Some(stream) => {
                        stream.recv().await;
                    }
                    // Without a handler the signal keeps its default action.
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                _ = recv(&mut self.int) => "Ctrl-C",
                _ = recv(&mut self.term) => "SIGTERM",
                _ = recv(&mut self.hup) => "SIGHUP",
                _ = recv(&mut self.quit) => "SIGQUIT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
