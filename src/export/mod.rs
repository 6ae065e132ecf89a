//! The export stage: start a side's MCP server over stdio (or reach it over Streamable HTTP) as
//! a host would, `initialize`, then `tools/list` through every page, and keep every tool object
//! exactly as received.

pub mod client;
pub mod command_secrets;
pub mod file;
pub mod http;
pub mod json_keys;
pub mod launch;
mod launch_spec;
pub mod line_check;
pub mod package_cache;
pub mod process;
pub mod tool_list;
pub mod transport;

pub use launch_spec::{HttpTarget, LaunchSpec, SetupCommand};
