//! `tdqs-gate.toml` at the repository root.
