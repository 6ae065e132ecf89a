//! The pins: `tdqs/version.json`, everything a score depends on.
//!
//! The file is embedded in the binary; `--pins FILE` replaces it. Its digest (SHA-256 of the
//! sorted-key compact JSON of the whole file, as Python's `json.dumps(record, sort_keys=True,
//! separators=(",", ":"), ensure_ascii=False)` writes it) goes into every report, so two scores
//! are comparable only under the same digest.
//!
//! [`Pins::validate`] refuses a record whose arithmetic this code does not implement — other
//! dimension keys, weights not summing to 100, thresholds out of order, another confirmation
//! rule — rather than scoring with constants the record does not state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use num_rational::Ratio;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::error::{Error, Stage};
use crate::rubric::ToolDimension;
use crate::spec::extract::{sha256_hex, PromptKey};

/// The pins compiled into the binary.
pub(crate) const EMBEDDED_JSON: &str = include_str!("../../pins/version.json");

/// The only specification version whose prompts and grammar this code implements.
pub(crate) const SUPPORTED_SPEC_VERSION: &str = "1.3";

/// The only confirmation rule `decide` implements: one pair, two more on a drop, median per side.
/// The decision rules `confirmation.rule` may name (`decide::DecisionRule` parses them; the
/// pins only check the name, so that the decision stage stays above the pins).
pub const DECISION_RULE_NAMES: [&str; 2] = ["noise-aware", "reference"];

pub(crate) fn supported_confirmation() -> Confirmation {
    Confirmation {
        version: 1,
        initial_pairs: 1,
        confirmation_pairs_on_drop: 2,
        statistic: "median_per_side".to_string(),
        rule: None,
    }
}

/// Effort levels the Claude Code CLI accepts for `--effort`.
pub const EFFORT_LEVELS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The record as it is written in `version.json`. Unknown keys are refused: a setting this code
/// would ignore must not look as if it were applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinsRecord {
    /// The judge model (`claude-opus-5-5`).
    pub model: String,
    /// The Claude Code CLI version the scores were calibrated with; another version is a warning.
    pub cli_version: String,
    /// The commit of `glama-ai/tool-definition-quality-score` the prompts come from.
    pub spec_commit: String,
    pub spec_version: String,
    /// The README URL; `{commit}` is replaced by `spec_commit`.
    pub spec_url_template: String,
    pub prompt_sha256: PromptHashes,
    /// Per-dimension weights keyed by the snake_case dimension key.
    pub dimension_weights: BTreeMap<String, Value>,
    pub description_quality_weights: BTreeMap<String, Value>,
    pub overall_weights: BTreeMap<String, Value>,
    /// `A`, `B`, `C`, `D` lower bounds as decimal numbers.
    pub tier_thresholds: BTreeMap<String, Value>,
    /// Further attempts after a refused answer (2 ⇒ at most 3 attempts per call).
    pub retries: u32,
    pub confirmation: Confirmation,
    pub judge: JudgeSettings,
}

/// SHA-256 (lowercase hex) of each prompt's UTF-8 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptHashes {
    pub tool_system: String,
    pub tool_user: String,
    pub coherence_system: String,
    pub coherence_user: String,
}

impl PromptHashes {
    pub fn get(&self, key: PromptKey) -> &str {
        match key {
            PromptKey::ToolSystem => &self.tool_system,
            PromptKey::ToolUser => &self.tool_user,
            PromptKey::CoherenceSystem => &self.coherence_system,
            PromptKey::CoherenceUser => &self.coherence_user,
        }
    }
}

/// The median-of-three confirmation rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confirmation {
    pub version: u32,
    pub initial_pairs: u32,
    pub confirmation_pairs_on_drop: u32,
    pub statistic: String,
    /// Which decision rule applies: `noise-aware` (the default when absent) or `reference`
    /// (the reference rule exactly). `--decision-rule` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// Judge settings the answers depend on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSettings {
    /// The reasoning effort asked for (`--effort` of the CLI, `output_config.effort` of the API).
    pub effort: String,
}

/// Weights of the per-tool score, as integers summing to 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimensionWeights([u32; 6]);

