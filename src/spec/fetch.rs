//! The four prompts: read from the cache when it still verifies, else downloaded once from the
//! specification README at the pinned commit, checked against the pinned SHA-256 values and
//! cached.
//!
//! The README is never part of this repository (it carries no licence); it lives in
//! `<cache>/tdqs-gate/<spec_commit>.md`, where `<cache>` is `--cache-dir`, else
//! `$XDG_CACHE_HOME`, `$LOCALAPPDATA` or `~/.cache`. A cached copy is written atomically and only
//! after all four prompts verified and both templates rendered, so a valid cache means no
//! network access at all. A cached copy that fails the check is replaced by one new download.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use tdqs_core::error::{Error, Stage};
use tdqs_core::spec::extract::{extract_prompts, PromptKey, Prompts};
use tdqs_core::spec::pins::{expand_url_template, Pins};
use tdqs_core::spec::render::check_templates;

/// The download timeout the specification's reference gate uses.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// A README larger than this is not the specification (v1.3 is about 62 kB).
pub(crate) const MAX_README_BYTES: usize = 4 * 1024 * 1024;

/// The directory under the cache root that holds the READMEs.
pub(crate) const CACHE_SUBDIR: &str = "tdqs-gate";

/// How to find the prompts.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// `--cache-dir`: the cache root; the README goes in `tdqs-gate/` under it.
    pub cache_dir: Option<PathBuf>,
    /// `--spec-url`: replaces the pins' URL template; `{commit}` is expanded.
    pub spec_url: Option<String>,
    /// The download timeout; [`FETCH_TIMEOUT`] when `None`.
    pub timeout: Option<Duration>,
}

/// Where the prompts came from, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PromptSource {
    /// A cached README that verified; nothing was downloaded.
    Cache,
    /// Downloaded, with no usable cached copy before.
    Fetch,
    /// Downloaded because the cached copy failed the check; the cache now holds the new copy.
    Refetch,
}

/// The provenance of the prompts, as the report records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptProvenance {
    pub source: PromptSource,
    /// The README URL (downloaded from, or would have been).
    pub url: String,
    pub spec_commit: String,
    pub cache_file: PathBuf,
    /// Why a cached copy was rejected, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected_cache: Option<String>,
}

/// Verified prompts and where they came from.
#[derive(Debug, Clone)]
pub struct LoadedPrompts {
    pub prompts: Prompts,
    pub provenance: PromptProvenance,
    /// Problems that did not stop the run (the cache could not be written).
    pub warnings: Vec<String>,
}

/// The four verified prompts for `pins`.
///
/// Errors (every one INVALID): a prompt whose hash does not match (named, with expected and
/// actual hash), a README without the four blocks, a template with an unknown placeholder, a
/// download that fails (naming the URL, with advice on populating the cache offline).
pub async fn load_prompts(pins: &Pins, options: &FetchOptions) -> Result<LoadedPrompts, Error> {
    let commit = pins.spec_commit();
    let url = match &options.spec_url {
        Some(template) => expand_url_template(template, commit),
        None => pins.spec_url(),
    };
    let root = cache_root(options.cache_dir.as_deref())?;
    let cache_file = root.join(format!("{commit}.md"));
    let mut provenance = PromptProvenance {
        source: PromptSource::Fetch,
        url: url.clone(),
        spec_commit: commit.to_string(),
        cache_file: cache_file.clone(),
        rejected_cache: None,
    };

    match read_cached(&cache_file) {
        Cached::Absent => {}
        Cached::Text(text) => match verify_readme(&text, pins, &cache_file.display().to_string()) {
            Ok(prompts) => {
                // The text verified by hash, so a template that does not render would not
                // render after a new download either: no point fetching.
                check_templates(&prompts)?;
                provenance.source = PromptSource::Cache;
                return Ok(LoadedPrompts {
                    prompts,
                    provenance,
                    warnings: Vec::new(),
                });
            }
            Err(err) => {
                provenance.source = PromptSource::Refetch;
                provenance.rejected_cache = Some(err.cause);
            }
        },
        Cached::Unreadable(reason) => {
            provenance.source = PromptSource::Refetch;
            provenance.rejected_cache = Some(reason);
        }
    }

    let timeout = options.timeout.unwrap_or(FETCH_TIMEOUT);
    let text = download(&url, timeout).await.map_err(|err| {
        let err = err.with_advice(offline_advice(&url, &root, &cache_file, commit));
        match &provenance.rejected_cache {
            Some(reason) => err.with_detail("cached copy rejected", reason.clone()),
            None => err,
        }
    })?;
    let prompts = verify_readme(&text, pins, &url)?;
    check_templates(&prompts)?;

    let mut warnings = Vec::new();
    if let Err(err) = write_atomically(&root, &cache_file, text.as_bytes()) {
        warnings.push(format!(
            "the verified specification README could not be cached at {}: {err}; it will be \
             downloaded again next run",
            cache_file.display()
        ));
    }
    Ok(LoadedPrompts {
        prompts,
        provenance,
        warnings,
    })
}

