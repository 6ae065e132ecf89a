//! The TDQS v1.3 specification: pins (`tdqs/version.json`), the four prompts fetched from the
//! pinned commit and checked against their hashes, the placeholder grammar, context signals.

pub mod signals;
