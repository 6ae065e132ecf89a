//! Reading the case file: `tdqs-eval.toml` at the root of the server's repository (or the file
//! given with `--cases`).

use std::path::Path;

use tdqs_core::error::{Error, Stage};
use tdqs_core::eval::case::Suite;

use crate::platform::safe_file::{first_link_below, read_regular, Links, ReadError};

/// The case file's name at the repository root.
pub const SUITE_FILE: &str = "tdqs-eval.toml";

/// Largest case file read (4 MiB).
const MAX_SUITE_BYTES: u64 = 4 * 1024 * 1024;

const FORMAT_ADVICE: &str = "see docs/eval.md (\"The case file\"): `version = 1`, then one \
     [[case]] table per case with id, request, expect (a tool name or \"NO_TOOL\"), kind \
     (positive, sibling or abstain) and provenance (human_fixture, user_defined or ai_generated)";

/// Reads and checks a case file. A missing file, bad TOML, an unknown key or an inconsistent
/// case is an error naming the file and every problem.
///
/// `tree` is the repository the path was found in (the default file, or `[eval] cases`) — in a
/// pull request, the head's tree: then no symbolic link below it is followed, since a link could
/// point the read at a file outside the repository whose lines a TOML error would quote. A path
/// given on the command line (`tree` = `None`) is trusted and followed.
pub fn load(path: &Path, tree: Option<&Path>) -> Result<Suite, Error> {
    if let Some(link) = tree.and_then(|root| first_link_below(root, path)) {
        return Err(Error::new(
            Stage::Eval,
            format!(
                "the case file {} is reached through the symbolic link {}, which is not followed",
                path.display(),
                link.display()
            ),
        )
        .with_advice(
            "commit the case file itself at that path, or give a trusted path with --cases / --eval-cases",
        ));
    }
    let links = if tree.is_some() {
        Links::Refuse
    } else {
        Links::Follow
    };
    let bytes = match read_regular(path, links, MAX_SUITE_BYTES) {
        Ok(b) => b,
        Err(ReadError::NotFound) => {
            return Err(Error::new(
                Stage::Eval,
                format!("there is no case file at {}", path.display()),
            )
            .with_advice(format!(
                "write {SUITE_FILE} at the repository root (or draft one with `tdqs-gate eval --init`), \
                 or point --cases at your file"
            )))
        }
        Err(e) => {
            return Err(Error::new(
                Stage::Eval,
                format!("cannot read the case file {}: {e}", path.display()),
            ))
        }
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::new(
            Stage::Eval,
            format!("the case file {} is not UTF-8", path.display()),
        )
    })?;
    parse(&text).map_err(|problems| {
        Error::new(
            Stage::Eval,
            format!(
                "the case file {} is not valid: {}",
                path.display(),
                problems.join("; ")
            ),
        )
        .with_advice(FORMAT_ADVICE)
    })
}

/// Parses and checks a case file's text.
pub fn parse(text: &str) -> Result<Suite, Vec<String>> {
    let suite: Suite = toml::from_str(text).map_err(|e| vec![e.to_string().trim().to_string()])?;
    suite.check()?;
    Ok(suite)
}

/// The suite as TOML, cases in order (what `eval --init` writes).
pub fn render(suite: &Suite) -> Result<String, Error> {
    toml::to_string(suite)
        .map_err(|e| Error::internal(format!("cannot write the case file as TOML: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tdqs_core::eval::case::{CaseKind, Choice};

    #[test]
    fn case_file_parses_and_round_trips() {
        let text = r#"
version = 1

[[case]]
id = "email-lookup"
request = "Who has the address ann@example.com?"
expect = "search_users"
kind = "positive"
provenance = "human_fixture"

[[case]]
id = "sms"
request = "Text Ann that the build broke"
expect = "NO_TOOL"
kind = "abstain"
provenance = "user_defined"
"#;
        let suite = parse(text).unwrap();
        assert_eq!(suite.cases.len(), 2);
        assert_eq!(suite.cases[1].expect, Choice::NoTool);
        assert_eq!(suite.cases[1].kind, CaseKind::Abstain);
        let again = parse(&render(&suite).unwrap()).unwrap();
        assert_eq!(again, suite);
    }

    #[test]
    fn case_file_refuses_unknown_keys_and_kinds() {
        let unknown = "version = 1\n[[case]]\nid='a'\nrequest='r'\nexpect='t'\nkind='positive'\nprovenance='user_defined'\nexpected='t'\n";
        let err = parse(unknown).unwrap_err().join(" ");
        assert!(err.contains("expected"), "{err}");
        let kind = "version = 1\n[[case]]\nid='a'\nrequest='r'\nexpect='t'\nkind='negative'\nprovenance='user_defined'\n";
        let err = parse(kind).unwrap_err().join(" ");
        assert!(err.contains("negative"), "{err}");
    }
}
