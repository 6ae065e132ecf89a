//! The spec stage end to end: pins files, the README served by a loopback server, the cache,
//! the hash check, and rendering compared with Python (fixtures from
//! `tests/fixtures/spec/generate.py`). The README is a stand-in with the published layout and
//! placeholder grammar in its own words.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tdqs_core::error::{Error, Stage};
use tdqs_core::spec::extract::extract_prompts;
use tdqs_core::spec::pins::digest_value;
use tdqs_core::spec::signals::{ContextSignals, ShadowCandidate};
use tdqs_core::spec::{
    pretty_json, render_coherence_user, render_tool_user, Pins, PromptKey, Prompts,
};
use tdqs_gate::spec::{load_prompts, pins_from_file, FetchOptions, PromptSource};

use crate::loopback::{refused_url, Loopback, Response};

const COMMIT: &str = "b9881b0cfec88969e42672c92544487ca191a992";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/spec")
        .join(name)
}

fn standin_readme() -> String {
    std::fs::read_to_string(fixture("standin-readme.md")).unwrap()
}

fn readme_path() -> String {
    format!("/{COMMIT}/README.md")
}

/// The stand-in prompts as Python extracted them.
fn python_prompts() -> Prompts {
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("standin-prompts.json")).unwrap())
            .unwrap();
    let get = |key: &str| value[key].as_str().unwrap().to_string();
    Prompts {
        tool_system: get("tool_system"),
        tool_user: get("tool_user"),
        coherence_system: get("coherence_system"),
        coherence_user: get("coherence_user"),
    }
}

/// A test directory holding a pins file (the stand-in's hashes, `url_template` as the README
/// URL) and an empty cache root.
struct Setup {
    dir: tempfile::TempDir,
    pins: Pins,
}

impl Setup {
    fn new(url_template: &str) -> Setup {
        Setup::with_pins(url_template, |_| {})
    }

    fn with_pins(url_template: &str, edit: impl FnOnce(&mut Value)) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let mut record: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture("standin-pins.json")).unwrap())
                .unwrap();
        record["spec_url_template"] = Value::String(url_template.to_string());
        edit(&mut record);
        let path = dir.path().join("pins.json");
        std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
        let pins = pins_from_file(&path).unwrap();
        Setup { dir, pins }
    }

    fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    fn cache_file(&self) -> PathBuf {
        self.cache_dir()
            .join("tdqs-gate")
            .join(format!("{COMMIT}.md"))
    }

    fn options(&self) -> FetchOptions {
        FetchOptions {
            cache_dir: Some(self.cache_dir()),
            spec_url: None,
            timeout: Some(Duration::from_secs(10)),
        }
    }

    fn seed_cache(&self, text: &str) {
        std::fs::create_dir_all(self.cache_file().parent().unwrap()).unwrap();
        std::fs::write(self.cache_file(), text).unwrap();
    }

    /// File names in the cache directory (to find leftovers of an interrupted write).
    fn cache_entries(&self) -> Vec<String> {
        match std::fs::read_dir(self.cache_dir().join("tdqs-gate")) {
            Ok(entries) => {
                let mut names: Vec<String> = entries
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                names
            }
            Err(_) => Vec::new(),
        }
    }
}

fn serve_readme(text: String) -> Loopback {
    Loopback::routes(vec![("GET", &readme_path(), Response::ok(text))])
}

/// The stand-in README with one prompt block's text changed.
fn tampered(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "{from:?} is not in the stand-in README"
    );
    text.replacen(from, to, 1)
}

fn expect_spec_error(result: Result<tdqs_gate::spec::LoadedPrompts, Error>) -> Error {
    let err = result.expect_err("the prompts must be refused");
    assert_eq!(err.stage, Stage::Spec, "{}", err.render());
    assert!(err.advice.is_some(), "{}", err.render());
    err
}

