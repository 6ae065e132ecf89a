//! Paths the head's tree shapes: a case file or an eval cache behind a link is neither read nor
//! written through.

use super::*;

/// The head's case file is a link to a file outside the repository (here a one-line
/// credentials file): the gate must not read it, since a TOML error quotes the offending line.
/// The same through a linked folder named by `[eval] cases`.
#[test]
fn eval_case_file_behind_a_link_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    const SECRET: &str = "sk-r2-case-file-0123456789abcdef";
    std::fs::write(
        outside.path().join("credentials"),
        format!("{{\"accessToken\":\"{SECRET}\"}}\n"),
    )
    .unwrap();
    std::fs::create_dir(outside.path().join("sub")).unwrap();
    std::fs::write(
        outside.path().join("sub/cases.toml"),
        format!("token = {SECRET}\n"),
    )
    .unwrap();
    let base = gate_check::export_file(dir.path(), "base", gate_check::careful_tools());
    let mut tools = gate_check::careful_tools();
    tools[0]["description"] = json!("Changed.");
    let head = gate_check::export_file(dir.path(), "head", tools);
    let gate = || {
        std::process::Command::new(GATE)
            .current_dir(dir.path())
            .arg("--repo")
            .arg(dir.path())
            .arg("--base-export")
            .arg(&base)
            .arg("--head-export")
            .arg(&head)
            .args(["--judge", "static", "--report-dir", "report"])
            .args(["--eval", "synthetic"])
            .output()
            .unwrap()
    };
    std::os::unix::fs::symlink(
        outside.path().join("credentials"),
        dir.path().join("tdqs-eval.toml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("sub"), dir.path().join("sub")).unwrap();
    for table in ["", "[eval]\ncases = \"sub/cases.toml\"\n"] {
        std::fs::write(dir.path().join("tdqs-gate.toml"), table).unwrap();
        let out = gate();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{table}: {all}");
        assert!(!all.contains(SECRET), "{table}: {all}");
        assert!(all.contains("symbolic link"), "{table}: {all}");
        if let Ok(entries) = std::fs::read_dir(dir.path().join("report")) {
            for e in entries {
                let text = std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
                assert!(!text.contains(SECRET));
            }
        }
    }
    // A case file given on the command line is trusted: a link there is followed.
    std::fs::remove_file(dir.path().join("tdqs-gate.toml")).unwrap();
    std::fs::remove_file(dir.path().join("tdqs-eval.toml")).unwrap();
    let real = dir.path().join("real-cases.toml");
    std::fs::copy(cases("careful"), &real).unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("tdqs-eval.toml")).unwrap();
    let out = std::process::Command::new(GATE)
        .current_dir(dir.path())
        .arg("--repo")
        .arg(dir.path())
        .arg("--base-export")
        .arg(&base)
        .arg("--head-export")
        .arg(&head)
        .args(["--judge", "static", "--report-dir", "report", "-q"])
        .args(["--eval", "synthetic", "--eval-cases"])
        .arg(dir.path().join("tdqs-eval.toml"))
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The repository's `.tdqs` folder is a link to a folder of the user: a live eval must not
/// write its cached answers there (nor read them from there).
#[test]
fn eval_cache_behind_a_link_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("notes.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".tdqs")).unwrap();
    let standin = stand_in();
    let url = standin.server.url("");
    let args = [
        "--mode",
        "live-model",
        "--judge",
        "openai",
        "--model",
        MODEL,
        "--base-url",
        &url,
        "--json",
    ];
    let out = eval(dir.path(), "careful", &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    let names: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.txt"]);
    // The same folder given with --eval-cache is the user's choice: it is written.
    let cache = outside.path().join("chosen");
    let out = eval(
        dir.path(),
        "careful",
        &[&args[..], &["--eval-cache", cache.to_str().unwrap()]].concat(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 22);
}