impl DimensionWeights {
    pub fn weight(&self, dimension: ToolDimension) -> u32 {
        let index = ToolDimension::ALL
            .iter()
            .position(|d| *d == dimension)
            .expect("ALL lists every dimension");
        self.0[index]
    }

    /// Every dimension with its weight, in the specification's order.
    pub fn iter(&self) -> impl Iterator<Item = (ToolDimension, u32)> + '_ {
        ToolDimension::ALL.into_iter().zip(self.0)
    }
}

/// Description quality = round1(mean·`mean` + minimum·`minimum`, 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptionQualityWeights {
    pub mean: u32,
    pub minimum: u32,
}

/// Overall = round1(description quality·`description_quality` + coherence·`coherence`, 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverallWeights {
    pub description_quality: u32,
    pub coherence: u32,
}

/// Tier lower bounds as exact fractions; below `d` is F.
pub use crate::arith::TierThresholds;

/// Where the pins came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinsOrigin {
    Embedded,
    File(PathBuf),
}

/// A validated pins record with its digest.
#[derive(Debug, Clone)]
pub struct Pins {
    record: PinsRecord,
    raw: Value,
    digest: String,
    origin: PinsOrigin,
    views: Views,
}

/// The record's numbers in the forms the scorer computes with.
#[derive(Debug, Clone, Copy)]
struct Views {
    dimension_weights: DimensionWeights,
    description_quality_weights: DescriptionQualityWeights,
    overall_weights: OverallWeights,
    tier_thresholds: TierThresholds,
}

impl Pins {
    /// The pins compiled into the binary.
    pub fn embedded() -> Result<Pins, Error> {
        Pins::from_json_text(EMBEDDED_JSON, PinsOrigin::Embedded)
    }

    /// Pins from JSON text; `origin` says where the text came from.
    pub fn from_json_text(text: &str, origin: PinsOrigin) -> Result<Pins, Error> {
        let raw: Value = serde_json::from_str(text)
            .map_err(|err| invalid(&origin, format!("it is not valid JSON: {err}")))?;
        Pins::from_value(raw, origin)
    }

    /// Pins from a parsed JSON value.
    pub fn from_value(raw: Value, origin: PinsOrigin) -> Result<Pins, Error> {
        if !raw.is_object() {
            return Err(invalid(&origin, "it is not a JSON object"));
        }
        let record: PinsRecord =
            serde_json::from_value(raw.clone()).map_err(|err| invalid(&origin, err.to_string()))?;
        let views = check(&record, &origin)?;
        let digest = digest_value(&raw);
        Ok(Pins {
            record,
            raw,
            digest,
            origin,
            views,
        })
    }

    /// Checks that this code implements the record's arithmetic and rules. Every constructor
    /// runs it, so a `Pins` value is always valid; it is public so that callers can re-check.
    pub fn validate(&self) -> Result<(), Error> {
        check(&self.record, &self.origin).map(|_| ())
    }

    /// The record as typed fields.
    pub fn record(&self) -> &PinsRecord {
        &self.record
    }

    /// The file's JSON value as read (key order kept), for the report's verbatim copy.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// SHA-256 (lowercase hex) of the sorted-key compact JSON of the whole record.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    pub fn origin(&self) -> &PinsOrigin {
        &self.origin
    }

    /// True for the pins compiled into the binary, the ones the calibration was made with.
    /// Reports warn when this is false.
    pub fn is_embedded(&self) -> bool {
        self.origin == PinsOrigin::Embedded
    }

    /// The report warning for replaced pins, or `None` for the embedded ones.
    pub fn warning(&self) -> Option<String> {
        match &self.origin {
            PinsOrigin::Embedded => None,
            PinsOrigin::File(path) => Some(format!(
                "pins replaced by {} (digest {}): scores are not the calibrated ones",
                path.display(),
                self.digest
            )),
        }
    }

    pub fn model(&self) -> &str {
        &self.record.model
    }

    pub fn cli_version(&self) -> &str {
        &self.record.cli_version
    }

    pub fn spec_commit(&self) -> &str {
        &self.record.spec_commit
    }

    pub fn spec_version(&self) -> &str {
        &self.record.spec_version
    }

    /// The README URL at the pinned commit.
    pub fn spec_url(&self) -> String {
        expand_url_template(&self.record.spec_url_template, &self.record.spec_commit)
    }

    pub fn prompt_sha256(&self) -> &PromptHashes {
        &self.record.prompt_sha256
    }

    pub fn dimension_weights(&self) -> DimensionWeights {
        self.views.dimension_weights
    }

    pub fn description_quality_weights(&self) -> DescriptionQualityWeights {
        self.views.description_quality_weights
    }

    pub fn overall_weights(&self) -> OverallWeights {
        self.views.overall_weights
    }

    pub fn tier_thresholds(&self) -> TierThresholds {
        self.views.tier_thresholds
    }

    pub fn retries(&self) -> u32 {
        self.record.retries
    }

    pub fn confirmation(&self) -> &Confirmation {
        &self.record.confirmation
    }

    pub fn judge(&self) -> &JudgeSettings {
        &self.record.judge
    }
}

