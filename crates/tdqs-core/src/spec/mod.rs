//! The TDQS v1.3 specification as data: the pins (`tdqs/version.json`), the rule that finds the
//! four prompts in the README, the placeholder grammar, and context signals.
//!
//! - [`pins`]: the pinned record, its digest and the exact numbers the scorer uses.
//! - [`extract`]: the published rule that finds the four prompts in the README.
//! - [`render`]: the placeholder grammar of the two user templates.
//! - [`signals`]: context signals, invocation cost and the shadow-candidate prefilter.
//!
//! Fetching the README and caching it is the engine's `spec` module.

pub mod extract;
pub mod pins;
pub mod render;
pub mod signals;

pub use extract::{PromptKey, Prompts};
pub use pins::{Pins, PinsOrigin};
pub use render::{check_templates, pretty_json, render_coherence_user, render_tool_user};
