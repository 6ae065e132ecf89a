//! The digest stage against CPython: canonical bytes, definition hashes and set hashes equal
//! the vectors `tests/fixtures/digest/make_vectors.py` wrote with Python's json module; export
//! files round-trip, are written atomically and refuse tampering.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use tdqs_core::digest::{self, canonical::to_canonical_string, diff_exports};
use tdqs_core::error::Stage;
use tdqs_core::export::{Export, ExportSource, ProbeProfile, RawListing};
use tdqs_core::spec::signals::context_signals;
use tdqs_gate::export::file::{read_export, write_export};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/digest")
}

fn vectors() -> Value {
    let text = std::fs::read_to_string(fixtures().join("vectors.json"))
        .expect("vectors.json is committed");
    serde_json::from_str(&text).expect("vectors.json is JSON")
}

fn field<'v>(vector: &'v Value, key: &str) -> &'v str {
    vector[key]
        .as_str()
        .unwrap_or_else(|| panic!("vector {} has no string {key}", vector["name"]))
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|err| panic!("vector input {text:?} is not JSON: {err}"))
}

#[test]
fn canonical_bytes_equal_pythons_for_every_vector() {
    let vectors = vectors();
    let cases = vectors["canonical"].as_array().expect("canonical vectors");
    assert!(cases.len() >= 30, "the vector file holds the full set");
    let mut failures = Vec::new();
    for vector in cases {
        let ours = to_canonical_string(&parse(field(vector, "input")));
        if ours != field(vector, "canonical") {
            failures.push(format!(
                "{}:\n  python {}\n  ours   {ours}",
                vector["name"],
                field(vector, "canonical")
            ));
        } else if digest::sha256_hex(ours.as_bytes()) != field(vector, "sha256") {
            failures.push(format!("{}: sha256 differs", vector["name"]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} vectors differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn definition_hashes_equal_pythons() {
    let vectors = vectors();
    for vector in vectors["definitions"]
        .as_array()
        .expect("definition vectors")
    {
        let tool = parse(field(vector, "tool"));
        let canonical = digest::canonical_definition_bytes(&tool);
        assert_eq!(
            String::from_utf8(canonical.clone()).unwrap(),
            field(vector, "canonical"),
            "{}",
            vector["name"]
        );
        assert_eq!(
            digest::definition_hash(&tool),
            field(vector, "definitionHash")
        );
        assert_eq!(digest::input_hash(&tool), field(vector, "inputHash"));
        assert_eq!(
            Some(canonical.len() as u64),
            vector["definitionBytes"].as_u64()
        );
        let signals = context_signals(&tool);
        assert_eq!(signals.input_hash, field(vector, "inputHash"));
        assert_eq!(
            Some(signals.definition_bytes),
            vector["definitionBytes"].as_u64()
        );
    }
}

#[test]
fn key_order_never_moves_a_definition_hash() {
    let vectors = vectors();
    let hash_of = |name: &str| {
        vectors["definitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .map(|v| digest::definition_hash(&parse(field(v, "tool"))))
            .unwrap()
    };
    assert_eq!(hash_of("key-order-a"), hash_of("key-order-b"));
}

#[test]
fn set_hashes_equal_pythons_and_ignore_listing_order() {
    let vectors = vectors();
    for vector in vectors["sets"].as_array().expect("set vectors") {
        let tools: Vec<Value> = vector["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|text| parse(text.as_str().unwrap()))
            .collect();
        let expected = field(vector, "setHash");
        assert_eq!(
            digest::set_hash(tools.iter().map(digest::definition_hash)),
            expected,
            "{}",
            vector["name"]
        );
        let export = export_of(tools);
        assert_eq!(export.set_hash, expected, "{}", vector["name"]);
    }
}

/// The committed vectors are what the committed script writes, so neither was edited alone.
#[test]
fn the_vector_file_is_what_the_script_writes() {
    let script = fixtures().join("make_vectors.py");
    let output = match Command::new("python3")
        .arg(&script)
        .arg("--stdout")
        .output()
    {
        Ok(output) => output,
        Err(err) => {
            let message = format!("python3 is needed to regenerate the digest vectors: {err}");
            crate::support::skips::skip(&message);
            return;
        }
    };
    assert!(
        output.status.success(),
        "make_vectors.py failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let committed = std::fs::read(fixtures().join("vectors.json")).unwrap();
    assert!(
        output.stdout == committed,
        "vectors.json is stale: run `python3 tests/fixtures/digest/make_vectors.py`"
    );
}

fn listing(tools: Vec<Value>) -> RawListing {
    RawListing {
        server_name: Some("notes".into()),
        server_version: Some("2.1.0".into()),
        protocol_version: "2025-11-25".into(),
        instructions: Some("Use search first.".into()),
        tools,
        warnings: vec!["1 non-JSON line on stdout".into()],
        ..RawListing::default()
    }
}

fn export_of(tools: Vec<Value>) -> Export {
    let source = ExportSource {
        revision: Some("HEAD~1".into()),
        command: vec!["python".into(), "{root}/server.py".into()],
        ..ExportSource::default()
    };
    digest::assemble_export(listing(tools), ProbeProfile::default(), source)
        .expect("a valid listing")
}

fn sample_tools() -> Vec<Value> {
    vec![
        json!({"name": "search", "description": "Search notes. ✓", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer", "maximum": 1e16}}, "required": ["q"]}, "_meta": {"z": 1, "a": 2}}),
        json!({"name": "get_note", "title": "Get note", "description": "Read one note.", "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}, "annotations": {"readOnlyHint": true}}),
    ]
}

#[test]
fn an_export_file_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("base.json");
    let export = export_of(sample_tools());
    write_export(&path, &export).unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.ends_with("}\n") && !text.ends_with("\n\n"),
        "pretty JSON with one trailing newline"
    );
    assert!(
        text.contains("\n  \"setHash\": "),
        "pretty-printed camelCase keys"
    );
    // Raw tools keep the server's key order.
    assert!(text.find("\"z\": 1").unwrap() < text.find("\"a\": 2").unwrap());

    let read = read_export(&path).unwrap();
    assert_eq!(read, export);
    // Nothing but the export is left in the directory.
    let entries: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["base.json"]);

    // Overwriting replaces the file whole.
    let smaller = export_of(sample_tools()[..1].to_vec());
    write_export(&path, &smaller).unwrap();
    assert_eq!(read_export(&path).unwrap(), smaller);
}

#[test]
fn a_tampered_export_file_is_refused_naming_the_file_and_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("head.json");
    write_export(&path, &export_of(sample_tools())).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("Read one note.", "Read one note, edited."),
    )
    .unwrap();

    let err = read_export(&path).unwrap_err();
    assert_eq!(err.stage, Stage::Digest);
    assert!(
        err.cause.contains(&path.display().to_string()),
        "{}",
        err.cause
    );
    assert!(err.cause.contains("hashes[`get_note`]"), "{}", err.cause);
    assert!(err.advice.as_deref().unwrap().contains("tdqs-gate export"));
}

#[test]
fn unreadable_export_files_name_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let err = read_export(&missing).unwrap_err();
    assert!(err.cause.contains("missing.json"), "{}", err.cause);
    assert!(err.advice.is_some());

    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"schemaVersion\": 1,").unwrap();
    let err = read_export(&garbage).unwrap_err();
    assert!(
        err.cause.contains("garbage.json") && err.cause.contains("invalid JSON"),
        "{}",
        err.cause
    );

    let other_version = dir.path().join("v9.json");
    std::fs::write(&other_version, "{\"schemaVersion\": 9}").unwrap();
    let err = read_export(&other_version).unwrap_err();
    assert!(err.cause.contains("format version 9"), "{}", err.cause);

    let wrong_shape = dir.path().join("shape.json");
    std::fs::write(&wrong_shape, "{\"schemaVersion\": 1, \"tools\": []}").unwrap();
    let err = read_export(&wrong_shape).unwrap_err();
    assert!(
        err.cause.contains("not a tdqs-gate export"),
        "{}",
        err.cause
    );

    let nowhere = dir.path().join("no-such-dir").join("out.json");
    let err = write_export(&nowhere, &export_of(vec![])).unwrap_err();
    assert!(err.cause.contains("out.json"), "{}", err.cause);
    assert!(!dir.path().join("no-such-dir").exists());
}

#[test]
fn bad_listings_are_refused_before_anything_is_written() {
    let duplicate = digest::assemble_export(
        listing(vec![
            json!({"name": "search"}),
            json!({"name": "search", "description": "again"}),
        ]),
        ProbeProfile::default(),
        ExportSource::default(),
    )
    .unwrap_err();
    assert!(
        duplicate.cause.contains("`search` (tools #1, #2)"),
        "{}",
        duplicate.cause
    );
    assert!(duplicate.advice.is_some());

    let nameless = digest::assemble_export(
        listing(vec![json!({"title": "No name"})]),
        ProbeProfile::default(),
        ExportSource::default(),
    )
    .unwrap_err();
    assert!(
        nameless.cause.contains("tool #1 has no `name`"),
        "{}",
        nameless.cause
    );
}

#[test]
fn diff_of_exports_read_back_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let (base_path, head_path) = (dir.path().join("base.json"), dir.path().join("head.json"));
    let mut head_tools = sample_tools();
    head_tools[0]["_meta"] = json!({"a": 3});
    head_tools[1]["description"] = json!("Read one note by id.");
    head_tools.push(json!({"name": "delete_note", "annotations": {"destructiveHint": true}}));
    write_export(&base_path, &export_of(sample_tools())).unwrap();
    write_export(&head_path, &export_of(head_tools)).unwrap();

    let diff = diff_exports(
        &read_export(&base_path).unwrap(),
        &read_export(&head_path).unwrap(),
    );
    assert_eq!(diff.added, ["delete_note"]);
    assert!(diff.removed.is_empty());
    assert_eq!(diff.changed, ["get_note"]);
    assert_eq!(diff.unchanged, ["search"]);
    assert_eq!(diff.changed_outside_definition, ["search"]);
}
