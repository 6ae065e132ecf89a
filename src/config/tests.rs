use super::*;
use serde_json::json;

fn parse(text: &str) -> Result<Config> {
    Config::parse(text, Path::new("tdqs-gate.toml"))
}

#[test]
fn a_full_server_table_is_read() {
    let config = parse(
        r#"
[server]
command = "python -m 'my server' --flag"
env = { PYTHONPATH = "{root}/src", MODE = "test" }
cwd = "{root}/pkg"
setup = ["make build", ["npm", "run", "build"]]
startup-timeout = 90
request-timeout = 2.5
setup-timeout = 600
isolate-home = false
pass-env = ["UV_CACHE_DIR", "UV_CACHE_DIR", "NPM_CONFIG_CACHE"]
"#,
    )
    .expect("valid");
    let server = config.server.expect("server table");
    assert_eq!(
        server.command.as_deref(),
        Some(&["python", "-m", "my server", "--flag"].map(String::from)[..])
    );
    assert_eq!(server.command_line, Some(3));
    // Both setup commands are on line 6, the `setup` line.
    assert_eq!(server.setup_lines, vec![6, 6]);
    assert_eq!(
        server.env.get("PYTHONPATH").map(String::as_str),
        Some("{root}/src")
    );
    assert_eq!(server.cwd.as_deref(), Some("{root}/pkg"));
    assert_eq!(
        server.setup,
        vec![
            vec!["make".to_string(), "build".to_string()],
            vec!["npm".to_string(), "run".to_string(), "build".to_string()]
        ]
    );
    assert_eq!(server.startup_timeout, Some(Duration::from_secs(90)));
    assert_eq!(server.request_timeout, Some(Duration::from_millis(2500)));
    assert!(!server.isolate_home);
    assert_eq!(server.pass_env, vec!["UV_CACHE_DIR", "NPM_CONFIG_CACHE"]);
    let limits = server.apply_limits(ExportLimits::default());
    assert_eq!(limits.setup_timeout, Duration::from_secs(600));
    assert_eq!(limits.max_pages, ExportLimits::default().max_pages);
    assert_eq!(config.probe, ProbeProfile::default());
}

#[test]
fn command_with_args_keeps_the_program_whole() {
    let config =
        parse("[server]\ncommand = \"/opt/my tools/server\"\nargs = [\"--stdio\", \"{root}\"]\n")
            .expect("valid");
    assert_eq!(
        config.server.expect("server").command,
        Some(vec![
            "/opt/my tools/server".to_string(),
            "--stdio".to_string(),
            "{root}".to_string()
        ])
    );
}

#[test]
fn defaults_apply_when_tables_are_absent() {
    let config = parse("[server]\nenv = { A = \"1\" }\n").expect("valid");
    let server = config.server.expect("server");
    assert_eq!(server.command, None);
    assert!(server.isolate_home);
    let config = parse("").expect("empty file");
    assert!(config.server.is_none());
    assert!(config.lint.is_none());
}

#[test]
fn unknown_keys_name_the_key_its_line_and_the_valid_keys() {
    let err = parse("[server]\ncommand = \"x\"\nstartup-timout = 5\n").expect_err("typo");
    assert!(err.cause.contains("tdqs-gate.toml:3:1"), "{}", err.cause);
    assert!(err.cause.contains("startup-timout"), "{}", err.cause);
    assert!(err.cause.contains("startup-timeout"), "{}", err.cause);
    assert!(
        err.render().contains("startup-timout = 5\n^^^^^^^^^^^^^^"),
        "{}",
        err.render()
    );

    let err = parse("[gate]\nx = 1\n").expect_err("unknown table");
    assert!(err.cause.contains("gate"), "{}", err.cause);
    assert!(err.cause.contains("server"), "{}", err.cause);

    let err = parse("[probe]\nera = \"new\"\n").expect_err("bad era");
    assert!(err.cause.contains(":2:"), "{}", err.cause);
    assert!(err.cause.contains("legacy"), "{}", err.cause);
}