/// Extracts the four prompts from README text and checks each against the pinned hash.
/// `origin` (a URL or a path) names the text in messages.
pub(crate) fn verify_readme(text: &str, pins: &Pins, origin: &str) -> Result<Prompts, Error> {
    let prompts = extract_prompts(text).map_err(|err| {
        Error::new(
            Stage::Spec,
            format!("the specification README from {origin} cannot be read: {err}"),
        )
        .with_advice(mismatch_advice(pins))
    })?;
    for key in PromptKey::ALL {
        let expected = pins.prompt_sha256().get(key);
        let actual = prompts.sha256(key);
        if actual != expected {
            return Err(Error::new(
                Stage::Spec,
                format!(
                    "the {key} prompt ({}) from {origin} does not match its pinned hash: \
                     expected sha256 {expected}, got {actual}",
                    key.location()
                ),
            )
            .with_advice(mismatch_advice(pins)));
        }
    }
    Ok(prompts)
}

fn mismatch_advice(pins: &Pins) -> String {
    format!(
        "the specification text at commit {} is not the one pinned; check that the URL serves \
         that commit unmodified (a proxy or mirror may rewrite it). Scores are only comparable \
         under the pinned prompts, so the gate does not run with other text",
        pins.spec_commit()
    )
}

fn offline_advice(url: &str, root: &Path, cache_file: &Path, commit: &str) -> String {
    format!(
        "the README is downloaded once and then read from {}. Without network access, copy \
         {commit}.md from a machine that can reach {url} (run tdqs-gate there with --cache-dir \
         DIR, then pass --cache-dir DIR here, or copy it into {}), or use --judge static, which \
         needs no prompts",
        cache_file.display(),
        root.display()
    )
}

/// `<cache root>/tdqs-gate`: `explicit` (`--cache-dir`), else `$XDG_CACHE_HOME`,
/// `$LOCALAPPDATA`, `~/.cache`.
pub fn cache_root(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    cache_root_with(explicit, |name| std::env::var_os(name), dirs::home_dir)
}

/// [`cache_root`] with the environment and home directory passed in.
pub(crate) fn cache_root_with(
    explicit: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
    home: impl FnOnce() -> Option<PathBuf>,
) -> Result<PathBuf, Error> {
    let non_empty = |name: &str| {
        env(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let base = explicit
        .map(Path::to_path_buf)
        .or_else(|| non_empty("XDG_CACHE_HOME"))
        .or_else(|| non_empty("LOCALAPPDATA"))
        .or_else(|| home().map(|home| home.join(".cache")))
        .ok_or_else(|| {
            Error::new(
                Stage::Config,
                "no cache directory for the specification README: XDG_CACHE_HOME, LOCALAPPDATA \
                 and the home directory are all unset",
            )
            .with_advice("pass --cache-dir DIR")
        })?;
    Ok(base.join(CACHE_SUBDIR))
}

enum Cached {
    Absent,
    Text(String),
    Unreadable(String),
}

fn read_cached(path: &Path) -> Cached {
    use crate::platform::safe_file::{read_regular, Links, ReadError};
    // Regular files only: a FIFO planted as the cache file must not block the gate.
    match read_regular(path, Links::Follow, 64 << 20) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Cached::Text(text),
            Err(_) => Cached::Unreadable(format!("{} is not UTF-8 text", path.display())),
        },
        Err(ReadError::NotFound) => Cached::Absent,
        Err(err) => Cached::Unreadable(format!("cannot read {}: {err}", path.display())),
    }
}

