//! Resolving a revision to a commit, with advice that fits why one is missing: a shallow CI
//! checkout, a name that is not fetched yet, a typo of a branch that exists, a remote that does
//! not exist, or `master` where the repository's default branch is `main`.

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
        .map_err(|e| missing_revision(repo, rev, &e, shallow))?;
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
        .with_advice(fetch_advice(&Refs::read(repo), rev, shallow))
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

fn missing_revision(repo: &git2::Repository, rev: &str, err: &git2::Error, shallow: bool) -> Error {
    let refs = Refs::read(repo);
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
        .with_advice(fetch_advice(&refs, rev, true)),
        _ => Error::new(Stage::Revision, format!("revision '{rev}' is not in this repository"))
            .with_advice(fetch_advice(&refs, rev, false)),
    }
}

/// The names a revision could have meant: what the advice for a missing one is chosen from.
#[derive(Debug, Default, Clone)]
pub(crate) struct Refs {
    /// Configured remotes, e.g. `origin`.
    pub remotes: Vec<String>,
    /// Short names of local branches, remote-tracking branches (`origin/main`) and tags.
    pub names: Vec<String>,
}

impl Refs {
    pub(crate) fn read(repo: &git2::Repository) -> Refs {
        let remotes = repo
            .remotes()
            .map(|list| list.iter().flatten().map(str::to_string).collect())
            .unwrap_or_default();
        let mut names = Vec::new();
        if let Ok(references) = repo.references() {
            for reference in references.flatten() {
                let Some(full) = reference.name() else {
                    continue;
                };
                let short = full
                    .strip_prefix("refs/heads/")
                    .or_else(|| full.strip_prefix("refs/remotes/"))
                    .or_else(|| full.strip_prefix("refs/tags/"));
                // `origin/HEAD` is an alias of a branch, not a name anyone types by mistake.
                if let Some(short) = short.filter(|s| !s.ends_with("/HEAD")) {
                    names.push(short.to_string());
                }
            }
        }
        names.sort();
        names.dedup();
        Refs { remotes, names }
    }

    fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// The remote `rev` names as its first path segment (`origin` of `origin/main`), and the
    /// rest: `None` when the first segment is no configured remote.
    fn split_remote<'r>(&self, rev: &'r str) -> Option<(&'r str, &'r str)> {
        let rev = rev.strip_prefix("refs/remotes/").unwrap_or(rev);
        let (remote, branch) = rev.split_once('/')?;
        self.remotes
            .iter()
            .any(|r| r == remote)
            .then_some((remote, branch))
    }
}

/// Names the fix for a revision that could not be found: the existing name it is probably a typo
/// of, the default branch it probably meant, the remote that does not exist, or the fetch that
/// brings it into the clone. A plain name or id can be fetched by name; an expression such as
/// `HEAD~1` only by deepening the history.
pub(crate) fn fetch_advice(refs: &Refs, rev: &str, shallow: bool) -> String {
    let expression = rev.contains(['~', '^', '@', ':', ' ']);
    if !expression {
        if let Some(advice) = name_advice(refs, rev) {
            return advice;
        }
    }
    let Some(remote) = fetch_remote(refs, rev) else {
        return no_remote_advice(refs, rev);
    };
    let remote_name = refs
        .split_remote(rev)
        .map(|(_, branch)| branch)
        .unwrap_or(rev);
    match (!expression, shallow) {
        (true, true) => format!(
            "fetch it before running the gate with `git fetch --no-tags --depth=1 {remote} {remote_name}`, or check out the whole history (actions/checkout with `fetch-depth: 0`)"
        ),
        (false, true) => format!("fetch the missing history with `git fetch --unshallow {remote}`, or check out the whole history (actions/checkout with `fetch-depth: 0`)"),
        (true, false) => format!(
            "check the name; if it exists on the remote, fetch it first with `git fetch {remote} {remote_name}` (in GitHub Actions: actions/checkout with `fetch-depth: 0`)"
        ),
        (false, false) => format!("check the revision; if its history is on the remote, fetch it first with `git fetch {remote}`"),
    }
}

/// The remote a fetch of `rev` would use: the one `rev` names, else `origin`, else the only one.
fn fetch_remote(refs: &Refs, rev: &str) -> Option<String> {
    if let Some((remote, _)) = refs.split_remote(rev) {
        return Some(remote.to_string());
    }
    if refs.remotes.iter().any(|r| r == "origin") {
        return Some("origin".to_string());
    }
    match refs.remotes.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    }
}

fn no_remote_advice(refs: &Refs, rev: &str) -> String {
    let branches = suggest_list(refs);
    if refs.remotes.is_empty() {
        format!(
            "this repository has no remote, so '{rev}' cannot be fetched: pass a branch, tag or commit that exists here{branches}"
        )
    } else {
        format!(
            "this repository has no remote named '{}' (its remotes: {}): pass a branch, tag or commit that exists here{branches}",
            rev.split('/').next().unwrap_or(rev),
            refs.remotes.join(", ")
        )
    }
}

