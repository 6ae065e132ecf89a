//! tdqs-gate: a pre-merge gate that stops a pull request from lowering an MCP server's Tool
//! Definition Quality Score (TDQS v1.3).
//!
//! The modules follow the data flow of one run:
//!
//! revision → export → digest → spec / judge → score → decide → report
//!
//! Library code never prints: output goes through writers passed in by [`cli`], and errors are
//! returned as [`error::Error`] values that carry their own advice.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod calibrate;
pub mod cli;
pub mod config;
pub mod decide;
pub mod digest;
pub mod error;
pub mod exit;
pub mod export;
pub mod gate;
pub mod harden;
pub mod judge;
pub mod lint;
pub mod ownership;
pub mod redact;
pub mod report;
pub mod revision;
pub mod score;
pub mod spec;