/// Writes `bytes` to `path` (in `dir`, created when missing) so a reader never sees a partial
/// file.
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    crate::platform::atomic::write_atomically(path, bytes, None)
}

async fn download(url: &str, timeout: Duration) -> Result<String, Error> {
    let parsed = reqwest::Url::parse(url).map_err(|err| {
        Error::new(
            Stage::Spec,
            format!("the specification URL {url:?} is not a valid URL: {err}"),
        )
    })?;
    let mut builder = crate::platform::http_client::builder(timeout);
    if is_loopback(&parsed) {
        // A proxy from the environment cannot reach this machine's loopback.
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(|err| {
        Error::new(
            Stage::Spec,
            format!("cannot set up the HTTP client: {}", error_chain(&err)),
        )
    })?;
    let fetch_failed = |err: reqwest::Error| {
        let why = if err.is_timeout() {
            format!("no complete answer within {} s", timeout.as_secs())
        } else {
            error_chain(&err)
        };
        Error::new(
            Stage::Spec,
            format!("cannot download the TDQS specification from {url}: {why}"),
        )
    };
    let mut response = client.get(parsed).send().await.map_err(fetch_failed)?;
    let status = response.status();
    if !status.is_success() {
        return Err(Error::new(
            Stage::Spec,
            format!("cannot download the TDQS specification from {url}: HTTP {status}"),
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(fetch_failed)? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_README_BYTES {
            return Err(Error::new(
                Stage::Spec,
                format!(
                    "the answer from {url} exceeds {MAX_README_BYTES} bytes, so it is not the \
                     specification README"
                ),
            ));
        }
    }
    String::from_utf8(body).map_err(|_| {
        Error::new(
            Stage::Spec,
            format!("the answer from {url} is not UTF-8 text"),
        )
    })
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// An error and its sources, joined: reqwest's own message rarely says "connection refused".
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_root_prefers_the_flag_then_xdg_then_localappdata_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(*v))
            }
        };
        let home = || Some(PathBuf::from("/home/u"));
        let all: &[(&str, &str)] = &[("XDG_CACHE_HOME", "/xdg"), ("LOCALAPPDATA", "/local")];
        assert_eq!(
            cache_root_with(Some(Path::new("/flag")), env(all), home).unwrap(),
            Path::new("/flag/tdqs-gate")
        );
        assert_eq!(
            cache_root_with(None, env(all), home).unwrap(),
            Path::new("/xdg/tdqs-gate")
        );
        let empty_xdg: &[(&str, &str)] = &[("XDG_CACHE_HOME", ""), ("LOCALAPPDATA", "/local")];
        assert_eq!(
            cache_root_with(None, env(empty_xdg), home).unwrap(),
            Path::new("/local/tdqs-gate")
        );
        assert_eq!(
            cache_root_with(None, env(&[]), home).unwrap(),
            Path::new("/home/u/.cache/tdqs-gate")
        );
        let err = cache_root_with(None, env(&[]), || None).unwrap_err();
        assert!(err.advice.unwrap().contains("--cache-dir"));
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for (url, expected) in [
            ("http://127.0.0.1:8080/x", true),
            ("http://[::1]/x", true),
            ("http://LOCALHOST/x", true),
            ("https://raw.githubusercontent.com/x", false),
            ("http://10.0.0.1/x", false),
        ] {
            assert_eq!(
                is_loopback(&reqwest::Url::parse(url).unwrap()),
                expected,
                "{url}"
            );
        }
    }

    #[test]
    fn atomic_write_leaves_only_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tdqs-gate");
        let file = root.join("c.md");
        write_atomically(&root, &file, b"one").unwrap();
        write_atomically(&root, &file, b"two").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("c.md")]);
    }
}
