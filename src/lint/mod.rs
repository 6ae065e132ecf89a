//! `tdqs-gate lint`: deterministic findings on tool definitions.
