//! A shields.io endpoint badge (<https://shields.io/badges/endpoint-badge>): the head's mean
//! TDQS and its tier, for a README.
//!
//! Written for PASS and BLOCK runs only: an INVALID run has no score to show. A PASS without
//! scoring (unchanged definitions, a base without tools) says so instead of a number.

use serde_json::{json, Value};

use crate::arith::{Tenths, Tier, TierThresholds};
use crate::exit::Verdict;
use crate::report::model::Report;

/// The badge's label.
pub const LABEL: &str = "TDQS";

/// The shields.io colour of a tier.
pub fn tier_color(tier: Tier) -> &'static str {
    match tier {
        Tier::A => "brightgreen",
        Tier::B => "green",
        Tier::C => "yellow",
        Tier::D => "orange",
        Tier::F => "red",
    }
}

/// The endpoint JSON for a mean TDQS (or `None`: not scored).
pub fn for_mean(mean: Option<Tenths>) -> Value {
    match mean {
        Some(mean) => {
            let tier = TierThresholds::default().tier(mean);
            json!({
                "schemaVersion": 1,
                "label": LABEL,
                "message": format!("{mean} ({tier})"),
                "color": tier_color(tier),
            })
        }
        None => json!({
            "schemaVersion": 1,
            "label": LABEL,
            "message": "not scored",
            "color": "lightgrey",
        }),
    }
}

/// The head's mean TDQS in a report: the confirmed median when there is one, else the first
/// pair's.
pub fn head_mean(report: &Report) -> Option<Tenths> {
    report.median.as_ref().map(|m| m.head).or_else(|| {
        report
            .pairs
            .first()
            .and_then(|pair| pair.head.rollups.mean_tdqs)
    })
}

/// The endpoint JSON for a gate run, or `None` for INVALID.
pub fn for_report(report: &Report) -> Option<Value> {
    match report.decision {
        Verdict::Pass | Verdict::Block => Some(for_mean(head_mean(report))),
        Verdict::Invalid => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_badge_shows_the_mean_and_tier_coloured_by_tier() {
        let badge = for_mean(Some(Tenths(38)));
        assert_eq!(
            badge,
            json!({"schemaVersion": 1, "label": "TDQS", "message": "3.8 (A)", "color": "brightgreen"})
        );
        assert_eq!(for_mean(Some(Tenths(30)))["message"], "3.0 (B)");
        assert_eq!(for_mean(Some(Tenths(29)))["color"], "yellow");
        assert_eq!(for_mean(Some(Tenths(9)))["color"], "red");
        assert_eq!(for_mean(None)["message"], "not scored");
    }
}
