//! TDQS arithmetic on exact fractions.
//!
//! Every score is an exact rational until it is rounded half up to one decimal, once, with the
//! specification's `round1(p, q) = floor((20p + q) / (2q)) / 10`. Rounded scores are carried as
//! whole tenths ([`Tenths`]) so that nothing downstream can re-introduce floating-point error: the
//! float sum of `2,2,5,5,4,4` under the TDQS weights gives 3.4 (tier B) where the exact value is
//! 3.5 (tier A).

use std::collections::BTreeMap;
use std::fmt;

use num_integer::Integer;
use num_rational::Ratio;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rubric::{CoherenceDimension, ToolDimension};

pub type Frac = Ratio<i64>;

/// A score rounded to one decimal, held as a whole number of tenths (29 = 2.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tenths(pub i64);

impl Tenths {
    pub fn as_frac(self) -> Frac {
        Frac::new(self.0, 10)
    }

    /// The value as a JSON number (2.9). Exact for every tenth of the 1–5 range.
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 10.0
    }

    /// Reads a JSON number that must be a whole number of tenths (2.9, 3, 3.0).
    pub fn from_f64(value: f64) -> Option<Tenths> {
        let scaled = (value * 10.0).round();
        if !value.is_finite() || (scaled / 10.0 - value).abs() > 1e-9 {
            return None;
        }
        Some(Tenths(scaled as i64))
    }
}

impl fmt::Display for Tenths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.abs();
        write!(f, "{sign}{}.{}", abs / 10, abs % 10)
    }
}

impl Serialize for Tenths {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.as_f64())
    }
}

impl<'de> Deserialize<'de> for Tenths {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        Tenths::from_f64(v)
            .ok_or_else(|| serde::de::Error::custom(format!("{v} is not a multiple of 0.1")))
    }
}

/// `round1(p, q)`: p/q rounded half up to one decimal, as tenths.
pub fn round1(p: i64, q: i64) -> Tenths {
    assert!(q > 0, "round1 needs a positive denominator");
    Tenths(Integer::div_floor(&(20 * p + q), &(2 * q)))
}

/// Rounds an exact fraction half up to one decimal.
pub fn round1_frac(x: Frac) -> Tenths {
    round1(*x.numer(), *x.denom())
}

/// A letter tier; the same thresholds apply to every score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Tier {
    A,
    B,
    C,
    D,
    F,
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Tier::A => "A",
            Tier::B => "B",
            Tier::C => "C",
            Tier::D => "D",
            Tier::F => "F",
        };
        f.write_str(s)
    }
}

/// Tier thresholds as exact fractions (A ≥ 3.5, B ≥ 3.0, C ≥ 2.0, D ≥ 1.0, else F).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierThresholds {
    pub a: Frac,
    pub b: Frac,
    pub c: Frac,
    pub d: Frac,
}

impl Default for TierThresholds {
    fn default() -> Self {
        TierThresholds {
            a: Frac::new(7, 2),
            b: Frac::from_integer(3),
            c: Frac::from_integer(2),
            d: Frac::from_integer(1),
        }
    }
}

impl TierThresholds {
    pub fn tier(&self, score: Tenths) -> Tier {
        let x = score.as_frac();
        if x >= self.a {
            Tier::A
        } else if x >= self.b {
            Tier::B
        } else if x >= self.c {
            Tier::C
        } else if x >= self.d {
            Tier::D
        } else {
            Tier::F
        }
    }
}

/// The weights of every rollup, as integers (percentages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weights {
    pub dimensions: BTreeMap<ToolDimension, i64>,
    /// Weight of the exact mean in description quality (60).
    pub dq_mean: i64,
    /// Weight of the lowest tool in description quality (40).
    pub dq_minimum: i64,
    /// Weight of description quality in the overall score (70).
    pub overall_dq: i64,
    /// Weight of coherence in the overall score (30).
    pub overall_coherence: i64,
    pub tiers: TierThresholds,
}

impl Default for Weights {
    fn default() -> Self {
        let dimensions = [25, 20, 20, 15, 10, 10];
        Weights {
            dimensions: ToolDimension::ALL.into_iter().zip(dimensions).collect(),
            dq_mean: 60,
            dq_minimum: 40,
            overall_dq: 70,
            overall_coherence: 30,
            tiers: TierThresholds::default(),
        }
    }
}

impl Weights {
    /// A tool's TDQS: `round1(Σ weight·score, 100)`.
    pub fn tdqs(&self, scores: &BTreeMap<ToolDimension, u8>) -> Tenths {
        let total: i64 = ToolDimension::ALL
            .iter()
            .map(|d| self.dimensions[d] * i64::from(scores.get(d).copied().unwrap_or(0)))
            .sum();
        round1(total, self.dimensions.values().sum())
    }

