//! The release archives: `scripts/release-archive.sh` (run by .github/workflows/release.yml for
//! every target) makes the names, layout and checksum files that the Action's `version:` input
//! downloads, and refuses an executable whose version is not the tag's.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "x86_64-unknown-linux-gnu";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace's version, which tdqs-gate carries (this test crate has its own).
fn workspace_version() -> String {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let manifest: toml::Value = toml::from_str(&manifest).unwrap();
    manifest["workspace"]["package"]["version"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A stand-in executable that answers `--version` as tdqs-gate `reports` would: the archive
/// steps are the same for it, and it packs in a moment (a debug tdqs-gate is over 100 MB).
fn stand_in(dir: &Path, reports: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("tdqs-gate");
    std::fs::write(&path, format!("#!/bin/sh\necho 'tdqs-gate {reports}'\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn package(out: &Path, version: &str, binary: &Path) -> std::process::Output {
    Command::new("bash")
        .arg(repo_root().join("scripts/release-archive.sh"))
        .args(["--target", TARGET, "--version", version, "--binary"])
        .arg(binary)
        .arg("--out")
        .arg(out)
        .output()
        .expect("bash runs")
}

#[test]
fn the_release_archive_has_the_name_layout_and_checksum_the_action_downloads() {
    let version = workspace_version();
    let bin = tempfile::tempdir().unwrap();
    let binary = stand_in(bin.path(), &version);
    let out = tempfile::tempdir().unwrap();
    let made = package(out.path(), &format!("v{version}"), &binary);
    assert!(made.status.success(), "{made:?}");
    let name = format!("tdqs-gate-v{version}-{TARGET}");
    let archive = out.path().join(format!("{name}.tar.gz"));
    let sum = out.path().join(format!("{name}.tar.gz.sha256"));
    assert!(archive.is_file() && sum.is_file());

    let check = Command::new("sha256sum")
        .args(["-c", &format!("{name}.tar.gz.sha256")])
        .current_dir(out.path())
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");

    let unpacked = tempfile::tempdir().unwrap();
    let tar = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .unwrap();
    assert!(tar.success());
    let folder = unpacked.path().join(&name);
    for file in ["tdqs-gate", "README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(folder.join(file).is_file(), "{file} is in the archive");
    }
    let reported = Command::new(folder.join("tdqs-gate"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&reported.stdout).trim(),
        format!("tdqs-gate {version}")
    );

    // The same executable gives the same archive (GNU tar here): a re-run of the release job
    // can be compared with what was published.
    let again = tempfile::tempdir().unwrap();
    assert!(package(again.path(), &version, &binary).status.success());
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        std::fs::read(again.path().join(format!("{name}.tar.gz"))).unwrap()
    );
}

#[test]
fn an_executable_of_another_version_is_not_packaged() {
    let bin = tempfile::tempdir().unwrap();
    let binary = stand_in(bin.path(), &workspace_version());
    let out = tempfile::tempdir().unwrap();
    let made = package(out.path(), "99.0.0", &binary);
    assert_eq!(made.status.code(), Some(1), "{made:?}");
    let stderr = String::from_utf8_lossy(&made.stderr);
    assert!(stderr.contains("expected 'tdqs-gate 99.0.0'"), "{stderr}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

#[test]
fn the_release_workflow_builds_every_target_the_action_can_download() {
    let workflow =
        std::fs::read_to_string(repo_root().join(".github/workflows/release.yml")).unwrap();
    let entrypoint = std::fs::read_to_string(repo_root().join("action/entrypoint.sh")).unwrap();
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(workflow.contains(&format!("target: {target}")), "{target}");
        assert!(entrypoint.contains(target), "the Action knows {target}");
    }
    assert!(workflow.contains("scripts/release-archive.sh"));
}

#[test]
fn the_packages_are_ready_for_cargo_install() {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let manifest: toml::Value = toml::from_str(&manifest).unwrap();
    let workspace = &manifest["workspace"]["package"];
    for key in ["license", "repository", "homepage"] {
        assert!(workspace.get(key).is_some(), "workspace.package.{key}");
    }
    let dep = &manifest["dependencies"]["tdqs-core"];
    assert!(
        dep.get("version").is_some(),
        "a published tdqs-gate needs tdqs-core by version"
    );
    let core = std::fs::read_to_string(repo_root().join("crates/tdqs-core/Cargo.toml")).unwrap();
    assert!(!core.contains("publish = false"));
    // Everything tdqs-core embeds lies inside its own package.
    let pins = repo_root().join("crates/tdqs-core/pins/version.json");
    assert_eq!(
        std::fs::read(&pins).unwrap(),
        std::fs::read(repo_root().join("tdqs/version.json")).unwrap()
    );
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(repo_root().join(license).is_file());
        assert!(repo_root().join("crates/tdqs-core").join(license).is_file());
    }
}
