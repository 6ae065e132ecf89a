//! The GitHub Action (`action.yml` and `action/entrypoint.sh`), run for real.
//!
//! [`runner`] executes `action.yml` the way GitHub's runner executes a composite action: it
//! evaluates the `${{ }}` expressions the file uses (inputs, step outputs and outcomes, `if:`
//! conditions with the status functions), runs each `run:` step with `bash --noprofile --norc -eo
//! pipefail` and only the environment the step declares, gives each step its own `GITHUB_OUTPUT`
//! and `GITHUB_STEP_SUMMARY` files, reads workflow commands from the log (honouring
//! `::stop-commands::`), and stands in for the three `uses:` steps (cache restore and save, and
//! upload-artifact, whose upload is a copy into a folder). Anything else in the file is refused,
//! so the Action cannot drift outside what this runner checks without a test failing.
//!
//! The repositories are built by `tests/fixtures/action/make-repos.sh`, the script the CI job
//! uses on GitHub: shallow clones of one branch each, without the base `origin/main`, so every
//! run goes through the Action's fetch of the base from a local "origin". The gate is this
//! build's binary (`TDQS_GATE_BIN`), the Claude Code CLI the fake one (`TDQS_GATE_CLAUDE_DIR`),
//! and the GitHub API a loopback server.
//!
//! The runner is in [`runner`], the fixtures and stand-ins every test shares in `setup`, and the
//! tests in one submodule per feature they check.
//!
//! Not run here: the `version: source` build with cargo inside the Action (the cache reuse path
//! is), `npm ci` of the pinned CLI, and GitHub's own runner; see docs/github-action.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::loopback::{refused_url, Loopback, Request, Response};

const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");
const FAKE_CLAUDE: &str = env!("CARGO_BIN_EXE_fake-claude");

mod comment;
mod inputs;
mod install;
mod monorepo;
mod pre_push_hook;
mod reusable_workflow;
pub(crate) mod runner;
mod setup;
mod static_checks;
mod suggest_input;
mod token;
mod verdicts;

use runner::{ActionRun, Job, Outcome};
use setup::*;
pub(crate) use static_checks::flags_of;
