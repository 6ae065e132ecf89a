//! A report that grows with the change, not the server: unchanged tools summarised.
//!
//! A tool is **left out** of a report when its definition hash is the same on both sides and its
//! scores (the six dimensions, TDQS and flags) are the same on both sides in every pair — it can
//! move neither the difference of the means nor the guard. Everything else stays listed in full:
//! added, removed and changed tools, and unchanged tools whose scores moved. A left-out tool is
//! still counted, exactly:
//!
//! - [`Omitted`] (the report's `omitted`) counts them and digests their names and definition
//!   hashes (`definitionsDigest`); `--check` re-derives that digest from fresh exports;
//! - each pair side's [`OmittedScores`] (`omitted` of a side) holds their count, the sum of their
//!   TDQS in tenths, their lowest tool, how many were judged by a call of their own, and a digest
//!   of their full entries: the rollups and the decision recompute exactly from it;
//! - the exports keep `setHash` and the side totals (`size.descriptionCharacters`,
//!   `size.toolsListBytes`), and list only the listed tools in `tools`, `hashes`, `inputHashes`
//!   and `size.definitionBytes`; `changes.unchanged` names only the unchanged tools still listed;
//!   `cost` keeps both listings' totals and lists only the listed tools' definitions.
//!
//! Reports of servers with at most [`LIST_EVERY_TOOL_UP_TO`] tools on each side list every tool,
//! and `--full-report` lists every tool whatever the size.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use crate::arith::{Frac, Tenths};
use crate::error::{Error, Result, Stage};
use crate::export::Export;
use crate::score::{AnswerSource, OmittedScores, SideScore, ToolResult};

use super::model::{Omitted, Pair, Report};

/// A report whose sides list at most this many tools each lists every tool.
pub const LIST_EVERY_TOOL_UP_TO: usize = 50;

/// Whether `report` should be summarised: both exports present, a side above the threshold.
pub fn should_summarise(report: &Report) -> bool {
    match (&report.base, &report.head) {
        (Some(b), Some(h)) => b.hashes.len().max(h.hashes.len()) > LIST_EVERY_TOOL_UP_TO,
        _ => false,
    }
}

/// Two results of one tool that stand the same: nothing a reader or the decision reads moved.
fn same_standing(a: &ToolResult, b: &ToolResult) -> bool {
    a.scores == b.scores
        && a.tdqs == b.tdqs
        && a.flags == b.flags
        && a.server_flags == b.server_flags
        && a.annotation_contradiction == b.annotation_contradiction
}

