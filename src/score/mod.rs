//! Scoring: TDQS arithmetic on exact fractions, and scoring a whole side with a judge.

pub mod arith;
pub mod model;
pub mod results;
pub mod side;
