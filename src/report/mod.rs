//! The JSON report, its Markdown summary and `--check`.
