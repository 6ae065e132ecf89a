//! Canonical definitions and their hashes, and the export built around them.
//!
//! The canonical definition of a tool is the object of its six scored fields `name`, `title`,
//! `description`, `inputSchema`, `outputSchema`, `annotations` (an absent field as `null`),
//! written as Python's `json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
//! writes it ([`canonical`]). That is the form the public TDQS implementations hash, so:
//!
//! - `definitionHash` = SHA-256 (lowercase hex) of the canonical bytes;
//! - `inputHash` = its first 16 hex characters (the TDQS context signal, comparable with the
//!   registry's);
//! - `setHash` = SHA-256 of the sorted definition hashes joined by `\n`: listing order does not
//!   matter, and equal set hashes on both sides mean nothing scored can differ.
//!
//! Fields outside the six (`execution`, `icons`, `_meta`, vendor fields) are kept in the export
//! but move no hash: TDQS does not score them. [`diff_exports`] still reports tools whose raw
//! object changed only there, so a report can say so.

pub mod canonical;
mod diff;

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result, Stage};
use crate::export::{Export, ExportSource, ProbeProfile, RawListing, Size, EXPORT_SCHEMA_VERSION};

pub use diff::{diff_exports, DefinitionDiff};

/// The fields of a tool that TDQS scores and hashes, in the order the specification lists them.
pub(crate) const DEFINITION_FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// Hex characters of the definition hash kept as the TDQS `inputHash`.
pub(crate) const INPUT_HASH_LEN: usize = 16;

/// The six scored fields of `tool` as an object, absent ones (or a tool that is not an object)
/// as `null`.
pub(crate) fn canonical_definition(tool: &Value) -> Value {
    let mut definition = Map::new();
    for field in DEFINITION_FIELDS {
        let value = tool.get(field).cloned().unwrap_or(Value::Null);
        definition.insert(field.to_string(), value);
    }
    Value::Object(definition)
}

/// The bytes that are hashed for `tool`.
pub fn canonical_definition_bytes(tool: &Value) -> Vec<u8> {
    canonical::to_canonical_bytes(&canonical_definition(tool))
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// SHA-256 of the canonical definition of `tool`.
pub fn definition_hash(tool: &Value) -> String {
    sha256_hex(&canonical_definition_bytes(tool))
}

/// The TDQS `inputHash` of a definition hash: its first 16 hex characters.
pub(crate) fn input_hash_of(definition_hash: &str) -> String {
    definition_hash.chars().take(INPUT_HASH_LEN).collect()
}

/// The TDQS `inputHash` of `tool`.
pub fn input_hash(tool: &Value) -> String {
    input_hash_of(&definition_hash(tool))
}

/// SHA-256 of the definition hashes, sorted, joined by `\n` (no trailing newline).
pub fn set_hash<I, S>(definition_hashes: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut hashes: Vec<String> = definition_hashes
        .into_iter()
        .map(|hash| hash.as_ref().to_string())
        .collect();
    hashes.sort_unstable();
    sha256_hex(hashes.join("\n").as_bytes())
}

/// What the digest stage computes from a side's tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideDigest {
    /// Tool name → definition hash.
    pub hashes: BTreeMap<String, String>,
    /// Tool name → input hash.
    pub input_hashes: BTreeMap<String, String>,
    pub set_hash: String,
    pub size: Size,
}

/// Hashes and measures `tools` (raw, in listing order). Refuses, naming the tools at fault, a
/// tool that is not an object, one without a non-empty string `name`, and names listed twice:
/// hashes and scores are keyed by name, so such a listing cannot be compared.
pub fn digest_tools(tools: &[Value]) -> Result<SideDigest> {
    let names = tool_names(tools)?;
    let mut hashes = BTreeMap::new();
    let mut input_hashes = BTreeMap::new();
    let mut definition_bytes = BTreeMap::new();
    let mut description_characters = 0u64;
    for (tool, name) in tools.iter().zip(names) {
        let canonical = canonical_definition_bytes(tool);
        let hash = sha256_hex(&canonical);
        input_hashes.insert(name.to_string(), input_hash_of(&hash));
        hashes.insert(name.to_string(), hash);
        definition_bytes.insert(name.to_string(), canonical.len() as u64);
        if let Some(Value::String(description)) = tool.get("description") {
            // Characters as Python's len() counts them: Unicode scalar values.
            description_characters += description.chars().count() as u64;
        }
    }
    let tools_list_bytes = serde_json::to_vec(tools)
        .map_err(|err| Error::internal(format!("serialising the tool list failed: {err}")))?
        .len() as u64;
    let set_hash = set_hash(hashes.values());
    Ok(SideDigest {
        hashes,
        input_hashes,
        set_hash,
        size: Size {
            description_characters,
            tools_list_bytes,
            definition_bytes,
        },
    })
}

