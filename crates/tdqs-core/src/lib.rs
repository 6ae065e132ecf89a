//! The pure domain of tdqs-gate: everything that can be computed without a process, a file, a
//! network or a clock.
//!
//! The modules follow the data flow of one run, and each only imports modules before it:
//!
//! arithmetic and rubric vocabulary → export data → digest → cost (tokens of the listing) → spec (pins, prompts, signals) →
//! judge questions and answers → selection eval (`eval`, with the word measure `overlap` it
//! shares with lint) → score → decide → report
//!
//! Beside that flow, `baseline` is lint's: which findings a change introduced (a finding's
//! identity and the matching against a baseline and suppressions); it imports no other module.
//!
//! Nothing here does I/O or awaits: the engine (`tdqs-gate`) starts servers, fetches prompts,
//! asks judges and writes files, then hands the values to these functions. That split is
//! enforced by the dependency list: this crate depends on no async runtime, git, HTTP or
//! temporary-file crate.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod arith;
pub mod baseline;
pub mod cost;
pub mod decide;
pub mod digest;
pub mod error;
pub mod eval;
pub mod exit;
pub mod export;
pub mod judge;
pub mod locate;
pub mod network_env;
pub mod overlap;
pub mod redact;
pub mod report;
pub mod rubric;
pub mod sandbox;
pub mod score;
pub mod spec;
pub mod suggest;
