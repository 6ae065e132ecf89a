//! Launch resolution: `--command`, `tdqs-gate.toml [server]` and host manifests, in that order;
//! `{root}` per side; a built-from-nothing environment without the gate's secrets.

use std::path::{Path, PathBuf};
use std::process::Command;

use tdqs_core::error::{Error, Stage};
use tdqs_core::export::ExportLimits;
use tdqs_gate::config::Config;
use tdqs_gate::export::launch::{ensure_program, HostEnv, LaunchOptions, LaunchPlan};
use tdqs_gate::export::LaunchSpec;
use tdqs_gate::revision;

use crate::support::gitrepo::GitRepo;

const SECRET_VALUES: [&str; 4] = [
    "sk-ant-api-secret-value-0001",
    "oauth-claude-secret-value-0002",
    "sk-openai-secret-value-0003",
    "judge-token-secret-value-0004",
];

/// The judge token's variable, as the CLI would pass it.
fn judge_token_var() -> Vec<String> {
    vec!["TDQS_JUDGE_TOKEN".to_string()]
}

/// A host environment holding the gate's secrets and assorted noise.
fn host() -> HostEnv {
    HostEnv::from_pairs([
        (
            "PATH",
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_string()),
        ),
        ("HOME", "/home/host-user".to_string()),
        ("LANG", "C.UTF-8".to_string()),
        ("LC_ALL", "C.UTF-8".to_string()),
        ("TERM", "xterm-256color".to_string()),
        ("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock".to_string()),
        ("RANDOM_HOST_VAR", "should-not-leak".to_string()),
        ("GITHUB_TOKEN", "ghp-host-github-token".to_string()),
        ("UV_CACHE_DIR", "/cache/uv".to_string()),
        ("ANTHROPIC_API_KEY", SECRET_VALUES[0].to_string()),
        ("CLAUDE_CODE_OAUTH_TOKEN", SECRET_VALUES[1].to_string()),
        ("OPENAI_API_KEY", SECRET_VALUES[2].to_string()),
        ("TDQS_JUDGE_TOKEN", SECRET_VALUES[3].to_string()),
        // Keeps the persistent package cache out of the user's real cache folder.
        (
            "TDQS_GATE_PACKAGE_CACHE",
            test_cache_root().to_string_lossy().into_owned(),
        ),
    ])
}

/// The package cache root the tests' host environment names.
fn test_cache_root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("launch-test-packages")
}

/// A tree with an executable `server.sh` that prints its arguments, working directory and
/// environment.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("launch-tree-")
        .tempdir()
        .expect("tempdir");
    write_server(dir.path(), "tree");
    dir
}

fn write_server(root: &Path, name: &str) {
    use std::os::unix::fs::PermissionsExt;
    let script = root.join("server.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"{name} $*\"\npwd\nenv | sort\n"),
    )
    .expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A tree holding a manifest fixture (copied to `dest`) and the server script.
fn tree_with_manifest(fixture: &str, dest: &str) -> tempfile::TempDir {
    let dir = tree();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/revision/manifests")
        .join(fixture);
    let target = dir.path().join(dest);
    std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
    std::fs::copy(&source, &target).unwrap_or_else(|e| panic!("copy {}: {e}", source.display()));
    dir
}

fn config(root: &Path, text: &str) -> Config {
    Config::parse(text, &root.join("tdqs-gate.toml")).expect("valid config")
}

fn resolve(
    command: Option<&str>,
    server: Option<&str>,
    config: Option<&Config>,
    root: &Path,
) -> Result<LaunchPlan, Error> {
    let exclude = judge_token_var();
    LaunchPlan::resolve(
        &LaunchOptions {
            command,
            url: None,
            server,
            config,
            manifest_root: root,
            exclude_env: &exclude,
            limits: ExportLimits::default(),
        },
        &host(),
    )
}

fn env_of<'a>(spec: &'a LaunchSpec, name: &str) -> Option<&'a str> {
    spec.env
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Runs the spec's program as the export stage would: empty environment plus the spec's.
fn run(spec: &LaunchSpec) -> String {
    let output = Command::new(&spec.program)
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run the server");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8")
}

