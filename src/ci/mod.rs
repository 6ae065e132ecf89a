//! The gate in CI, as the GitHub Action and the reusable workflow run it: the work that used to
//! be shell around the binary.
//!
//! - [`annotations`]: warnings on the diff's lines for fallen tools defined there;
//! - [`export_side`]: every server of one side into a folder (`NAME.json`, or `NAME.failed`
//!   with the cause), in a job that holds no secret;
//! - [`step_outputs`]: the outcome in machine form (step outputs, the annotation, the fallback
//!   summary), so no script greps a log or parses a report;
//! - [`sticky_comment`]: the one pull-request comment, through the runner's `gh`, found by its
//!   author and its marker.
//!
//! See docs/github-action.md and docs/security.md ("Which job holds what").

pub mod annotations;
pub mod export_side;
pub mod step_outputs;
pub mod sticky_comment;
