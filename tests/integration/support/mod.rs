//! Helpers shared by the integration test modules.
// Each test module uses a different subset of the helpers.
#![allow(dead_code)]

pub mod chromium;
pub mod gitrepo;
pub mod skips;

/// The pid files the fake server has finished writing in `dir`. It writes `NAME.tmp` and renames
/// it to `NAME`, so a `.tmp` entry is one still being written and is not counted.
pub fn written_pid_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|ext| ext != "tmp"))
        .collect()
}

/// The pids in `dir`'s finished pid files (see [`written_pid_files`]; a file may hold several,
/// separated by white space), once `files` of them each hold at least one, polling for up to
/// `limit`; `None` if they never do. The bound is generous for a loaded machine: the poll ends as
/// soon as the pids are there.
pub fn wait_for_pids(
    dir: &std::path::Path,
    files: usize,
    limit: std::time::Duration,
) -> Option<Vec<i64>> {
    let read = || -> Option<Vec<i64>> {
        let paths = written_pid_files(dir);
        if paths.len() != files {
            return None;
        }
        let mut pids = Vec::new();
        for path in paths {
            let text = std::fs::read_to_string(path).ok()?;
            let numbers: Vec<i64> = text
                .split_whitespace()
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?;
            if numbers.is_empty() {
                return None;
            }
            pids.extend(numbers);
        }
        Some(pids)
    };
    let start = std::time::Instant::now();
    loop {
        if let Some(pids) = read() {
            return Some(pids);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// Writes an executable `/bin/sh` launcher at `at` that runs `program` with its arguments: a file
/// of its own (replacing it touches nothing else) that costs a few bytes where a copy of a debug
/// build costs hundreds of megabytes.
pub fn write_launcher(at: &std::path::Path, program: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let quoted = program.display().to_string().replace('\'', r"'\''");
    std::fs::write(at, format!("#!/bin/sh\nexec '{quoted}' \"$@\"\n")).unwrap();
    std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Writes an export file `dir/file` of `tools` as a server named `server` would list them (the
/// hashes computed as the gate computes them), for tests that gate ready-made exports.
pub fn write_export(
    dir: &std::path::Path,
    file: &str,
    server: &str,
    tools: Vec<serde_json::Value>,
) -> std::path::PathBuf {
    use tdqs_core::export::{ExportSource, ProbeProfile, RawListing};
    let listing = RawListing {
        server_name: Some(server.to_string()),
        server_version: Some("1".to_string()),
        protocol_version: "2025-11-25".to_string(),
        tools,
        ..Default::default()
    };
    let export = tdqs_core::digest::assemble_export(
        listing,
        ProbeProfile::default(),
        ExportSource::default(),
    )
    .expect("export");
    let path = dir.join(file);
    std::fs::write(&path, serde_json::to_vec_pretty(&export).unwrap()).unwrap();
    path
}

/// Runs `tdqs-gate lint` with `args` in `dir` (an empty folder: no tdqs-gate.toml applies).
pub fn lint(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tdqs-gate-dup"))
        .current_dir(dir)
        .arg("lint")
        .args(args)
        .output()
        .unwrap()
}
