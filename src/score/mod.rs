//! Scoring a whole side with a judge. The arithmetic and the result types are
//! [`tdqs_core::score`].

pub mod side;
