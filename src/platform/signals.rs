//! The signals that end a run early, as the operating system delivers them.

/// Resolves on Ctrl-C, SIGTERM (how CI systems cancel a job), SIGHUP (the terminal closed) or
/// SIGQUIT, naming the signal. All four end the run the same way: cleanup, then INVALID.
pub async fn interrupted() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        async fn on(kind: SignalKind) {
            match signal(kind) {
                Ok(mut stream) => {
                    stream.recv().await;
                }
                // Without a handler the signal keeps its default action; never resolve here.
                Err(_) => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "Ctrl-C",
            _ = on(SignalKind::terminate()) => "SIGTERM",
            _ = on(SignalKind::hangup()) => "SIGHUP",
            _ = on(SignalKind::quit()) => "SIGQUIT",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