impl Serialize for Pins {
    /// The record exactly as read, so a report carries a verbatim copy.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

/// Replaces `{commit}` in a URL template.
pub fn expand_url_template(template: &str, commit: &str) -> String {
    template.replace("{commit}", commit)
}

/// SHA-256 (lowercase hex) of `json.dumps(value, sort_keys=True, separators=(",", ":"),
/// ensure_ascii=False)`.
pub fn digest_value(value: &Value) -> String {
    sha256_hex(&crate::digest::canonical::to_canonical_string(value))
}

fn check(record: &PinsRecord, origin: &PinsOrigin) -> Result<Views, Error> {
    let fail = |message: String| invalid(origin, message);

    if record.model.trim().is_empty() {
        return Err(fail("`model` is empty".into()));
    }
    if record.cli_version.trim().is_empty() {
        return Err(fail("`cli_version` is empty".into()));
    }
    if !is_lower_hex(&record.spec_commit, 40) {
        return Err(fail(format!(
            "`spec_commit` must be a full 40-character lowercase commit id, not {:?}",
            record.spec_commit
        )));
    }
    if record.spec_version != SUPPORTED_SPEC_VERSION {
        return Err(fail(format!(
            "`spec_version` is {:?}, but this tdqs-gate implements TDQS v{SUPPORTED_SPEC_VERSION} only",
            record.spec_version
        )));
    }
    let url = record.spec_url_template.as_str();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(fail(format!(
            "`spec_url_template` must be an http(s) URL, not {url:?}"
        )));
    }
    for key in PromptKey::ALL {
        let hash = record.prompt_sha256.get(key);
        if !is_lower_hex(hash, 64) {
            return Err(fail(format!(
                "`prompt_sha256.{key}` must be 64 lowercase hex characters, not {hash:?}"
            )));
        }
    }

    let dimension_keys: Vec<&str> = ToolDimension::ALL.iter().map(|d| d.key()).collect();
    let weights = integer_weights(
        &record.dimension_weights,
        "dimension_weights",
        &dimension_keys,
    )
    .map_err(fail)?;
    let dq = integer_weights(
        &record.description_quality_weights,
        "description_quality_weights",
        &["mean", "minimum"],
    )
    .map_err(fail)?;
    let overall = integer_weights(
        &record.overall_weights,
        "overall_weights",
        &["description_quality", "coherence"],
    )
    .map_err(fail)?;
    let tier_thresholds = tier_thresholds(&record.tier_thresholds).map_err(fail)?;

    if record.retries > 10 {
        return Err(fail(format!(
            "`retries` is {}; more than 10 retries per call is not supported",
            record.retries
        )));
    }
    let supported = supported_confirmation();
    let shape = Confirmation {
        rule: None,
        ..record.confirmation.clone()
    };
    if let Some(rule) = &record.confirmation.rule {
        if !DECISION_RULE_NAMES.contains(&rule.as_str()) {
            return Err(fail(format!(
                "`confirmation.rule` is {rule:?}; expected \"noise-aware\" or \"reference\""
            )));
        }
    }
    if shape != supported {
        return Err(fail(format!(
            "`confirmation` is {}, but the only rule implemented is {}",
            serde_json::to_string(&record.confirmation).unwrap_or_default(),
            serde_json::to_string(&supported).unwrap_or_default()
        )));
    }
    if !EFFORT_LEVELS.contains(&record.judge.effort.as_str()) {
        return Err(fail(format!(
            "`judge.effort` is {:?}; expected one of {}",
            record.judge.effort,
            EFFORT_LEVELS.join(", ")
        )));
    }

