//! Resolving a revision to a commit, with advice for the usual reason one is missing: a shallow
//! CI checkout.

use tdqs_core::error::{Error, Result, Stage};

/// Resolves `rev` to a commit whose tree is present.
pub(super) fn resolve_commit(
    repo: &git2::Repository,
    rev: &str,
    shallow: bool,
) -> Result<git2::Oid> {
    if rev.trim().is_empty() {
        return Err(Error::usage("the revision is empty")
            .with_advice("pass a commit, branch or tag, e.g. --base origin/main"));
    }
    let object = repo
        .revparse_single(rev)
        .map_err(|e| missing_revision(rev, &e, shallow))?;
    let commit = object.peel_to_commit().map_err(|_| {
        Error::new(
            Stage::Revision,
            format!(
                "revision '{rev}' names a {}, not a commit",
                kind_name(object.kind())
            ),
        )
        .with_advice("pass a commit, branch or tag that points to a commit")
    })?;
    // A commit can be present while its tree is not (a partial clone); fail here rather than in
    // the middle of a checkout.
    commit.tree().map_err(|e| {
        Error::new(
            Stage::Revision,
            format!(
                "the files of commit {} ('{rev}') are not in this clone: {}",
                commit.id(),
                e.message()
            ),
        )
        .with_advice(fetch_advice(rev, shallow))
    })?;
    Ok(commit.id())
}

fn kind_name(kind: Option<git2::ObjectType>) -> &'static str {
    match kind {
        Some(git2::ObjectType::Tree) => "tree",
        Some(git2::ObjectType::Blob) => "blob",
        Some(git2::ObjectType::Tag) => "tag",
        _ => "object",
    }
}

fn missing_revision(rev: &str, err: &git2::Error, shallow: bool) -> Error {
    match err.code() {
        git2::ErrorCode::Ambiguous => Error::new(
            Stage::Revision,
            format!("revision '{rev}' is ambiguous: more than one object starts with it"),
        )
        .with_advice("pass more characters of the commit id, or the full id"),
        git2::ErrorCode::InvalidSpec => Error::new(
            Stage::Revision,
            format!("'{rev}' is not a valid revision: {}", err.message()),
        )
        .with_advice("pass a commit id, branch or tag (see `git help revisions`)"),
        _ if shallow => Error::new(
            Stage::Revision,
            format!(
                "revision '{rev}' is not in this clone: the repository is shallow (.git/shallow), so older commits were never fetched"
            ),
        )
        .with_advice(fetch_advice(rev, true)),
        _ => Error::new(Stage::Revision, format!("revision '{rev}' is not in this repository"))
            .with_advice(fetch_advice(rev, false)),
    }
}

/// Names the command that brings `rev` into the clone. A plain name or id can be fetched by
/// name; an expression such as `HEAD~1` only by deepening the history.
pub(super) fn fetch_advice(rev: &str, shallow: bool) -> String {
    let fetchable = !rev.contains(['~', '^', '@', ':', ' ']);
    // `origin/main` is fetched from origin as `main`.
    let remote_name = rev
        .strip_prefix("refs/remotes/origin/")
        .or_else(|| rev.strip_prefix("origin/"))
        .unwrap_or(rev);
    match (fetchable, shallow) {
        (true, true) => format!(
            "fetch it before running the gate with `git fetch --no-tags --depth=1 origin {remote_name}`, or check out the whole history (actions/checkout with `fetch-depth: 0`)"
        ),
        (false, true) => "fetch the missing history with `git fetch --unshallow origin`, or check out the whole history (actions/checkout with `fetch-depth: 0`)".to_string(),
        (true, false) => format!(
            "check the name; if it exists on the remote, fetch it first with `git fetch origin {remote_name}` (in GitHub Actions: actions/checkout with `fetch-depth: 0`)"
        ),
        (false, false) => "check the revision; if its history is on the remote, fetch it first with `git fetch origin`".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_names_a_fetch_of_the_revision_when_it_can_be_fetched_by_name() {
        let advice = fetch_advice("0123abcd", true);
        assert!(
            advice.contains("git fetch --no-tags --depth=1 origin 0123abcd"),
            "{advice}"
        );
        assert!(advice.contains("fetch-depth: 0"), "{advice}");
        let advice = fetch_advice("origin/main", false);
        assert!(advice.contains("`git fetch origin main`"), "{advice}");
    }

    #[test]
    fn advice_deepens_history_for_relative_revisions() {
        let advice = fetch_advice("HEAD~1", true);
        assert!(advice.contains("--unshallow"), "{advice}");
        assert!(!advice.contains("origin HEAD~1"), "{advice}");
    }
}
