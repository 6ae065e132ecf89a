//! The selection eval: does a model's request go to the tool the author meant?
//!
//! TDQS says how a definition reads; this module measures where requests go. Everything here is
//! pure: the cases and their validation ([`case`]), the selecting model's answer ([`answer`]),
//! the prompt it is shown and the cache key of an answer ([`prompt`]), the deterministic
//! `synthetic` selector ([`synthetic`], ranking with [`lexical`], [`intent`] and [`stem`]), the metrics
//! ([`metrics`]), the reach of any word-only selector on recorded model choices ([`reach`]), the composite and health scores ([`scores`]) and the exact paired test the
//! gate uses ([`stats`]).
//!
//! The engine (`tdqs-gate`'s `eval` module) reads the case file, exports the server, asks the
//! judge or runs the synthetic selector, checks arguments against the schemas, and caches.

pub mod answer;
pub mod case;
pub mod compare;
pub mod draft;
pub mod intent;
pub mod lexical;
pub mod metrics;
mod page;
pub mod prompt;
pub mod reach;
pub mod result;
pub mod scores;
pub mod stats;
pub mod stem;
pub mod synthetic;

use serde::{Deserialize, Serialize};

/// How the selections were made. Shown on every output: the two measure different things.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A language model selected, through one of the judges, at temperature 0.
    LiveModel,
    /// The deterministic lexical ranking selected (BM25F over the definitions, no model): an
    /// estimate of ambiguity, not of model accuracy.
    Synthetic,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::LiveModel => "live_model",
            Mode::Synthetic => "synthetic",
        }
    }

    /// The one-line label printed beside every figure.
    pub fn label(self) -> &'static str {
        match self {
            Mode::LiveModel => {
                "live_model: a language model selected; figures hold for this model and these settings"
            }
            Mode::Synthetic => {
                "synthetic: a lexical ranking of the definitions selected (BM25F), no model; an estimate of ambiguity, not of model accuracy"
            }
        }
    }
}
