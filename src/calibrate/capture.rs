//! Reading a registry capture and checking it before anything is scored.
//!
//! A capture is only worth calibrating against when it is internally consistent: its definitions
//! must still be the ones it was sealed with (`setHash`), and every number the registry published
//! must follow from the registry's own per-tool scores under the pinned arithmetic. A capture that
//! fails either is refused, never repaired: adjusting a published number would make the
//! calibration measure our edit rather than the registry.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use tdqs_core::arith::{Tenths, Tier, Weights};
use tdqs_core::digest::{self, json_kind};
use tdqs_core::error::{Error, Stage};
use tdqs_core::export::{Export, ExportSource, ProbeProfile, RawListing};
use tdqs_core::rubric::{CoherenceDimension, ToolDimension};

/// A tool's published (or scored) numbers: the six dimensions, TDQS and tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolScores {
    pub scores: BTreeMap<ToolDimension, u8>,
    pub tdqs: Tenths,
    pub tier: Tier,
}

/// The registry's server-level numbers, exactly as published (never its justification texts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryServer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub tool_count: u64,
    pub scored_tool_count: u64,
    pub mean_tdqs: Tenths,
    pub min_tdqs: Tenths,
    pub description_quality_score: Tenths,
    pub description_quality_tier: Tier,
    pub disambiguation: u8,
    pub naming_consistency: u8,
    pub tool_count_appropriateness: u8,
    pub completeness: u8,
    pub coherence_score: Tenths,
    pub coherence_tier: Tier,
    pub overall_score: Tenths,
    pub overall_tier: Tier,
    pub scored_at: String,
}

impl RegistryServer {
    /// The four coherence dimensions as the scorer keys them.
    pub fn coherence(&self) -> BTreeMap<CoherenceDimension, u8> {
        BTreeMap::from([
            (CoherenceDimension::Disambiguation, self.disambiguation),
            (
                CoherenceDimension::NamingConsistency,
                self.naming_consistency,
            ),
            (
                CoherenceDimension::ToolCountAppropriateness,
                self.tool_count_appropriateness,
            ),
            (CoherenceDimension::Completeness, self.completeness),
        ])
    }
}

/// A capture that passed every check, with the export built from its definitions.
#[derive(Debug, Clone)]
pub struct CheckedCapture {
    pub release: String,
    pub source: Option<String>,
    /// The capture maker's remarks (provenance, what the registry left out), copied as written.
    pub note: Option<String>,
    /// SHA-256 of the capture file's bytes.
    pub sha256: String,
    pub server: RegistryServer,
    /// Tool name → the registry's numbers.
    pub tools: BTreeMap<String, ToolScores>,
    /// The registry's definitions as an export (listing order kept); its set hash equals the
    /// capture's `setHash`.
    pub export: Export,
}

const CAPTURE_ADVICE: &str =
    "see docs/calibration.md (\"The capture format\") for how to capture a registry page";

fn refuse(cause: impl Into<String>) -> Error {
    Error::new(Stage::Calibrate, cause).with_advice(CAPTURE_ADVICE)
}

/// Parses and checks a capture file's bytes with the pinned `weights`.
///
/// The checks run in a fixed order — shape, each tool's entry, the per-tool numbers, the
/// published input hashes, the seal, the server rollups — so the first fault a capture has is
/// the one named.
pub fn check_capture(bytes: &[u8], weights: &Weights) -> Result<CheckedCapture, Error> {
    let root = capture_object(bytes)?;
    let release = string_at(&root, "release", "release")?;
    let source = optional_string_at(&root, "source", "source")?;
    let note = optional_string_at(&root, "note", "note")?;
    let recorded_set_hash = optional_string_at(&root, "setHash", "setHash")?;
    let server = server_object(&root)?;
    let entries = tool_entries(&root)?;

    let read = read_entries(entries, weights)?;
    let export = capture_export(server, read.definitions, &release)?;
    check_input_hashes(&read.input_hashes, &export)?;
    check_seal(recorded_set_hash, &export)?;

    let tools = read.tools;
    let server = registry_server(server, &tools, weights)?;
    Ok(CheckedCapture {
        release,
        source,
        note,
        sha256: digest::sha256_hex(bytes),
        server,
        tools,
        export,
    })
}