fn suggest_list(refs: &Refs) -> String {
    if refs.names.is_empty() {
        return String::new();
    }
    let shown: Vec<&str> = refs.names.iter().take(8).map(String::as_str).collect();
    let more = if refs.names.len() > shown.len() {
        ", …"
    } else {
        ""
    };
    format!(" (for example {}{more})", shown.join(", "))
}

/// Advice that names an existing ref: `main` for `master` (and back), on the same remote, or the
/// closest name by edit distance for a typo. `None` when nothing close exists.
fn name_advice(refs: &Refs, rev: &str) -> Option<String> {
    let (prefix, branch) = match rev.rsplit_once('/') {
        Some((prefix, branch)) => (format!("{prefix}/"), branch),
        None => (String::new(), rev),
    };
    // A remote that does not exist: `origin/main` in a repository without `origin`.
    if !prefix.is_empty() && refs.split_remote(rev).is_none() && !refs.has(rev) {
        let first = rev.split('/').next().unwrap_or(rev);
        let local = rev.split_once('/').map(|(_, b)| b).unwrap_or(rev);
        let looks_remote = first == "origin" || first == "upstream";
        if looks_remote && !refs.remotes.iter().any(|r| r == first) {
            let instead = if refs.has(local) {
                format!(": the local branch '{local}' exists; pass --base {local}")
            } else {
                suggest_list(refs)
            };
            let remotes = if refs.remotes.is_empty() {
                "this repository has no remote".to_string()
            } else {
                format!("its remotes are {}", refs.remotes.join(", "))
            };
            return Some(format!(
                "there is no remote named '{first}' ({remotes}){instead}"
            ));
        }
    }
    let twin = match branch {
        "master" => Some("main"),
        "main" => Some("master"),
        _ => None,
    };
    if let Some(twin) = twin {
        let other = format!("{prefix}{twin}");
        if refs.has(&other) {
            return Some(format!(
                "'{rev}' does not exist but '{other}' does (the repository's default branch is probably '{twin}'): pass --base {other}"
            ));
        }
    }
    let closest = closest_name(refs, rev)?;
    Some(format!(
        "did you mean '{closest}'? It exists here; pass --base {closest}"
    ))
}

/// The existing name nearest to `rev`, when it is near enough to be a typo of it: at most one
/// edit for short names, two for longer ones. Ties go to the first in sorted order.
fn closest_name<'r>(refs: &'r Refs, rev: &str) -> Option<&'r str> {
    let limit = if rev.chars().count() <= 4 { 1 } else { 2 };
    refs.names
        .iter()
        .map(|name| (edit_distance(rev, name), name))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name.as_str())
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters each count one (`mian` is one edit from `main`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// The branch a pre-push hook compares with when none is given, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamBase {
    /// A remote-tracking branch, e.g. `origin/main`.
    pub rev: String,
    /// How it was chosen, for the message `install-hook` prints.
    pub how: String,
}

/// Finds the branch pushes are merged into: the remote's default branch as the clone records it
/// (`origin/HEAD`), else as the remote reports it (reachable only for remotes on this machine:
/// this build of libgit2 speaks no network protocol), else `main`, else `master` on that remote.
/// The remote is the current branch's upstream remote, else `origin`, else the only one.
/// Never a local branch: comparing a push with the branch being pushed would pass everything.
pub(super) fn upstream_base(repo: &git2::Repository) -> Result<UpstreamBase> {
    let refs = Refs::read(repo);
    let remote = branch_remote(repo)
        .filter(|r| refs.remotes.contains(r))
        .or_else(|| fetch_remote(&refs, ""))
        .ok_or_else(|| {
            Error::new(
                Stage::Config,
                if refs.remotes.is_empty() {
                    "this repository has no remote, so there is no upstream branch for the hook to compare pushes with".to_string()
                } else {
                    format!(
                        "this repository has several remotes ({}) and none is named origin or set as the current branch's upstream",
                        refs.remotes.join(", ")
                    )
                },
            )
            .with_advice("pass the branch pushes are merged into: tdqs-gate install-hook --base <remote>/<branch>")
        })?;
    let symbolic = format!("refs/remotes/{remote}/HEAD");
    if let Some(target) = repo
        .find_reference(&symbolic)
        .ok()
        .and_then(|r| r.symbolic_target().map(str::to_string))
    {
        if let Some(short) = target.strip_prefix("refs/remotes/") {
            if refs.has(short) {
                return Ok(UpstreamBase {
                    rev: short.to_string(),
                    how: format!("the remote's default branch ({remote}/HEAD)"),
                });
            }
        }
    }
    if let Some(branch) = reported_default_branch(repo, &remote) {
        let rev = format!("{remote}/{branch}");
        if refs.has(&rev) {
            return Ok(UpstreamBase {
                rev,
                how: format!("the default branch that {remote} reports"),
            });
        }
    }
    for branch in ["main", "master"] {
        let rev = format!("{remote}/{branch}");
        if refs.has(&rev) {
            return Ok(UpstreamBase {
                rev,
                how: format!("{remote} has no HEAD recorded; its '{branch}' branch"),
            });
        }
    }
    Err(Error::new(
        Stage::Config,
        format!(
            "there is no branch of {remote} to compare pushes with: {remote}/HEAD, {remote}/main and {remote}/master are all missing from this clone"
        ),
    )
    .with_advice(format!(
        "fetch the remote first (`git fetch {remote}`, or push your branch once with `git push -u {remote} <branch>`), then install again; or pass --base <rev>"
    )))
}

