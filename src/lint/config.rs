//! The `[lint]` table of `tdqs-gate.toml`:
//!
//! ```toml
//! [lint]
//! fail-on = "warning"     # error | warning | info | never (also `fail_on`)
//! fail-under = 60         # fail when the average scorecard is below this
//!
//! [lint.rules]
//! TDQS-D012 = "off"       # off | info | warning | error
//! TDQS-A003 = "warning"
//!
//! [[lint.suppress]]       # accept one finding; the reason is required
//! code = "TDQS-D007"
//! tool = "search"         # optional; also `parameter`
//! reason = "the query syntax is in the server's instructions"
//! ```
//!
//! Anything unknown (a key, a code, a level) is a usage error: a rule the user believes is off
//! but is not is worse than one they never touched.

use std::collections::BTreeMap;
use std::str::FromStr;

use tdqs_core::error::{Error, Stage};

use super::catalogue::{Code, Severity};

/// At which severity `tdqs-gate lint` fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    /// The lowest severity that fails, or none.
    pub fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Error => "error",
            FailOn::Warning => "warning",
            FailOn::Info => "info",
            FailOn::Never => "never",
        }
    }
}

impl FromStr for FailOn {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "error" => Ok(FailOn::Error),
            "warning" => Ok(FailOn::Warning),
            "info" => Ok(FailOn::Info),
            "never" | "off" => Ok(FailOn::Never),
            other => Err(Error::usage(format!("unknown --fail-on level `{other}`"))
                .with_advice("use one of: error, warning, info, never")),
        }
    }
}

/// Severity overrides and thresholds for a lint run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LintConfig {
    /// Code → new severity, or `None` to turn the rule off.
    pub levels: BTreeMap<Code, Option<Severity>>,
    /// Default for `--fail-on` (the command line wins).
    pub fail_on: Option<FailOn>,
    /// Default for `--fail-under` (the command line wins).
    pub fail_under: Option<f64>,
    /// `[[lint.suppress]]`: findings accepted, each with its reason.
    pub suppressions: Vec<super::baseline::Suppression>,
}

fn config_error(cause: String) -> Error {
    Error::new(Stage::Config, cause).with_advice(
        "fix the [lint] table of tdqs-gate.toml; `docs/lint.md` lists every code and level",
    )
}

fn parse_level(code: &str, value: &toml::Value) -> Result<Option<Severity>, Error> {
    match value.as_str() {
        Some("off") => Ok(None),
        Some("info") => Ok(Some(Severity::Info)),
        Some("warning") => Ok(Some(Severity::Warning)),
        Some("error") => Ok(Some(Severity::Error)),
        _ => Err(config_error(format!(
            "[lint.rules] {code} = {value}: the level must be \"off\", \"info\", \"warning\" or \"error\""
        ))),
    }
}

impl LintConfig {
    /// Reads the `[lint]` table (the value of the `lint` key, or `None` when the file has none).
    pub fn from_toml(table: Option<&toml::Value>) -> Result<LintConfig, Error> {
        let mut config = LintConfig::default();
        let Some(table) = table else {
            return Ok(config);
        };
        let Some(table) = table.as_table() else {
            return Err(config_error("[lint] must be a table".to_string()));
        };
        for (key, value) in table {
            match key.as_str() {
                "fail-on" | "fail_on" => {
                    let s = value.as_str().ok_or_else(|| {
                        config_error("[lint] fail_on must be a string".to_string())
                    })?;
                    config.fail_on = Some(s.parse().map_err(|_| {
                        config_error(format!(
                            "[lint] fail_on = \"{s}\": use error, warning, info or never"
                        ))
                    })?);
                }
                "fail-under" | "fail_under" => {
                    let v = value
                        .as_float()
                        .or_else(|| value.as_integer().map(|i| i as f64))
                        .filter(|v| (0.0..=100.0).contains(v))
                        .ok_or_else(|| {
                            config_error(
                                "[lint] fail_under must be a number from 0 to 100".to_string(),
                            )
                        })?;
                    config.fail_under = Some(v);
                }
                "rules" => {
                    let rules_table = value.as_table().ok_or_else(|| {
                        config_error("[lint.rules] must be a table of code = level".to_string())
                    })?;
                    for (code, level) in rules_table {
                        let Some(known) = Code::parse(code) else {
                            return Err(Error::usage(format!(
                                "[lint.rules] names an unknown code `{code}`"
                            ))
                            .with_advice(
                                "check the spelling against `docs/lint.md`; codes look like TDQS-D007",
                            ));
                        };
                        config.levels.insert(known, parse_level(code, level)?);
                    }
                }
                "suppress" => {
                    config.suppressions = super::baseline::suppressions_from_toml(value)?;
                }
                other => {
                    return Err(Error::usage(format!("[lint] has an unknown key `{other}`"))
                        .with_advice(
                            "the [lint] table takes fail_on, fail_under, a [lint.rules] table and \
                             [[lint.suppress]] tables",
                        ));
                }
            }
        }
        Ok(config)
    }

