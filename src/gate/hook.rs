//! `tdqs-gate install-hook`: a git pre-push hook that runs the gate against the upstream branch.
//!
//! The hook compares each commit being pushed (git names them on the hook's standard input; a
//! push of another branch than the current one does not push `HEAD`) with the base; run by hand,
//! with nothing on standard input, it compares `HEAD`. BLOCK stops the push; INVALID warns and
//! lets it through unless the hook was installed with `--strict`.
//!
//! The base is resolved when the hook is installed, not when it runs: a hook whose base cannot
//! be found would make every push INVALID, and a non-strict hook lets INVALID through, so such a
//! hook would let regressions through unnoticed. Without `--base` it is the remote's default
//! branch ([`crate::revision::Repo::upstream_base`]); a given `--base` must resolve. When the base
//! or the gate itself is gone at push time, the problem is the hook's own configuration, not the
//! pushed commit, so the push is refused with the fix, strict or not.

use std::path::{Path, PathBuf};

use tdqs_core::error::{Error, Stage};

/// Marks hooks this command wrote, so it can replace its own hook without `--force`.
const MARKER: &str = "# installed by tdqs-gate install-hook";

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The hook script for a resolved `base`.
pub fn script(
    base: &str,
    strict: bool,
    extra_args: Option<&str>,
    fallback_binary: &Path,
) -> String {
    let extra = extra_args.unwrap_or("");
    format!(
        r#"#!/bin/sh
{MARKER}
# Runs the tool definition gate on each commit being pushed against the base below.
# Exit codes of the gate: 0 PASS, 1 BLOCK, 2 INVALID. Skip once with: git push --no-verify
base={base}
strict={strict}
gate="${{TDQS_GATE:-}}"
# The base was found when the hook was installed. Gone now (a deleted or never-fetched branch),
# every push would be INVALID: refuse rather than let every push through unchecked.
if ! git rev-parse --verify -q "$base^{{commit}}" >/dev/null 2>&1; then
  echo "tdqs-gate: the hook compares pushes with $base, which does not exist in this clone; push refused. Fetch it (git fetch), or reinstall the hook with another base: tdqs-gate install-hook --base <rev>; skip once with: git push --no-verify" >&2
  exit 1
fi
# The gate reads tdqs-gate.toml from each pushed commit, not from the working tree.
config_note=""
if [ -n "$(git status --porcelain -- tdqs-gate.toml 2>/dev/null)" ]; then
  config_note=" (note: tdqs-gate.toml has uncommitted changes, which the pushed commit does not contain; commit them to use them)"
fi
if [ -z "$gate" ]; then
  if command -v tdqs-gate >/dev/null 2>&1; then gate=tdqs-gate; else gate={fallback}; fi
fi
verdict=0
check() {{
  # The gate's standard input is not the hook's: the list of refs stays unread by it.
  "$gate" --base "$base" --head "$1" {extra} </dev/null
  code=$?
  case "$code" in
    0) ;;
    1) echo "tdqs-gate: BLOCK: pushing $2 would lower the tool definitions' TDQS (see .tool-definition-score/tool-definition-score.md)$config_note; skip once with: git push --no-verify" >&2
       verdict=1 ;;
    126|127) echo "tdqs-gate: the hook cannot run the gate ($gate, exit $code); push refused. Put tdqs-gate on PATH, set TDQS_GATE=/path/to/tdqs-gate, or reinstall the hook; skip once with: git push --no-verify" >&2
       verdict=1 ;;
    *) if [ "$strict" = 1 ]; then
         echo "tdqs-gate: INVALID (exit $code) for $2: push refused because the hook is strict$config_note; skip once with: git push --no-verify" >&2
         verdict=1
       else
         echo "tdqs-gate: INVALID (exit $code) for $2: the gate could not decide; the push goes through$config_note. To refuse such pushes, reinstall with: tdqs-gate install-hook --strict; to skip the hook once: git push --no-verify" >&2
       fi ;;
  esac
}}
# git writes "<local ref> <local sha> <remote ref> <remote sha>" per ref it updates.
listed=0
if [ ! -t 0 ]; then
  while read -r local_ref local_sha remote_ref remote_sha; do
    [ -n "$local_sha" ] || continue
    listed=1
    case "$local_sha" in
      *[!0]*) check "$local_sha" "$local_ref" ;;
      *) ;; # a deletion pushes no commit
    esac
  done