fn assert_no_secret(text: &str) {
    for secret in SECRET_VALUES {
        assert!(!text.contains(secret), "a secret leaked into:\n{text}");
    }
}

#[test]
fn the_command_flag_comes_first_and_root_is_each_sides_tree() {
    let head = tree_with_manifest("single/.mcp.json", ".mcp.json");
    let base = tree();
    let cfg = config(
        head.path(),
        "[server]\ncommand = \"other-program\"\nenv = { MODE = \"{root}/cfg\" }\n",
    );
    let plan = resolve(
        Some("{root}/server.sh --flag 'two words'"),
        None,
        Some(&cfg),
        head.path(),
    )
    .expect("plan");
    assert_eq!(plan.origin(), "--command");
    assert_eq!(
        plan.command_template(),
        vec!["{root}/server.sh", "--flag", "two words"]
    );

    for root in [head.path(), base.path()] {
        let spec = plan.for_side(root).expect("spec");
        assert_eq!(PathBuf::from(&spec.program), root.join("server.sh"));
        assert_eq!(spec.args, vec!["--flag", "two words"]);
        assert_eq!(spec.cwd, root);
        // [server] settings other than the command still apply.
        assert_eq!(
            env_of(&spec, "MODE"),
            Some(format!("{}/cfg", root.display()).as_str())
        );
        let output = run(&spec);
        assert!(output.starts_with("tree --flag two words\n"), "{output}");
    }
}

#[test]
fn the_server_table_comes_before_a_manifest() {
    let root = tree_with_manifest("single/.mcp.json", ".mcp.json");
    std::fs::create_dir(root.path().join("sub")).expect("mkdir");
    let cfg = config(
        root.path(),
        r#"[server]
command = "sh {root}/server.sh from-config"
env = { PYTHONPATH = "{root}/src", PREFIXED = "{root}/bin:${PATH}" }
cwd = "sub"
setup = ["true", ["sh", "-c", "echo {root}"]]
startup-timeout = 5
request-timeout = 7
setup-timeout = 9
"#,
    );
    let plan = resolve(None, None, Some(&cfg), root.path()).expect("plan");
    assert!(
        plan.origin()
            .ends_with("tdqs-gate.toml [server] command (line 2)"),
        "{}",
        plan.origin()
    );
    assert_eq!(
        plan.command_template(),
        vec!["sh", "{root}/server.sh", "from-config"]
    );
    let mut spec = plan.for_side(root.path()).expect("spec");
    assert_eq!(spec.cwd, root.path().join("sub"));
    assert_eq!(
        env_of(&spec, "PYTHONPATH"),
        Some(format!("{}/src", root.path().display()).as_str())
    );
    let path = std::env::var("PATH").unwrap_or_default();
    assert_eq!(
        env_of(&spec, "PREFIXED"),
        Some(format!("{}/bin:{path}", root.path().display()).as_str())
    );
    assert_eq!(spec.setup.len(), 2);
    assert_eq!(
        spec.setup[1].args,
        vec!["-c".to_string(), format!("echo {}", root.path().display())]
    );
    assert_eq!(spec.limits.startup_timeout.as_secs(), 5);
    assert_eq!(spec.limits.request_timeout.as_secs(), 7);
    assert_eq!(spec.limits.setup_timeout.as_secs(), 9);
    // With setup commands the server program is located after them.
    assert_eq!(spec.program, "sh");
    ensure_program(&mut spec).expect("sh is on PATH");
    assert!(Path::new(&spec.program).is_absolute());
    let output = run(&spec);
    assert!(output.starts_with("tree from-config\n"), "{output}");
    assert!(
        output.contains(&format!("\n{}\n", root.path().join("sub").display())),
        "{output}"
    );
}