    /// Narrows the rules to a command line's `--select` (when any is given, only the codes it
    /// names stay on) and `--ignore` (the codes it names go off), after the `[lint.rules]`
    /// levels. A selection that names no rule is a usage error: a typo must not quietly turn
    /// every rule off, or none.
    pub fn restrict(&mut self, select: &[String], ignore: &[String]) -> Result<(), Error> {
        let resolve = |flag: &str, selections: &[String]| -> Result<Vec<Code>, Error> {
            let mut codes = Vec::new();
            for selection in selections {
                let matched = Code::matching(selection);
                if matched.is_empty() {
                    return Err(
                        Error::usage(format!("{flag} `{selection}` names no lint rule"))
                            .with_advice(
                                "give a code (TDQS-D007 or D007) or a prefix of one: a family (D \
                         description, N naming, P parameters, A annotations, B budget, M \
                         model-directed text) or a group (D00); `docs/lint.md` lists every code",
                            ),
                    );
                }
                codes.extend(matched);
            }
            Ok(codes)
        };
        let selected = resolve("--select", select)?;
        let ignored = resolve("--ignore", ignore)?;
        if !select.is_empty() {
            for rule in super::catalogue::RULES {
                if !selected.contains(&rule.code) {
                    self.levels.insert(rule.code, None);
                }
            }
        }
        for code in ignored {
            self.levels.insert(code, None);
        }
        Ok(())
    }

    /// The effective severity of a code (`None` when it is turned off).
    pub fn level(&self, code: Code) -> Option<Severity> {
        match self.levels.get(&code) {
            Some(level) => *level,
            None => Some(code.rule().severity),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        match toml::from_str::<toml::Value>(text) {
            Ok(v) => v
                .get("lint")
                .cloned()
                .unwrap_or(toml::Value::Boolean(false)),
            Err(e) => unreachable!("test TOML does not parse: {e}"),
        }
    }

    #[test]
    fn relevels_and_disables() {
        let t = table("[lint]\nfail_on = \"warning\"\nfail_under = 60\n[lint.rules]\nTDQS-D012 = \"off\"\nTDQS-A003 = \"warning\"\n");
        let c = LintConfig::from_toml(Some(&t)).map_err(|e| e.render());
        let c = c.as_ref().map_err(String::as_str);
        assert_eq!(c.map(|c| c.level(Code::D012)), Ok(None));
        assert_eq!(c.map(|c| c.level(Code::A003)), Ok(Some(Severity::Warning)));
        assert_eq!(c.map(|c| c.level(Code::D001)), Ok(Some(Severity::Error)));
        assert_eq!(c.map(|c| c.fail_on), Ok(Some(FailOn::Warning)));
        assert_eq!(c.map(|c| c.fail_under), Ok(Some(60.0)));
    }

    #[test]
    fn unknown_code_is_a_usage_error() {
        let t = table("[lint.rules]\nTDQS-X999 = \"off\"\n");
        let err = LintConfig::from_toml(Some(&t))
            .err()
            .map(|e| (e.stage, e.cause));
        assert_eq!(
            err,
            Some((
                Stage::Usage,
                "[lint.rules] names an unknown code `TDQS-X999`".to_string()
            ))
        );
    }

    #[test]
    fn select_keeps_only_what_it_names_and_ignore_turns_off() {
        let mut c = LintConfig::from_toml(Some(&table("[lint.rules]\nTDQS-D012 = \"error\"\n")))
            .unwrap_or_default();
        assert!(c
            .restrict(
                &["D01".to_string(), "TDQS-A003".to_string()],
                &["d013".to_string()]
            )
            .is_ok());
        assert_eq!(c.level(Code::D012), Some(Severity::Error));
        assert_eq!(c.level(Code::A003), Some(Code::A003.rule().severity));
        assert_eq!(c.level(Code::D013), None);
        assert_eq!(c.level(Code::D001), None);
        assert_eq!(c.level(Code::N001), None);
        let mut c = LintConfig::default();
        let err = c.restrict(&[], &["TDQS-Z1".to_string()]).err();
        assert_eq!(
            err.map(|e| (e.stage, e.cause)),
            Some((
                Stage::Usage,
                "--ignore `TDQS-Z1` names no lint rule".to_string()
            ))
        );
        assert_eq!(c, LintConfig::default());
    }

    #[test]
    fn unknown_key_and_bad_level_are_errors() {
        assert!(LintConfig::from_toml(Some(&table("[lint]\nfail_onn = \"error\"\n"))).is_err());
        assert!(
            LintConfig::from_toml(Some(&table("[lint.rules]\nTDQS-D001 = \"loud\"\n"))).is_err()
        );
        assert!("sometimes".parse::<FailOn>().is_err());
    }
}
