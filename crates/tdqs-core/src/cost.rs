//! What a side's tool definitions cost in a model's context, and the opt-in rule on its growth.
//!
//! A client puts the whole `tools/list` answer into the model's context on every turn, so each
//! definition is paid for in tokens whether the tool is called or not. This module fixes what is
//! counted (each tool as compact JSON, exactly as listed, and the `tools` array as a whole), the
//! derived figure TDQS per 1,000 tokens, and the growth rule's arithmetic. Counting tokens needs a
//! tokenizer's vocabulary, which is the engine's business: it hands one in as a
//! [`TokenCounter`], so this module stays pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::arith::Tenths;
use crate::error::{Error, Result};

/// Counts the tokens of a text with one named tokenizer.
pub trait TokenCounter {
    /// The tokenizer's name as reports show it, with the library and its version
    /// (e.g. `cl100k_base (tiktoken-rs 0.12.1)`).
    fn name(&self) -> String;
    /// Tokens of `text` as ordinary text (special-token markers are not given their meaning).
    fn count(&self, text: &str) -> u64;
}

/// Tokens and bytes of one text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Measure {
    pub tokens: u64,
    pub bytes: u64,
}

impl Measure {
    fn of(text: &str, counter: &dyn TokenCounter) -> Measure {
        Measure {
            tokens: counter.count(text),
            bytes: text.len() as u64,
        }
    }
}

/// One tool's definition: its size, and (when it was scored) its TDQS per 1,000 tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCost {
    pub tokens: u64,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdqs_per_1k_tokens: Option<f64>,
}

/// What one side's listing costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingCost {
    /// The `tools` array as compact JSON, in listing order: what a client puts in the context.
    pub listing: Measure,
    /// Tool name → its definition as compact JSON. A summarised report lists only the tools it
    /// still lists; `listing` always covers every tool.
    pub tools: BTreeMap<String, ToolCost>,
    /// The scored TDQS of all tools over their definitions' tokens: Σ TDQS ÷ Σ tokens × 1,000.
    /// Absent when the side was not scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tdqs_per_1k_tokens: Option<f64>,
}

/// Both sides' costs and how the listing changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostComparison {
    /// The tokenizer that counted (an approximation for any model that uses another one).
    pub tokenizer: String,
    pub base: ListingCost,
    pub head: ListingCost,
    /// Head listing tokens minus base listing tokens.
    pub listing_tokens_change: i64,
    pub listing_bytes_change: i64,
    /// The change of the listing's tokens as a share of the base's, in percent (one decimal);
    /// absent when the base lists nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_growth_percent: Option<f64>,
}

/// Rounds for display in a report: `places` decimals.
fn rounded(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

/// TDQS per 1,000 tokens, two decimals; `None` for an empty text.
fn per_1k(tdqs_tenths: i64, tokens: u64) -> Option<f64> {
    (tokens > 0).then(|| rounded(tdqs_tenths as f64 * 100.0 / tokens as f64, 2))
}

/// Measures one side's listing. `tdqs` is the scored TDQS by tool name (empty when the side was
/// not scored): it must cover every listed tool to give the side's TDQS per 1,000 tokens.
pub fn listing_cost(
    tools: &[Value],
    tdqs: &BTreeMap<String, Tenths>,
    counter: &dyn TokenCounter,
) -> Result<ListingCost> {
    let listing_text = serde_json::to_string(tools)
        .map_err(|e| Error::internal(format!("serialising the tool list failed: {e}")))?;
    let mut per_tool = BTreeMap::new();
    for tool in tools {
        let text = serde_json::to_string(tool)
            .map_err(|e| Error::internal(format!("serialising a tool failed: {e}")))?;
        let name = crate::digest::tool_name(tool).to_string();
        let measure = Measure::of(&text, counter);
        let score = tdqs.get(&name).copied();
        per_tool.insert(
            name,
            ToolCost {
                tokens: measure.tokens,
                bytes: measure.bytes,
                tdqs_per_1k_tokens: score.and_then(|t| per_1k(t.0, measure.tokens)),
            },
        );
    }
    let all_scored = !per_tool.is_empty() && per_tool.keys().all(|n| tdqs.contains_key(n));
    let tdqs_per_1k_tokens = if all_scored {
        let sum: i64 = per_tool.keys().map(|n| tdqs[n].0).sum();
        per_1k(sum, per_tool.values().map(|t| t.tokens).sum())
    } else {
        None
    };
    Ok(ListingCost {
        listing: Measure::of(&listing_text, counter),
        tools: per_tool,
        tdqs_per_1k_tokens,
    })
}

impl CostComparison {
    pub fn new(tokenizer: String, base: ListingCost, head: ListingCost) -> CostComparison {
        let (b, h) = (base.listing, head.listing);
        let listing_tokens_change = h.tokens as i64 - b.tokens as i64;
        CostComparison {
            tokenizer,
            listing_tokens_change,
            listing_bytes_change: h.bytes as i64 - b.bytes as i64,
            listing_growth_percent: (b.tokens > 0)
                .then(|| rounded(listing_tokens_change as f64 * 100.0 / b.tokens as f64, 1)),
            base,
            head,
        }
    }
}

/// The opt-in growth rule as a run applied it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrowthRule {
    /// The most the head's listing may grow, in percent of the base's tokens, without a TDQS
    /// gain (`[decision] max-listing-growth`, `--max-listing-growth`).
    pub max_growth_percent: u32,
    /// Whether it applied: to a scored run, and to one whose definitions are unchanged (their
    /// scores cannot differ, yet the listing can grow through what the definition hash leaves
    /// out, such as `_meta`); not to a run with an empty base listing.
    pub applied: bool,
    /// The head's mean TDQS is above the base's (the medians when confirmation pairs were
    /// scored, else the first pair's means).
    pub tdqs_gain: bool,
    /// The listing grew by more than the share allowed.
    pub over: bool,
    /// `over` and no TDQS gain: the run BLOCKs.
    pub blocks: bool,
}