#[test]
fn a_single_stdio_manifest_entry_is_used_with_its_references_expanded() {
    let root = tree_with_manifest("single/.mcp.json", ".mcp.json");
    let plan = resolve(None, None, None, root.path()).expect("plan");
    assert_eq!(plan.origin(), ".mcp.json server \"tools\"");
    assert_eq!(
        plan.command_template(),
        vec![
            "./server.sh",
            "--root",
            "${workspaceFolder}",
            "--mode",
            "${MODE:-default}"
        ]
    );
    let warnings = plan.warnings().join("\n");
    assert!(
        warnings.contains("\"docs\"") && warnings.contains("remote (http)"),
        "{warnings}"
    );
    assert!(
        warnings.contains("ANTHROPIC_API_KEY is not given"),
        "{warnings}"
    );

    let spec = plan.for_side(root.path()).expect("spec");
    assert_eq!(
        PathBuf::from(&spec.program),
        root.path().join("./server.sh")
    );
    assert_eq!(
        spec.args,
        vec![
            "--root".to_string(),
            root.path().display().to_string(),
            "--mode".to_string(),
            "default".to_string()
        ]
    );
    assert_eq!(env_of(&spec, "API_TOKEN"), Some("ghp-host-github-token"));
    assert_eq!(
        env_of(&spec, "DATA_DIR"),
        Some(format!("{}/data", root.path().display()).as_str())
    );
    assert_eq!(env_of(&spec, "ANTHROPIC_API_KEY"), None);
    assert!(
        spec.secret_env.contains(&"API_TOKEN".to_string()),
        "{:?}",
        spec.secret_env
    );
    assert!(spec
        .reproduce_command()
        .contains("API_TOKEN=\"$API_TOKEN\""));
    assert!(!spec.reproduce_command().contains("ghp-host-github-token"));
}

#[test]
fn several_manifest_entries_need_server_to_pick_one() {
    let root = tree_with_manifest("several/mcp.json", "mcp.json");
    std::fs::create_dir(root.path().join("beta")).expect("mkdir");
    // A relative program is relative to the entry's cwd, as when a host spawns it.
    write_server(&root.path().join("beta"), "beta-tree");

    let err = resolve(None, None, None, root.path()).expect_err("ambiguous");
    assert!(
        err.cause.contains("2 servers") && err.cause.contains("alpha, beta"),
        "{}",
        err.cause
    );
    assert!(
        err.advice
            .as_deref()
            .unwrap_or("")
            .contains("--server NAME"),
        "{:?}",
        err.advice
    );

    let plan = resolve(None, Some("beta"), None, root.path()).expect("picked");
    assert_eq!(plan.origin(), "mcp.json server \"beta\"");
    let spec = plan.for_side(root.path()).expect("spec");
    assert_eq!(spec.cwd, root.path().join("beta"));
    assert_eq!(spec.args, vec!["beta"]);
    assert!(run(&spec).starts_with("beta-tree beta\n"));

    let err = resolve(None, Some("gamma"), None, root.path()).expect_err("unknown");
    assert!(
        err.cause.contains("no server \"gamma\"") && err.cause.contains("alpha, beta, remote"),
        "{}",
        err.cause
    );
    // issue 15: a named `sse` entry is reached over HTTP at its URL, started by nothing.
    let plan = resolve(None, Some("remote"), None, root.path()).expect("remote");
    assert_eq!(plan.fixed_url(), Some("https://remote.example.invalid/sse"));
    let spec = plan.for_side(root.path()).expect("spec");
    assert!(spec.program.is_empty());
    assert_eq!(
        spec.http.as_ref().map(|h| h.url.as_str()),
        Some("https://remote.example.invalid/sse")
    );
}

#[test]
fn vscode_manifests_with_comments_are_read_and_editor_prompts_are_refused() {
    let root = tree_with_manifest("vscode/.vscode/mcp.json", ".vscode/mcp.json");
    let plan = resolve(None, Some("local"), None, root.path()).expect("plan");
    assert_eq!(plan.origin(), ".vscode/mcp.json server \"local\"");
    let spec = plan.for_side(root.path()).expect("spec");
    assert_eq!(PathBuf::from(&spec.program), root.path().join("server.sh"));
    assert_eq!(env_of(&spec, "LOG_LEVEL"), Some("debug"));
    let err = resolve(None, Some("prompted"), None, root.path()).expect_err("prompt");
    assert!(err.cause.contains("${input:api-key}"), "{}", err.cause);
}