#[tokio::test]
async fn fetches_verifies_and_caches_then_reads_only_the_cache() {
    let server = serve_readme(standin_readme());
    let setup = Setup::new(&server.url("/{commit}/README.md"));

    let first = load_prompts(&setup.pins, &setup.options()).await.unwrap();
    assert_eq!(first.provenance.source, PromptSource::Fetch);
    assert_eq!(first.provenance.url, server.url(&readme_path()));
    assert_eq!(first.prompts, python_prompts());
    assert!(first.warnings.is_empty(), "{:?}", first.warnings);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].path, readme_path());
    assert_eq!(
        std::fs::read_to_string(setup.cache_file()).unwrap(),
        standin_readme()
    );
    assert_eq!(setup.cache_entries(), vec![format!("{COMMIT}.md")]);

    let second = load_prompts(&setup.pins, &setup.options()).await.unwrap();
    assert_eq!(second.provenance.source, PromptSource::Cache);
    assert_eq!(second.prompts, first.prompts);
    assert_eq!(
        server.request_count(),
        1,
        "a valid cache must not touch the network"
    );
}

#[tokio::test]
async fn a_valid_cache_needs_no_server_at_all() {
    let setup = Setup::new(&refused_url("/{commit}/README.md"));
    setup.seed_cache(&standin_readme());
    let loaded = load_prompts(&setup.pins, &setup.options()).await.unwrap();
    assert_eq!(loaded.provenance.source, PromptSource::Cache);
    assert_eq!(loaded.provenance.cache_file, setup.cache_file());
    assert_eq!(loaded.prompts, python_prompts());

    // And with a live server, not a single request reaches it.
    let server = serve_readme(standin_readme());
    let options = FetchOptions {
        spec_url: Some(server.url("/{commit}/README.md")),
        ..setup.options()
    };
    load_prompts(&setup.pins, &options).await.unwrap();
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn a_corrupted_cache_is_fetched_again_once_and_replaced() {
    let server = serve_readme(standin_readme());
    let setup = Setup::new(&server.url("/{commit}/README.md"));
    let readme = standin_readme();
    setup.seed_cache(&tampered(
        &readme,
        "nested objects: {hasNestedObjects}",
        "nested: {hasNestedObjects}",
    ));

    let loaded = load_prompts(&setup.pins, &setup.options()).await.unwrap();
    assert_eq!(loaded.provenance.source, PromptSource::Refetch);
    let rejected = loaded.provenance.rejected_cache.clone().unwrap();
    assert!(rejected.contains("tool_user"), "{rejected}");
    assert_eq!(server.request_count(), 1);
    assert_eq!(std::fs::read_to_string(setup.cache_file()).unwrap(), readme);
    assert_eq!(setup.cache_entries(), vec![format!("{COMMIT}.md")]);

    // A truncated or non-UTF-8 cache is treated the same way.
    setup.seed_cache(&readme[..readme.len() / 2]);
    let loaded = load_prompts(&setup.pins, &setup.options()).await.unwrap();
    assert_eq!(loaded.provenance.source, PromptSource::Refetch);
    std::fs::write(setup.cache_file(), b"\xff\xfe not text").unwrap();
    let loaded = load_prompts(&setup.pins, &setup.options()).await.unwrap();
    assert_eq!(loaded.provenance.source, PromptSource::Refetch);
    assert_eq!(server.request_count(), 3);
    assert_eq!(
        load_prompts(&setup.pins, &setup.options())
            .await
            .unwrap()
            .provenance
            .source,
        PromptSource::Cache
    );
}

#[tokio::test]
async fn a_corrupted_cache_and_a_changed_upstream_fail_after_one_fetch() {
    let readme = standin_readme();
    let changed = tampered(
        &readme,
        "test double for a tool-set reviewer",
        "test double for a set reviewer",
    );
    let server = serve_readme(changed);
    let setup = Setup::new(&server.url("/{commit}/README.md"));
    let corrupted = tampered(
        &readme,
        "JSON only, please.\n```\n\n```text\nA third",
        "JSON only.\n```\n\n```text\nA third",
    );
    setup.seed_cache(&corrupted);

    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    assert!(err.cause.contains("coherence_system"), "{}", err.cause);
    assert_eq!(server.request_count(), 1, "exactly one new download");
    // The rejected download never replaces the cache.
    assert_eq!(
        std::fs::read_to_string(setup.cache_file()).unwrap(),
        corrupted
    );
}

#[tokio::test]
async fn a_prompt_that_does_not_match_its_hash_is_invalid_and_named() {
    let readme = standin_readme();
    let server = serve_readme(tampered(
        &readme,
        "Give every dimension a whole number",
        "Give each dimension a number",
    ));
    let setup = Setup::new(&server.url("/{commit}/README.md"));

    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    let expected = setup.pins.prompt_sha256().tool_system.clone();
    assert!(err.cause.contains("tool_system"), "{}", err.cause);
    assert!(
        err.cause.contains(&format!("expected sha256 {expected}")),
        "{}",
        err.cause
    );
    let served = extract_prompts(&server_text(&server)).unwrap();
    assert!(
        err.cause
            .contains(&format!("got {}", served.sha256(PromptKey::ToolSystem))),
        "{}",
        err.cause
    );
    assert!(
        !setup.cache_file().exists(),
        "a mismatching README must not be cached"
    );
    assert!(
        setup.cache_entries().is_empty(),
        "{:?}",
        setup.cache_entries()
    );
}

/// The README text the server answered with (fetched again directly, for the actual hash).
fn server_text(server: &Loopback) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
    write!(stream, "GET {} HTTP/1.1\r\nHost: x\r\n\r\n", readme_path()).unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply.split_once("\r\n\r\n").unwrap().1.to_string()
}