/// Builds the export of one side from what its server listed: the raw tools plus their hashes
/// and sizes. Fails (INVALID) on a listing [`digest_tools`] refuses.
pub fn assemble_export(
    listing: RawListing,
    probe: ProbeProfile,
    source: ExportSource,
) -> Result<Export> {
    let digest = digest_tools(&listing.tools)?;
    Ok(Export {
        schema_version: EXPORT_SCHEMA_VERSION,
        server_name: listing.server_name,
        server_version: listing.server_version,
        protocol_version: listing.protocol_version,
        era: listing.era,
        probe,
        instructions: listing.instructions,
        tools: listing.tools,
        hashes: digest.hashes,
        input_hashes: digest.input_hashes,
        set_hash: digest.set_hash,
        size: digest.size,
        source,
        warnings: listing.warnings,
    })
}

/// Recomputes every hash and size of `export` from its `tools` and refuses the export when any
/// stored value differs, naming each difference. An export read back from a file is only
/// trusted after this (a hand-edited or truncated file must not decide a gate).
pub fn verify_export(export: &Export) -> Result<()> {
    if export.schema_version != EXPORT_SCHEMA_VERSION {
        return Err(Error::new(
            Stage::Digest,
            format!(
                "the export has format version {}, this tdqs-gate reads version {}",
                export.schema_version, EXPORT_SCHEMA_VERSION
            ),
        )
        .with_advice("re-create the export with this tdqs-gate: `tdqs-gate export -o FILE`"));
    }
    let digest = digest_tools(&export.tools)
        .map_err(|err| err.context("the export's tool list is not valid"))?;
    let mut mismatches = Vec::new();
    compare_maps("hashes", &export.hashes, &digest.hashes, &mut mismatches);
    compare_maps(
        "inputHashes",
        &export.input_hashes,
        &digest.input_hashes,
        &mut mismatches,
    );
    if export.set_hash != digest.set_hash {
        mismatches.push(format!(
            "setHash is {} but the tools give {}",
            export.set_hash, digest.set_hash
        ));
    }
    if export.size.description_characters != digest.size.description_characters {
        mismatches.push(format!(
            "size.descriptionCharacters is {} but the tools give {}",
            export.size.description_characters, digest.size.description_characters
        ));
    }
    if export.size.tools_list_bytes != digest.size.tools_list_bytes {
        mismatches.push(format!(
            "size.toolsListBytes is {} but the tools give {}",
            export.size.tools_list_bytes, digest.size.tools_list_bytes
        ));
    }
    compare_maps(
        "size.definitionBytes",
        &export.size.definition_bytes,
        &digest.size.definition_bytes,
        &mut mismatches,
    );
    if mismatches.is_empty() {
        return Ok(());
    }
    let first = &mismatches[0];
    let more = match mismatches.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Err(Error::new(
        Stage::Digest,
        format!("the export does not match its own tools: {first}{more}"),
    )
    .with_detail("differences", mismatches.join("\n"))
    .with_advice(
        "the file was edited after it was written, or written by another program; re-create it \
         with `tdqs-gate export -o FILE` instead of editing it",
    ))
}