/// The capture's bytes as a JSON object.
fn capture_object(bytes: &[u8]) -> Result<Map<String, Value>, Error> {
    let root: Value = serde_json::from_slice(bytes)
        .map_err(|e| refuse(format!("the capture is not valid JSON: {e}")))?;
    let Value::Object(root) = root else {
        return Err(refuse(format!(
            "the capture is {}, not a JSON object",
            json_kind(&root)
        )));
    };
    Ok(root)
}

/// The `server` object: the registry's rollups, checked against the tools later.
fn server_object(root: &Map<String, Value>) -> Result<&Map<String, Value>, Error> {
    match root.get("server") {
        Some(Value::Object(server)) => Ok(server),
        Some(other) => Err(refuse(format!(
            "`server` is {}, not an object",
            json_kind(other)
        ))),
        None => Err(refuse(
            "the capture has no `server` object (the registry's rollups)",
        )),
    }
}

/// The `tools` array, which must not be empty: a capture without tools calibrates nothing.
fn tool_entries(root: &Map<String, Value>) -> Result<&Vec<Value>, Error> {
    match root.get("tools") {
        Some(Value::Array(tools)) if !tools.is_empty() => Ok(tools),
        Some(Value::Array(_)) => Err(refuse("the capture lists no tools")),
        Some(other) => Err(refuse(format!(
            "`tools` is {}, not an array",
            json_kind(other)
        ))),
        None => Err(refuse("the capture has no `tools` array")),
    }
}

/// What the tool entries hold once each is checked.
struct ReadEntries {
    /// The definitions, in the capture's order (the export keeps the listing order).
    definitions: Vec<Value>,
    /// Tool name → the registry's numbers.
    tools: BTreeMap<String, ToolScores>,
    /// The `inputHash` values the capture records, to check against ours once hashed.
    input_hashes: Vec<(String, String)>,
}

/// Checks every tool entry in order. A malformed entry stops at once; numbers that do not follow
/// from each other are gathered over all tools first, so one error names every such tool.
fn read_entries(entries: &[Value], weights: &Weights) -> Result<ReadEntries, Error> {
    let mut definitions = Vec::with_capacity(entries.len());
    let mut tools = BTreeMap::new();
    let mut input_hashes = Vec::new();
    let mut faults = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("tools[{index}]");
        let Value::Object(entry) = entry else {
            return Err(refuse(format!(
                "`{at}` is {}, not an object",
                json_kind(entry)
            )));
        };
        let name = string_at(entry, "name", &format!("{at}.name"))?;
        if name.is_empty() {
            return Err(refuse(format!("`{at}.name` is empty")));
        }
        let definition = entry_definition(entry, &at, &name)?;
        if tools.contains_key(&name) {
            return Err(refuse(format!("tool `{name}` is listed twice")));
        }
        if let Some(hash) = optional_string_at(entry, "inputHash", &format!("{at}.inputHash"))? {
            input_hashes.push((name.clone(), hash));
        }
        let quality = entry_quality(entry, &at, &name)?;
        let (scores, fault) = tool_scores(quality, &name, &format!("{at}.qualityScore"), weights)?;
        faults.extend(fault);
        tools.insert(name, scores);
        definitions.push(definition);
    }

    if !faults.is_empty() {
        return Err(inconsistent_tools(&faults, entries.len()));
    }
    Ok(ReadEntries {
        definitions,
        tools,
        input_hashes,
    })
}