#[tokio::test]
async fn a_readme_without_the_blocks_is_invalid() {
    let readme = standin_readme();
    let server = serve_readme(tampered(
        &readme,
        "## Appendix B: Stand-in set judge",
        "## Appendix C: renamed",
    ));
    let setup = Setup::new(&server.url("/{commit}/README.md"));
    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    assert!(err.cause.contains("Appendix B"), "{}", err.cause);
}

#[tokio::test]
async fn an_unknown_placeholder_is_invalid_even_when_the_hashes_match() {
    // Pins that match an upstream text whose template gained a placeholder: the hash check
    // passes, the template check must not.
    let readme = tampered(
        &standin_readme(),
        "* with enums: {paramsWithEnums}",
        "* with enums: {paramsWithEnums}\n* bytes: {definitionBytes}\n* fresh: {freshnessDays}",
    );
    let changed = extract_prompts(&readme).unwrap();
    let server = serve_readme(readme);
    let setup = Setup::with_pins(&server.url("/{commit}/README.md"), |record| {
        record["prompt_sha256"]["tool_user"] = Value::String(changed.sha256(PromptKey::ToolUser));
    });
    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    assert!(err.cause.contains("tool_user"), "{}", err.cause);
    assert!(err.cause.contains("{definitionBytes}"), "{}", err.cause);
    assert!(!setup.cache_file().exists());

    let readme = tampered(
        &standin_readme(),
        "might lose to {cheaper} at {m}",
        "might lose to {cheaper} at {m} ({ratio})",
    );
    let changed = extract_prompts(&readme).unwrap();
    let server = serve_readme(readme);
    let setup = Setup::with_pins(&server.url("/{commit}/README.md"), |record| {
        record["prompt_sha256"]["coherence_user"] =
            Value::String(changed.sha256(PromptKey::CoherenceUser));
    });
    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    assert!(err.cause.contains("coherence_user"), "{}", err.cause);
    assert!(err.cause.contains("{ratio}"), "{}", err.cause);
}

#[tokio::test]
async fn a_network_failure_names_the_url_and_how_to_work_offline() {
    let url = refused_url("/{commit}/README.md");
    let setup = Setup::new(&url);
    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    let expanded = url.replace("{commit}", COMMIT);
    assert!(err.cause.contains(&expanded), "{}", err.cause);
    let advice = err.advice.clone().unwrap();
    assert!(advice.contains("--cache-dir"), "{advice}");
    assert!(advice.contains("--judge static"), "{advice}");
    assert!(advice.contains(&format!("{COMMIT}.md")), "{advice}");
    assert!(setup.cache_entries().is_empty());

    // A rejected cache is mentioned alongside.
    setup.seed_cache("not the specification");
    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    assert!(
        err.details
            .iter()
            .any(|(label, _)| label == "cached copy rejected"),
        "{}",
        err.render()
    );
}