#[test]
fn dot_mcp_json_is_read_before_mcp_json() {
    let root = tree_with_manifest("both/.mcp.json", ".mcp.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/revision/manifests/both/mcp.json"),
        root.path().join("mcp.json"),
    )
    .expect("copy");
    let plan = resolve(None, None, None, root.path()).expect("plan");
    assert_eq!(plan.origin(), ".mcp.json server \"from-dot-mcp\"");
}

#[test]
fn without_any_source_or_with_conflicting_choices_the_run_is_invalid() {
    let root = tree();
    let err = resolve(None, None, None, root.path()).expect_err("nothing to start");
    assert!(
        err.cause.contains("no way to start the server"),
        "{}",
        err.cause
    );
    let advice = err.advice.unwrap_or_default();
    assert!(
        advice.contains("--command") && advice.contains(".vscode/mcp.json"),
        "{advice}"
    );

    let err = resolve(None, Some("x"), None, root.path()).expect_err("--server without manifest");
    assert!(err.cause.contains("no host manifest"), "{}", err.cause);

    let cfg = config(root.path(), "[server]\ncommand = \"./server.sh\"\n");
    let err = resolve(None, Some("x"), Some(&cfg), root.path())
        .expect_err("--server and [server] command");
    assert!(err.cause.contains("comes first"), "{}", err.cause);
    let err = resolve(Some("./server.sh"), Some("x"), None, root.path())
        .expect_err("--command and --server");
    assert_eq!(err.stage, Stage::Usage);
}

#[test]
fn the_environment_is_built_from_nothing_and_never_holds_the_gates_secrets() {
    let root = tree();
    let cfg = config(
        root.path(),
        "[server]\ncommand = \"./server.sh\"\nisolate-home = false\npass-env = [\"UV_CACHE_DIR\", \"GITHUB_TOKEN\", \"NOT_SET_ANYWHERE\"]\n",
    );
    let plan = resolve(None, None, Some(&cfg), root.path()).expect("plan");
    assert!(
        plan.warnings()
            .iter()
            .any(|w| w.contains("NOT_SET_ANYWHERE")),
        "{:?}",
        plan.warnings()
    );
    let spec = plan.for_side(root.path()).expect("spec");
    let names = spec.env_names();
    for expected in [
        "PATH",
        "LANG",
        "LC_ALL",
        "HOME",
        "UV_CACHE_DIR",
        "GITHUB_TOKEN",
    ] {
        assert!(
            names.contains(&expected.to_string()),
            "{expected} missing from {names:?}"
        );
    }
    for absent in [
        "TERM",
        "SSH_AUTH_SOCK",
        "RANDOM_HOST_VAR",
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "TDQS_JUDGE_TOKEN",
    ] {
        assert!(
            !names.contains(&absent.to_string()),
            "{absent} given to the server: {names:?}"
        );
    }
    assert_eq!(spec.secret_env, vec!["GITHUB_TOKEN".to_string()]);
    // Its value is masked wherever the gate shows text (a server's stderr tail, say).
    assert_eq!(
        tdqs_core::redact::redact("server said: ghp-host-github-token"),
        "server said: [REDACTED]"
    );
    assert_eq!(env_of(&spec, "HOME"), Some("/home/host-user"));
    assert!(spec.temp_home.is_none());
    // What the process really sees.
    let output = run(&spec);
    assert_no_secret(&output);
    assert!(
        !output.contains("RANDOM_HOST_VAR") && !output.contains("\nTERM="),
        "{output}"
    );
}

