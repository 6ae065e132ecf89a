//! Command-line parsing and dispatch. The binary's `main` only calls [`main`].
//!
//! Every path ends in one of the exit codes of [`tdqs_core::exit`]: usage errors, failures, panics
//! and Ctrl-C are INVALID (2); only a confirmed fall of the mean TDQS is BLOCK (1).

pub mod args;
mod ci_cmd;
mod commands;
mod eval_cmd;
mod legacy;
mod lint_baseline;
pub mod output;
mod repo_root;
mod resolve;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use tdqs_core::error::{Error, Stage};
use tdqs_core::exit::{Verdict, INVALID, PASS};
// Everything printed is for a terminal: escape sequences stripped, secrets masked, control
// characters shown as escapes.
use tdqs_core::redact::for_terminal as redact;

pub use args::Cli;
use args::Command;
use output::Verbosity;

/// Runs the command line of this process and returns its exit code.
pub fn main() -> ExitCode {
    // First, before any thread or child exists: the gate's environment unreadable to children,
    // detached descendants re-parented here, credential values masked (docs/security.md).
    crate::platform::harden::at_start();
    let cli = match Cli::try_parse_from(legacy::subcommand_first(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are successes; every usage error is INVALID, never 1.
            let code = if e.use_stderr() { INVALID } else { PASS };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // A panic anywhere must not exit 101 (or 1): report it as INVALID. Unwinding drops the
    // guards of worktrees and server processes, so nothing is left behind.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "error[internal]: tdqs-gate panicked: {}\nhelp: this is a bug in tdqs-gate; please \
             report it with the command you ran",
            redact(&info.to_string())
        );
    }));
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(code) => code,
        Err(_) => {
            let _ = writeln!(std::io::stderr(), "INVALID: tdqs-gate panicked");
            Verdict::Invalid.exit_code()
        }
    }
}

fn verbosity(cli: &Cli) -> Verbosity {
    if cli.output.quiet {
        Verbosity::Quiet
    } else if cli.output.verbose > 0 {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    }
}

/// Prints an error the way every command does: the full message, then one `INVALID:` line.
pub(crate) fn print_invalid(error: &Error) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", redact(&error.render()));
    let _ = writeln!(err, "INVALID: {}", redact(&error.summary()));
}

/// Runs one command: each subcommand's own module converts its arguments, calls the library
/// and prints; an error is printed once, here, as INVALID.
async fn dispatch(cli: Cli, verbosity: Verbosity) -> Verdict {
    let result = match cli.command {
        None => commands::gate_command(cli.gate, verbosity).await,
        Some(Command::Gate(args)) => commands::gate_command(args, verbosity).await,
        Some(Command::Export(args)) => commands::export_command(args, verbosity).await,
        Some(Command::Score(args)) => commands::score_command(args, verbosity).await,
        Some(Command::Suggest(args)) => commands::suggest_command(args, verbosity).await,
        Some(Command::Lint(args)) => commands::lint_command(args, verbosity).await,
        Some(Command::Eval(args)) => eval_cmd::eval_command(args, verbosity).await,
        Some(Command::InstallHook(args)) => commands::install_hook_command(args),
        Some(Command::Ci(args)) => ci_cmd::ci_command(args, verbosity).await,
        Some(Command::Check(args)) => commands::check_command(args, verbosity).await,
        Some(Command::Calibrate(args)) => commands::calibrate_command(args, verbosity).await,
    };
    match result {
        Ok(verdict) => verdict,
        Err(e) => {
            print_invalid(&e);
            Verdict::Invalid
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    let verbosity = verbosity(&cli);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .worker_threads(4)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            print_invalid(&Error::new(
                Stage::Internal,
                format!("cannot start the runtime: {e}"),
            ));
            return Verdict::Invalid.exit_code();
        }
    };
    // First, before the command can make anything that must be cleaned up.
    let mut signals = {
        let _context = runtime.enter();
        crate::platform::signals::Signals::install()
    };
    let verdict = runtime.block_on(async {
        tokio::select! {
            biased;
            signal = signals.interrupted() => {
                // Dropping the command's future runs every guard: server process groups are
                // killed and temporary worktrees removed before we exit.
                print_invalid(&Error::new(Stage::Interrupted, format!("interrupted ({signal})"))
                    .with_advice("nothing was decided; run the gate again"));
                Verdict::Invalid
            }
            verdict = dispatch(cli, verbosity) => verdict,
        }
    });
    // A stuck child must not hold the process open.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    // Leftovers of earlier runs that were kept (in use, or holding changes) and worktrees this
    // run could not remove: the user has to know, nothing else reports them.
    for message in crate::revision::take_cleanup_failures() {
        let _ = writeln!(std::io::stderr(), "warning: {}", redact(&message));
    }
    let killed = crate::platform::harden::end_orphans();
    if !killed.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "warning: ended {} process(es) that a server or setup command left running after it detached: {}",
            killed.len(),
            redact(&killed.join(", "))
        );
    }
    verdict.exit_code()
}