#[test]
fn bad_values_are_located() {
    let err = parse("[server]\ncommand = \"python 'unclosed\"\n").expect_err("quote");
    assert!(
        err.cause.contains(":2:11") && err.cause.contains("unbalanced"),
        "{}",
        err.cause
    );

    let err = parse("[server]\ncommand = \"x\"\n\nstartup-timeout = 0\n").expect_err("zero");
    assert!(
        err.cause.contains(":4:") && err.cause.contains("above 0"),
        "{}",
        err.cause
    );

    let err = parse("[server]\ncommand = \"x\"\nrequest-timeout = 60000\n").expect_err("ms");
    assert!(err.cause.contains("milliseconds"), "{}", err.cause);

    let err = parse("[server]\ncommand = \"x\"\nrequest-timeout = \"60s\"\n").expect_err("string");
    assert!(err.cause.contains("seconds"), "{}", err.cause);

    let err = parse("[server]\ncommand = [\"a\"]\nargs = [\"b\"]\n").expect_err("twice");
    assert!(err.cause.contains("given twice"), "{}", err.cause);

    let err = parse("[server]\nargs = [\"b\"]\n").expect_err("args alone");
    assert!(err.cause.contains("`command` is not"), "{}", err.cause);

    let err = parse("[server]\ncommand = \"  \"\n").expect_err("empty");
    assert!(err.cause.contains("empty"), "{}", err.cause);

    let err = parse("[server]\ncommand = \"x\"\nsetup = [\"ok\", []]\n").expect_err("empty setup");
    assert!(err.cause.contains("setup command 2"), "{}", err.cause);

    let err =
        parse("[server]\ncommand = \"x\"\nenv = { \"A-B\" = \"1\" }\n").expect_err("env name");
    assert!(
        err.cause.contains("A-B") && err.cause.contains(":3:"),
        "{}",
        err.cause
    );

    let err = parse("[server]\ncommand = \"x\"\nenv = { PORT = 8080 }\n").expect_err("env type");
    assert!(err.cause.contains(":3:"), "{}", err.cause);

    let err = parse("[server]\ncommand = \"x\"\npass-env = [\"HOME=1\"]\n").expect_err("pass-env");
    assert!(err.cause.contains("pass-env"), "{}", err.cause);
}

#[test]
fn the_probe_table_maps_to_a_probe_profile() {
    let config = parse(
        r#"
[probe]
protocol-version = "2025-06-18"
era = "auto"
capabilities = { roots = { listChanged = true }, sampling = {} }
client-info = { name = "my-host", version = "2.1" }
"#,
    )
    .expect("valid");
    assert_eq!(
        config.probe,
        ProbeProfile {
            protocol_version: "2025-06-18".to_string(),
            era: Era::Auto,
            capabilities: json!({"roots": {"listChanged": true}, "sampling": {}}),
            client_info: json!({"name": "my-host", "version": "2.1"}),
        }
    );
    let config = parse("[probe]\nera = \"modern\"\n").expect("partial");
    assert_eq!(config.probe.era, Era::Modern);
    assert_eq!(
        config.probe.protocol_version,
        ProbeProfile::default().protocol_version
    );

    let err = parse("[probe]\nprotocol-version = \"latest\"\n").expect_err("version");
    assert!(err.cause.contains("latest"), "{}", err.cause);
    let err = parse("[probe]\nclient-info = { name = \"x\" }\n").expect_err("client-info");
    assert!(err.cause.contains("version"), "{}", err.cause);
    let err = parse("[probe]\ncapabilities = { since = 2024-01-01 }\n").expect_err("date");
    assert!(err.cause.contains("date"), "{}", err.cause);
}

#[test]
fn the_lint_table_is_kept_raw() {
    let config =
        parse("[lint]\nfail-on = \"error\"\n[lint.rules]\nX001 = \"off\"\n").expect("valid");
    let lint = config.lint.expect("lint");
    assert_eq!(lint["fail-on"].as_str(), Some("error"));
    assert_eq!(lint["rules"]["X001"].as_str(), Some("off"));
}