/// The entry's `definition`, which must be an object named like the entry: a definition filed
/// under another tool's scores would compare the wrong pair.
fn entry_definition(entry: &Map<String, Value>, at: &str, name: &str) -> Result<Value, Error> {
    let definition = match entry.get("definition") {
        Some(d @ Value::Object(_)) => d.clone(),
        Some(other) => {
            return Err(refuse(format!(
                "`{at}.definition` (tool `{name}`) is {}, not an object",
                json_kind(other)
            )))
        }
        None => {
            return Err(refuse(format!(
                "`{at}` (tool `{name}`) has no `definition`"
            )))
        }
    };
    match definition.get("name") {
        Some(Value::String(inner)) if *inner == name => {}
        Some(Value::String(inner)) => {
            return Err(Error::new(
                Stage::Calibrate,
                format!(
                    "`{at}` is named `{name}` but its definition is named `{inner}`: the entry \
                     and the definition it holds must be the same tool"
                ),
            )
            .with_advice(
                "copy each definition together with the score published for it; a \
                 definition filed under another tool's scores would compare the wrong pair",
            ))
        }
        _ => {
            return Err(refuse(format!(
                "`{at}.definition` (tool `{name}`) has no string `name`"
            )))
        }
    }
    Ok(definition)
}

/// The entry's `qualityScore` object: every tool must be scored, or the server's rollups cannot
/// be checked against its tools.
fn entry_quality<'a>(
    entry: &'a Map<String, Value>,
    at: &str,
    name: &str,
) -> Result<&'a Map<String, Value>, Error> {
    match entry.get("qualityScore") {
        Some(Value::Object(q)) => Ok(q),
        Some(other) => Err(refuse(format!(
            "`{at}.qualityScore` (tool `{name}`) is {}, not an object",
            json_kind(other)
        ))),
        None => Err(Error::new(
            Stage::Calibrate,
            format!(
                "tool `{name}` has no `qualityScore`: every tool of the capture must be \
                 scored by the registry"
            ),
        )
        .with_advice(
            "capture the registry page once every tool shows a score; a partly scored \
             server's rollups cannot be checked against its tools",
        )),
    }
}

/// The registry's definitions as an export, hashed exactly as a server's listing would be, so
/// its set hash can be compared with the seal and with the gate's own exports.
fn capture_export(
    server: &Map<String, Value>,
    definitions: Vec<Value>,
    release: &str,
) -> Result<Export, Error> {
    digest::assemble_export(
        RawListing {
            server_name: server
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string),
            protocol_version: ProbeProfile::default().protocol_version,
            tools: definitions,
            ..RawListing::default()
        },
        ProbeProfile::default(),
        ExportSource {
            origin: Some(format!("registry capture, release {release}")),
            ..ExportSource::default()
        },
    )
    .map_err(|e| e.context("the capture's definitions cannot be hashed"))
}

/// Each `inputHash` the capture records must be the one its definition hashes to: otherwise the
/// definition is not the text the registry scored.
fn check_input_hashes(input_hashes: &[(String, String)], export: &Export) -> Result<(), Error> {
    for (name, published) in input_hashes {
        let ours = &export.input_hashes[name];
        if !ours.eq_ignore_ascii_case(published) {
            return Err(Error::new(
                Stage::Calibrate,
                format!(
                    "tool `{name}`'s definition hashes to inputHash {ours}, but the capture \
                     records the registry's inputHash {published}: the definition is not the one \
                     the registry scored"
                ),
            )
            .with_advice(
                "copy the definition again from the registry page, field by field; if the \
                 registry computes inputHash over another serialisation, leave `inputHash` out",
            ));
        }
    }
    Ok(())
}

