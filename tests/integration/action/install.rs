//! How the Action gets its binary: a release archive downloaded and checked against its
//! checksum, or a source build reused from the cache under the digest of the same source.

use super::*;

/// A release archive of this build's binary, served like a GitHub release.
fn release_server(corrupt_checksum: bool) -> (Loopback, tempfile::TempDir) {
    let dir = temp();
    let target = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-gnu",
        ("linux", "aarch64") => "aarch64-unknown-linux-gnu",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        other => panic!("no release target for {other:?}"),
    };
    let gate_version = tdqs_gate_version();
    let staging = dir
        .path()
        .join(format!("tdqs-gate-v{gate_version}-{target}"));
    std::fs::create_dir_all(&staging).unwrap();
    // A launcher of this build stands in for the binary: what is tested is the download, the
    // checksum and the unpacking, and packing a debug build would move hundreds of megabytes.
    crate::support::write_launcher(&staging.join("tdqs-gate"), Path::new(GATE));
    let archive_name = format!("tdqs-gate-v{gate_version}-{target}.tar.gz");
    let archive = dir.path().join(&archive_name);
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .arg(staging.file_name().unwrap())
        .status()
        .expect("tar runs");
    assert!(status.success());
    let bytes = std::fs::read(&archive).unwrap();
    let digest = sha256_hex(&bytes);
    let checksum = if corrupt_checksum {
        format!("{}  {archive_name}\n", "0".repeat(64))
    } else {
        format!("{digest}  {archive_name}\n")
    };
    let server = Loopback::routes(vec![
        (
            "GET",
            &format!("/releases/download/v{gate_version}/{archive_name}"),
            Response::ok(bytes),
        ),
        (
            "GET",
            &format!("/releases/download/v{gate_version}/{archive_name}.sha256"),
            Response::ok(checksum),
        ),
    ]);
    (server, dir)
}

fn tdqs_gate_version() -> String {
    let output = Command::new(GATE).arg("--version").output().unwrap();
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .strip_prefix("tdqs-gate ")
        .expect("`tdqs-gate <version>`")
        .to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum runs");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn a_release_binary_is_downloaded_and_checked() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let version = tdqs_gate_version();
    for corrupt in [false, true] {
        let (server, _dir) = release_server(corrupt);
        let t = temp();
        let mut job = pull_request_job(
            &workspace,
            t.path(),
            &[("judge", "static"), ("version", &version)],
            &refused_url(""),
        );
        job.env.remove("TDQS_GATE_BIN");
        job.env.insert(
            "TDQS_GATE_RELEASE_URL".to_string(),
            server.url("/releases/download"),
        );
        let run = runner::run(&job);
        let log = run.log();
        assert_eq!(run.step("prepare").outputs["install"], "release", "{log}");
        if corrupt {
            assert_eq!(run.step("install").outcome, Outcome::Failure, "{log}");
            assert!(log.contains("the download is not used"), "{log}");
            assert_eq!(run.step("Decide").exit_code, Some(2));
        } else {
            assert_consistent(&run, "pass", 0);
            let bin = &run.step("install").outputs["bin"];
            assert!(
                bin.contains("runner-temp") && bin.ends_with("/tdqs-gate"),
                "{bin}"
            );
        }
    }
}

#[test]
fn a_source_build_of_the_same_digest_is_reused_from_the_cache() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    let cache = t.path().join("build-cache");
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        &refused_url(""),
    );
    job.env.remove("TDQS_GATE_BIN");
    job.env.insert(
        "TDQS_GATE_ACTION_CACHE".to_string(),
        cache.display().to_string(),
    );
    // The steps get a fresh HOME; rustup still has to find the toolchain (GitHub's runners set
    // these too), or the digest would name no compiler.
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".rustup"));
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cargo"));
    job.env
        .insert("RUSTUP_HOME".to_string(), rustup.display().to_string());
    job.env
        .insert("CARGO_HOME".to_string(), cargo.display().to_string());
    // The cargo build itself is not run by the tests (it is on GitHub): the prepare step alone
    // gives the key of this source, and the cache is seeded with this build under it.
    let output_file = t.path().join("prepare-output");
    let output = Command::new("bash")
        .arg(repo_root().join("action/entrypoint.sh"))
        .arg("prepare")
        .current_dir(&workspace)
        .env("GITHUB_ACTION_PATH", repo_root())
        .env("GITHUB_OUTPUT", &output_file)
        .env("TDQS_GATE_ACTION_CACHE", &cache)
        .env("INPUT_VERSION", "source")
        .env("RUSTUP_HOME", &rustup)
        .env("CARGO_HOME", &cargo)
        .env_remove("TDQS_GATE_BIN")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let prepared: BTreeMap<String, String> = read(&output_file)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let key = prepared["cache-key"].clone();
    let digest = key.rsplit('-').next().unwrap().to_string();
    assert_eq!(digest.len(), 64, "{key}");
    assert_eq!(prepared["cache-path"], cache.display().to_string());
    assert!(key.starts_with(&prepared["cache-restore-key"]));
    std::fs::create_dir_all(cache.join("bin")).unwrap();
    crate::support::write_launcher(&cache.join("bin/tdqs-gate"), Path::new(GATE));
    std::fs::write(cache.join("bin/source-digest"), format!("{digest}\n")).unwrap();
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "pass", 0);
    assert!(log.contains("reusing the cached build"), "{log}");
    assert_eq!(run.step("install").outputs["built"], "false");
    // Nothing new was built, so the save step is skipped; the restore step ran with the key.
    assert_eq!(
        run.step("Save the tdqs-gate build cache").outcome,
        Outcome::Skipped
    );
    let restore = run.step("Restore the tdqs-gate build cache");
    assert_eq!(restore.outcome, Outcome::Success);
    assert_eq!(restore.with["key"], key);
}
