//! Reports that always match the exit code, files the gate refuses to
//! follow or block on, hostile text in Markdown, and servers that answer badly.

use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::Duration;

use serde_json::Value;

use crate::gate::harness::*;

const WORSE: &str = "Closes an issue.";

fn head_worse() -> Value {
    with_description(&base_tools(), "close_issue", WORSE)
}

fn static_args(report_dir: &Path) -> Vec<String> {
    vec![
        "--base".into(),
        "main".into(),
        "--judge".into(),
        "static".into(),
        "--pins".into(),
        standin_pins().display().to_string(),
        "--report-dir".into(),
        report_dir.display().to_string(),
    ]
}

/// Waits for `child` at most `limit`; a child still running is killed and the test fails.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let done = wait_for(limit, || child.try_wait().unwrap().is_some());
    if !done {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what}: the gate was still running after {limit:?}");
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn report_at(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("tool-definition-score.json")).unwrap())
        .unwrap()
}

#[test]
fn an_invalid_run_replaces_the_previous_report() {
    let setup = Setup::new(&base_tools());
    let dir = setup.work().join("reports");
    let args = static_args(&dir);
    setup.run_raw(&args, dir.clone(), |_| {}).assert_code(0);
    assert_eq!(report_at(&dir)["decision"], "pass");
    // The same run against a base that does not exist: INVALID, and the report says so.
    let mut invalid = args.clone();
    invalid[1] = "no-such-branch".into();
    let run = setup.run_raw(&invalid, dir.clone(), |_| {});
    run.assert_code(2);
    let report = report_at(&dir);
    assert_eq!(report["decision"], "invalid", "{}", run.describe());
    assert_eq!(report["exitCode"], 2);
    assert!(
        std::fs::read_to_string(dir.join("tool-definition-score.md"))
            .unwrap()
            .contains("INVALID")
    );
    // A usage error writes no report, and leaves none from before.
    setup.run_raw(&args, dir.clone(), |_| {}).assert_code(0);
    let mut usage = args.clone();
    usage.extend(["--base-export".to_string(), "x.json".to_string()]);
    setup.run_raw(&usage, dir.clone(), |_| {}).assert_code(2);
    assert!(!dir.join("tool-definition-score.json").exists());
}

#[test]
fn an_unwritable_markdown_leaves_no_json_saying_block() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_worse());
    let dir = setup.work().join("reports");
    // A folder where the Markdown file goes: it cannot be replaced by a file.
    std::fs::create_dir_all(dir.join("tool-definition-score.md").join("x")).unwrap();
    let run = setup.run_raw(&static_args(&dir), dir.clone(), |_| {});
    run.assert_code(2);
    match std::fs::read_to_string(dir.join("tool-definition-score.json")) {
        Err(_) => {}
        Ok(text) => panic!("a report was left: {text}\n{}", run.describe()),
    }
    assert!(
        run.stderr.contains("tool-definition-score.md"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_committed_report_symlink_does_not_redirect_the_report() {
    let setup = Setup::new(&base_tools());
    let elsewhere = setup.work().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, setup.repo.path.join(".tool-definition-score")).unwrap();
    setup.repo.commit_all("a report folder that is a link");
    let mut args = static_args(Path::new("unused"));
    args.truncate(6); // no --report-dir: the default folder at the repository's root
    let tmp = setup.work().join("tmp-link");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = setup.command(&args, &tmp).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "written through the link"
    );
}

