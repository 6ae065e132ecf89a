//! Speed of the synthetic selector: indexing a tool set and selecting for one request, on the
//! largest corpus server (`@zereight/mcp-gitlab`, 262 tools) and a small one (`mcp-server-git`).
//!
//! `cargo bench -p tdqs-core --bench synthetic_selector` (std timing, no harness: medians of
//! several rounds). docs/eval.md quotes the figures.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use tdqs_core::eval::synthetic::SyntheticSelector;

fn tools(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/corpus")
        .join(file);
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    export["tools"].as_array().unwrap().clone()
}

const REQUESTS: &[&str] = &[
    "List the open merge requests of project atlas assigned to me",
    "Create a new branch called hotfix-12 from main",
    "What changed in commit a1b2c3d?",
    "Close issue 42 in the web project, it is fixed",
    "Book a meeting room for Friday at 3pm",
    "Show the pipeline jobs that failed on main yesterday",
    "Add a comment on merge request 7 saying the review is done",
    "Which labels exist in the group frontend?",
];

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    for (file, rounds) in [("gitlab.json", 15), ("git.json", 51)] {
        let tools = tools(file);
        let mut index_times = Vec::new();
        let mut select_times = Vec::new();
        for _ in 0..rounds {
            let started = Instant::now();
            let selector = SyntheticSelector::new(&tools);
            index_times.push(started.elapsed());
            let started = Instant::now();
            for request in REQUESTS {
                std::hint::black_box(selector.select(request));
            }
            select_times.push(started.elapsed() / REQUESTS.len() as u32);
        }
        println!(
            "{file:<12} {:>4} tools   index {:>9.1?}   select {:>9.1?} per request   (medians of {rounds})",
            tools.len(),
            median(index_times),
            median(select_times)
        );
    }
}
