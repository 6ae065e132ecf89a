//! Counting the tokens of a listing with a real tokenizer, for the report's cost section.
//!
//! The rule (what is counted, TDQS per 1,000 tokens, the growth rule) is
//! [`tdqs_core::cost`]; this module supplies the vocabulary. It uses OpenAI's `cl100k_base`
//! byte-pair encoding, embedded in the `tiktoken-rs` crate (no download at run time). Claude's
//! tokenizer is not published, so for a Claude model the counts are an approximation; every
//! report names the tokenizer that counted.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use tdqs_core::arith::Tenths;
use tdqs_core::cost::{listing_cost, CostComparison, TokenCounter};
use tdqs_core::error::{Error, Result};
use tdqs_core::export::Export;
use tdqs_core::score::SideScore;
use tiktoken_rs::CoreBPE;

/// The version of `tiktoken-rs` in `Cargo.lock`, named in reports beside the encoding.
const TIKTOKEN_RS_VERSION: &str = "0.12.1";

/// The `cl100k_base` encoding, loaded once per process (parsing its 100,000 ranks takes a
/// noticeable moment, and every side of every server uses the same one).
pub struct Cl100k {
    bpe: &'static CoreBPE,
}

impl Cl100k {
    pub fn load() -> Result<Cl100k> {
        static BPE: OnceLock<std::result::Result<CoreBPE, String>> = OnceLock::new();
        match BPE.get_or_init(|| tiktoken_rs::cl100k_base().map_err(|e| e.to_string())) {
            Ok(bpe) => Ok(Cl100k { bpe }),
            Err(why) => Err(Error::internal(format!(
                "the embedded cl100k_base tokenizer did not load: {why}"
            ))),
        }
    }
}

/// Starts loading the `cl100k_base` encoding on a thread of its own, so that its load overlaps
/// other work (the exports); a later [`Cl100k::load`] waits for it rather than loading again. The
/// thread is not joined: a process that exits first does not wait for it.
pub fn load_in_background() {
    let _ = std::thread::Builder::new()
        .name("tokenizer-load".to_string())
        .spawn(|| {
            let _ = Cl100k::load();
        });
}

impl TokenCounter for Cl100k {
    fn name(&self) -> String {
        format!("cl100k_base (tiktoken-rs {TIKTOKEN_RS_VERSION})")
    }

    fn count(&self, text: &str) -> u64 {
        self.bpe.encode_ordinary(text).len() as u64
    }
}

/// Each tool's TDQS on one scored side.
fn scores(side: Option<&SideScore>) -> BTreeMap<String, Tenths> {
    side.map(|s| s.tools.iter().map(|(n, t)| (n.clone(), t.tdqs)).collect())
        .unwrap_or_default()
}

/// Both sides' costs, with the first pair's scores (when one was scored) for TDQS per 1,000
/// tokens. Call it on full exports, before a report is summarised.
pub fn compare(
    counter: &dyn TokenCounter,
    base: &Export,
    head: &Export,
    first_pair: Option<(&SideScore, &SideScore)>,
) -> Result<CostComparison> {
    let base_cost = listing_cost(&base.tools, &scores(first_pair.map(|p| p.0)), counter)?;
    let head_cost = listing_cost(&head.tools, &scores(first_pair.map(|p| p.1)), counter)?;
    Ok(CostComparison::new(counter.name(), base_cost, head_cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cl100k_counts_known_texts() {
        let counter = Cl100k::load().unwrap();
        // Reference counts of the cl100k_base encoding.
        assert_eq!(counter.count("hello world"), 2);
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("<|endoftext|>"), 7);
        assert!(counter.name().starts_with("cl100k_base (tiktoken-rs "));
    }

    #[test]
    fn the_named_version_is_the_locked_one() {
        let lock = include_str!("../Cargo.lock");
        let entry = format!("name = \"tiktoken-rs\"\nversion = \"{TIKTOKEN_RS_VERSION}\"");
        assert!(lock.contains(&entry), "Cargo.lock has another tiktoken-rs");
    }
}
