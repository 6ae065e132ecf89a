//! The score stage: a side's questions ([`questions`]) with the prompts they need ([`prompts`]),
//! asked by a judge in one scoring session ([`session`]), and the answers turned into scored
//! sides ([`side`]); the gate keeps answers between runs in the [`answer_cache`]. The gate, `score` and `--calibrate` all score through a session. The
//! arithmetic and the result types are [`tdqs_core::score`].

pub mod answer_cache;
pub mod prompts;
pub mod questions;
pub mod session;
pub mod side;
