//! Writing the report files. The report's data model, causes and Markdown are
//! [`tdqs_core::report`].

pub mod badge;
pub mod write;
