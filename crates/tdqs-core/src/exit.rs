//! The process exit codes: the one place they are defined.
//!
//! They are part of the public interface (the exit-code table in `docs/reference.md`, the
//! stability promise in `docs/report-format.md`). Exit code 1 means BLOCK and nothing else: every
//! error, usage mistake, interruption or panic maps to INVALID (2).

use std::process::ExitCode;

/// The head's tool definitions are not worse than the base's (or did not change).
pub const PASS: u8 = 0;
/// The mean TDQS fell, and the confirmation pairs confirmed the fall.
pub const BLOCK: u8 = 1;
/// The comparison could not be made: bad input, a server or judge failure, a stale report.
pub const INVALID: u8 = 2;

/// A verdict of the gate (or of a command that can only pass or be invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Block,
    Invalid,
}

impl Verdict {
    pub fn code(self) -> u8 {
        match self {
            Verdict::Pass => PASS,
            Verdict::Block => BLOCK,
            Verdict::Invalid => INVALID,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Block => "block",
            Verdict::Invalid => "invalid",
        }
    }

    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(self.code())
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_str().to_ascii_uppercase())
    }
}
