//! The `[eval]` table of tdqs-gate.toml: turns the gate's selection check on and sets it up.
//!
//! ```toml
//! [eval]
//! mode = "synthetic"        # or "live_model" (the gate's judge selects)
//! cases = "tdqs-eval.toml"  # relative to the repository root
//! offline = false           # live_model: replay the committed cache only
//! max-cost = 200000         # live_model: token budget of the check
//! pace = 1.0                # live_model: seconds between calls
//! cache = ".tdqs/eval-cache"
//! ```

use std::path::PathBuf;

use serde::Deserialize;

use tdqs_core::error::{Error, Stage};
use tdqs_core::eval::Mode;

/// The table as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EvalConfig {
    pub mode: Option<String>,
    pub cases: Option<PathBuf>,
    #[serde(default)]
    pub offline: bool,
    pub max_cost: Option<u64>,
    pub pace: Option<f64>,
    pub cache: Option<PathBuf>,
}

/// Reads a mode as the table or a flag writes it.
pub fn parse_mode(text: &str) -> Option<Mode> {
    match text {
        "live_model" | "live-model" => Some(Mode::LiveModel),
        "synthetic" => Some(Mode::Synthetic),
        _ => None,
    }
}

impl EvalConfig {
    /// Interprets the uninterpreted `[eval]` table; `None` when there is none.
    pub fn from_toml(table: Option<&toml::Value>) -> Result<Option<EvalConfig>, Error> {
        let Some(table) = table else {
            return Ok(None);
        };
        let config: EvalConfig = table.clone().try_into().map_err(|e: toml::de::Error| {
            Error::new(Stage::Config, format!("the [eval] table is not valid: {e}"))
                .with_advice("see docs/eval.md (\"In the gate\") for its keys")
        })?;
        if let Some(mode) = &config.mode {
            if parse_mode(mode).is_none() {
                return Err(Error::new(
                    Stage::Config,
                    format!("[eval] mode = {mode:?} is not a mode"),
                )
                .with_advice("write mode = \"live_model\" or mode = \"synthetic\""));
            }
        }
        // The table comes from the head: its paths stay inside the repository (the case file is
        // read and quoted in errors, the cache folder is written to).
        for (key, path) in [("cases", &config.cases), ("cache", &config.cache)] {
            if let Some(path) = path {
                let inside = path.is_relative()
                    && path.components().all(|c| {
                        matches!(
                            c,
                            std::path::Component::Normal(_) | std::path::Component::CurDir
                        )
                    });
                if !inside {
                    return Err(Error::new(
                        Stage::Config,
                        format!(
                            "[eval] {key} = {:?} leaves the repository",
                            path.display().to_string()
                        ),
                    )
                    .with_advice("give a path relative to the repository root, without `..`"));
                }
            }
        }
        if let Some(p) = config.pace {
            if !(0.0..=3600.0).contains(&p) {
                return Err(Error::new(
                    Stage::Config,
                    format!("[eval] pace = {p} is outside 0–3600 seconds"),
                ));
            }
        }
        Ok(Some(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        let doc: toml::Value = toml::from_str(text).unwrap();
        doc.get("eval").cloned().unwrap()
    }

    #[test]
    fn eval_table_is_read_and_checked() {
        let c = EvalConfig::from_toml(Some(&table(
            "[eval]\nmode = \"synthetic\"\ncases = \"x.toml\"\nmax-cost = 5\n",
        )))
        .unwrap()
        .unwrap();
        assert_eq!(c.mode.as_deref(), Some("synthetic"));
        assert_eq!(c.max_cost, Some(5));
        let bad = EvalConfig::from_toml(Some(&table("[eval]\nmode = \"fast\"\n"))).unwrap_err();
        assert!(bad.cause.contains("fast"));
        let unknown = EvalConfig::from_toml(Some(&table("[eval]\nmodel = \"x\"\n"))).unwrap_err();
        assert!(unknown.cause.contains("model"), "{}", unknown.cause);
        assert_eq!(EvalConfig::from_toml(None).unwrap(), None);
        for outside in [
            "cases = \"../x.toml\"",
            "cache = \"/tmp/c\"",
            "cache = \"a/../../b\"",
        ] {
            let err =
                EvalConfig::from_toml(Some(&table(&format!("[eval]\n{outside}\n")))).unwrap_err();
            assert!(
                err.cause.contains("leaves the repository"),
                "{outside}: {}",
                err.cause
            );
        }
    }
}
