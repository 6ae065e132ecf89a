//! The `tdqs-gate` binary: everything happens in [`tdqs_gate::cli::main`].
fn main() -> std::process::ExitCode {
    tdqs_gate::cli::main()
}