#[test]
fn a_config_symlink_out_of_the_repository_is_not_read() {
    let setup = Setup::new(&base_tools());
    let outside = setup.work().join("private.txt");
    std::fs::write(&outside, "password = hunter2-secret-line\n[[[\n").unwrap();
    let config = setup.repo.path.join("tdqs-gate.toml");
    std::fs::remove_file(&config).unwrap();
    std::os::unix::fs::symlink(&outside, &config).unwrap();
    let dir = setup.work().join("reports");
    let run = setup.run_raw(&static_args(&dir), dir.clone(), |_| {});
    run.assert_code(2);
    assert!(!run.stderr.contains("hunter2"), "{}", run.describe());
    assert!(!run.stdout.contains("hunter2"), "{}", run.describe());
    assert!(
        run.stderr
            .contains("symbolic link to a file outside the repository"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_fifo_as_the_configuration_is_refused_at_once() {
    let setup = Setup::new(&base_tools());
    let config = setup.repo.path.join("tdqs-gate.toml");
    std::fs::remove_file(&config).unwrap();
    mkfifo(&config);
    let tmp = setup.work().join("tmp-fifo");
    std::fs::create_dir_all(&tmp).unwrap();
    let child = setup
        .command(&static_args(&setup.work().join("reports")), &tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(child, Duration::from_secs(30), "FIFO tdqs-gate.toml");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("FIFO"), "{stderr}");
    std::fs::remove_file(&config).unwrap();
}

#[test]
fn a_fifo_as_the_spec_cache_is_replaced_by_a_download() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_worse());
    setup.fake.control(script(vec![]));
    let cached: PathBuf = setup
        .cache_dir()
        .join("tdqs-gate")
        .join(format!("{SPEC_COMMIT}.md"));
    std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
    mkfifo(&cached);
    let report_dir = setup.work().join("reports").display().to_string();
    let args = setup.gate_args(&["--report-dir", &report_dir]);
    let tmp = setup.work().join("tmp-fifo");
    std::fs::create_dir_all(&tmp).unwrap();
    let child = setup
        .command(&args, &tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish_within(child, Duration::from_secs(60), "FIFO spec cache");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(setup.spec.request_count(), 1);
    assert!(std::fs::metadata(&cached).unwrap().is_file());
}

#[test]
fn the_default_report_folder_is_at_the_repository_root() {
    let setup = Setup::new(&base_tools());
    let sub = setup.repo.path.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("keep"), "").unwrap();
    let mut args = static_args(Path::new("unused"));
    args.truncate(6);
    let tmp = setup.work().join("tmp-sub");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = setup
        .command(&args, &tmp)
        .current_dir(&sub)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(setup
        .repo
        .path
        .join(".tool-definition-score/tool-definition-score.json")
        .is_file());
    assert!(!sub.join(".tool-definition-score").exists());
}

#[test]
fn outside_text_is_escaped_in_markdown() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_worse());
    let dir = setup.work().join("reports");
    setup
        .run_raw(&static_args(&dir), dir.clone(), |_| {})
        .assert_code(1);
    let mut report: tdqs_core::report::Report = serde_json::from_value(report_at(&dir)).unwrap();
    let name = "x` [click](https://evil.example/a) <img src=x onerror=alert(1)> `y";
    let prose = "Fine.\n\n<script>alert(1)</script> ![p](http://evil.example/p.png) \
                 [here](https://evil.example) www.evil.example @maintainers | col";
    let causes = report.causes.as_mut().unwrap();
    causes.tools[0].tool = name.to_string();
    causes.tools[0].dimensions[0].justification = prose.to_string();
    report
        .warnings
        .push(format!("head: server stdout: {prose}"));
    report.reason = prose.to_string();
    let md = tdqs_core::report::markdown::render(&report);
    // The name sits whole in a code span whose fence is longer than its backticks.
    assert!(md.contains(&format!("`` {name} ``")), "{md}");
    // Outside code spans, nothing from outside is live Markdown or HTML.
    let prose = outside_code_spans(&md);
    let mut rest = prose.clone();
    for tag in [
        "<details>",
        "</details>",
        "<summary>",
        "</summary>",
        "<sub>",
        "</sub>",
    ] {
        rest = rest.replace(tag, "");
    }
    let chars: Vec<char> = rest.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if matches!(c, '<' | '[' | ']' | '!' | '`') {
            assert!(
                i > 0 && chars[i - 1] == '\\',
                "unescaped `{c}` at {i}: {}\n{md}",
                chars[i.saturating_sub(30)..(i + 30).min(chars.len())]
                    .iter()
                    .collect::<String>()
            );
        }
    }
    for bad in ["https://", "http://", "www.evil", "@maintainers", "\n<"] {
        assert!(!rest.contains(bad), "`{bad}` got through:\n{md}");
    }
}