/// The capture must be sealed with the set hash of its definitions, so a later edit of a
/// definition is refused rather than calibrated against scores given to other text.
fn check_seal(recorded_set_hash: Option<String>, export: &Export) -> Result<(), Error> {
    let Some(recorded_set_hash) = recorded_set_hash else {
        return Err(Error::new(
            Stage::Calibrate,
            format!(
                "the capture records no `setHash`; its definitions hash to {}",
                export.set_hash
            ),
        )
        .with_advice(format!(
            "once the definitions are checked against the registry page, seal the capture with \
             \"setHash\": \"{}\" so that a later edit of a definition is refused",
            export.set_hash
        )));
    };
    if !recorded_set_hash.eq_ignore_ascii_case(&export.set_hash) {
        return Err(Error::new(
            Stage::Calibrate,
            format!(
                "the capture's definitions hash to set {}, but the capture was sealed with setHash \
                 {recorded_set_hash}: a definition changed after the capture was made",
                export.set_hash
            ),
        )
        .with_advice(
            "restore the definitions exactly as the registry published them (the scores belong \
             to that text, not to an edited one); replace `setHash` only after capturing every \
             definition from the registry again",
        ));
    }
    Ok(())
}

/// The six camelCase dimensions, `tdqs` and `tier` of one tool. A malformed value is an error;
/// numbers that are well formed but do not follow from each other are returned as a fault, so
/// that every such tool can be named at once.
fn tool_scores(
    quality: &Map<String, Value>,
    name: &str,
    at: &str,
    weights: &Weights,
) -> Result<(ToolScores, Option<String>), Error> {
    let mut scores = BTreeMap::new();
    for dimension in ToolDimension::ALL {
        let key = dimension.camel_key();
        scores.insert(
            dimension,
            dimension_score(quality, key, &format!("{at}.{key}"))?,
        );
    }
    let tdqs = tenths_at(quality, "tdqs", &format!("{at}.tdqs"))?;
    let tier = tier_at(quality, "tier", &format!("{at}.tier"))?;
    let computed = weights.tdqs(&scores);
    let expected_tier = weights.tiers.tier(tdqs);
    let fault = if computed != tdqs {
        let listed: Vec<String> = ToolDimension::ALL
            .iter()
            .map(|d| scores[d].to_string())
            .collect();
        Some(format!(
            "`{name}`: TDQS {tdqs}, but its scores {} give {computed}",
            listed.join(", ")
        ))
    } else if expected_tier != tier {
        Some(format!(
            "`{name}`: tier {tier}, but TDQS {tdqs} is tier {expected_tier}"
        ))
    } else {
        None
    };
    Ok((ToolScores { scores, tdqs, tier }, fault))
}

fn inconsistent_tools(faults: &[String], total: usize) -> Error {
    const SHOWN: usize = 3;
    let shown: Vec<&str> = faults.iter().take(SHOWN).map(String::as_str).collect();
    let more = if faults.len() > SHOWN {
        format!("; and {} more", faults.len() - SHOWN)
    } else {
        String::new()
    };
    Error::new(
        Stage::Calibrate,
        format!(
            "the registry's TDQS or tier does not follow from its own six scores for {} of {total} \
             tools under the pinned weights, round1 and tier thresholds: {}{more}",
            faults.len(),
            shown.join("; ")
        ),
    )
    .with_detail(
        "every tool at fault (scores in the order purpose clarity, usage guidelines, behavioral \
         transparency, parameter semantics, conciseness and structure, contextual completeness)",
        faults.join("\n"),
    )
    .with_advice(
        "check the capture against the registry page; if the page really shows these numbers, \
         the registry scored this release under other weights or another rounding (before TDQS \
         v1.2 it accumulated floats, which rounds 2.95 down to 2.9), and the capture cannot \
         calibrate the pinned specification",
    )
}

