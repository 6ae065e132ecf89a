//! Which tools two exports add, remove or change, for the report.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::export::Export;

use super::canonical;

/// The difference between a base and a head export, by tool name and definition hash. Every
/// list is sorted by name (code-point order).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinitionDiff {
    /// Names only the head lists.
    pub added: Vec<String>,
    /// Names only the base lists.
    pub removed: Vec<String>,
    /// Names on both sides whose definition hash differs.
    pub changed: Vec<String>,
    /// Names on both sides with equal definition hashes.
    pub unchanged: Vec<String>,
    /// The part of `unchanged` whose raw tool object still differs, in fields TDQS does not score
    /// (`execution`, `icons`, `_meta`, vendor fields). Key order is not a difference.
    pub changed_outside_definition: Vec<String>,
}

impl DefinitionDiff {
    /// Whether nothing scored differs (equivalent to equal set hashes).
    pub fn definitions_unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Compares two exports by their stored hashes (verify exports read from files first with
/// [`super::verify_export`], as the engine's `read_export` does).
pub fn diff_exports(base: &Export, head: &Export) -> DefinitionDiff {
    let mut diff = DefinitionDiff::default();
    for (name, base_hash) in &base.hashes {
        match head.hashes.get(name) {
            None => diff.removed.push(name.clone()),
            Some(head_hash) if head_hash != base_hash => diff.changed.push(name.clone()),
            Some(_) => diff.unchanged.push(name.clone()),
        }
    }
    diff.added = head
        .hashes
        .keys()
        .filter(|name| !base.hashes.contains_key(*name))
        .cloned()
        .collect();

    let base_tools = tools_by_name(&base.tools);
    let head_tools = tools_by_name(&head.tools);
    diff.changed_outside_definition = diff
        .unchanged
        .iter()
        .filter(
            |name| match (base_tools.get(name.as_str()), head_tools.get(name.as_str())) {
                (Some(before), Some(after)) => {
                    canonical::to_canonical_bytes(before) != canonical::to_canonical_bytes(after)
                }
                _ => false,
            },
        )
        .cloned()
        .collect();
    diff
}

fn tools_by_name(tools: &[Value]) -> HashMap<&str, &Value> {
    tools
        .iter()
        .filter_map(|tool| Some((tool.get("name")?.as_str()?, tool)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::assemble_export;
    use crate::export::{ExportSource, ProbeProfile, RawListing};
    use serde_json::json;

    fn export_of(tools: Vec<Value>) -> Export {
        let listing = RawListing {
            protocol_version: "2025-11-25".into(),
            tools,
            ..RawListing::default()
        };
        assemble_export(listing, ProbeProfile::default(), ExportSource::default()).unwrap()
    }

    #[test]
    fn sees_every_kind_of_change() {
        let base = export_of(vec![
            json!({"name": "a", "description": "A."}),
            json!({"name": "b", "description": "B."}),
            json!({"name": "c", "description": "C."}),
            json!({"name": "e", "description": "E.", "_meta": {"v": 1}}),
        ]);
        let head = export_of(vec![
            json!({"_meta": {"v": 2}, "description": "E.", "name": "e"}),
            json!({"name": "d", "description": "D."}),
            json!({"description": "A.", "name": "a"}),
            json!({"name": "b", "description": "B, reworded."}),
        ]);
        let diff = diff_exports(&base, &head);
        assert_eq!(diff.added, ["d"]);
        assert_eq!(diff.removed, ["c"]);
        assert_eq!(diff.changed, ["b"]);
        assert_eq!(diff.unchanged, ["a", "e"]);
        assert_eq!(diff.changed_outside_definition, ["e"]);
        assert!(!diff.definitions_unchanged());
    }

    #[test]
    fn a_reordered_listing_is_unchanged() {
        let tools = vec![
            json!({"name": "a", "description": "A."}),
            json!({"name": "b", "description": "B."}),
        ];
        let mut reversed = tools.clone();
        reversed.reverse();
        let (base, head) = (export_of(tools), export_of(reversed));
        let diff = diff_exports(&base, &head);
        assert!(diff.definitions_unchanged());
        assert!(diff.changed_outside_definition.is_empty());
        assert_eq!(base.set_hash, head.set_hash);
    }
}