fn compare_maps<V: PartialEq + std::fmt::Display>(
    label: &str,
    stored: &BTreeMap<String, V>,
    computed: &BTreeMap<String, V>,
    mismatches: &mut Vec<String>,
) {
    for (name, value) in computed {
        match stored.get(name) {
            None => mismatches.push(format!("{label} has no entry for tool `{name}`")),
            Some(found) if found != value => mismatches.push(format!(
                "{label}[`{name}`] is {found} but the tool gives {value}"
            )),
            Some(_) => {}
        }
    }
    for name in stored.keys() {
        if !computed.contains_key(name) {
            mismatches.push(format!(
                "{label} names `{name}`, which is not among the tools"
            ));
        }
    }
}

/// The names of `tools` in listing order, after the checks [`digest_tools`] documents.
pub(crate) fn tool_names(tools: &[Value]) -> Result<Vec<&str>> {
    let mut names = Vec::with_capacity(tools.len());
    let mut faults = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        let position = index + 1;
        match tool {
            Value::Object(object) => match object.get("name") {
                Some(Value::String(name)) if !name.is_empty() => names.push(name.as_str()),
                Some(Value::String(_)) => {
                    faults.push(format!("tool #{position} has an empty name"))
                }
                Some(other) => faults.push(format!(
                    "tool #{position} has a `name` that is {}, not a string",
                    json_kind(other)
                )),
                None => faults.push(format!("tool #{position} has no `name`")),
            },
            other => faults.push(format!(
                "tool #{position} is {}, not an object",
                json_kind(other)
            )),
        }
    }
    if !faults.is_empty() {
        return Err(Error::new(
            Stage::Export,
            format!(
                "the server listed {} tool(s) without a usable name: {}",
                faults.len(),
                faults.join("; ")
            ),
        )
        .with_advice(
            "every tool in `tools/list` must be an object with a non-empty string `name` (MCP \
             requires it); fix the server's tool registration",
        ));
    }

    let mut positions: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, name) in names.iter().enumerate() {
        positions.entry(name).or_default().push(index + 1);
    }
    let mut duplicates: Vec<(&str, Vec<usize>)> = positions
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .collect();
    if !duplicates.is_empty() {
        duplicates.sort();
        let listed: Vec<String> = duplicates
            .iter()
            .map(|(name, at)| {
                let at: Vec<String> = at.iter().map(|p| format!("#{p}")).collect();
                format!("`{name}` (tools {})", at.join(", "))
            })
            .collect();
        return Err(Error::new(
            Stage::Export,
            format!(
                "the server listed the same tool name more than once: {}",
                listed.join(", ")
            ),
        )
        .with_advice(
            "tool names must be unique within a server (hosts call tools by name); rename or \
             remove the duplicate registrations",
        ));
    }
    Ok(names)
}

