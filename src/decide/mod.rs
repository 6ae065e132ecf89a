//! The decision rule: PASS, BLOCK or INVALID.
