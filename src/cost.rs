//! Counting the tokens of a listing with a real tokenizer, for the report's cost section.
//!
//! The rule (what is counted, TDQS per 1,000 tokens, the growth rule) is
//! [`tdqs_core::cost`]; this module supplies the vocabulary. It uses OpenAI's `cl100k_base`
//! byte-pair encoding: its ranks are taken from the `tiktoken-rs` crate at build time and counted
//! by `cost::cl100k` (no download and no load at run time). Claude's
//! tokenizer is not published, so for a Claude model the counts are an approximation; every
//! report names the tokenizer that counted.

use std::collections::BTreeMap;

use tdqs_core::arith::Tenths;
use tdqs_core::cost::{listing_cost, CostComparison, TokenCounter};
use tdqs_core::error::Result;
use tdqs_core::export::Export;
use tdqs_core::score::SideScore;

/// The version of `tiktoken-rs` whose `cl100k_base` ranks `build.rs` lays out (pinned in
/// Cargo.toml), named in reports beside the encoding.
const TIKTOKEN_RS_VERSION: &str = "0.12.1";

mod cl100k;

/// The `cl100k_base` encoding (`cost::cl100k`): its vocabulary is laid out at build time, so there
/// is nothing to load and every run, an unchanged one too, counts without paying for a load.
///
/// A counter remembers the count of every text it was given (by the text's SHA-256): the base
/// and the head list mostly the same tools, and an unchanged pull request lists exactly the
/// same ones, so each distinct text is encoded once (a 75 KB listing takes some 20 ms).
#[derive(Default)]
pub struct Cl100k {
    counted: std::sync::Mutex<std::collections::HashMap<[u8; 32], u64>>,
}

impl Cl100k {
    pub fn new() -> Cl100k {
        Cl100k::default()
    }
}

impl TokenCounter for Cl100k {
    fn name(&self) -> String {
        // The ranks are tiktoken-rs's and the counts equal its own, count for count (tested):
        // the name recorded in earlier reports stays valid, so `--check` of them still holds.
        format!("cl100k_base (tiktoken-rs {TIKTOKEN_RS_VERSION})")
    }

    fn count(&self, text: &str) -> u64 {
        use sha2::{Digest, Sha256};
        let key: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        let known = self
            .counted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .copied();
        known.unwrap_or_else(|| {
            let tokens = cl100k::count(text);
            self.counted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, tokens);
            tokens
        })
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
        let counter = Cl100k::new();
        // Reference counts of the cl100k_base encoding.
        assert_eq!(counter.count("hello world"), 2);
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("<|endoftext|>"), 7);
        assert!(counter.name().starts_with("cl100k_base (tiktoken-rs "));
        // A remembered count is the count.
        assert_eq!(counter.count("hello world"), 2);
    }

    #[test]
    fn the_named_version_is_the_locked_one() {
        let lock = include_str!("../Cargo.lock");
        let entry = format!("name = \"tiktoken-rs\"\nversion = \"{TIKTOKEN_RS_VERSION}\"");
        assert!(lock.contains(&entry), "Cargo.lock has another tiktoken-rs");
    }
}