/// The server block, with every rollup recomputed from the tools and the coherence dimensions.
fn registry_server(
    server: &Map<String, Value>,
    tools: &BTreeMap<String, ToolScores>,
    weights: &Weights,
) -> Result<RegistryServer, Error> {
    let count = |key: &str| -> Result<u64, Error> {
        match server.get(key) {
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or(0)),
            Some(other) => Err(refuse(format!(
                "`server.{key}` must be a whole number, got {}",
                json_kind(other)
            ))),
            None => Err(refuse(format!("`server.{key}` is missing"))),
        }
    };
    let tool_count = count("toolCount")?;
    let scored_tool_count = count("scoredToolCount")?;
    let listed = tools.len() as u64;
    if tool_count != listed || scored_tool_count != listed {
        return Err(Error::new(
            Stage::Calibrate,
            format!(
                "the registry reports {tool_count} tools with {scored_tool_count} scored, but the \
                 capture holds {listed} scored tools"
            ),
        )
        .with_advice(
            "capture every tool of the release with its score; rollups over a different set of \
             tools cannot be checked or compared",
        ));
    }
    let coherence = |dimension: CoherenceDimension| {
        let key = dimension.camel_key();
        dimension_score(server, key, &format!("server.{key}"))
    };
    let published = RegistryServer {
        name: optional_string_at(server, "name", "server.name")?,
        tool_count,
        scored_tool_count,
        mean_tdqs: tenths_at(server, "meanTdqs", "server.meanTdqs")?,
        min_tdqs: tenths_at(server, "minTdqs", "server.minTdqs")?,
        description_quality_score: tenths_at(
            server,
            "descriptionQualityScore",
            "server.descriptionQualityScore",
        )?,
        description_quality_tier: tier_at(
            server,
            "descriptionQualityTier",
            "server.descriptionQualityTier",
        )?,
        disambiguation: coherence(CoherenceDimension::Disambiguation)?,
        naming_consistency: coherence(CoherenceDimension::NamingConsistency)?,
        tool_count_appropriateness: coherence(CoherenceDimension::ToolCountAppropriateness)?,
        completeness: coherence(CoherenceDimension::Completeness)?,
        coherence_score: tenths_at(server, "coherenceScore", "server.coherenceScore")?,
        coherence_tier: tier_at(server, "coherenceTier", "server.coherenceTier")?,
        overall_score: tenths_at(server, "overallScore", "server.overallScore")?,
        overall_tier: tier_at(server, "overallTier", "server.overallTier")?,
        scored_at: string_at(server, "scoredAt", "server.scoredAt")?,
    };

    let tdqs: Vec<(String, Tenths)> = tools.iter().map(|(n, t)| (n.clone(), t.tdqs)).collect();
    let computed = weights.rollups(&tdqs, &published.coherence());
    let tier = |t: Tenths| weights.tiers.tier(t);
    let mut faults = Vec::new();
    let mut compare = |label: &str, published: String, computed: String| {
        if published != computed {
            faults.push(format!("{label} is {published}, the tools give {computed}"));
        }
    };
    let show = |t: Option<Tenths>| t.map(|t| t.to_string()).unwrap_or_default();
    compare(
        "meanTdqs",
        published.mean_tdqs.to_string(),
        show(computed.mean_tdqs),
    );
    compare(
        "minTdqs",
        published.min_tdqs.to_string(),
        show(computed.min_tdqs),
    );
    compare(
        "descriptionQualityScore",
        published.description_quality_score.to_string(),
        show(computed.description_quality),
    );
    compare(
        "descriptionQualityTier",
        published.description_quality_tier.to_string(),
        tier(published.description_quality_score).to_string(),
    );
    compare(
        "coherenceScore",
        published.coherence_score.to_string(),
        computed.coherence.to_string(),
    );
    compare(
        "coherenceTier",
        published.coherence_tier.to_string(),
        tier(published.coherence_score).to_string(),
    );
    compare(
        "overallScore",
        published.overall_score.to_string(),
        show(computed.overall),
    );
    compare(
        "overallTier",
        published.overall_tier.to_string(),
        tier(published.overall_score).to_string(),
    );
    if !faults.is_empty() {
        return Err(Error::new(
            Stage::Calibrate,
            format!(
                "the registry's server numbers do not follow from its own scores: {}",
                faults.join("; ")
            ),
        )
        .with_detail("how they are computed", ROLLUP_RULES)
        .with_advice(
            "check the server block against the registry page; if the page really shows these \
             numbers, the registry computed them another way (other weights, float rounding, or \
             over part of the tools) and the capture cannot calibrate the pinned specification",
        ));
    }
    Ok(published)
}

