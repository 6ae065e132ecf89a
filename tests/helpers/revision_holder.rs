//! Checks a revision out with the gate's library, prints the worktree's root, then waits to be
//! killed: a stand-in for a gate run killed (SIGKILL) before it could clean up.
//!
//! With `--cleanup-all` it instead calls `cleanup_all_active` (what a Ctrl-C handler that exits
//! at once does), prints `removed` or `left` for the worktree folder, and exits without dropping
//! the side. That runs in its own process because the call affects every side of the process.
//!
//! Usage: revision-holder REPO REV [--cleanup-all]
use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(repo), Some(rev)) = (args.next(), args.next()) else {
        eprintln!("usage: revision-holder REPO REV");
        std::process::exit(2);
    };
    let repo = match tdqs_gate::revision::open(Some(std::path::Path::new(&repo))) {
        Ok(repo) => repo,
        Err(e) => {
            eprintln!("{}", e.render());
            std::process::exit(2);
        }
    };
    let side = match repo.checkout(&rev) {
        Ok(side) => side,
        Err(e) => {
            eprintln!("{}", e.render());
            std::process::exit(2);
        }
    };
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", side.root.display()).expect("stdout");
    if args.next().as_deref() == Some("--cleanup-all") {
        let failures = tdqs_gate::revision::cleanup_all_active();
        let state = if side.root.exists() {
            "left"
        } else {
            "removed"
        };
        writeln!(stdout, "{state} {}", failures.join("; ")).expect("stdout");
        stdout.flush().expect("stdout");
        // Exit the way a signal handler would: without running the side's destructor.
        std::mem::forget(side);
        std::process::exit(0);
    }
    stdout.flush().expect("stdout");
    // Held until the test kills this process; the side is never dropped.
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
