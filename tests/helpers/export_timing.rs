//! Times the gate's export client on a real server, for comparison with a minimal client
//! (`tests/servers/minimal_client.py`).
//!
//! Usage: `export-timing [--runs N] [--era legacy|modern|auto] -- PROGRAM ARGS…`
//! Each run spawns the server, lists its tools and shuts it down (the whole of `list_tools`);
//! one line per run: `<milliseconds> ms <tool count> tools`. The server gets the caller's PATH
//! and HOME and runs in the current directory.

use std::time::{Duration, Instant};

use tdqs_core::export::ExportLimits;
use tdqs_core::export::{Era, ProbeProfile};
use tdqs_gate::export::client::list_tools;
use tdqs_gate::export::LaunchSpec;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut runs = 1usize;
    let mut era = Era::Legacy;
    let mut command = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--era" => {
                era = match args.next().as_deref() {
                    Some("legacy") => Era::Legacy,
                    Some("modern") => Era::Modern,
                    Some("auto") => Era::Auto,
                    other => panic!("unknown era {other:?}"),
                }
            }
            "--" => command.extend(args.by_ref()),
            other => panic!("unknown argument {other}"),
        }
    }
    let (program, rest) = command.split_first().expect("a command after --");
    let env = ["PATH", "HOME"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    let spec = LaunchSpec {
        program: program.clone(),
        args: rest.to_vec(),
        cwd: std::env::current_dir().expect("cwd"),
        env,
        setup: Vec::new(),
        origin: "export-timing".into(),
        secret_env: Vec::new(),
        limits: ExportLimits {
            shutdown_grace: Duration::from_secs(2),
            ..ExportLimits::default()
        },
        temp_home: None,
        reproduce_env: Vec::new(),
        http: None,
        sandbox: None,
    };
    let profile = ProbeProfile {
        era,
        ..ProbeProfile::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for _ in 0..runs {
        let started = Instant::now();
        let listing = runtime.block_on(list_tools(&spec, &profile));
        let elapsed = started.elapsed();
        match listing {
            Ok(listing) => println!(
                "{:.0} ms {} tools",
                elapsed.as_secs_f64() * 1000.0,
                listing.tools.len()
            ),
            Err(error) => {
                eprintln!("{}", error.render());
                std::process::exit(2);
            }
        }
    }
}
