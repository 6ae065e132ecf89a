//! `tdqs-gate install-hook`: a git pre-push hook that runs the gate against the upstream branch.
//!
//! The hook compares each commit being pushed (git names them on the hook's standard input; a
//! push of another branch than the current one does not push `HEAD`) with the base; run by hand,
//! with nothing on standard input, it compares `HEAD`. BLOCK stops the push; INVALID warns and
//! lets it through unless the hook was installed with `--strict`.
//!
//! Without `--base` the hook compares with `origin/master` where that exists (the reference's
//! usage) and otherwise with the remote's default branch (`origin/HEAD`, e.g. `origin/main`).

use std::path::{Path, PathBuf};

use tdqs_core::error::{Error, Stage};

/// Marks hooks this command wrote, so it can replace its own hook without `--force`.
const MARKER: &str = "# installed by tdqs-gate install-hook";

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The base a hook uses when none is given.
pub(crate) const DEFAULT_BASE: &str = "origin/master";

/// The hook script. `auto_base`: the base was not given, so a missing `origin/master` falls
/// back to `origin/HEAD`.
pub fn script(
    base: &str,
    auto_base: bool,
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
auto_base={auto_base}
strict={strict}
gate="${{TDQS_GATE:-}}"
# No origin/master (a repository whose default branch is main): the remote's default branch.
if [ "$auto_base" = 1 ] && ! git rev-parse --verify -q "$base^{{commit}}" >/dev/null 2>&1; then
  remote_head=$(git symbolic-ref -q --short refs/remotes/origin/HEAD 2>/dev/null)
  if [ -n "$remote_head" ]; then
    echo "tdqs-gate: $base does not exist; comparing with $remote_head, the remote's default branch" >&2
    base=$remote_head
  fi
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
        auto_base = if auto_base { 1 } else { 0 },
        strict = if strict { 1 } else { 0 },
        fallback = shell_quote(&fallback_binary.display().to_string()),
    )
}

/// Writes the hook into the repository's hooks folder and returns its path.
pub fn install(
    repo: Option<&Path>,
    base: Option<&str>,
    strict: bool,
    extra_args: Option<&str>,
    force: bool,
) -> Result<PathBuf, Error> {
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
        script(
            base.unwrap_or(DEFAULT_BASE),
            base.is_none(),
            strict,
            extra_args,
            &binary,
        )
        .as_bytes(),
    )?;
    crate::platform::file_modes::make_executable(&path).map_err(|e| {
        Error::io(
            Stage::Config,
            format!("cannot make {} executable", path.display()),
            e,
        )
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_quotes_the_base_and_maps_exit_codes() {
        let s = script(
            "origin/it's",
            false,
            true,
            Some("--judge static"),
            Path::new("/x/tdqs-gate"),
        );
        assert!(s.contains("base='origin/it'\\''s'"));
        assert!(s.contains("strict=1"));
        assert!(s.contains("auto_base=0"));
        assert!(s.contains("tdqs-gate install-hook --strict"));
        assert!(s.contains("git push --no-verify"));
        assert!(s.contains(r#"--head "$1" --judge static </dev/null"#));
        assert!(s.contains("check HEAD HEAD"));
        assert!(s.starts_with("#!/bin/sh\n# installed by tdqs-gate install-hook"));
    }
}