/// The tools that may be left out: the same definition hash on both sides and, in every pair,
/// the same standing on both sides and as in the first pair.
pub fn omittable(base: &Export, head: &Export, pairs: &[Pair]) -> BTreeSet<String> {
    base.hashes
        .iter()
        .filter(|(name, hash)| head.hashes.get(*name) == Some(*hash))
        .filter(|(name, _)| {
            let first = pairs.first().and_then(|p| p.base.tools.get(*name));
            pairs.iter().all(
                |p| match (p.base.tools.get(*name), p.head.tools.get(*name), first) {
                    (Some(b), Some(h), Some(f)) => same_standing(b, h) && same_standing(b, f),
                    _ => false,
                },
            )
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// SHA-256 over `NAME\tHASH\n` of `names` in order, hashes from `hashes`.
pub fn definitions_digest<'a>(
    names: impl IntoIterator<Item = &'a String>,
    hashes: &BTreeMap<String, String>,
) -> String {
    let mut hasher = Sha256::new();
    for name in names {
        hasher.update(name.as_bytes());
        hasher.update(b"\t");
        hasher.update(hashes.get(name).map(String::as_bytes).unwrap_or_default());
        hasher.update(b"\n");
    }
    hex::encode(hasher.finalize())
}

/// Takes `names` out of one side's tools and returns their summary (`None` when none).
pub fn summarise_side(side: &mut SideScore, names: &BTreeSet<String>) -> Option<OmittedScores> {
    let mut hasher = Sha256::new();
    let mut count = 0u64;
    let mut tenths_sum = 0i64;
    let mut judged = 0u64;
    let mut min: Option<(String, Tenths)> = None;
    for name in names {
        let Some(tool) = side.tools.remove(name) else {
            continue;
        };
        count += 1;
        tenths_sum += tool.tdqs.0;
        if tool.answer == AnswerSource::Judged {
            judged += 1;
        }
        // Names come in order, so the first of equal lows is kept.
        if min.as_ref().is_none_or(|(_, t)| tool.tdqs < *t) {
            min = Some((name.clone(), tool.tdqs));
        }
        // A result serialises deterministically (struct order, sorted maps).
        hasher.update(serde_json::to_vec(&tool).unwrap_or_default());
        hasher.update(b"\n");
    }
    let (min_tool, min_tdqs) = min?;
    let mean = Frac::new(tenths_sum, 10 * count as i64);
    Some(OmittedScores {
        count,
        tdqs_tenths_sum: tenths_sum,
        exact_mean_tdqs: format!("{}/{}", mean.numer(), mean.denom()),
        min_tool,
        min_tdqs,
        judged,
        results_digest: hex::encode(hasher.finalize()),
    })
}

/// Leaves `names` out of every pair side.
pub fn summarise_pairs(pairs: &mut [Pair], names: &BTreeSet<String>) {
    for pair in pairs {
        pair.base.omitted = summarise_side(&mut pair.base, names);
        pair.head.omitted = summarise_side(&mut pair.head, names);
    }
}

fn trim_export(export: &mut Export, names: &BTreeSet<String>) {
    export
        .tools
        .retain(|t| !names.contains(crate::digest::tool_name(t)));
    for map in [&mut export.hashes, &mut export.input_hashes] {
        map.retain(|name, _| !names.contains(name));
    }
    export
        .size
        .definition_bytes
        .retain(|name, _| !names.contains(name));
}

/// Summarises a report in place when [`should_summarise`] says so and some tool can be left out.
/// The decision, reason, causes and assessment were computed on the full list and stay as they
/// are: they follow from the summarised report exactly as from the full one.
pub fn summarise(report: &mut Report) {
    if !should_summarise(report) {
        return;
    }
    let (Some(base), Some(head)) = (&report.base, &report.head) else {
        return;
    };
    let names = omittable(base, head, &report.pairs);
    if names.is_empty() {
        return;
    }
    let digest = definitions_digest(&names, &base.hashes);
    summarise_pairs(&mut report.pairs, &names);
    for export in [report.base.as_mut(), report.head.as_mut()]
        .into_iter()
        .flatten()
    {
        trim_export(export, &names);
    }
    if let Some(size) = report.size.as_mut() {
        for map in [
            &mut size.base.definition_bytes,
            &mut size.head.definition_bytes,
        ] {
            map.retain(|name, _| !names.contains(name));
        }
        size.delta
            .definition_bytes
            .retain(|name, _| !names.contains(name));
    }
    if let Some(cost) = report.cost.as_mut() {
        // The listing totals keep counting every tool; only the per-tool entries go.
        for side in [&mut cost.base, &mut cost.head] {
            side.tools.retain(|name, _| !names.contains(name));
        }
    }
    if let Some(changes) = report.changes.as_mut() {
        changes.unchanged.retain(|name| !names.contains(name));
    }
    report.omitted = Some(Omitted {
        count: names.len() as u64,
        definitions_digest: digest,
        list_every_tool_up_to: LIST_EVERY_TOOL_UP_TO as u64,
    });
}

fn differs(what: String) -> Error {
    Error::new(Stage::Check, what).with_advice(
        "the saved report no longer matches; run the gate again to produce a fresh report",
    )
}

/// Checks a summarised export against itself: every listed tool's hash, input hash and
/// definition size. (Its `setHash` and totals need the left-out tools: `--check` compares them
/// with a fresh export.)
pub fn verify_listed(export: &Export, label: &str) -> Result<()> {
    let digest = crate::digest::digest_tools(&export.tools)
        .map_err(|e| e.context(format!("the report's {label} export")))?;
    if digest.hashes != export.hashes
        || digest.input_hashes != export.input_hashes
        || digest.size.definition_bytes != export.size.definition_bytes
    {
        return Err(differs(format!(
            "the report's {label} export does not match its own listed tools (hashes, input \
             hashes or definition sizes differ)"
        )));
    }
    Ok(())
}

/// Checks a summarised report's left-out tools against a fresh export of one side (with the same
/// set hash): the left-out names are the fresh tools the report does not list, and their names
/// and hashes must give the recorded digest. Returns those names.
pub fn verify_omitted(
    omitted: &Omitted,
    recorded: &Export,
    fresh: &Export,
    label: &str,
) -> Result<BTreeSet<String>> {
    for (name, hash) in &recorded.hashes {
        if fresh.hashes.get(name) != Some(hash) {
            return Err(differs(format!(
                "the report's {label} lists tool `{name}` with a definition the current {label} \
                 does not have"
            )));
        }
    }
    let names: BTreeSet<String> = fresh
        .hashes
        .keys()
        .filter(|name| !recorded.hashes.contains_key(*name))
        .cloned()
        .collect();
    if names.len() as u64 != omitted.count
        || definitions_digest(&names, &fresh.hashes) != omitted.definitions_digest
    {
        return Err(differs(format!(
            "the report's summary of its {} left-out tools does not match the {label}'s {} \
             unlisted tools (`omitted.definitionsDigest` differs)",
            omitted.count,
            names.len()
        )));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::Weights;
    use crate::export::{ExportSource, ProbeProfile, RawListing};
    use crate::rubric::{CoherenceDimension, Judged, ToolDimension};
    use crate::score::{CoherenceResult, Rollups};
    use serde_json::json;

    fn export(tools: &[(&str, &str)]) -> Export {
        let listing = RawListing {
            tools: tools
                .iter()
                .map(|(n, d)| json!({"name": n, "description": d, "inputSchema": {"type": "object"}}))
                .collect(),
            ..Default::default()
        };
        crate::digest::assemble_export(listing, ProbeProfile::default(), ExportSource::default())
            .unwrap()
    }

    fn result(name: &str, score: u8, answer: AnswerSource) -> ToolResult {
        let weights = Weights::default();
        let scores: BTreeMap<ToolDimension, u8> =
            ToolDimension::ALL.into_iter().map(|d| (d, score)).collect();
        let tdqs = weights.tdqs(&scores);
        ToolResult {
            name: name.to_string(),
            definition_hash: String::new(),
            context_signals: Default::default(),
            justifications: scores
                .keys()
                .map(|d| {
                    let j = Judged {
                        score,
                        justification: format!("{name} {score}"),
                    };
                    (*d, j)
                })
                .collect(),
            scores,
            tdqs,
            tier: weights.tiers.tier(tdqs),
            flags: vec![],
            smells: vec![],
            summary: String::new(),
            server_flags: vec![],
            annotation_contradiction: false,
            answer,
        }
    }

    fn side(results: Vec<ToolResult>) -> SideScore {
        let coherence = CoherenceResult {
            scores: CoherenceDimension::ALL
                .into_iter()
                .map(|d| (d, 4))
                .collect(),
            coherence_score: Tenths(40),
            coherence_tier: crate::arith::Tier::A,
            shadow_candidates: vec![],
            shadowing_risks: vec![],
            coherence_summary: String::new(),
            coherence_justifications: BTreeMap::new(),
            answer: AnswerSource::Judged,
        };
        SideScore {
            server_name: "s".to_string(),
            set_hash: String::new(),
            tools: results.into_iter().map(|t| (t.name.clone(), t)).collect(),
            coherence,
            rollups: Rollups {
                tool_count: 0,
                scored_tool_count: 0,
                exact_mean_tdqs: None,
                mean_tdqs: None,
                min_tdqs: None,
                min_tool: None,
                description_quality_score: None,
                description_quality_tier: None,
                coherence_score: Tenths(40),
                coherence_tier: crate::arith::Tier::A,
                overall_score: None,
                overall_tier: None,
            },
            omitted: None,
        }
    }

    fn values(side: &SideScore) -> crate::arith::RollupValues {
        let tdqs: Vec<(String, Tenths)> = side
            .tools
            .values()
            .map(|t| (t.name.clone(), t.tdqs))
            .collect();
        let rest = side.omitted.as_ref().map(|o| crate::arith::RestOfSide {
            count: o.count,
            tenths_sum: o.tdqs_tenths_sum,
            min_tool: o.min_tool.clone(),
            min_tdqs: o.min_tdqs,
        });
        Weights::default().rollups_with(&tdqs, rest.as_ref(), &side.coherence.scores)
    }

    #[test]
    fn only_tools_that_stand_the_same_are_left_out_and_the_rollups_hold() {
        // `same` and `low` are unchanged and scored alike; `moved` is unchanged but scored
        // differently on the head (a model's other answer); `edited` changed.
        let base = export(&[("same", "A"), ("low", "L"), ("moved", "M"), ("edited", "E")]);
        let head = export(&[
            ("same", "A"),
            ("low", "L"),
            ("moved", "M"),
            ("edited", "E2"),
        ]);
        let b = side(vec![
            result("same", 4, AnswerSource::Shared),
            result("low", 2, AnswerSource::Judged),
            result("moved", 4, AnswerSource::Judged),
            result("edited", 4, AnswerSource::Judged),
        ]);
        let mut h = b.clone();
        h.tools
            .insert("moved".into(), result("moved", 3, AnswerSource::Judged));
        h.tools
            .insert("edited".into(), result("edited", 2, AnswerSource::Judged));
        let mut pairs = vec![Pair {
            base: b,
            head: h,
            calls: Default::default(),
        }];
        let names = omittable(&base, &head, &pairs);
        assert_eq!(
            names,
            BTreeSet::from(["low".to_string(), "same".to_string()])
        );
        let full = (values(&pairs[0].base), values(&pairs[0].head));
        summarise_pairs(&mut pairs, &names);
        assert_eq!((values(&pairs[0].base), values(&pairs[0].head)), full);
        let o = pairs[0].head.omitted.clone().unwrap();
        assert_eq!((o.count, o.tdqs_tenths_sum, o.judged), (2, 60, 1));
        assert_eq!((o.min_tool.as_str(), o.min_tdqs), ("low", Tenths(20)));
        // The lowest tool is found across the listed and the left-out ones, ties by name.
        assert_eq!(full.0.min_tool.as_deref(), Some("low"));
        assert_eq!(full.1.min_tool.as_deref(), Some("edited"));
        assert_eq!(pairs[0].head.tools.len(), 2);
        // Another answer in a later pair keeps a tool listed.
        let mut later = pairs.clone();
        later[0] = Pair {
            base: side(vec![result("same", 4, AnswerSource::Shared)]),
            head: side(vec![result("same", 4, AnswerSource::Shared)]),
            calls: Default::default(),
        };
        let mut second = later[0].clone();
        second
            .head
            .tools
            .insert("same".into(), result("same", 5, AnswerSource::Judged));
        second
            .base
            .tools
            .insert("same".into(), result("same", 5, AnswerSource::Judged));
        let one = export(&[("same", "A")]);
        assert_eq!(omittable(&one, &one, &[later[0].clone(), second]).len(), 0);
    }
}