    Ok(Views {
        dimension_weights: DimensionWeights([
            weights[0], weights[1], weights[2], weights[3], weights[4], weights[5],
        ]),
        description_quality_weights: DescriptionQualityWeights {
            mean: dq[0],
            minimum: dq[1],
        },
        overall_weights: OverallWeights {
            description_quality: overall[0],
            coherence: overall[1],
        },
        tier_thresholds,
    })
}

fn invalid(origin: &PinsOrigin, message: impl Into<String>) -> Error {
    let what = match origin {
        PinsOrigin::Embedded => "the embedded pins (tdqs/version.json)".to_string(),
        PinsOrigin::File(path) => format!("the pins file {}", path.display()),
    };
    let advice = match origin {
        PinsOrigin::Embedded => {
            "the binary was built from an invalid tdqs/version.json; fix the file and rebuild"
                .to_string()
        }
        PinsOrigin::File(_) => {
            "start from tdqs/version.json and change only the model, versions, URL or hashes; \
             weights, thresholds and the confirmation rule must be ones tdqs-gate implements"
                .to_string()
        }
    };
    Error::new(
        Stage::Config,
        format!("{what} cannot be used: {}", message.into()),
    )
    .with_advice(advice)
}

fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Exactly `keys`, each a non-negative integer, summing to 100; returned in `keys` order.
fn integer_weights(
    map: &BTreeMap<String, Value>,
    field: &str,
    keys: &[&str],
) -> Result<Vec<u32>, String> {
    let unknown: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|key| !keys.contains(key))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "`{field}` has keys this code does not score: {}; expected exactly {}",
            unknown.join(", "),
            keys.join(", ")
        ));
    }
    let mut weights = Vec::with_capacity(keys.len());
    for key in keys {
        let value = map.get(*key).ok_or_else(|| {
            format!(
                "`{field}.{key}` is missing; expected exactly {}",
                keys.join(", ")
            )
        })?;
        let weight = value
            .as_u64()
            .and_then(|w| u32::try_from(w).ok())
            .ok_or_else(|| {
                format!("`{field}.{key}` must be a non-negative integer percentage, not {value}")
            })?;
        weights.push(weight);
    }
    let sum: u64 = weights.iter().map(|w| u64::from(*w)).sum();
    if sum != 100 {
        return Err(format!(
            "`{field}` sums to {sum}; the weights must sum to exactly 100"
        ));
    }
    Ok(weights)
}

fn tier_thresholds(map: &BTreeMap<String, Value>) -> Result<TierThresholds, String> {
    const TIERS: [&str; 4] = ["A", "B", "C", "D"];
    let unknown: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|key| !TIERS.contains(key))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "`tier_thresholds` has tiers this code does not grade: {}; expected exactly A, B, C, D",
            unknown.join(", ")
        ));
    }
    let mut bounds = Vec::with_capacity(4);
    for tier in TIERS {
        let value = map
            .get(tier)
            .ok_or_else(|| format!("`tier_thresholds.{tier}` is missing"))?;
        let bound = match value {
            Value::Number(number) => exact_decimal(number),
            _ => None,
        }
        .ok_or_else(|| {
            format!(
                "`tier_thresholds.{tier}` must be a plain decimal number such as 3.5, not {value}"
            )
        })?;
        bounds.push(bound);
    }
    let (zero, five) = (Ratio::from_integer(0), Ratio::from_integer(5));
    for (tier, bound) in TIERS.iter().zip(&bounds) {
        if *bound <= zero || *bound > five {
            return Err(format!(
                "`tier_thresholds.{tier}` is {bound}; a bound must be above 0 and at most 5"
            ));
        }
    }
    for pair in TIERS.iter().zip(&bounds).collect::<Vec<_>>().windows(2) {
        let ((upper, high), (lower, low)) = (pair[0], pair[1]);
        if high <= low {
            return Err(format!(
                "`tier_thresholds` must decrease strictly from A to D, but {upper} ({high}) is not above {lower} ({low})"
            ));
        }
    }
    Ok(TierThresholds {
        a: bounds[0],
        b: bounds[1],
        c: bounds[2],
        d: bounds[3],
    })
}

