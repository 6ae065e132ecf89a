//! Terminal output of the binary: progress on a terminal, plain log lines otherwise.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use crate::export::process::SetupEvent;
use crate::progress::{Progress, ProgressEvent};
// Everything printed is for a terminal: escape sequences stripped, secrets masked, control
// characters shown as escapes.
use tdqs_core::redact::for_terminal as redact;

/// How much to say on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

/// Progress on stderr: a redrawn line on a terminal, one line per step in logs (CI).
pub(crate) struct StderrProgress {
    verbosity: Verbosity,
    terminal: bool,
    state: Mutex<LineState>,
}

#[derive(Default)]
struct LineState {
    label: String,
    drawn: bool,
    last_logged_tenth: usize,
}

impl StderrProgress {
    pub fn new(verbosity: Verbosity) -> Self {
        StderrProgress {
            verbosity,
            terminal: std::io::stderr().is_terminal(),
            state: Mutex::new(LineState::default()),
        }
    }

    fn line(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.drawn {
            let _ = write!(err, "\r\x1b[2K");
            state.drawn = false;
        }
        let _ = writeln!(err, "{}", redact(text));
    }

    /// Clears a progress line left on the terminal.
    pub fn finish(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            state.drawn = false;
        }
    }
}

impl Progress for StderrProgress {
    fn event(&self, event: ProgressEvent) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        match event {
            ProgressEvent::Note(text) => self.line(&format!("tdqs-gate: {text}")),
            ProgressEvent::Started { label, total } => {
                {
                    let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                    state.label = label.clone();
                    state.last_logged_tenth = 0;
                }
                if !self.terminal {
                    self.line(&format!(
                        "tdqs-gate: {total} judge questions for this {label}"
                    ));
                }
            }
            ProgressEvent::Answered { done, total } => {
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if self.terminal {
                    let _ = write!(
                        std::io::stderr(),
                        "\r\x1b[2Ktdqs-gate: {} answered {done}/{total}",
                        state.label
                    );
                    let _ = std::io::stderr().flush();
                    state.drawn = done < total;
                    if done == total {
                        let _ = write!(std::io::stderr(), "\r\x1b[2K");
                    }
                } else {
                    // In logs, a line per tenth of the way (and the last one).
                    let tenth = done * 10 / total.max(1);
                    if tenth > state.last_logged_tenth || done == total {
                        state.last_logged_tenth = tenth;
                        drop(state);
                        self.line(&format!("tdqs-gate: answered {done}/{total}"));
                    }
                }
            }
            ProgressEvent::Setup { side, event } => {
                if self.verbosity == Verbosity::Verbose {
                    self.line(&setup_line(&side, &event));
                } else {
                    // A setup command (npm ci, pip install) can take minutes: say which one runs
                    // on each side, without its text (that is `-v`'s).
                    self.line(&short_setup_line(&side, &event));
                }
            }
            ProgressEvent::Retrying {
                what,
                attempt,
                reason,
            } => {
                if self.verbosity == Verbosity::Verbose {
                    self.line(&format!("tdqs-gate: retry {attempt} for {what}: {reason}"));
                }
            }
        }
    }
}

/// One log line for a setup command starting or ending (`-v`).
pub(crate) fn setup_line(side: &str, event: &SetupEvent) -> String {
    match event {
        SetupEvent::Started {
            index,
            total,
            command,
        } => format!("tdqs-gate: {side} setup {index}/{total}: `{command}`"),
        SetupEvent::Finished {
            index,
            total,
            command,
            elapsed,
            ok,
        } => format!(
            "tdqs-gate: {side} setup {index}/{total}: `{command}` {} after {:.1} s",
            if *ok { "finished" } else { "FAILED" },
            elapsed.as_secs_f64()
        ),
    }
}

/// One short line for a setup command starting or ending (without `-v`): the side, the
/// command's number and, at its end, its time.
pub(crate) fn short_setup_line(side: &str, event: &SetupEvent) -> String {
    match event {
        SetupEvent::Started { index, total, .. } => {
            format!("tdqs-gate: {side}: setup command {index} of {total} running")
        }
        SetupEvent::Finished {
            index,
            total,
            elapsed,
            ok,
            ..
        } => format!(
            "tdqs-gate: {side}: setup command {index} of {total} {} after {:.1} s",
            if *ok { "finished" } else { "FAILED" },
            elapsed.as_secs_f64()
        ),
    }
}

/// A line on stderr, unless `--quiet`.
pub(crate) fn say(verbosity: Verbosity, text: &str) {
    if verbosity != Verbosity::Quiet {
        let _ = writeln!(std::io::stderr(), "{}", redact(text));
    }
}
