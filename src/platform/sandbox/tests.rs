use super::*;

fn strings(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn invocation<'a>(network: bool, args: &'a [String]) -> Invocation<'a> {
    Invocation {
        network,
        unshare_user: false,
        cwd: Path::new("/tmp/tree/sub"),
        program: "node",
        args,
    }
}

fn position(args: &[String], window: &[&str]) -> usize {
    args.windows(window.len())
        .position(|w| w.iter().zip(window).all(|(a, b)| a == b))
        .unwrap_or_else(|| panic!("{window:?} not in {args:?}"))
}

#[test]
fn the_argument_list_isolates_processes_and_mounts_outermost_first() {
    let mounts = Mounts {
        hide: vec!["/tmp".into(), "/root".into()],
        read_only: vec![
            "/root/.nvm/versions/node/v20".into(),
            "/tmp/tree/tools".into(),
        ],
        writable: vec!["/tmp/tree".into(), "/tmp/home".into()],
        protect: vec!["/repo/.git".into(), "/tmp/tree/.git".into()],
        blank_files: vec!["/root/.cargo/credentials.toml".into()],
    };
    let words = ["index.js".to_string(), "--flag".to_string()];
    let args = strings(&bwrap_args(&mounts, &invocation(false, &words)));
    for flag in [
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
    ] {
        assert!(args.contains(&flag.to_string()), "{flag}: {args:?}");
    }
    assert!(!args.contains(&"--unshare-user".to_string()));
    position(&args, &["--cap-drop", "ALL"]);
    let root = position(&args, &["--ro-bind", "/", "/"]);
    let hide_tmp = position(&args, &["--tmpfs", "/tmp"]);
    let nvm = position(
        &args,
        &[
            "--ro-bind",
            "/root/.nvm/versions/node/v20",
            "/root/.nvm/versions/node/v20",
        ],
    );
    let tree = position(&args, &["--bind", "/tmp/tree", "/tmp/tree"]);
    let git = position(&args, &["--ro-bind", "/tmp/tree/.git", "/tmp/tree/.git"]);
    position(&args, &["--ro-bind", "/repo/.git", "/repo/.git"]);
    position(
        &args,
        &["--ro-bind", "/dev/null", "/root/.cargo/credentials.toml"],
    );
    assert!(root < hide_tmp && hide_tmp < tree && tree < git && hide_tmp < nvm);
    // A read-only folder inside the writable tree is writable anyway: not mounted over it.
    assert!(!args.contains(&"/tmp/tree/tools".to_string()), "{args:?}");
    let end = position(
        &args,
        &[
            "--chdir",
            "/tmp/tree/sub",
            "--",
            "node",
            "index.js",
            "--flag",
        ],
    );
    assert_eq!(end + 6, args.len());
    // No environment value ever goes on the command line.
    assert!(!args.iter().any(|a| a.starts_with("--setenv")));
}

#[test]
fn network_and_user_namespace_follow_the_invocation() {
    let args = strings(&bwrap_args(&Mounts::default(), &invocation(true, &[])));
    assert!(!args.contains(&"--unshare-net".to_string()));
    let mut with_user = invocation(true, &[]);
    with_user.unshare_user = true;
    let args = strings(&bwrap_args(&Mounts::default(), &with_user));
    assert!(args.contains(&"--unshare-user".to_string()));
}

#[test]
fn homes_and_temporary_folders_are_hidden_but_never_system_folders() {
    let present = |p: &Path| p != Path::new("/var/run");
    let hidden = hidden_folders(
        Some(Path::new("/var/lib/jenkins")),
        Some(Path::new("/root")),
        Some(Path::new("/home/runner/work/_temp")),
        &present,
    );
    assert_eq!(
        hidden,
        [
            "/tmp",
            "/var/tmp",
            "/run",
            "/home",
            "/root",
            "/var/lib/jenkins"
        ]
        .iter()
        .map(PathBuf::from)
        .collect::<Vec<_>>()
    );
    let odd = hidden_folders(
        Some(Path::new("/")),
        Some(Path::new("/usr")),
        None,
        &present,
    );
    assert!(!odd.contains(&PathBuf::from("/")) && !odd.contains(&PathBuf::from("/usr")));
}