/// The remote the checked-out branch tracks (`branch.<name>.remote`).
fn branch_remote(repo: &git2::Repository) -> Option<String> {
    let head = repo.head().ok()?;
    let name = head.shorthand()?;
    repo.config()
        .ok()?
        .get_string(&format!("branch.{name}.remote"))
        .ok()
}

/// The default branch as the remote itself reports it, where it can be asked without a network.
fn reported_default_branch(repo: &git2::Repository, remote: &str) -> Option<String> {
    let mut remote = repo.find_remote(remote).ok()?;
    let url = remote.url()?.to_string();
    // Only a remote on this machine: a path, or a file:// URL. Anything else needs a network
    // protocol this build does not carry, and must not make installing a hook wait on one.
    let local = url.starts_with('/') || url.starts_with("file://") || url.starts_with('.');
    if !local {
        return None;
    }
    let connection = remote
        .connect_auth(git2::Direction::Fetch, None, None)
        .ok()?;
    let branch = connection.default_branch().ok()?;
    branch
        .as_str()?
        .strip_prefix("refs/heads/")
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(remotes: &[&str], names: &[&str]) -> Refs {
        Refs {
            remotes: remotes.iter().map(|s| s.to_string()).collect(),
            names: names.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn advice_names_a_fetch_of_the_revision_when_it_can_be_fetched_by_name() {
        let origin = refs(&["origin"], &["origin/main"]);
        let advice = fetch_advice(&origin, "0123abcd", true);
        assert!(
            advice.contains("git fetch --no-tags --depth=1 origin 0123abcd"),
            "{advice}"
        );
        assert!(advice.contains("fetch-depth: 0"), "{advice}");
        let advice = fetch_advice(&origin, "origin/release-2", false);
        assert!(advice.contains("`git fetch origin release-2`"), "{advice}");
    }

    #[test]
    fn advice_deepens_history_for_relative_revisions() {
        let advice = fetch_advice(&refs(&["origin"], &[]), "HEAD~1", true);
        assert!(advice.contains("--unshallow"), "{advice}");
        assert!(!advice.contains("origin HEAD~1"), "{advice}");
    }

    #[test]
    fn a_typo_of_a_local_branch_names_the_branch_instead_of_a_fetch() {
        let advice = fetch_advice(&refs(&["origin"], &["main", "origin/main"]), "mian", false);
        assert!(advice.contains("did you mean 'main'?"), "{advice}");
        assert!(!advice.contains("git fetch"), "{advice}");
    }

    #[test]
    fn master_where_only_main_exists_names_main() {
        let advice = fetch_advice(
            &refs(&["origin"], &["main", "origin/main"]),
            "origin/master",
            false,
        );
        assert!(advice.contains("'origin/main' does"), "{advice}");
        assert!(advice.contains("--base origin/main"), "{advice}");
        assert!(!advice.contains("git fetch"), "{advice}");
    }

    #[test]
    fn without_an_origin_remote_no_fetch_from_origin_is_advised() {
        let advice = fetch_advice(&refs(&[], &["main", "topic"]), "origin/main", false);
        assert!(advice.contains("no remote named 'origin'"), "{advice}");
        assert!(advice.contains("--base main"), "{advice}");
        assert!(!advice.contains("git fetch"), "{advice}");
        let advice = fetch_advice(&refs(&[], &["main"]), "release", false);
        assert!(advice.contains("has no remote"), "{advice}");
        assert!(!advice.contains("git fetch"), "{advice}");
        let advice = fetch_advice(&refs(&["upstream"], &["upstream/main"]), "feature-x", false);
        assert!(
            advice.contains("`git fetch upstream feature-x`"),
            "{advice}"
        );
    }

    #[test]
    fn edit_distance_counts_a_swap_as_one_edit() {
        assert_eq!(edit_distance("mian", "main"), 1);
        assert_eq!(edit_distance("main", "main"), 0);
        assert_eq!(edit_distance("develop", "devel"), 2);
        assert_eq!(edit_distance("abc", "xyz"), 3);
    }
}
