//! A given export file (`--base-export`, `--head-export`, `score --export`) may hold three times
//! the listing limit a server would get: `--max-listing-bytes`, else the settings revision's
//! `max-listing-bytes`, else the default (32 MiB, so 96 MiB). A fixed 96 MiB refused a file
//! that a raised limit had let the gate write, and read far more than a lowered one allows.
//! The export folders of the Action's scoring job (`--base-exports`/`--head-exports`) follow
//! the same limit.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::gate::harness::{base_tools, Run, Setup};

/// The base tools with one description long enough that an export is over 3 KiB, the most a
/// file may hold under the smallest listing limit (1 KiB).
fn long_tools() -> Value {
    let mut tools = base_tools();
    tools[0]["description"] = json!("Looks the thing up and returns it. ".repeat(120));
    tools
}

/// The same tools exported from `main` and from the working tree (no judge is needed).
fn two_exports(setup: &Setup) -> (PathBuf, PathBuf) {
    let (base, head) = setup.export_base_and_head(setup.work());
    let size = std::fs::metadata(&head).unwrap().len();
    assert!(size > 3 * 1024, "the export is only {size} bytes");
    (base, head)
}

fn gate_on_files(setup: &Setup, base: &Path, head: &Path, extra: &[&str]) -> Run {
    let args = setup.export_file_args(base, head, extra);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    setup.run(&refs)
}

fn assert_refused_as_too_large(run: &Run) {
    run.assert_code(2);
    assert!(
        run.stderr.contains("larger than 3072 bytes"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("--max-listing-bytes"),
        "the advice names the flag: {}",
        run.describe()
    );
}

#[test]
fn the_export_file_limit_follows_the_command_lines_listing_limit() {
    let setup = Setup::new(&long_tools());
    let (base, head) = two_exports(&setup);
    gate_on_files(&setup, &base, &head, &[]).assert_code(0);
    assert_refused_as_too_large(&gate_on_files(
        &setup,
        &base,
        &head,
        &["--max-listing-bytes", "1024"],
    ));
    // `score --export` reads its file under the same limit.
    let mut args = vec![
        "score".to_string(),
        "--export".to_string(),
        head.display().to_string(),
        "--max-listing-bytes".to_string(),
        "1024".to_string(),
    ];
    args.extend(setup.judge_args());
    assert_refused_as_too_large(&setup.run_raw(&args, setup.work().into(), |_| {}));
}

#[test]
fn the_export_file_limit_follows_the_settings_revisions_listing_limit() {
    let setup = Setup::new(&long_tools());
    let (base, head) = two_exports(&setup);
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nmax-listing-bytes = 1024\n",
    );
    setup.repo.commit_all("a small listing limit");
    assert_refused_as_too_large(&gate_on_files(
        &setup,
        &base,
        &head,
        &["--settings-rev", "main"],
    ));
    // The command line wins over the settings, as for a server's listing.
    gate_on_files(
        &setup,
        &base,
        &head,
        &["--settings-rev", "main", "--max-listing-bytes", "65536"],
    )
    .assert_code(0);
    // Without a settings revision the defaults apply.
    gate_on_files(&setup, &base, &head, &[]).assert_code(0);
}

/// The two exports as the export folders the Action's scoring job reads (`NAME.json` each).
fn as_folders(setup: &Setup, base: &Path, head: &Path) -> (PathBuf, PathBuf) {
    let folders = (
        setup.work().join("folders/base"),
        setup.work().join("folders/head"),
    );
    for (file, folder) in [(base, &folders.0), (head, &folders.1)] {
        std::fs::create_dir_all(folder).unwrap();
        std::fs::copy(file, folder.join("api.json")).unwrap();
    }
    folders
}

#[test]
fn export_folders_follow_the_same_limit_as_export_files() {
    let setup = Setup::new(&long_tools());
    let (base, head) = two_exports(&setup);
    let (base_dir, head_dir) = as_folders(&setup, &base, &head);
    crate::export_dirs::gate_folders(&setup, &base_dir, &head_dir, &[]).assert_code(0);
    let refused = crate::export_dirs::gate_folders(
        &setup,
        &base_dir,
        &head_dir,
        &["--max-listing-bytes", "1024"],
    );
    assert_refused_as_too_large(&refused);
    assert!(
        !refused.stderr.contains("panicked"),
        "{}",
        refused.describe()
    );
    // The settings revision's limit applies to the folders too.
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nmax-listing-bytes = 1024\n",
    );
    setup.repo.commit_all("a small listing limit");
    assert_refused_as_too_large(&crate::export_dirs::gate_folders(
        &setup,
        &base_dir,
        &head_dir,
        &["--settings-rev", "main"],
    ));
}
