//! The JSON report, its Markdown summary and `--check`.

pub mod causes;
pub mod changed;
pub mod markdown;
pub mod model;
pub mod text;
pub mod write;

pub use model::*;