/// What a JSON value is, for messages ("a string", "an array").
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A tool's `name`, or `""` when it has none (the digest stage refuses such tools; judges and
/// the linter only need a label).
pub fn tool_name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listing(tools: Vec<Value>) -> RawListing {
        RawListing {
            server_name: Some("demo".into()),
            server_version: Some("1.0.0".into()),
            protocol_version: "2025-11-25".into(),
            tools,
            ..RawListing::default()
        }
    }

    #[test]
    fn the_canonical_definition_has_six_fields_and_nulls_for_absent_ones() {
        let tool = json!({"name": "ping", "description": "Check.", "_meta": {"x": 1}, "icons": []});
        assert_eq!(
            String::from_utf8(canonical_definition_bytes(&tool)).unwrap(),
            r#"{"annotations":null,"description":"Check.","inputSchema":null,"name":"ping","outputSchema":null,"title":null}"#
        );
    }

    #[test]
    fn hashes_match_python_hashlib() {
        // hashlib.sha256(json.dumps({...six fields...}, sort_keys=True, separators=(",", ":"),
        // ensure_ascii=False).encode()).hexdigest() in CPython 3.11.
        let tool = json!({"name": "ping", "description": "Check.", "_meta": {"x": 1}});
        let hash = definition_hash(&tool);
        assert_eq!(
            hash,
            "36ed21f4f3c68a7c075c88a71d8162147972b0471da94413bb980ca5ac26659e"
        );
        assert_eq!(input_hash(&tool), &hash[..16]);
    }

    #[test]
    fn set_hash_ignores_order_and_joins_with_newlines() {
        let a = "a".repeat(64);
        let b = "b".repeat(64);
        let expected = sha256_hex(format!("{a}\n{b}").as_bytes());
        assert_eq!(set_hash([&b, &a]), expected);
        assert_eq!(set_hash([&a, &b]), expected);
        assert_eq!(set_hash(Vec::<String>::new()), sha256_hex(b""));
    }

    #[test]
    fn assemble_measures_characters_and_bytes() {
        let tools = vec![
            json!({"name": "read_greeting", "description": "Grüße, µs."}),
            json!({"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}),
        ];
        let export = assemble_export(
            listing(tools.clone()),
            ProbeProfile::default(),
            ExportSource::default(),
        )
        .expect("valid listing");
        assert_eq!(export.size.description_characters, 15);
        assert_eq!(
            export.size.tools_list_bytes,
            serde_json::to_vec(&tools).unwrap().len() as u64
        );
        assert_eq!(
            export.size.definition_bytes["ping"],
            canonical_definition_bytes(&tools[1]).len() as u64
        );
        assert_eq!(export.hashes["ping"], definition_hash(&tools[1]));
        assert_eq!(export.input_hashes["ping"], export.hashes["ping"][..16]);
        assert_eq!(export.set_hash, set_hash(export.hashes.values()));
        assert_eq!(export.tools, tools);
        verify_export(&export).expect("a fresh export verifies");
    }

    #[test]
    fn listings_without_usable_names_are_refused_with_every_fault_named() {
        let err = digest_tools(&[
            json!({"name": "ok"}),
            json!({"description": "no name"}),
            json!({"name": ""}),
            json!({"name": 7}),
            json!("not a tool"),
        ])
        .unwrap_err();
        assert_eq!(err.stage, Stage::Export);
        for part in [
            "4 tool(s)",
            "tool #2 has no `name`",
            "tool #3 has an empty name",
            "tool #4 has a `name` that is a number",
            "tool #5 is a string, not an object",
        ] {
            assert!(
                err.cause.contains(part),
                "{part} missing from {}",
                err.cause
            );
        }
        assert!(err.advice.is_some());
    }

    #[test]
    fn duplicate_names_are_refused_naming_each_and_its_positions() {
        let err = digest_tools(&[
            json!({"name": "b"}),
            json!({"name": "a"}),
            json!({"name": "b", "description": "again"}),
            json!({"name": "a"}),
            json!({"name": "c"}),
        ])
        .unwrap_err();
        assert!(err.cause.contains("`a` (tools #2, #4)"), "{}", err.cause);
        assert!(err.cause.contains("`b` (tools #1, #3)"), "{}", err.cause);
        assert!(!err.cause.contains("`c`"));
    }

    #[test]
    fn verify_names_each_tampered_value() {
        let tools = vec![
            json!({"name": "a", "description": "A."}),
            json!({"name": "b"}),
        ];
        let mut export = assemble_export(
            listing(tools),
            ProbeProfile::default(),
            ExportSource::default(),
        )
        .unwrap();
        export.tools[0]["description"] = json!("A, edited.");
        export.size.tools_list_bytes += 1;
        export.hashes.insert("ghost".into(), "0".repeat(64));
        let err = verify_export(&export).unwrap_err();
        assert_eq!(err.stage, Stage::Digest);
        let details = &err.details[0].1;
        for part in [
            "hashes[`a`] is",
            "inputHashes[`a`] is",
            "setHash is",
            "size.descriptionCharacters is 2 but the tools give 10",
            "size.toolsListBytes is",
            "size.definitionBytes[`a`] is",
            "hashes names `ghost`",
        ] {
            assert!(details.contains(part), "{part} missing from {details}");
        }
        assert!(!details.contains("[`b`]"), "b is intact: {details}");
    }

    #[test]
    fn verify_refuses_another_format_version() {
        let mut export = assemble_export(
            listing(vec![]),
            ProbeProfile::default(),
            ExportSource::default(),
        )
        .unwrap();
        export.schema_version = EXPORT_SCHEMA_VERSION + 1;
        let err = verify_export(&export).unwrap_err();
        assert!(err.cause.contains("format version"));
    }
}