const ROLLUP_RULES: &str =
    "meanTdqs = round1(exact mean of the tools' TDQS); minTdqs = the lowest \
TDQS; descriptionQualityScore = round1(60% exact mean + 40% lowest); coherenceScore = round1(mean \
of disambiguation, namingConsistency, toolCountAppropriateness, completeness); overallScore = \
round1(70% descriptionQualityScore + 30% coherenceScore); every tier from its own score \
(A >= 3.5, B >= 3.0, C >= 2.0, D >= 1.0, else F) — with the weights and thresholds of the pins";

fn string_at(map: &Map<String, Value>, key: &str, at: &str) -> Result<String, Error> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(refuse(format!(
            "`{at}` must be a string, got {}",
            json_kind(other)
        ))),
        None => Err(refuse(format!("`{at}` is missing"))),
    }
}

fn optional_string_at(
    map: &Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<Option<String>, Error> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(refuse(format!(
            "`{at}` must be a string, got {}",
            json_kind(other)
        ))),
    }
}

fn dimension_score(map: &Map<String, Value>, key: &str, at: &str) -> Result<u8, Error> {
    match map.get(key) {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v @ 1..=5) => Ok(v as u8),
            _ => Err(refuse(format!(
                "`{at}` must be a whole number from 1 to 5, got {n}"
            ))),
        },
        Some(other) => Err(refuse(format!(
            "`{at}` must be a whole number from 1 to 5, got {}",
            json_kind(other)
        ))),
        None => Err(refuse(format!("`{at}` is missing"))),
    }
}

fn tenths_at(map: &Map<String, Value>, key: &str, at: &str) -> Result<Tenths, Error> {
    match map.get(key) {
        Some(Value::Number(n)) => n
            .as_f64()
            .and_then(Tenths::from_f64)
            .filter(|t| (0..=50).contains(&t.0))
            .ok_or_else(|| {
                refuse(format!(
                    "`{at}` must be a score from 0.0 to 5.0 in tenths, got {n}"
                ))
            }),
        Some(other) => Err(refuse(format!(
            "`{at}` must be a number, got {}",
            json_kind(other)
        ))),
        None => Err(refuse(format!("`{at}` is missing"))),
    }
}

fn tier_at(map: &Map<String, Value>, key: &str, at: &str) -> Result<Tier, Error> {
    let text = string_at(map, key, at)?;
    match text.as_str() {
        "A" => Ok(Tier::A),
        "B" => Ok(Tier::B),
        "C" => Ok(Tier::C),
        "D" => Ok(Tier::D),
        "F" => Ok(Tier::F),
        _ => Err(refuse(format!(
            "`{at}` must be one of A, B, C, D, F, got \"{text}\""
        ))),
    }
}