    /// The exact, unrounded mean of per-tool TDQS values.
    pub fn exact_mean(tdqs: &[Tenths]) -> Option<Frac> {
        if tdqs.is_empty() {
            return None;
        }
        let sum: i64 = tdqs.iter().map(|t| t.0).sum();
        Some(Frac::new(sum, 10 * tdqs.len() as i64))
    }

    /// Every rollup of a side, each rounded once from exact inputs.
    pub fn rollups(
        &self,
        tdqs: &[(String, Tenths)],
        coherence: &BTreeMap<CoherenceDimension, u8>,
    ) -> RollupValues {
        self.rollups_with(tdqs, None, coherence)
    }

    /// [`Weights::rollups`] of a side some of whose tools are only summarised (a summarised
    /// report): `rest` holds their count, the sum of their TDQS in tenths, and their lowest tool.
    /// Gives exactly what the full list gives.
    pub fn rollups_with(
        &self,
        tdqs: &[(String, Tenths)],
        rest: Option<&RestOfSide>,
        coherence: &BTreeMap<CoherenceDimension, u8>,
    ) -> RollupValues {
        let rest = rest.filter(|r| r.count > 0);
        let listed_sum: i64 = tdqs.iter().map(|(_, t)| t.0).sum();
        let n = tdqs.len() as i64 + rest.map_or(0, |r| r.count as i64);
        let sum = listed_sum + rest.map_or(0, |r| r.tenths_sum);
        let coherence_sum: i64 = CoherenceDimension::ALL
            .iter()
            .map(|d| i64::from(coherence.get(d).copied().unwrap_or(0)))
            .sum();
        let coherence_score = round1(coherence_sum, 4);
        let exact_mean = (n > 0).then(|| Frac::new(sum, 10 * n));
        let Some(exact_mean) = exact_mean else {
            return RollupValues {
                tool_count: 0,
                exact_mean: None,
                mean_tdqs: None,
                min_tdqs: None,
                min_tool: None,
                description_quality: None,
                coherence: coherence_score,
                overall: None,
            };
        };
        // Lowest score; ties go to the first name in sorted order so reports are stable.
        let (min_tool, min) = tdqs
            .iter()
            .map(|(name, t)| (name.as_str(), *t))
            .chain(rest.map(|r| (r.min_tool.as_str(), r.min_tdqs)))
            .min_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)))
            .map(|(name, t)| (name.to_string(), t))
            .expect("non-empty");
        let weight_total = self.dq_mean + self.dq_minimum;
        // DQ = (w_mean · Σt/n + w_min · min) / (w_total), t in tenths → × 1/10.
        let dq = round1(
            self.dq_mean * sum + self.dq_minimum * n * min.0,
            10 * weight_total * n,
        );
        let overall_total = self.overall_dq + self.overall_coherence;
        let overall = round1(
            self.overall_dq * dq.0 + self.overall_coherence * coherence_score.0,
            10 * overall_total,
        );
        RollupValues {
            tool_count: n as u64,
            exact_mean: Some(exact_mean),
            mean_tdqs: Some(round1_frac(exact_mean)),
            min_tdqs: Some(min),
            min_tool: Some(min_tool),
            description_quality: Some(dq),
            coherence: coherence_score,
            overall: Some(overall),
        }
    }
}

/// Tools of a side counted in its rollups without being listed one by one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestOfSide {
    pub count: u64,
    /// The sum of their TDQS, in tenths.
    pub tenths_sum: i64,
    pub min_tool: String,
    pub min_tdqs: Tenths,
}

/// The computed rollups of a side (before tiers are attached).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollupValues {
    pub tool_count: u64,
    pub exact_mean: Option<Frac>,
    pub mean_tdqs: Option<Tenths>,
    pub min_tdqs: Option<Tenths>,
    pub min_tool: Option<String>,
    pub description_quality: Option<Tenths>,
    pub coherence: Tenths,
    pub overall: Option<Tenths>,
}