#[test]
fn asking_for_a_secret_is_an_error_that_does_not_show_it() {
    let root = tree();
    let cases = [
        ("pass-env = [\"ANTHROPIC_API_KEY\"]", "ANTHROPIC_API_KEY"),
        ("pass-env = [\"TDQS_JUDGE_TOKEN\"]", "TDQS_JUDGE_TOKEN"),
        (
            "env = { CLAUDE_CODE_OAUTH_TOKEN = \"literal\" }",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ),
        ("env = { KEY = \"${OPENAI_API_KEY}\" }", "OPENAI_API_KEY"),
        (
            "env = { KEY = \"${env:TDQS_JUDGE_TOKEN}\" }",
            "TDQS_JUDGE_TOKEN",
        ),
    ];
    for (line, name) in cases {
        let cfg = config(
            root.path(),
            &format!("[server]\ncommand = \"./server.sh\"\n{line}\n"),
        );
        let err = resolve(None, None, Some(&cfg), root.path()).expect_err(line);
        assert_eq!(err.stage, Stage::Config, "{line}");
        assert!(err.cause.contains(name), "{line}: {}", err.cause);
        assert_no_secret(&err.render());
    }
    let err = resolve(Some("./server.sh"), None, None, root.path())
        .and_then(|plan| {
            let mut spec = plan.for_side(root.path())?;
            spec.program = "no-such-program".to_string();
            ensure_program(&mut spec)
        })
        .expect_err("missing program");
    assert_no_secret(&err.render());
}

#[test]
fn the_home_is_temporary_by_default_and_removed_with_the_spec() {
    let root = tree();
    let plan = resolve(Some("./server.sh"), None, None, root.path()).expect("plan");
    let spec = plan.for_side(root.path()).expect("spec");
    let home = PathBuf::from(env_of(&spec, "HOME").expect("HOME"));
    assert_ne!(home, Path::new("/home/host-user"));
    assert!(
        home.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("tdqs-gate-home-")),
        "{}",
        home.display()
    );
    assert_eq!(
        env_of(&spec, "USERPROFILE"),
        Some(home.to_str().expect("UTF-8"))
    );
    for name in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "APPDATA",
        "LOCALAPPDATA",
    ] {
        let dir = PathBuf::from(env_of(&spec, name).expect(name));
        assert!(
            dir.starts_with(&home) && dir.is_dir(),
            "{name}={}",
            dir.display()
        );
    }
    let output = run(&spec);
    assert!(
        output.contains(&format!("HOME={}\n", home.display())),
        "{output}"
    );
    drop(spec);
    assert!(!home.exists(), "the temporary home outlived its spec");

    // pass-env HOME keeps the real HOME while the XDG folders stay temporary.
    let cfg = config(root.path(), "[server]\npass-env = [\"HOME\"]\n");
    let plan = resolve(Some("./server.sh"), None, Some(&cfg), root.path()).expect("plan");
    let spec = plan.for_side(root.path()).expect("spec");
    assert_eq!(env_of(&spec, "HOME"), Some("/home/host-user"));
    assert!(env_of(&spec, "XDG_CACHE_HOME").is_some_and(|d| d.contains("tdqs-gate-home-")));
}

#[test]
fn a_missing_program_is_invalid_naming_the_command_and_its_origin() {
    let root = tree();
    let err = resolve(
        Some("no-such-program-4c1d --stdio"),
        None,
        None,
        root.path(),
    )
    .expect("plan")
    .for_side(root.path())
    .expect_err("missing");
    assert_eq!(err.stage, Stage::Export);
    assert!(
        err.cause.contains("`no-such-program-4c1d`") && err.cause.contains("--command"),
        "{}",
        err.cause
    );

    let cfg = config(root.path(), "\n[server]\ncommand = [\"./missing.sh\"]\n");
    let err = resolve(None, None, Some(&cfg), root.path())
        .expect("plan")
        .for_side(root.path())
        .expect_err("missing script");
    assert!(
        err.cause.contains("./missing.sh") && err.cause.contains("(line 3)"),
        "{}",
        err.cause
    );

    let cfg = config(
        root.path(),
        "[server]\ncommand = \"./built/server\"\nsetup = [\"no-such-builder-4c1d\"]\n",
    );
    let err = resolve(None, None, Some(&cfg), root.path())
        .expect("plan")
        .for_side(root.path())
        .expect_err("missing setup program");
    assert!(
        err.cause.contains("no-such-builder-4c1d") && err.cause.contains("setup"),
        "{}",
        err.cause
    );

    let err = resolve(
        Some("./server.sh"),
        None,
        Some(&config(root.path(), "[server]\ncwd = \"nowhere\"\n")),
        root.path(),
    )
    .expect("plan")
    .for_side(root.path())
    .expect_err("missing cwd");
    assert!(
        err.cause.contains("nowhere") && err.cause.contains("does not exist"),
        "{}",
        err.cause
    );
}