/// Whether the head's mean TDQS rose, as the growth rule asks it: `Some(false)` for unchanged
/// definitions, the comparison of the deciding means (base, head) for a scored run, `None` when
/// nothing was scored for another reason (an empty base).
pub fn tdqs_gain(unchanged: bool, means: Option<(Tenths, Tenths)>) -> Option<bool> {
    if unchanged {
        return Some(false);
    }
    means.map(|(base, head)| head > base)
}

/// The growth rule on measured listings: BLOCK when the head's listing tokens exceed the base's
/// by more than `max_growth_percent` percent (compared exactly, in whole tokens) while the head's
/// mean TDQS did not rise. `gain` is [`tdqs_gain`]; the rule does not apply when it is `None`,
/// nor to an empty base listing.
pub fn growth_rule(
    max_growth_percent: u32,
    base_tokens: u64,
    head_tokens: u64,
    gain: Option<bool>,
) -> GrowthRule {
    let applied = gain.is_some() && base_tokens > 0;
    let tdqs_gain = gain == Some(true);
    // head > base · (1 + p/100)  ⇔  100 · head > (100 + p) · base, in integers.
    let over = applied
        && u128::from(head_tokens) * 100
            > u128::from(base_tokens) * (100 + u128::from(max_growth_percent));
    GrowthRule {
        max_growth_percent,
        applied,
        tdqs_gain,
        over,
        blocks: over && !tdqs_gain,
    }
}

/// The sentence a BLOCK by the growth rule adds to the reason.
pub fn growth_reason(rule: &GrowthRule, cost: &CostComparison) -> Option<String> {
    if !rule.blocks {
        return None;
    }
    Some(format!(
        "The head's tool listing grows from {} to {} tokens ({:+}%), more than the {}% allowed \
         without a TDQS gain.",
        cost.base.listing.tokens,
        cost.head.listing.tokens,
        cost.listing_growth_percent.unwrap_or_default(),
        rule.max_growth_percent
    ))
}