#[test]
fn load_reads_the_file_at_the_root_or_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(Config::load(dir.path()).expect("absent"), None);
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        "[server]\ncommand = \"srv\"\n",
    )
    .expect("write");
    let config = Config::load(dir.path()).expect("read").expect("present");
    assert_eq!(config.path, dir.path().join(CONFIG_FILE));
    std::fs::write(dir.path().join(CONFIG_FILE), "[server\n").expect("write");
    let err = Config::load(dir.path()).expect_err("broken");
    assert_eq!(err.stage, Stage::Config);
    assert!(err.cause.contains(":1:"), "{}", err.cause);
}

#[test]
fn server_tables_are_read_in_order() {
    let config = parse(
        "[[server]]\nname = \"api\"\ncommand = \"node {root}/api/index.js\"\n\n\
         [[server]]\nname = \"web.v2\"\ncommand = \"python3 -m web\"\n\
         setup = [\"make\"]\n[server.env]\nA = \"1\"\n",
    )
    .expect("valid");
    assert!(config.server.is_none());
    assert_eq!(config.server_names(), vec!["api", "web.v2"]);
    assert_eq!(
        config.servers[1].server.env.get("A").map(String::as_str),
        Some("1")
    );
    let one = config.for_server("web.v2").expect("table");
    assert_eq!(
        one.server.expect("server").setup,
        vec![vec!["make".to_string()]]
    );
    assert!(one.servers.is_empty());
    assert!(config.for_server("nope").is_none());
}

#[test]
fn duplicate_missing_and_unsafe_names_are_refused() {
    let err = parse(
        "[[server]]\nname = \"api\"\ncommand = \"a\"\n[[server]]\nname = \"api\"\ncommand = \"b\"\n",
    )
    .expect_err("duplicate");
    assert!(
        err.cause.contains(":5:") && err.cause.contains("two [[server]] tables are named `api`"),
        "{}",
        err.cause
    );
    assert!(err.advice.as_deref().unwrap_or("").contains("own name"));

    let err = parse("[[server]]\ncommand = \"a\"\n").expect_err("no name");
    assert!(err.cause.contains("has no `name`"), "{}", err.cause);

    for bad in ["", "../x", "a b", "-x", "é"] {
        let err = parse(&format!("[[server]]\nname = {bad:?}\ncommand = \"a\"\n")).expect_err(bad);
        assert!(err.cause.contains("is not 1 to 64"), "{bad}: {}", err.cause);
    }
    let err = parse("[server]\nname = \"api\"\ncommand = \"a\"\n").expect_err("name");
    assert!(err.cause.contains("single [server] table"), "{}", err.cause);

    let err = parse("[[server]]\nname = \"api\"\ncomand = \"a\"\n").expect_err("typo");
    assert!(
        err.cause.contains(":3:") && err.cause.contains("comand"),
        "{}",
        err.cause
    );
}

#[test]
fn mixed_server_tables_are_refused_with_the_fix() {
    let err =
        parse("[server]\ncommand = \"a\"\n\n[[server]] # second\nname = \"b\"\ncommand = \"b\"\n")
            .expect_err("mixed");
    assert_eq!(err.stage, Stage::Config);
    assert!(
        err.cause.contains("line 1") && err.cause.contains("line 4"),
        "{}",
        err.cause
    );
    assert!(
        err.advice
            .as_deref()
            .unwrap_or("")
            .contains("as a [[server]] table"),
        "{:?}",
        err.advice
    );
}

#[test]
fn environment_names_are_checked() {
    assert!(is_valid_env_name("PYTHONPATH"));
    assert!(is_valid_env_name("_X1"));
    assert!(!is_valid_env_name("1X"));
    assert!(!is_valid_env_name(""));
    assert!(!is_valid_env_name("A=B"));
}
