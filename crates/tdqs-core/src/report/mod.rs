//! The report: its data model ([`model`]), the causes of a fall ([`causes`]) and its pages.
//!
//! Every page is built once as neutral data in the [`doc`] model and printed by one backend per
//! markup, each with its own escaping: the Markdown summary ([`markdown`]), the self-contained
//! HTML page ([`html`], its selection-check section in `html_eval`), the run over several
//! servers ([`monorepo`]) and the plain-text rendering of one scored side ([`text`]). The parts
//! the Markdown and HTML pages share are built in one place (`sections`). Writing the files is
//! the engine's business.

pub mod badge;
pub mod causes;
pub mod changed;
pub mod doc;
pub mod forecast;
pub mod html;
mod html_eval;
pub mod markdown;
pub mod md_escape;
pub mod model;
pub mod monorepo;
mod sections;
pub mod suggestions;
pub mod summary;
pub mod text;

pub use model::*;
