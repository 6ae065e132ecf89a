//! The `tdqs-gate` command line built inside the tests package, so the end-to-end tests can run
//! the real binary through `env!("CARGO_BIN_EXE_tdqs-gate-dup")` (Cargo exposes only the
//! binaries of the package under test).
fn main() -> std::process::ExitCode {
    tdqs_gate::cli::main()
}