/// `md` with every code span (any fence length) cut out.
fn outside_code_spans(md: &str) -> String {
    let chars: Vec<char> = md.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '`' && (i == 0 || chars[i - 1] != '\\') {
            let mut n = 0;
            while i + n < chars.len() && chars[i + n] == '`' {
                n += 1;
            }
            // Find the closing run of exactly n backticks.
            let mut j = i + n;
            let mut closed = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let mut m = 0;
                    while j + m < chars.len() && chars[j + m] == '`' {
                        m += 1;
                    }
                    if m == n {
                        closed = Some(j + m);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            match closed {
                Some(end) => {
                    out.push_str("CODE");
                    i = end;
                }
                None => panic!("an unclosed code span in:\n{md}"),
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn out_of_range_numbers_and_a_non_object_capabilities_are_refused() {
    let setup = Setup::new(&base_tools());
    let dir = setup.work().join("reports");
    for (flag, value, says) in [
        ("--timeout", "18446744073709551615", "1..=14400"),
        ("--timeout", "0", "1..=14400"),
        ("--call-timeout", "18446744073709551615", "1..=14400"),
        ("--concurrency", "18446744073709551615", "from 1 to 256"),
        ("--concurrency", "0", "from 1 to 256"),
        (
            "--capabilities",
            "[1,2]",
            "must be a JSON object, not an array",
        ),
        (
            "--max-message-bytes",
            "18446744073709551615",
            "from 1024 (1 KiB)",
        ),
    ] {
        let mut args = static_args(&dir);
        args.extend([flag.to_string(), value.to_string()]);
        let run = setup.run_raw(&args, dir.clone(), |_| {});
        run.assert_code(2);
        assert!(
            run.stderr.contains(says),
            "{flag} {value}: {}",
            run.describe()
        );
        assert!(!run.stderr.contains("panicked"), "{}", run.describe());
    }
}

#[test]
fn the_message_size_limit_is_a_flag_and_a_config_key() {
    let setup = Setup::new(&base_tools());
    let dir = setup.work().join("reports");
    let mut args = static_args(&dir);
    args.extend(["--max-message-bytes".to_string(), "1024".to_string()]);
    let run = setup.run_raw(&args, dir.clone(), |_| {});
    run.assert_code(2);
    assert!(
        run.stderr.contains("longer than the limit of 1024 bytes"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("--max-message-bytes"),
        "{}",
        run.describe()
    );

    // The same limit from tdqs-gate.toml (a setting: the base revision's).
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nmax-message-bytes = 1024\n",
    );
    setup.repo.git(["commit", "-q", "-a", "-m", "limit"]);
    let run = setup.run_raw(&static_args(&dir), dir.clone(), |_| {});
    run.assert_code(2);
    assert!(
        run.stderr.contains("longer than the limit of 1024 bytes"),
        "{}",
        run.describe()
    );
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nmax-message-bytes = 12\n",
    );
    let run = setup.run_raw(&static_args(&dir), dir.clone(), |_| {});
    run.assert_code(2);
    assert!(
        run.stderr.contains("`max-message-bytes` is 12"),
        "{}",
        run.describe()
    );
    // A larger limit on the command line wins over the file's.
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nmax-message-bytes = 1024\n",
    );
    let mut args = static_args(&dir);
    args.extend(["--max-message-bytes".to_string(), "1048576".to_string()]);
    setup.run_raw(&args, dir.clone(), |_| {}).assert_code(0);
}

#[test]
fn credentials_typed_into_the_command_are_masked() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_worse());
    let dir = setup.work().join("reports");
    let secrets = ["ghp_envtoken0001", "tok-option-0002", "sk-equals-0003"];
    let mut args = static_args(&dir);
    args.extend([
        "--command".to_string(),
        format!(
            "env GITHUB_TOKEN={} python3 {{root}}/server.py --access-token {} --api-key={}",
            secrets[0], secrets[1], secrets[2]
        ),
    ]);
    let run = setup.run_raw(&args, dir.clone(), |_| {});
    run.assert_code(1);
    let json = std::fs::read_to_string(dir.join("tool-definition-score.json")).unwrap();
    let md = std::fs::read_to_string(dir.join("tool-definition-score.md")).unwrap();
    for secret in secrets {
        for (what, text) in [
            ("json", &json),
            ("md", &md),
            ("stderr", &run.stderr),
            ("stdout", &run.stdout),
        ] {
            assert!(!text.contains(secret), "{secret} in the {what}");
        }
    }
    let report: Value = serde_json::from_str(&json).unwrap();
    let command: Vec<&str> = report["head"]["source"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        command,
        [
            "env",
            "GITHUB_TOKEN=[REDACTED]",
            "python3",
            "{root}/server.py",
            "--access-token",
            "[REDACTED]",
            "--api-key=[REDACTED]"
        ]
    );

    // The "reproduce with" line of a failing command masks them too.
    let mut args = static_args(&dir);
    args.extend([
        "--command".to_string(),
        format!("python3 {{root}}/missing.py --password {}", secrets[1]),
    ]);
    let run = setup.run_raw(&args, dir.clone(), |_| {});
    run.assert_code(2);
    assert!(run.stderr.contains("reproduce with"), "{}", run.describe());
    assert!(!run.stderr.contains(secrets[1]), "{}", run.describe());
}
