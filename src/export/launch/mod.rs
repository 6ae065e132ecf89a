//! How a side's server is started: the [`LaunchSpec`] for one tree.
//!
//! Resolution happens once ([`LaunchPlan::resolve`]) and is applied to each side
//! ([`LaunchPlan::for_side`]), so both sides run the same command with `{root}` replaced by their
//! own tree. The command comes from the first of:
//! 1. `--command "…"`, split like a POSIX shell splits words (quotes, backslashes; no expansion);
//! 2. `command` in the `[server]` table of `tdqs-gate.toml`;
//! 3. a host manifest in the head's tree, the first found of `.mcp.json`, `mcp.json` and
//!    `.vscode/mcp.json`, read as clients read them: a `mcpServers` or `servers` object of named
//!    entries with `command`, `args`, `env` and `cwd` (comments and trailing commas allowed, as
//!    VS Code allows them). Entries of type `http` / `sse` (or with a `url` and no `command`) are
//!    reached over HTTP at their `url` (picked alone only when there is no stdio entry); other
//!    remote entries (`type` `ws`, `websocket`) are skipped, with a warning, when picking the
//!    only server, and refused when named. With several entries, `--server NAME` picks one.
//!
//! A URL (`--url`, `[server] url`, a manifest entry's `url`) makes the server speak Streamable
//! HTTP: with a command, `{port}` in the URL, the command and `env` is a free loopback port
//! picked per side; without one the URL is used as is. `headers` values are expanded like `env`
//! and registered as secrets when they hold a reference or look like credentials.
//!
//! The rest of `[server]` (`env`, `cwd`, `setup`, timeouts, `isolate-home`, `pass-env`) applies
//! whatever the source of the command, and its `env` and `cwd` win over a manifest entry's.
//!
//! Strings: `{root}` is the side's tree everywhere. In `tdqs-gate.toml` and manifests,
//! `${NAME}`, `${NAME:-default}` (Claude Code) and `${env:NAME}` (VS Code) are expanded from the
//! gate's own environment, as clients expand them, and `${workspaceFolder}` is the side's tree;
//! an unset variable without a default, or a VS Code `${input:…}` prompt, is an error. A
//! `--command` is not expanded: the shell that ran the gate already did that.
//!
//! The environment is built from nothing:
//! - from the host: `PATH`, `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `TMPDIR`, `USER`, `LOGNAME`,
//!   `SHELL` (what the MCP SDKs pass by default, minus `TERM`: the server's output is a pipe, and
//!   colour codes would only garble the stderr tail shown in errors), plus the Windows system
//!   variables where they exist;
//! - a temporary HOME with `XDG_{CONFIG,DATA,CACHE,STATE}_HOME`, `USERPROFILE`, `APPDATA` and
//!   `LOCALAPPDATA` inside it, so no user configuration changes what the server lists, unless
//!   `isolate-home = false` (then the host's values pass through: package runners such as `npx`
//!   and `uvx` keep their caches there, and CI may have no network to refill them);
//! - with the temporary HOME, the package cache variables (`npm_config_cache`, `UV_CACHE_DIR`,
//!   …) pointing into the persistent cache folder (see [`crate::export::package_cache`]);
//! - the host values of the network variables ([`tdqs_core::network_env::NETWORK_ENV`]: proxies
//!   and extra CA certificates, as for the judge; proxy values are masked as secrets);
//! - the host values of the `pass-env` names (a name listed there wins over the temporary HOME
//!   and the package cache);
//! - the manifest entry's `env`, then `[server] env`.
//!
//! Nothing else passes, `GIT_*` included: a `GIT_DIR` exported by a git hook that runs the gate
//! would point git commands of a server in a temporary worktree at the user's repository.
//!
//! The gate's secrets never reach the server: `ANTHROPIC_*`, `CLAUDE_*`, `OPENAI_API_KEY` and
//! every name the caller passes (the variable holding the judge's token). Naming one in
//! `pass-env` or `[server] env`, or expanding one with `${…}`, is an error (the configuration
//! asks for something the gate will not do, and silently dropping it would make the server
//! behave differently from what the file says); a manifest entry's `env` key with such a name is
//! dropped with a warning, because manifests are written for hosts, not for the gate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::config::{Config, ServerConfig};
use crate::export::{HttpTarget, LaunchSpec, SetupCommand};
use crate::platform::path_search::{self, EmptyEntry};
use tdqs_core::error::{Error, Result, Stage};
use tdqs_core::export::ExportLimits;
use tdqs_core::redact::NameContext;

mod env;
mod http_target;
mod manifest;
mod plan;
mod source;
mod template;
#[cfg(test)]
mod tests;

use env::*;
use http_target::*;
use manifest::*;
use source::*;
use template::*;

pub(crate) use env::BASE_ENV;
pub use env::{HostEnv, EXCLUDED_ENV_NAMES, EXCLUDED_ENV_PREFIXES};
pub use plan::{LaunchOptions, LaunchPlan};
pub use source::ensure_program;