/// The median of an odd number of rounded values (the middle one once sorted).
pub fn median(values: &[Tenths]) -> Option<Tenths> {
    if values.is_empty() || values.len() % 2 == 0 {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort();
    Some(sorted[sorted.len() / 2])
}

/// Writes an exact fraction as a JSON-friendly float (for information only: never decisive).
pub fn frac_to_f64(x: Frac) -> f64 {
    *x.numer() as f64 / *x.denom() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(v: [u8; 6]) -> BTreeMap<ToolDimension, u8> {
        ToolDimension::ALL.into_iter().zip(v).collect()
    }

    #[test]
    fn spec_example_285_hundredths_rounds_to_2_9() {
        assert_eq!(
            Weights::default().tdqs(&scores([4, 2, 2, 3, 4, 2])),
            Tenths(29)
        );
    }

    #[test]
    fn float_trap_is_exactly_3_5_and_tier_a() {
        let w = Weights::default();
        let t = w.tdqs(&scores([2, 2, 5, 5, 4, 4]));
        assert_eq!(t, Tenths(35));
        assert_eq!(w.tiers.tier(t), Tier::A);
        // The float accumulation the spec replaced really does land below the tie.
        let float: f64 = [
            0.25 * 2.0,
            0.20 * 2.0,
            0.20 * 5.0,
            0.15 * 5.0,
            0.10 * 4.0,
            0.10 * 4.0,
        ]
        .iter()
        .sum();
        assert!(float < 3.5);
    }

    #[test]
    fn round1_is_half_up_on_exact_ties() {
        assert_eq!(round1(13, 4), Tenths(33)); // 3.25 → 3.3 (Python round gives 3.2)
        assert_eq!(round1(5, 4), Tenths(13)); // 1.25 → 1.3
        assert_eq!(round1(285, 100), Tenths(29));
        assert_eq!(round1(284, 100), Tenths(28));
        assert_eq!(round1(15, 4), Tenths(38)); // 3.75 → 3.8
        assert_eq!(round1(0, 7), Tenths(0));
    }

    #[test]
    fn tiers_compare_exactly_at_thresholds() {
        let t = TierThresholds::default();
        assert_eq!(t.tier(Tenths(35)), Tier::A);
        assert_eq!(t.tier(Tenths(34)), Tier::B);
        assert_eq!(t.tier(Tenths(30)), Tier::B);
        assert_eq!(t.tier(Tenths(29)), Tier::C);
        assert_eq!(t.tier(Tenths(20)), Tier::C);
        assert_eq!(t.tier(Tenths(19)), Tier::D);
        assert_eq!(t.tier(Tenths(10)), Tier::D);
        assert_eq!(t.tier(Tenths(9)), Tier::F);
    }

    #[test]
    fn registry_rollups_of_the_notes_are_reproduced() {
        // 44 tools whose TDQS sum to 157.3 (exact mean 3.575) with a minimum of 1.7; coherence
        // 5, 4, 2, 4. The registry published 3.6 / 1.7 / 2.8 / 3.8 / 3.1.
        let mut tdqs: Vec<(String, Tenths)> = vec![("low".into(), Tenths(17))];
        let mut remaining = 1573 - 17;
        for i in 0..43 {
            let left = 43 - i;
            let t = remaining / left;
            tdqs.push((format!("t{i:02}"), Tenths(t)));
            remaining -= t;
        }
        assert_eq!(tdqs.iter().map(|t| t.1 .0).sum::<i64>(), 1573);
        let coherence = CoherenceDimension::ALL
            .into_iter()
            .zip([5, 4, 2, 4])
            .collect();
        let r = Weights::default().rollups(&tdqs, &coherence);
        assert_eq!(r.exact_mean, Some(Frac::new(1573, 440)));
        assert_eq!(r.mean_tdqs, Some(Tenths(36)));
        assert_eq!(r.min_tdqs, Some(Tenths(17)));
        assert_eq!(r.min_tool.as_deref(), Some("low"));
        assert_eq!(r.description_quality, Some(Tenths(28)));
        assert_eq!(r.coherence, Tenths(38));
        assert_eq!(r.overall, Some(Tenths(31)));
    }

    #[test]
    fn median_of_three_is_the_middle_value() {
        assert_eq!(
            median(&[Tenths(33), Tenths(32), Tenths(32)]),
            Some(Tenths(32))
        );
        assert_eq!(median(&[Tenths(30)]), Some(Tenths(30)));
        assert_eq!(median(&[Tenths(30), Tenths(31)]), None);
    }

    #[test]
    fn tenths_display_and_json_round_trip() {
        assert_eq!(Tenths(29).to_string(), "2.9");
        assert_eq!(Tenths(30).to_string(), "3.0");
        assert_eq!(serde_json::to_string(&Tenths(29)).unwrap(), "2.9");
        let back: Tenths = serde_json::from_str("3.5").unwrap();
        assert_eq!(back, Tenths(35));
        assert!(serde_json::from_str::<Tenths>("3.55").is_err());
    }
}