/// Reads a growth limit: a whole number of percent from 0 to 1000.
pub fn parse_growth_percent(value: i64) -> std::result::Result<u32, String> {
    match u32::try_from(value) {
        Ok(p) if p <= 1000 => Ok(p),
        _ => Err(format!(
            "{value} is not a growth limit: give a whole number of percent from 0 to 1000 \
             (10 BLOCKs a listing that grows by more than 10 % with no TDQS gain)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Counts whitespace-separated words: enough to test what is counted, not how.
    struct Words;
    impl TokenCounter for Words {
        fn name(&self) -> String {
            "words".to_string()
        }
        fn count(&self, text: &str) -> u64 {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .count() as u64
        }
    }

    fn tools() -> Vec<Value> {
        vec![
            json!({"name": "get_weather", "description": "Current weather for a city"}),
            json!({"name": "ping", "description": "Ping"}),
        ]
    }

    #[test]
    fn counts_each_definition_and_the_listing_as_compact_json() {
        let cost = listing_cost(&tools(), &BTreeMap::new(), &Words).unwrap();
        let ping = r#"{"name":"ping","description":"Ping"}"#;
        assert_eq!(cost.tools["ping"].bytes, ping.len() as u64);
        assert_eq!(cost.tools["ping"].tokens, 4);
        assert_eq!(cost.tools["get_weather"].tokens, 9);
        assert_eq!(
            cost.listing.bytes,
            serde_json::to_string(&tools()).unwrap().len() as u64
        );
        assert_eq!(cost.listing.tokens, 13);
        assert_eq!(cost.tdqs_per_1k_tokens, None);
    }

    #[test]
    fn tdqs_per_1k_tokens_sums_the_scores_over_the_tokens() {
        let tdqs = BTreeMap::from([
            ("get_weather".to_string(), Tenths(40)),
            ("ping".to_string(), Tenths(20)),
        ]);
        let cost = listing_cost(&tools(), &tdqs, &Words).unwrap();
        // 4.0 / 9 tokens · 1000 = 444.44; 2.0 / 4 · 1000 = 500; (6.0 / 13) · 1000 = 461.54.
        assert_eq!(cost.tools["get_weather"].tdqs_per_1k_tokens, Some(444.44));
        assert_eq!(cost.tools["ping"].tdqs_per_1k_tokens, Some(500.0));
        assert_eq!(cost.tdqs_per_1k_tokens, Some(461.54));
        // A side scored only in part has no side figure.
        let partial = BTreeMap::from([("ping".to_string(), Tenths(20))]);
        let cost = listing_cost(&tools(), &partial, &Words).unwrap();
        assert_eq!(cost.tdqs_per_1k_tokens, None);
    }

    #[test]
    fn growth_is_compared_exactly_against_the_limit() {
        let flat = tdqs_gain(false, Some((Tenths(30), Tenths(30))));
        // 110 tokens from 100 is exactly 10 %: allowed; 111 is over.
        assert!(!growth_rule(10, 100, 110, flat).blocks);
        let over = growth_rule(10, 100, 111, flat);
        assert!(over.over && over.blocks && over.applied);
        // A gain of the mean TDQS lets the listing grow.
        let gain = growth_rule(
            10,
            100,
            200,
            tdqs_gain(false, Some((Tenths(30), Tenths(31)))),
        );
        assert!(gain.over && gain.tdqs_gain && !gain.blocks);
        // A fall without growth is the score rule's business, not this one's.
        assert!(
            !growth_rule(
                10,
                100,
                90,
                tdqs_gain(false, Some((Tenths(30), Tenths(20))))
            )
            .blocks
        );
        // Unchanged definitions cannot gain: growth alone decides.
        assert!(growth_rule(10, 100, 500, tdqs_gain(true, None)).blocks);
        // Nothing scored otherwise, or an empty base: not applied.
        assert!(!growth_rule(10, 100, 500, tdqs_gain(false, None)).applied);
        assert!(!growth_rule(0, 0, 500, flat).applied);
    }

    #[test]
    fn comparison_states_the_growth_in_percent() {
        let base = listing_cost(&tools()[1..], &BTreeMap::new(), &Words).unwrap();
        let head = listing_cost(&tools(), &BTreeMap::new(), &Words).unwrap();
        let c = CostComparison::new("words".into(), base, head);
        // 4 → 13 tokens (the array brackets add nothing for this counter): +225 %.
        assert_eq!(c.listing_tokens_change, 9);
        assert_eq!(c.listing_growth_percent, Some(225.0));
        let rule = growth_rule(50, 4, 13, Some(false));
        let reason = growth_reason(&rule, &c).unwrap();
        assert!(reason.contains("from 4 to 13 tokens (+225%)"), "{reason}");
        assert!(reason.contains("50% allowed"), "{reason}");
    }

    #[test]
    fn growth_limits_are_whole_percents_up_to_1000() {
        assert_eq!(parse_growth_percent(10), Ok(10));
        assert_eq!(parse_growth_percent(0), Ok(0));
        assert!(parse_growth_percent(-1).is_err());
        assert!(parse_growth_percent(1001).is_err());
    }
}