#[test]
fn one_config_from_the_head_starts_each_revision_with_its_own_code() {
    let repo = GitRepo::init();
    repo.write_executable("bin/server", "#!/bin/sh\necho \"serving v1 from $DATA\"\n")
        .write(
            "tdqs-gate.toml",
            "[server]\ncommand = \"{root}/bin/server\"\nenv = { DATA = \"{root}/data\" }\n",
        );
    repo.commit_all("v1");
    repo.write_executable("bin/server", "#!/bin/sh\necho \"serving v2 from $DATA\"\n");
    repo.commit_all("v2");

    let before = repo.snapshot();
    let git = revision::open(Some(&repo.path)).expect("open");
    let head = git.working_tree().expect("head");
    let base = git.checkout("HEAD~1").expect("base");
    let cfg = Config::load(&head.root).expect("read").expect("present");
    let plan = resolve(None, None, Some(&cfg), &head.root).expect("plan");
    let base_output = run(&plan.for_side(&base.root).expect("base spec"));
    let head_output = run(&plan.for_side(&head.root).expect("head spec"));
    assert_eq!(
        base_output,
        format!("serving v1 from {}/data\n", base.root.display())
    );
    assert_eq!(
        head_output,
        format!("serving v2 from {}/data\n", head.root.display())
    );
    drop(base);
    assert_eq!(repo.snapshot(), before);
}

#[test]
fn which_launch_plans_cannot_see_the_tree() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("flat_pkg")).unwrap();
    std::fs::write(root.path().join("server.py"), "").unwrap();
    let blind = |command: &str| {
        resolve(Some(command), None, None, root.path())
            .expect("plan")
            .blind_to_tree(root.path())
    };
    // Installed code, whatever the working directory.
    assert!(blind("my-server --stdio").is_some());
    assert!(blind("uvx my-server").is_some());
    let src_layout = blind("python3 -m src_pkg").expect("blind");
    assert!(src_layout.contains("imports `src_pkg`"), "{src_layout}");
    // The tree is named, or the working directory (the tree) provides the code.
    assert_eq!(blind("python3 {root}/server.py"), None);
    assert_eq!(blind("python3 server.py"), None);
    assert_eq!(blind("./run-server"), None);
    assert_eq!(blind("python3 -m flat_pkg"), None);
    assert_eq!(blind("npx my-server"), None);
    assert_eq!(blind("node dist/index.js"), None);
}