#[test]
fn a_tools_prefix_is_shown_again_not_the_whole_home() {
    let hidden = vec![PathBuf::from("/home"), PathBuf::from("/home/me")];
    assert_eq!(
        tool_folder(Path::new("/home/me/.nvm/versions/node/v20/bin"), &hidden),
        PathBuf::from("/home/me/.nvm/versions/node/v20")
    );
    assert_eq!(
        tool_folder(Path::new("/home/me/.pyenv/shims"), &hidden),
        PathBuf::from("/home/me/.pyenv")
    );
    assert_eq!(
        tool_folder(Path::new("/home/me/bin"), &hidden),
        PathBuf::from("/home/me/bin")
    );
    assert_eq!(
        tool_folder(Path::new("/home/me/tools"), &hidden),
        PathBuf::from("/home/me/tools")
    );
}

#[test]
fn settings_come_from_the_table_with_defaults() {
    let path = Path::new("tdqs-gate.toml");
    assert_eq!(parse_config(None, path).unwrap(), SandboxConfig::default());
    let table: toml::Value =
        toml::from_str("mode = \"on\"\nserver-network = false\nmax-processes = 64").unwrap();
    let config = parse_config(Some(&table), path).unwrap();
    assert_eq!(config.mode, Some(SandboxMode::On));
    assert!(!config.server_network);
    assert_eq!(config.max_processes, 64);
    for bad in ["mode = \"maybe\"", "network = true", "max-processes = 3"] {
        let table: toml::Value = toml::from_str(bad).unwrap();
        let error = parse_config(Some(&table), path).unwrap_err();
        assert!(error.advice.is_some(), "{bad}");
    }
}

fn ready(_: bool) -> Probe {
    Probe::Ready {
        bwrap: "/usr/bin/bwrap".into(),
        version: "bubblewrap 0.8.0".into(),
        unshare_user: false,
    }
}

fn missing(_: bool) -> Probe {
    Probe::Unavailable {
        cause: "bubblewrap (`bwrap`) is not installed".into(),
        fix: FIX_INSTALL.into(),
    }
}

#[test]
fn the_decision_follows_the_mode_ci_and_the_probe() {
    let config = SandboxConfig::default();
    assert!(matches!(
        decide(None, &config, false, ready).unwrap(),
        Decision::Confined(_)
    ));
    // Outside CI a missing bwrap is a warning; in CI, or when required, INVALID with the fix.
    let local = decide(None, &config, false, missing).unwrap();
    assert!(local.warning().unwrap().contains("apt-get install"));
    assert_eq!(local.record().kind, SandboxKind::None);
    let ci = decide(None, &config, true, missing).unwrap_err();
    assert!(ci.advice.as_deref().unwrap().contains("--sandbox off"));
    assert!(decide(Some(SandboxMode::On), &config, false, missing).is_err());
    // Only the workflow's flag turns it off in CI; the configuration alone does not.
    let off = decide(Some(SandboxMode::Off), &config, true, |_| unreachable!()).unwrap();
    assert_eq!(
        off.record().reason.as_deref(),
        Some("turned off by --sandbox off")
    );
    let config_off = SandboxConfig {
        mode: Some(SandboxMode::Off),
        ..SandboxConfig::default()
    };
    assert!(decide(None, &config_off, true, ready).is_err());
    assert!(matches!(
        decide(None, &config_off, false, ready).unwrap(),
        Decision::Unconfined { warning: None, .. }
    ));
    // The flag wins over the configuration.
    assert!(matches!(
        decide(Some(SandboxMode::Auto), &config_off, true, ready).unwrap(),
        Decision::Confined(_)
    ));
}

#[test]
fn a_process_that_sees_the_hosts_proc_is_not_counted_as_a_sandbox() {
    // The gate's own root is the host's: its /proc lists the whole machine, which is what the
    // sandbox's init sees until bubblewrap has mounted the sandbox's own.
    assert!(!sandbox_proc_mounted(std::process::id()));
    assert!(!sandbox_proc_mounted(u32::MAX));
}
