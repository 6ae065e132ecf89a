//! Fetching the TDQS v1.3 specification: the README at the pinned commit, cached and verified
//! ([`fetch`]), and the pins of a run ([`load_pins`]). The pins, prompts and placeholder grammar
//! themselves are [`tdqs_core::spec`].

pub mod fetch;

use std::path::Path;

use tdqs_core::error::{Error, Stage};
use tdqs_core::spec::{Pins, PinsOrigin};

pub use fetch::{load_prompts, FetchOptions, LoadedPrompts, PromptProvenance, PromptSource};

/// The pins of a run: `--pins FILE` when given, else the ones compiled into the binary.
pub fn load_pins(file: Option<&Path>) -> Result<Pins, Error> {
    match file {
        Some(path) => pins_from_file(path),
        None => Pins::embedded(),
    }
}

/// Pins read from a file (`--pins FILE`).
pub fn pins_from_file(path: &Path) -> Result<Pins, Error> {
    let text = std::fs::read_to_string(path).map_err(|err| {
        Error::io(
            Stage::Config,
            format!("cannot read pins file {}", path.display()),
            err,
        )
        .with_advice("pass --pins a readable JSON file shaped like tdqs/version.json")
    })?;
    Pins::from_json_text(&text, PinsOrigin::File(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_pins_file_is_named() {
        let missing = pins_from_file(Path::new("/nonexistent/pins.json")).unwrap_err();
        assert!(
            missing.cause.contains("/nonexistent/pins.json"),
            "{}",
            missing.cause
        );
    }
}
