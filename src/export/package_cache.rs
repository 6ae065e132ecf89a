//! The persistent package cache: a folder outside every tree where package managers keep what
//! they download, so that `npm ci`, `uv sync`, `cargo build` or `go build` in a setup command
//! does not fetch everything again on every run (or fail on a runner without network access to
//! refill it).
//!
//! Servers and setup commands get a temporary HOME (`isolate-home`, the default), and with it
//! every tool's default cache would be thrown away after each run. Instead the gate points the
//! usual variables at subfolders of one cache root:
//!
//! | Variable | Tool | Subfolder |
//! |---|---|---|
//! | `npm_config_cache` | npm, npx | `npm` |
//! | `PNPM_HOME`, `pnpm_config_store_dir` | pnpm (its store: `PNPM_HOME/store` up to pnpm 10, the variable from 11) | `pnpm`, `pnpm/store` |
//! | `YARN_CACHE_FOLDER` | yarn (classic) | `yarn` |
//! | `UV_CACHE_DIR` | uv, uvx | `uv` |
//! | `PIP_CACHE_DIR` | pip | `pip` |
//! | `CARGO_HOME` | cargo (registry and git checkouts) | `cargo` |
//! | `GOMODCACHE`, `GOCACHE` | go | `go-mod`, `go-build` |
//!
//! The root is `$TDQS_GATE_PACKAGE_CACHE` when set (an absolute path; `off` turns the cache
//! off), otherwise `tdqs-gate/packages` in the user's cache folder (`$XDG_CACHE_HOME`, else
//! `~/.cache`; `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows). Only the gate's own
//! environment chooses the root — never `tdqs-gate.toml`, which the pull request controls.
//! `[server] package-cache = false` turns the cache off; so does `isolate-home = false` (the
//! host's own caches are then used as they are). A variable set in `[server] env` or named in
//! `pass-env` wins over the cache's.
//!
//! Trade-off: the folder is shared by every run on the machine, and the code of a pull request
//! can write into it, so one run can leave a poisoned package there for the next (package
//! managers verify registry downloads against lockfile hashes, but not everything they cache).
//! On a runner that keeps state between jobs and judges pull requests from people you do not
//! trust, turn it off (`TDQS_GATE_PACKAGE_CACHE=off`) or give each job its own folder.

use std::path::{Path, PathBuf};

use tdqs_core::error::{Error, Result, Stage};

/// The variable that chooses the cache root (or `off`).
pub(crate) const CACHE_ENV: &str = "TDQS_GATE_PACKAGE_CACHE";

/// Variable → subfolder of the cache root.
///
/// pnpm's store is not named with `npm_config_store_dir`, although pnpm up to 10 reads it: npm
/// reads every `npm_config_*` variable too, and warns `Unknown env config "store-dir"` in every
/// setup command's output. pnpm puts its store under `PNPM_HOME` (7.14 to 10) or reads
/// `pnpm_config_store_dir` (11 on); both name the same folder, and npm reads neither.
pub const CACHE_VARIABLES: [(&str, &str); 9] = [
    ("npm_config_cache", "npm"),
    ("PNPM_HOME", "pnpm"),
    ("pnpm_config_store_dir", "pnpm/store"),
    ("YARN_CACHE_FOLDER", "yarn"),
    ("UV_CACHE_DIR", "uv"),
    ("PIP_CACHE_DIR", "pip"),
    ("CARGO_HOME", "cargo"),
    ("GOMODCACHE", "go-mod"),
    ("GOCACHE", "go-build"),
];

/// The cache root chosen by the gate's environment (`get` reads it), or `None` when turned off
/// or when there is no home to put it in.
pub fn cache_root(get: impl Fn(&str) -> Option<String>) -> Result<Option<PathBuf>> {
    if let Some(value) = get(CACHE_ENV) {
        let value = value.trim();
        if value.is_empty()
            || matches!(
                value.to_ascii_lowercase().as_str(),
                "off" | "0" | "false" | "no"
            )
        {
            return Ok(None);
        }
        let path = PathBuf::from(value);
        if !path.is_absolute() {
            return Err(Error::new(
                Stage::Config,
                format!("{CACHE_ENV}={value} is not an absolute path"),
            )
            .with_advice(format!(
                "set {CACHE_ENV} to an absolute folder, or to `off` to turn the package cache off"
            )));
        }
        return Ok(Some(path));
    }
    let absolute = |name: &str| get(name).map(PathBuf::from).filter(|p| p.is_absolute());
    let base = if cfg!(windows) {
        absolute("LOCALAPPDATA")
    } else if let Some(xdg) = absolute("XDG_CACHE_HOME") {
        Some(xdg)
    } else if cfg!(target_os = "macos") {
        absolute("HOME").map(|h| h.join("Library").join("Caches"))
    } else {
        absolute("HOME").map(|h| h.join(".cache"))
    };
    Ok(base.map(|b| b.join("tdqs-gate").join("packages")))
}

/// The variables pointing package managers into `root`.
pub fn variables(root: &Path) -> Vec<(String, String)> {
    CACHE_VARIABLES
        .iter()
        .map(|(name, sub)| {
            (
                name.to_string(),
                root.join(sub).to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// Creates the root and its subfolders (owner-only on Unix when the root is new).
pub fn prepare(root: &Path) -> Result<()> {
    let fail = |e: std::io::Error| {
        Error::io(
            Stage::Export,
            format!("cannot create the package cache {}", root.display()),
            e,
        )
        .with_advice(format!(
            "make the folder writable, point {CACHE_ENV} at another absolute folder, or set {CACHE_ENV}=off"
        ))
    };
    let builder = crate::platform::file_modes::private_dir_builder();
    builder.create(root).map_err(fail)?;
    for (_, sub) in CACHE_VARIABLES {
        builder.create(root.join(sub)).map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_is_given_only_settings_it_knows() {
        // npm reads every npm_config_* variable and warns about each one it does not know, in
        // the output of every setup command that runs npm.
        let npm_settings: Vec<&str> = CACHE_VARIABLES
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| name.to_ascii_lowercase().starts_with("npm_config_"))
            .collect();
        assert_eq!(npm_settings, ["npm_config_cache"]);
        let pnpm: Vec<&str> = CACHE_VARIABLES
            .iter()
            .filter(|(name, _)| name.to_ascii_lowercase().contains("pnpm"))
            .map(|(_, sub)| *sub)
            .collect();
        assert_eq!(
            pnpm,
            ["pnpm", "pnpm/store"],
            "both pnpm settings name one store"
        );
    }

    use crate::platform::test_env::of_pairs as env;

    #[test]
    fn the_root_comes_from_the_gate_environment_or_the_user_cache_folder() {
        let root = cache_root(env(&[(CACHE_ENV, "/srv/cache")])).unwrap();
        assert_eq!(root, Some(PathBuf::from("/srv/cache")));
        assert_eq!(
            cache_root(env(&[(CACHE_ENV, "off"), ("HOME", "/home/u")])).unwrap(),
            None
        );
        assert!(cache_root(env(&[(CACHE_ENV, "rel/dir")])).is_err());
        if cfg!(all(unix, not(target_os = "macos"))) {
            assert_eq!(
                cache_root(env(&[("HOME", "/home/u")])).unwrap(),
                Some(PathBuf::from("/home/u/.cache/tdqs-gate/packages"))
            );
            assert_eq!(
                cache_root(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")])).unwrap(),
                Some(PathBuf::from("/c/tdqs-gate/packages"))
            );
            assert_eq!(cache_root(env(&[])).unwrap(), None);
        }
    }
}