/// Names of the tools with the lowest TDQS, sorted.
pub fn lowest_tools(tools: &BTreeMap<String, ToolScores>) -> Vec<String> {
    let Some(min) = tools.values().map(|t| t.tdqs).min() else {
        return Vec::new();
    };
    let names: BTreeSet<&String> = tools
        .iter()
        .filter(|(_, t)| t.tdqs == min)
        .map(|(n, _)| n)
        .collect();
    names.into_iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn capture(tools: Value, server: Value, set_hash: Option<&str>) -> Vec<u8> {
        let mut root = json!({"release": "1.0.0", "server": server, "tools": tools});
        if let Some(h) = set_hash {
            root["setHash"] = json!(h);
        }
        serde_json::to_vec(&root).unwrap()
    }

    fn one_tool() -> Value {
        json!([{
            "name": "echo",
            "definition": {"name": "echo", "description": "Echo the text back.", "inputSchema": {"type": "object"}},
            "qualityScore": {
                "purposeClarity": 4, "usageGuidelines": 2, "behavioralTransparency": 2,
                "parameterSemantics": 3, "concisenessStructure": 4, "contextualCompleteness": 2,
                "tdqs": 2.9, "tier": "C"
            }
        }])
    }

    // 4,2,2,3,4,2 is 285 hundredths: TDQS 2.9; one tool, so mean = min = 2.9 and description
    // quality 2.9; coherence (3+3+4+3)/4 = 3.25 → 3.3; overall 0.7·2.9 + 0.3·3.3 = 3.02 → 3.0.
    fn one_server() -> Value {
        json!({
            "toolCount": 1, "scoredToolCount": 1, "meanTdqs": 2.9, "minTdqs": 2.9,
            "descriptionQualityScore": 2.9, "descriptionQualityTier": "C",
            "disambiguation": 3, "namingConsistency": 3, "toolCountAppropriateness": 4,
            "completeness": 3, "coherenceScore": 3.3, "coherenceTier": "B",
            "overallScore": 3.0, "overallTier": "B", "scoredAt": "2026-10-01T00:00:00Z",
            "coherenceSummary": "ignored text"
        })
    }

    fn set_hash_of(tools: &Value) -> String {
        let defs: Vec<Value> = tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["definition"].clone())
            .collect();
        digest::digest_tools(&defs).unwrap().set_hash
    }

    #[test]
    fn a_consistent_capture_is_accepted_as_published() {
        let tools = one_tool();
        let hash = set_hash_of(&tools);
        let checked = check_capture(
            &capture(tools, one_server(), Some(&hash)),
            &Weights::default(),
        )
        .unwrap();
        assert_eq!(checked.tools["echo"].tdqs, Tenths(29));
        assert_eq!(checked.server.coherence_score, Tenths(33));
        assert_eq!(checked.server.overall_score, Tenths(30));
        assert_eq!(checked.export.set_hash, hash);
    }

    #[test]
    fn a_missing_set_hash_is_refused_with_the_value_to_seal_with() {
        let tools = one_tool();
        let hash = set_hash_of(&tools);
        let err =
            check_capture(&capture(tools, one_server(), None), &Weights::default()).unwrap_err();
        assert_eq!(err.stage, Stage::Calibrate);
        assert!(err.advice.unwrap().contains(&hash));
    }

    #[test]
    fn a_float_rounded_tdqs_is_refused() {
        // 4,2,2,3,5,2 is exactly 2.95: round1 gives 3.0; float accumulation gave 2.9.
        let mut tools = one_tool();
        tools[0]["qualityScore"]["concisenessStructure"] = json!(5);
        let hash = set_hash_of(&tools);
        let err = check_capture(
            &capture(tools, one_server(), Some(&hash)),
            &Weights::default(),
        )
        .unwrap_err();
        assert!(err.cause.contains("give 3.0"), "{}", err.cause);
    }

    #[test]
    fn a_rollup_that_does_not_follow_is_refused_naming_it() {
        let tools = one_tool();
        let hash = set_hash_of(&tools);
        let mut server = one_server();
        server["overallScore"] = json!(3.1);
        let err =
            check_capture(&capture(tools, server, Some(&hash)), &Weights::default()).unwrap_err();
        assert!(
            err.cause
                .contains("overallScore is 3.1, the tools give 3.0"),
            "{}",
            err.cause
        );
    }

    #[test]
    fn a_wrong_input_hash_is_refused() {
        let mut tools = one_tool();
        tools[0]["inputHash"] = json!("0000000000000000");
        let hash = set_hash_of(&tools);
        let err = check_capture(
            &capture(tools, one_server(), Some(&hash)),
            &Weights::default(),
        )
        .unwrap_err();
        assert!(err.cause.contains("inputHash"), "{}", err.cause);
    }
}
