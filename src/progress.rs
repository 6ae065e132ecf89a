//! Progress events of a run (exporting, setup commands, questions asked and answered), for a
//! terminal display or log lines. Library code reports through [`Progress`]; only the command
//! line (`cli::output`) shows them.

/// Progress of a run, for a terminal display or log lines.
#[derive(Debug, Clone)]
pub enum ProgressEvent {
    /// `total` questions will be asked in this batch.
    Started { label: String, total: usize },
    /// One question answered (valid), `done` of `total`.
    Answered { done: usize, total: usize },
    /// An attempt failed and will be retried.
    Retrying {
        what: String,
        attempt: u32,
        reason: String,
    },
    /// A step of the run (exporting, scoring pair 2 of 3, …).
    Note(String),
    /// A setup command of a side (`base`, `head`, …) started or ended.
    Setup {
        side: String,
        event: crate::export::process::SetupEvent,
    },
}

pub trait Progress: Send + Sync {
    fn event(&self, event: ProgressEvent);
}

/// A progress sink that ignores everything.
pub struct NoProgress;

impl Progress for NoProgress {
    fn event(&self, _: ProgressEvent) {}
}