/// The exact value of a JSON number as the decimal text it reads as (`3.5` → 7/2), the way
/// Python's `Fraction(repr(float))` reads it. Numbers in exponent form are refused.
pub(crate) fn exact_decimal(number: &Number) -> Option<Ratio<i64>> {
    parse_decimal(&crate::digest::canonical::python_number_text(number))
}

/// Parses `-?digits(.digits)?` into an exact fraction; `None` for anything else or on overflow.
pub(crate) fn parse_decimal(text: &str) -> Option<Ratio<i64>> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
        || (body.contains('.') && fraction.is_empty())
        || fraction.len() > 12
    {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let numerator: i64 = digits.parse().ok()?;
    let denominator = 10_i64.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    let value = Ratio::new(numerator, denominator);
    Some(if negative { -value } else { value })
}

impl Pins {
    /// Every weight and threshold in the form the scorer computes with.
    pub fn weights(&self) -> crate::arith::Weights {
        let dq = self.description_quality_weights();
        let overall = self.overall_weights();
        crate::arith::Weights {
            dimensions: self
                .dimension_weights()
                .iter()
                .map(|(d, w)| (d, i64::from(w)))
                .collect(),
            dq_mean: i64::from(dq.mean),
            dq_minimum: i64::from(dq.minimum),
            overall_dq: i64::from(overall.description_quality),
            overall_coherence: i64::from(overall.coherence),
            tiers: self.tier_thresholds(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn embedded_value() -> Value {
        serde_json::from_str(EMBEDDED_JSON).unwrap()
    }

    fn with(path: &[&str], replacement: Value) -> Result<Pins, Error> {
        let mut value = embedded_value();
        let mut target = &mut value;
        for key in &path[..path.len() - 1] {
            target = target.get_mut(*key).unwrap();
        }
        let last = path[path.len() - 1];
        if replacement.is_null() {
            target.as_object_mut().unwrap().remove(last);
        } else {
            target[last] = replacement;
        }
        Pins::from_value(value, PinsOrigin::File(PathBuf::from("test-pins.json")))
    }

    #[test]
    fn embedded_pins_validate_and_expose_exact_values() {
        let pins = Pins::embedded().unwrap();
        assert!(pins.is_embedded());
        assert_eq!(pins.warning(), None);
        assert_eq!(pins.model(), "claude-opus-5-5");
        assert_eq!(pins.cli_version(), "2.1.288");
        assert_eq!(
            pins.spec_url(),
            "https://raw.githubusercontent.com/glama-ai/tool-definition-quality-score/b9881b0cfec88969e42672c92544487ca191a992/README.md"
        );
        let weights: Vec<u32> = pins.dimension_weights().iter().map(|(_, w)| w).collect();
        assert_eq!(weights, [25, 20, 20, 15, 10, 10]);
        assert_eq!(
            pins.dimension_weights()
                .weight(ToolDimension::ParameterSemantics),
            15
        );
        assert_eq!(
            pins.description_quality_weights(),
            DescriptionQualityWeights {
                mean: 60,
                minimum: 40
            }
        );
        assert_eq!(
            pins.overall_weights(),
            OverallWeights {
                description_quality: 70,
                coherence: 30
            }
        );
        let t = pins.tier_thresholds();
        assert_eq!(t.a, Ratio::new(7, 2));
        assert_eq!(t.b, Ratio::from_integer(3));
        assert_eq!(t.c, Ratio::from_integer(2));
        assert_eq!(t.d, Ratio::from_integer(1));
        assert_eq!(pins.retries(), 2);
        assert_eq!(pins.judge().effort, "high");
    }

    #[test]
    fn tiers_use_exact_bounds() {
        let t = Pins::embedded().unwrap().tier_thresholds();
        use crate::arith::{Tenths, Tier};
        assert_eq!(t.tier(Tenths(35)), Tier::A);
        assert_eq!(t.tier(Tenths(34)), Tier::B);
        assert_eq!(t.tier(Tenths(30)), Tier::B);
        assert_eq!(t.tier(Tenths(29)), Tier::C);
        assert_eq!(t.tier(Tenths(10)), Tier::D);
        assert_eq!(t.tier(Tenths(9)), Tier::F);
    }

    #[test]
    fn digest_of_the_reconstructed_gen2_record_matches_its_published_digest() {
        // agentic-hil's Gen 2 tools/tdqs/version.json as reconstructed in the research notes;
        // its digest is the `version_digest` of calibration.json at 95835158. Proves that 3.0
        // is written as 3.0 and keys are sorted.
        let record = json!({
            "model": "claude-opus-5-5",
            "cli_version": "2.1.288",
            "spec_commit": "b9881b0cfec88969e42672c92544487ca191a992",
            "spec_version": "1.3",
            "prompt_sha256": {
                "tool_system": "d576e3fcc085c458f152d64fe494c7a00be3c600f53e5eda7883b4230fd369a7",
                "tool_user": "5f3fcdaa7b141e3092f0cbbd332bf1ba1bcb67f447f78598ae06e7cef04ae6b1",
                "coherence_system": "30f1d5c5666c2501195bca2ce1b8768d8d119f0ac6a773f5f1d561809d404cfe",
                "coherence_user": "a050ef3935d6c20f5a375ce6386cc70c35cfe832f6b8f382270a8b03a15fb89f"
            },
            "dimension_weights": {
                "purpose_clarity": 25, "usage_guidelines": 20, "behavioral_transparency": 20,
                "parameter_semantics": 15, "conciseness_structure": 10, "contextual_completeness": 10
            },
            "description_quality_weights": {"mean": 60, "minimum": 40},
            "overall_weights": {"description_quality": 70, "coherence": 30},
            "tier_thresholds": {"A": 3.5, "B": 3.0, "C": 2.0, "D": 1.0},
            "retries": 2,
            "confirmation": {
                "version": 1, "initial_pairs": 1, "confirmation_pairs_on_drop": 2,
                "statistic": "median_per_side"
            }
        });
        assert_eq!(
            digest_value(&record),
            "9144e709dcc928b2cbea59e27c374b0118c9ca7cd631d17916fb90b8b5f4bae9"
        );
    }

    #[test]
    fn the_embedded_pins_are_the_gen2_record_plus_url_and_judge_settings() {
        // Removing the two keys this gate adds gives back the published Gen 2 digest, so the
        // embedded file pins the same spec, hashes, weights and rule as the calibrated gate.
        let mut value = embedded_value();
        let map = value.as_object_mut().unwrap();
        map.remove("spec_url_template");
        map.remove("judge");
        assert_eq!(
            digest_value(&value),
            "9144e709dcc928b2cbea59e27c374b0118c9ca7cd631d17916fb90b8b5f4bae9"
        );
    }

    #[test]
    fn digest_ignores_key_order_and_whitespace_but_not_values() {
        let pins = Pins::embedded().unwrap();
        let reordered: Value = {
            let mut entries: Vec<(String, Value)> = embedded_value()
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            entries.reverse();
            Value::Object(entries.into_iter().collect())
        };
        let other = Pins::from_value(reordered, PinsOrigin::File("x.json".into())).unwrap();
        assert_eq!(other.digest(), pins.digest());
        assert!(!other.is_embedded());
        assert!(other.warning().unwrap().contains(pins.digest()));
        let changed = with(&["retries"], json!(3)).unwrap();
        assert_ne!(changed.digest(), pins.digest());
    }

    fn refusal(result: Result<Pins, Error>) -> String {
        let err = result.expect_err("pins must be refused");
        assert_eq!(err.stage, Stage::Config);
        assert!(err.advice.is_some());
        err.cause
    }

    #[test]
    fn refuses_arithmetic_it_does_not_implement() {
        let cases: Vec<(Vec<&str>, Value, &str)> = vec![
            (
                vec!["dimension_weights", "purpose_clarity"],
                json!(30),
                "sums to 105",
            ),
            (
                vec!["dimension_weights", "purpose_clarity"],
                json!(25.0),
                "non-negative integer",
            ),
            (
                vec!["dimension_weights", "purpose_clarity"],
                Value::Null,
                "purpose_clarity` is missing",
            ),
            (
                vec!["dimension_weights", "speed"],
                json!(0),
                "does not score: speed",
            ),
            (
                vec!["description_quality_weights", "mean"],
                json!(50),
                "sums to 90",
            ),
            (
                vec!["overall_weights", "coherence"],
                json!(-30),
                "non-negative integer",
            ),
            (
                vec!["tier_thresholds", "B"],
                json!(3.5),
                "decrease strictly",
            ),
            (
                vec!["tier_thresholds", "E"],
                json!(0.5),
                "does not grade: E",
            ),
            (vec!["tier_thresholds", "A"], json!(6), "at most 5"),
            (vec!["tier_thresholds", "D"], json!("1.0"), "plain decimal"),
            (vec!["tier_thresholds", "D"], json!(1e-5), "plain decimal"),
            (
                vec!["confirmation", "statistic"],
                json!("mean_of_pairs"),
                "only rule implemented",
            ),
            (
                vec!["confirmation", "confirmation_pairs_on_drop"],
                json!(4),
                "only rule implemented",
            ),
            (
                vec!["spec_version"],
                json!("1.2"),
                "implements TDQS v1.3 only",
            ),
            (vec!["spec_commit"], json!("b9881b0"), "40-character"),
            (
                vec!["prompt_sha256", "tool_user"],
                json!("ABC"),
                "prompt_sha256.tool_user",
            ),
            (vec!["judge", "effort"], json!("extreme"), "judge.effort"),
            (
                vec!["spec_url_template"],
                json!("ftp://x/{commit}"),
                "http(s) URL",
            ),
            (vec!["retries"], json!(11), "more than 10"),
            (
                vec!["unexpected"],
                json!(true),
                "unknown field `unexpected`",
            ),
            (
                vec!["judge", "temperature"],
                json!(0),
                "unknown field `temperature`",
            ),
        ];
        for (path, replacement, expected) in cases {
            let cause = refusal(with(&path, replacement.clone()));
            assert!(
                cause.contains(expected),
                "{path:?} = {replacement}: {cause:?} should contain {expected:?}"
            );
            assert!(cause.contains("test-pins.json"), "{cause}");
        }
    }

    #[test]
    fn refuses_files_that_are_not_pins() {
        assert!(refusal(Pins::from_json_text("[1]", PinsOrigin::Embedded))
            .contains("not a JSON object"));
        assert!(refusal(Pins::from_json_text("{", PinsOrigin::Embedded)).contains("not valid JSON"));
    }

    #[test]
    fn decimals_parse_exactly() {
        assert_eq!(parse_decimal("3.5"), Some(Ratio::new(7, 2)));
        assert_eq!(parse_decimal("0.1"), Some(Ratio::new(1, 10)));
        assert_eq!(parse_decimal("-2.25"), Some(Ratio::new(-9, 4)));
        assert_eq!(parse_decimal("4"), Some(Ratio::from_integer(4)));
        for bad in ["", ".5", "5.", "1e3", "1.5e-05", "abc", "--1"] {
            assert_eq!(parse_decimal(bad), None, "{bad}");
        }
        // 0.1 + 0.2 style float noise never enters: the number's shortest text is parsed.
        let number = serde_json::Number::from_f64(0.3).unwrap();
        assert_eq!(exact_decimal(&number), Some(Ratio::new(3, 10)));
    }

    #[test]
    fn the_pins_can_carry_the_decision_rule() {
        assert_eq!(Pins::embedded().unwrap().confirmation().rule, None);
        let reference = with(&["confirmation", "rule"], json!("reference")).unwrap();
        assert_eq!(reference.confirmation().rule.as_deref(), Some("reference"));
        let message = refusal(with(&["confirmation", "rule"], json!("lenient")));
        assert!(message.contains("`confirmation.rule`"), "{message}");
    }
}
