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

/// Writes an executable `/bin/sh` launcher at `at` that runs `program` with its arguments: a file
/// of its own (replacing it touches nothing else) that costs a few bytes where a copy of a debug
/// build costs hundreds of megabytes.
pub fn write_launcher(at: &std::path::Path, program: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let quoted = program.display().to_string().replace('\'', r"'\''");
    std::fs::write(at, format!("#!/bin/sh\nexec '{quoted}' \"$@\"\n")).unwrap();
    std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755)).unwrap();
}
