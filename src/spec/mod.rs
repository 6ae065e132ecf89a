//! The TDQS v1.3 specification: pins (`tdqs/version.json`), the four prompts fetched from the
//! pinned commit and checked against their hashes, the placeholder grammar, context signals.
//!
//! - [`pins`]: the pinned record, its digest and the exact numbers the scorer uses.
//! - [`fetch`]: the README at the pinned commit, cached, verified; [`fetch::load_prompts`].
//! - [`extract`]: the published rule that finds the four prompts in the README.
//! - [`render`]: the placeholder grammar of the two user templates.
//! - [`signals`]: context signals, invocation cost and the shadow-candidate prefilter.

pub mod extract;
pub mod fetch;
pub mod pins;
pub mod render;
pub mod signals;

pub use extract::{PromptKey, Prompts};
pub use fetch::{load_prompts, FetchOptions, LoadedPrompts, PromptProvenance, PromptSource};
pub use pins::{Pins, PinsOrigin};
pub use render::{check_templates, pretty_json, render_coherence_user, render_tool_user};