#[tokio::test]
async fn an_http_error_status_is_invalid() {
    let server = Loopback::start(|_| Response::status(404, "gone"));
    let setup = Setup::new(&server.url("/{commit}/README.md"));
    let err = expect_spec_error(load_prompts(&setup.pins, &setup.options()).await);
    assert!(err.cause.contains("HTTP 404"), "{}", err.cause);
    assert!(
        err.cause.contains(&server.url(&readme_path())),
        "{}",
        err.cause
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Loopback::start(|_| Response::never());
    let setup = Setup::new(&server.url("/{commit}/README.md"));
    let options = FetchOptions {
        timeout: Some(Duration::from_millis(500)),
        ..setup.options()
    };
    let started = std::time::Instant::now();
    let err = expect_spec_error(load_prompts(&setup.pins, &options).await);
    // A bound for a loaded machine; the server never answers.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        err.cause.contains("no complete answer within"),
        "{}",
        err.cause
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn the_spec_url_option_replaces_the_pinned_template() {
    let server = serve_readme(standin_readme());
    let setup = Setup::new(&refused_url("/{commit}/README.md"));
    let options = FetchOptions {
        spec_url: Some(server.url("/{commit}/README.md")),
        ..setup.options()
    };
    let loaded = load_prompts(&setup.pins, &options).await.unwrap();
    assert_eq!(loaded.provenance.url, server.url(&readme_path()));
    assert_eq!(server.request_count(), 1);
}

#[test]
fn pins_from_a_file_are_marked_as_not_calibrated() {
    let setup = Setup::new("http://127.0.0.1:9/{commit}/README.md");
    assert!(!setup.pins.is_embedded());
    assert_eq!(setup.pins.model(), "claude-test-model");
    let warning = setup.pins.warning().unwrap();
    assert!(warning.contains("not the calibrated ones"), "{warning}");
    assert!(warning.contains(setup.pins.digest()), "{warning}");
    let embedded = Pins::embedded().unwrap();
    assert!(embedded.is_embedded());
    assert_ne!(embedded.digest(), setup.pins.digest());
}

#[test]
fn json_writers_match_python() {
    let vectors: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("json-vectors.json")).unwrap())
            .unwrap();
    assert!(vectors.len() >= 10);
    for vector in vectors {
        let input = vector["input"].as_str().unwrap();
        let value: Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            pretty_json(&value),
            vector["pretty"].as_str().unwrap(),
            "pretty {input}"
        );
        assert_eq!(
            digest_value(&value),
            vector["compactSortedSha256"].as_str().unwrap(),
            "compact sorted {input}"
        );
    }
}

#[test]
fn the_extraction_and_hashes_match_python() {
    let prompts = extract_prompts(&standin_readme()).unwrap();
    assert_eq!(prompts, python_prompts());
    let pins: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("standin-pins.json")).unwrap())
            .unwrap();
    for key in PromptKey::ALL {
        assert_eq!(
            prompts.sha256(key),
            pins["prompt_sha256"][key.name()].as_str().unwrap()
        );
    }
}

#[test]
fn rendering_the_standin_templates_matches_python() {
    let prompts = python_prompts();
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("render-vectors.json")).unwrap())
            .unwrap();
    let mut kinds = (0, 0);
    for case in cases {
        let expected = case["expected"].as_str().unwrap();
        let rendered = if case["kind"] == "tool" {
            kinds.0 += 1;
            let siblings: Vec<String> = serde_json::from_value(case["siblings"].clone()).unwrap();
            let signals: ContextSignals = serde_json::from_value(case["signals"].clone()).unwrap();
            render_tool_user(&prompts.tool_user, &case["tool"], &siblings, &signals).unwrap()
        } else {
            kinds.1 += 1;
            let tools: Vec<Value> = serde_json::from_value(case["tools"].clone()).unwrap();
            let signals: Vec<ContextSignals> =
                serde_json::from_value(case["signals"].clone()).unwrap();
            let candidates: Vec<ShadowCandidate> =
                serde_json::from_value(case["candidates"].clone()).unwrap();
            render_coherence_user(
                &prompts.coherence_user,
                case["serverName"].as_str().unwrap(),
                &tools,
                &signals,
                &candidates,
            )
            .unwrap()
        };
        assert_eq!(rendered, expected);
    }
    assert_eq!(kinds, (3, 2));
}
