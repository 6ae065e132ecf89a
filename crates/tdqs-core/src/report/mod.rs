//! The report: its data model ([`model`]), the causes of a fall ([`causes`]), the Markdown
//! summary ([`markdown`]), the self-contained HTML page ([`html`]) and the plain-text rendering
//! of one scored side ([`text`]). Writing the files is the engine's business.

pub mod badge;
pub mod causes;
pub mod changed;
pub mod html;
mod html_eval;
pub mod markdown;
pub mod md_escape;
pub mod model;
pub mod monorepo;
pub mod summary;
pub mod text;

pub use model::*;
