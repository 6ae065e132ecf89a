//! Parsing and validating a judge's answer text.