#[test]
fn network_variables_and_package_caches_reach_setup_and_server() {
    let root = tree();
    let mut pairs: Vec<(String, String)> = vec![
        (
            "PATH".into(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
        ),
        ("HOME".into(), "/home/host-user".into()),
        (
            "HTTPS_PROXY".into(),
            "http://alice:proxy-pass-1234@proxy.corp:3128".into(),
        ),
        ("http_proxy".into(), "http://proxy.corp:3128".into()),
        ("NO_PROXY".into(), "localhost,127.0.0.1".into()),
        ("SSL_CERT_FILE".into(), "/etc/corp/ca.pem".into()),
        ("REQUESTS_CA_BUNDLE".into(), "/etc/corp/ca.pem".into()),
        ("NODE_EXTRA_CA_CERTS".into(), "/etc/corp/extra.pem".into()),
        ("CURL_CA_BUNDLE".into(), "/etc/corp/ca.pem".into()),
    ];
    let cache = tempfile::tempdir().expect("cache");
    let cache_root = cache.path().join("packages");
    pairs.push((
        "TDQS_GATE_PACKAGE_CACHE".into(),
        cache_root.to_string_lossy().into_owned(),
    ));
    let host = HostEnv::from_pairs(pairs.clone());
    let exclude = judge_token_var();
    let plan_for = |text: &str, host: &HostEnv| {
        let cfg = config(root.path(), text);
        LaunchPlan::resolve(
            &LaunchOptions {
                command: None,
                url: None,
                server: None,
                config: Some(&cfg),
                manifest_root: root.path(),
                exclude_env: &exclude,
                limits: ExportLimits::default(),
            },
            host,
        )
    };
    let plan = plan_for(
        "[server]\ncommand = \"./server.sh\"\nenv = { PIP_CACHE_DIR = \"{root}/pip\" }\n",
        &host,
    )
    .expect("plan");
    assert_eq!(plan.package_cache(), Some(cache_root.as_path()));
    let spec = plan.for_side(root.path()).expect("spec");
    for (name, value) in &pairs[2..9] {
        assert_eq!(env_of(&spec, name), Some(value.as_str()), "{name}");
    }
    for (name, sub) in tdqs_gate::export::package_cache::CACHE_VARIABLES {
        if name == "PIP_CACHE_DIR" {
            continue;
        }
        let dir = PathBuf::from(env_of(&spec, name).expect(name));
        assert_eq!(dir, cache_root.join(sub), "{name}");
        assert!(dir.is_dir(), "{name}: {} not created", dir.display());
    }
    // The configuration's own value wins over the cache's.
    assert_eq!(
        env_of(&spec, "PIP_CACHE_DIR"),
        Some(format!("{}/pip", root.path().display()).as_str())
    );
    // What the process sees, and the proxy's credentials masked wherever text is shown.
    let output = run(&spec);
    assert!(
        output.contains("SSL_CERT_FILE=/etc/corp/ca.pem\n"),
        "{output}"
    );
    assert!(
        output.contains(&format!("npm_config_cache={}/npm\n", cache_root.display())),
        "{output}"
    );
    let shown = tdqs_core::redact::redact(&output);
    assert!(!shown.contains("proxy-pass-1234"), "{shown}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cache_root)
            .expect("root")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the cache root is private: {mode:o}");
    }

    // Turned off: by the configuration, by the gate's environment, or with the host's home.
    let mut off = pairs.clone();
    off.retain(|(k, _)| k != "TDQS_GATE_PACKAGE_CACHE");
    off.push(("TDQS_GATE_PACKAGE_CACHE".into(), "off".into()));
    for (text, host) in [
        (
            "[server]\ncommand = \"./server.sh\"\npackage-cache = false\n",
            host.clone(),
        ),
        (
            "[server]\ncommand = \"./server.sh\"\n",
            HostEnv::from_pairs(off),
        ),
        (
            "[server]\ncommand = \"./server.sh\"\nisolate-home = false\n",
            host.clone(),
        ),
    ] {
        let plan = plan_for(text, &host).expect("plan");
        assert_eq!(plan.package_cache(), None, "{text}");
        let spec = plan.for_side(root.path()).expect("spec");
        assert_eq!(env_of(&spec, "npm_config_cache"), None, "{text}");
        assert_eq!(
            env_of(&spec, "SSL_CERT_FILE"),
            Some("/etc/corp/ca.pem"),
            "{text}"
        );
    }

    // A chosen folder that is not absolute is refused, naming the variable and the way out.
    let mut relative = pairs.clone();
    relative.retain(|(k, _)| k != "TDQS_GATE_PACKAGE_CACHE");
    relative.push(("TDQS_GATE_PACKAGE_CACHE".into(), "cache/here".into()));
    let err = plan_for(
        "[server]\ncommand = \"./server.sh\"\n",
        &HostEnv::from_pairs(relative),
    )
    .expect_err("relative cache");
    assert!(
        err.cause.contains("TDQS_GATE_PACKAGE_CACHE"),
        "{}",
        err.cause
    );
    assert!(err.render().contains("off"), "{}", err.render());
}
