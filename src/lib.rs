//! tdqs-gate: a pre-merge gate that stops a pull request from lowering an MCP server's Tool
//! Definition Quality Score (TDQS v1.3).
//!
//! This crate is the engine: everything that touches processes, files, git, the network or the
//! clock. The pure domain it computes with (arithmetic, digests, the prompt grammar, answers,
//! the decision, the report model) is [`tdqs_core`]. The modules follow the data flow of one run:
//!
//! revision → export → spec / judge → score → gate (decide, report) → cli
//!
//! Library code never prints: output goes through writers passed in by [`cli`], and errors are
//! returned as [`tdqs_core::error::Error`] values that carry their own advice. See
//! `docs/architecture.md`.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod calibrate;
pub mod ci;
pub mod cli;
pub mod config;
pub mod cost;
pub mod eval;
pub mod export;
pub mod gate;
pub mod judge;
pub mod lint;
pub mod locate;
pub mod platform;
pub mod progress;
pub mod report;
pub mod revision;
pub mod score;
pub mod spec;
pub mod suggest;
