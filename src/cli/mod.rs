//! Command-line parsing and dispatch.

use std::process::ExitCode;

/// Runs the command line of this process and returns its exit code.
pub fn main() -> ExitCode {
    crate::exit::Verdict::Invalid.exit_code()
}
