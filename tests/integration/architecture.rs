//! The crate boundaries of docs/architecture.md, checked against Cargo.lock: the pure core
//! reaches no async runtime, git, HTTP, TLS or temporary-file crate, even transitively. (`libc`
//! is reached through sha2's CPU-feature detection, which does no I/O.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Package name → names of its dependencies, from the workspace's Cargo.lock.
fn lock_graph() -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("Cargo.lock")).expect("Cargo.lock is readable");
    let lock: toml::Value = toml::from_str(&text).expect("Cargo.lock is TOML");
    let mut graph = BTreeMap::new();
    for package in lock["package"].as_array().expect("[[package]] tables") {
        let name = package["name"].as_str().expect("package name").to_string();
        let deps: Vec<String> = package
            .get("dependencies")
            .and_then(|d| d.as_array())
            .map(|deps| {
                deps.iter()
                    // An entry is `name` or `name version` when several versions are locked.
                    .filter_map(|d| d.as_str()?.split(' ').next().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        graph.entry(name).or_insert_with(Vec::new).extend(deps);
    }
    graph
}

fn closure(graph: &BTreeMap<String, Vec<String>>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.to_string()];
    while let Some(name) = stack.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        stack.extend(graph.get(&name).into_iter().flatten().cloned());
    }
    seen
}

#[test]
fn the_core_crate_depends_on_no_io_crate() {
    let graph = lock_graph();
    assert!(
        graph.contains_key("tdqs-core"),
        "tdqs-core is in Cargo.lock"
    );
    let reached = closure(&graph, "tdqs-core");
    let forbidden = [
        "tokio",
        "git2",
        "reqwest",
        "tempfile",
        "dirs",
        "hyper",
        "mio",
        "rustls",
        "tdqs-gate",
    ];
    let found: Vec<&str> = forbidden
        .into_iter()
        .filter(|name| reached.contains(*name))
        .collect();
    assert!(found.is_empty(), "tdqs-core reaches {found:?}");
}

#[test]
fn the_engine_builds_on_the_core() {
    let graph = lock_graph();
    assert!(closure(&graph, "tdqs-gate").contains("tdqs-core"));
}