fi
# Run by hand, with no refs listed: what is checked out.
if [ "$listed" = 0 ]; then
  check HEAD HEAD
fi
exit "$verdict"
"#,
        base = shell_quote(base),
        strict = if strict { 1 } else { 0 },
        fallback = shell_quote(&fallback_binary.display().to_string()),
    )
}

/// A hook written by [`install`].
#[derive(Debug)]
pub struct Installed {
    /// Where the hook was written.
    pub path: PathBuf,
    /// The revision it compares pushes with.
    pub base: String,
    /// How the base was chosen, when it was not given.
    pub chosen: Option<String>,
}

/// Writes the hook into the repository's hooks folder. The base is resolved first (see the
/// module docs): a hook that could not run is not installed.
pub fn install(
    repo: Option<&Path>,
    base: Option<&str>,
    strict: bool,
    extra_args: Option<&str>,
    force: bool,
) -> Result<Installed, Error> {
    let start = repo
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let git = git2::Repository::discover(&start).map_err(|e| {
        Error::new(
            Stage::Revision,
            format!(
                "{} is not inside a git repository: {}",
                start.display(),
                e.message()
            ),
        )
        .with_advice("run the command inside the repository or pass --repo DIR")
    })?;
    let (base, chosen) = hook_base(&git, base)?;
    // core.hooksPath wins over .git/hooks when it is set.
    let hooks = match git
        .config()
        .ok()
        .and_then(|c| c.get_path("core.hooksPath").ok())
    {
        Some(p) if p.is_absolute() => p,
        Some(p) => git.workdir().unwrap_or_else(|| git.path()).join(p),
        None => git.path().join("hooks"),
    };
    std::fs::create_dir_all(&hooks).map_err(|e| {
        Error::io(
            Stage::Config,
            format!("cannot create {}", hooks.display()),
            e,
        )
    })?;
    let path = hooks.join("pre-push");
    if path.exists() && !force {
        let existing = std::fs::read_to_string(&path).unwrap_or_default();
        if !existing.contains(MARKER) {
            return Err(Error::new(
                Stage::Config,
                format!(
                    "{} already exists and was not written by tdqs-gate",
                    path.display()
                ),
            )
            .with_advice("call tdqs-gate from your existing hook, or pass --force to replace it"));
        }
    }
    let binary = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("tdqs-gate"));
    crate::report::write::atomic_write(
        &path,
        script(&base, strict, extra_args, &binary).as_bytes(),
    )?;
    crate::platform::file_modes::make_executable(&path).map_err(|e| {
        Error::io(
            Stage::Config,
            format!("cannot make {} executable", path.display()),
            e,
        )
    })?;
    Ok(Installed { path, base, chosen })
}

/// The base the hook will use: the given one if it resolves to a commit here, else the remote's
/// default branch.
fn hook_base(
    git: &git2::Repository,
    given: Option<&str>,
) -> Result<(String, Option<String>), Error> {
    let dir = git.workdir().unwrap_or_else(|| git.path());
    let repo = crate::revision::Repo::open_without_pruning(Some(dir))?;
    match given {
        Some(rev) => {
            repo.resolve(rev).map_err(|e| {
                e.context(format!(
                    "the hook would compare every push with '{rev}', which cannot be resolved; not installed"
                ))
            })?;
            Ok((rev.to_string(), None))
        }
        None => {
            let found = repo.upstream_base()?;
            Ok((found.rev, Some(found.how)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_quotes_the_base_and_maps_exit_codes() {
        let s = script(
            "origin/it's",
            true,
            Some("--judge static"),
            Path::new("/x/tdqs-gate"),
        );
        assert!(s.contains("base='origin/it'\\''s'"));
        assert!(s.contains("strict=1"));
        assert!(s.contains("126|127)"));
        assert!(s.contains("tdqs-gate install-hook --strict"));
        assert!(s.contains("git push --no-verify"));
        assert!(s.contains(r#"--head "$1" --judge static </dev/null"#));
        assert!(s.contains("check HEAD HEAD"));
        assert!(s.starts_with("#!/bin/sh\n# installed by tdqs-gate install-hook"));
    }
}
