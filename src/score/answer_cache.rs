//! The persistent answer cache: one small file per answer in a folder outside every tree the
//! gate runs from, so a second pull request against the same base does not pay again for the
//! base's unchanged questions. Keys, the entry layout and the eviction choice are
//! `tdqs_core::judge::answer_cache`; this file only reads, writes and deletes.
//!
//! Shared by concurrent runs without a lock: every entry is written to a temporary file and
//! renamed over its name, so a reader sees a whole entry or none, and two runs writing the same
//! key write equally valid answers. An entry that cannot be read is ignored with a warning and
//! asked again (and the fresh answer replaces it). The folder is never read from a pull
//! request's tree: a folder inside the repository is refused.
//!
//! With a signing key ([`signing_key`]: `TDQS_GATE_ANSWER_CACHE_KEY`, else derived from the
//! judge's own secret) every entry is tagged when written and used only when its tag verifies.
//! In GitHub Actions the folder comes back from the runner's cache, which a pull request's jobs
//! can write, so there no entry is read without a key.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use tdqs_core::error::{Error, Stage};
use tdqs_core::judge::answer_cache::{self, Entry, SigningKey, StoredFile};
use tdqs_core::judge::QuestionKind;

use crate::judge::build::{default_token_env, JudgeOptions};
use crate::platform::ci_env;
use crate::platform::safe_file::{read_regular, Links, ReadError};

/// The variable that chooses the folder (or `off`), as `--answer-cache` does.
pub const CACHE_ENV: &str = "TDQS_GATE_ANSWER_CACHE";

/// The variable holding a secret to sign the cache's entries with, instead of the judge's.
pub const KEY_ENV: &str = "TDQS_GATE_ANSWER_CACHE_KEY";

/// Where the signing key of a run comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `TDQS_GATE_ANSWER_CACHE_KEY`.
    Explicit,
    /// The judge's credential, read from the named variable.
    JudgeSecret(String),
}

/// The key that signs this run's entries, and where it came from; `None` when neither
/// `TDQS_GATE_ANSWER_CACHE_KEY` nor the judge's credential variable holds a secret (the Claude
/// Code judge on a local login, an OpenAI-compatible server without a key). The secret is
/// registered for masking; neither it nor the derived key is ever written.
pub fn signing_key(judge: &JudgeOptions) -> Option<(SigningKey, KeySource)> {
    signing_key_with(judge, |name| std::env::var(name).ok())
}

fn signing_key_with(
    judge: &JudgeOptions,
    env: impl Fn(&str) -> Option<String>,
) -> Option<(SigningKey, KeySource)> {
    let usable = |value: Option<String>| value.filter(|v| !v.trim().is_empty());
    if let Some(secret) = usable(env(KEY_ENV)) {
        tdqs_core::redact::register_secret(&secret);
        return Some((SigningKey::derive(secret.as_bytes()), KeySource::Explicit));
    }
    let name = judge
        .token_env
        .clone()
        .or_else(|| default_token_env(judge.mode).map(str::to_string))?;
    let secret = usable(env(&name))?;
    tdqs_core::redact::register_secret(&secret);
    Some((
        SigningKey::derive(secret.as_bytes()),
        KeySource::JudgeSecret(name),
    ))
}

/// The persistent answer cache of a run, `None` when turned off, and a warning when it was
/// turned off for want of a key. A folder inside one of `trees` (the working tree) is refused.
/// Signed with [`signing_key`] when a key is there; in GitHub Actions, where the folder comes
/// back from a cache store a pull request's jobs can write, a model judge's cache is never read
/// without one (rules need no model, so they keep nothing and there is nothing to refuse).
pub(crate) fn open_for_run(
    choice: &AnswerCacheChoice,
    judge: &JudgeOptions,
    model_judged: bool,
    scoring_digest: &str,
    trees: &[&Path],
) -> Result<(Option<std::sync::Arc<AnswerCache>>, Option<String>), Error> {
    let Some(dir) = choice.folder()? else {
        return Ok((None, None));
    };
    let signing = signing_key(judge).map(|(key, _)| key);
    if signing.is_none() && model_judged && ci_env::in_github_actions(&ci_env::process_env) {
        let fix = format!(
            "set {KEY_ENV} to a secret of the workflow (or pass the judge's token, from which the \
             key is derived), or pass --no-answer-cache"
        );
        if let AnswerCacheChoice::Folder(dir) = choice {
            return Err(Error::new(
                Stage::Config,
                format!(
                    "the answer cache {} is not read in GitHub Actions without a signing key: \
                     a pull request's jobs can write the runner's cache, so an unsigned answer \
                     could be forged",
                    dir.display()
                ),
            )
            .with_advice(fix));
        }
        return Ok((
            None,
            Some(format!(
                "the answer cache was not used: in GitHub Actions it is read only with a signing \
                 key, and this run has none ({fix})"
            )),
        ));
    }
    AnswerCache::open(&dir, trees, scoring_digest, signing)
        .map(|cache| (Some(std::sync::Arc::new(cache)), None))
}

/// The largest entry read; a real answer is a few kilobytes.
const MAX_ENTRY_BYTES: u64 = 1024 * 1024;

/// Where the run's answers are kept, as the command line chose.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AnswerCacheChoice {
    /// `--no-answer-cache` or `--answer-cache off`: ask everything.
    Off,
    /// `tdqs-gate/answers` in the user's cache folder.
    #[default]
    UserCache,
    /// `--answer-cache DIR` (or `TDQS_GATE_ANSWER_CACHE=DIR`).
    Folder(PathBuf),
}

impl AnswerCacheChoice {
    /// `--answer-cache VALUE` (`off`, `0`, `false` or `no` turn it off) and `--no-answer-cache`.
    pub fn from_args(value: Option<&str>, no_cache: bool) -> AnswerCacheChoice {
        if no_cache {
            return AnswerCacheChoice::Off;
        }
        match value.map(str::trim) {
            None | Some("") => AnswerCacheChoice::UserCache,
            Some(v)
                if matches!(
                    v.to_ascii_lowercase().as_str(),
                    "off" | "0" | "false" | "no"
                ) =>
            {
                AnswerCacheChoice::Off
            }
            Some(v) => AnswerCacheChoice::Folder(PathBuf::from(v)),
        }
    }

    /// The folder this choice names, `None` when off.
    pub fn folder(&self) -> Result<Option<PathBuf>, Error> {
        self.folder_with(|name| std::env::var_os(name), dirs::home_dir)
    }

    fn folder_with(
        &self,
        env: impl Fn(&str) -> Option<OsString>,
        home: impl FnOnce() -> Option<PathBuf>,
    ) -> Result<Option<PathBuf>, Error> {
        match self {
            AnswerCacheChoice::Off => Ok(None),
            AnswerCacheChoice::Folder(dir) => Ok(Some(dir.clone())),
            AnswerCacheChoice::UserCache => {
                let root = crate::spec::fetch::cache_root_with(None, env, home).map_err(|_| {
                    Error::new(
                        Stage::Config,
                        "no folder for the answer cache: XDG_CACHE_HOME, LOCALAPPDATA and the \
                         home directory are all unset",
                    )
                    .with_advice("pass --answer-cache DIR, or --no-answer-cache")
                })?;
                Ok(Some(root.join("answers")))
            }
        }
    }
}

/// An open answer cache for one scoring digest (one judge, model, settings and pins).
pub(crate) struct AnswerCache {
    dir: PathBuf,
    scoring_digest: String,
    bound: u64,
    /// Tags what is written and decides what is read; `None`: an unsigned cache (a user's own
    /// machine), which reads every readable entry.
    signing: Option<SigningKey>,
    /// Entries ignored because their tag did not verify, since the last warning about them.
    unverified: AtomicUsize,
    warnings: Mutex<Vec<String>>,
}

impl AnswerCache {
    /// Opens (creating) the folder `dir` for answers scored under `scoring_digest`. A folder
    /// inside any of `trees` (the repository's working tree) is refused: what a pull request
    /// can write must never be read back as a judge's answer.
    /// With `signing`, entries are tagged when written and used only when their tag verifies.
    pub fn open(
        dir: &Path,
        trees: &[&Path],
        scoring_digest: &str,
        signing: Option<SigningKey>,
    ) -> Result<AnswerCache, Error> {
        let dir = crate::platform::absolute(dir);
        for tree in trees {
            if is_inside(&dir, tree) {
                return Err(Error::new(
                    Stage::Config,
                    format!(
                        "the answer cache {} is inside the repository {}, where a pull request \
                         could write answers the gate would trust",
                        dir.display(),
                        tree.display()
                    ),
                )
                .with_advice(
                    "give --answer-cache a folder outside the repository (or unset \
                     TDQS_GATE_ANSWER_CACHE, which defaults to the user's cache folder), or \
                     pass --no-answer-cache",
                ));
            }
        }
        crate::platform::file_modes::private_dir_builder()
            .recursive(true)
            .create(&dir)
            .map_err(|e| {
                Error::new(
                    Stage::Config,
                    format!("cannot create the answer cache {}: {e}", dir.display()),
                )
                .with_advice("give --answer-cache a writable folder, or pass --no-answer-cache")
            })?;
        Ok(AnswerCache {
            dir,
            scoring_digest: scoring_digest.to_string(),
            bound: answer_cache::DEFAULT_BOUND_BYTES,
            signing,
            unverified: AtomicUsize::new(0),
            warnings: Mutex::new(Vec::new()),
        })
    }

    fn path_of(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The cached answer text to a question of `kind` whose digest is `question_digest`, if a
    /// readable entry holds one. A damaged entry is a warning, never an error: it is asked
    /// again.
    pub fn get(&self, kind: QuestionKind, question_digest: &str) -> Option<String> {
        let key = answer_cache::entry_key(&self.scoring_digest, kind, question_digest);
        let path = self.path_of(&key);
        let bytes = match read_regular(&path, Links::Refuse, MAX_ENTRY_BYTES) {
            Ok(bytes) => bytes,
            Err(ReadError::NotFound) => return None,
            Err(e) => {
                self.warn(&path, &e.to_string());
                return None;
            }
        };
        match Entry::read(&bytes, &key, kind) {
            Ok(entry)
                if self
                    .signing
                    .as_ref()
                    .is_some_and(|signing| !signing.verifies(&entry)) =>
            {
                // Not written by a run holding this key: possibly forged, never used. The fresh
                // answer overwrites it.
                self.unverified.fetch_add(1, Ordering::Relaxed);
                None
            }
            Ok(entry) => {
                // Reading is a use: eviction keeps what runs still ask for.
                touch(&path);
                Some(entry.text)
            }
            Err(why) => {
                self.warn(&path, &why);
                None
            }
        }
    }

    /// A damaged entry whose answer text did not pass the answer check.
    pub fn reject(&self, kind: QuestionKind, question_digest: &str, why: &str) {
        let key = answer_cache::entry_key(&self.scoring_digest, kind, question_digest);
        self.warn(
            &self.path_of(&key),
            &format!("its answer is unreadable: {why}"),
        );
    }

    fn warn(&self, path: &Path, why: &str) {
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "the cached answer {} was ignored and asked again: {why}",
                path.display()
            ));
    }

    /// Keeps `text` as the answer to the question. A failure to write costs only the reuse,
    /// so it is a warning.
    pub fn put(&self, kind: QuestionKind, question_digest: &str, text: &str) {
        let key = answer_cache::entry_key(&self.scoring_digest, kind, question_digest);
        let entry = Entry::signed(key.clone(), kind, text.to_string(), self.signing.as_ref());
        let path = self.path_of(&key);
        if let Err(e) = crate::platform::atomic::write_atomically(&path, &entry.to_bytes(), None) {
            self.warnings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!(
                    "an answer could not be kept in the answer cache {}: {e}",
                    self.dir.display()
                ));
        }
    }

    /// Deletes the least recently used entries while the folder is over its bound. Another run
    /// deleting the same files at once is harmless.
    pub fn evict(&self) {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let files: Vec<StoredFile> = read
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let meta = e.metadata().ok()?;
                meta.is_file().then(|| StoredFile {
                    name,
                    bytes: meta.len(),
                    last_used: meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_secs()),
                })
            })
            .collect();
        for name in answer_cache::evictions(&files, self.bound) {
            let _ = std::fs::remove_file(self.dir.join(name));
        }
    }

    /// The warnings gathered so far (damaged entries, failed writes, one for all the entries
    /// whose tag did not verify), each once.
    pub fn take_warnings(&self) -> Vec<String> {
        let mut out = std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()));
        let unverified = self.unverified.swap(0, Ordering::Relaxed);
        if unverified > 0 {
            out.push(format!(
                "{unverified} cached answer{} ignored and asked again: not signed with this \
                 run's answer-cache key (written without it or with another key, or altered \
                 since) in {}",
                if unverified == 1 { " was" } else { "s were" },
                self.dir.display()
            ));
        }
        out
    }

    #[cfg(test)]
    fn with_bound(mut self, bound: u64) -> Self {
        self.bound = bound;
        self
    }
}

fn touch(path: &Path) {
    if let Ok(file) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Whether `dir` is `tree` or below it, comparing real paths where they exist (a link to the
/// repository is inside it) and the given paths otherwise.
fn is_inside(dir: &Path, tree: &Path) -> bool {
    let real_tree = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
    if dir.starts_with(tree) || dir.starts_with(&real_tree) {
        return true;
    }
    // The deepest part of `dir` that exists, resolved, with the rest appended.
    let mut existing = dir.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return false,
        }
    }
    let Ok(mut real) = existing.canonicalize() else {
        return false;
    };
    for name in rest.iter().rev() {
        real.push(name);
    }
    real.starts_with(&real_tree)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::build::JudgeMode;

    #[test]
    fn an_answer_is_kept_and_found_only_under_its_own_key() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::open(&dir.path().join("answers"), &[], "scoring-a", None).unwrap();
        assert_eq!(cache.get(QuestionKind::Tool, "q1"), None);
        cache.put(QuestionKind::Tool, "q1", "{\"answer\":1}");
        assert_eq!(
            cache.get(QuestionKind::Tool, "q1").as_deref(),
            Some("{\"answer\":1}")
        );
        assert_eq!(cache.get(QuestionKind::Coherence, "q1"), None);
        assert_eq!(cache.get(QuestionKind::Tool, "q2"), None);
        let other = AnswerCache::open(&dir.path().join("answers"), &[], "scoring-b", None).unwrap();
        assert_eq!(other.get(QuestionKind::Tool, "q1"), None);
        assert!(cache.take_warnings().is_empty());
    }

    #[test]
    fn a_damaged_entry_is_a_warning_and_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::open(dir.path(), &[], "scoring", None).unwrap();
        cache.put(QuestionKind::Tool, "q1", "text");
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::write(&file, b"{not json").unwrap();
        assert_eq!(cache.get(QuestionKind::Tool, "q1"), None);
        let warnings = cache.take_warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("ignored and asked again"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_folder_inside_the_repository_is_refused() {
        let repo = tempfile::tempdir().unwrap();
        let inside = repo.path().join(".cache/answers");
        let err = AnswerCache::open(&inside, &[repo.path()], "s", None)
            .err()
            .unwrap();
        assert!(err.cause.contains("inside the repository"), "{err:?}");
        assert!(!inside.exists());
        // The same folder reached through a link from outside is still inside.
        let outside = tempfile::tempdir().unwrap();
        let link = outside.path().join("repo-link");
        std::os::unix::fs::symlink(repo.path(), &link).unwrap();
        assert!(AnswerCache::open(&link.join("answers"), &[repo.path()], "s", None).is_err());
        assert!(
            AnswerCache::open(&outside.path().join("answers"), &[repo.path()], "s", None).is_ok()
        );
    }

    #[test]
    fn the_folder_stays_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::open(dir.path(), &[], "s", None)
            .unwrap()
            .with_bound(1000);
        for n in 0..20 {
            cache.put(QuestionKind::Tool, &format!("q{n}"), &"x".repeat(100));
        }
        cache.evict();
        let total: u64 = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(total <= 1000, "{total} bytes left");
        assert!(total > 0);
    }

    fn key(secret: &str) -> Option<SigningKey> {
        Some(SigningKey::derive(secret.as_bytes()))
    }

    #[test]
    fn a_signed_cache_uses_only_entries_its_own_key_signed() {
        let dir = tempfile::tempdir().unwrap();
        let unsigned = AnswerCache::open(dir.path(), &[], "s", None).unwrap();
        unsigned.put(QuestionKind::Tool, "q-unsigned", "unsigned answer");
        let other = AnswerCache::open(dir.path(), &[], "s", key("fake-other-key")).unwrap();
        other.put(QuestionKind::Tool, "q-other", "other key's answer");
        let signed = AnswerCache::open(dir.path(), &[], "s", key("fake-right-key")).unwrap();
        signed.put(QuestionKind::Tool, "q-right", "right key's answer");
        // Right key: used. Unsigned or another key's: ignored, one warning for both.
        assert_eq!(
            signed.get(QuestionKind::Tool, "q-right").as_deref(),
            Some("right key's answer")
        );
        assert_eq!(signed.get(QuestionKind::Tool, "q-unsigned"), None);
        assert_eq!(signed.get(QuestionKind::Tool, "q-other"), None);
        let warnings = signed.take_warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("2 cached answers were ignored"),
            "{warnings:?}"
        );
        assert!(signed.take_warnings().is_empty());
        // The fresh answer overwrites the unverified entry, signed.
        signed.put(QuestionKind::Tool, "q-other", "fresh answer");
        assert_eq!(
            signed.get(QuestionKind::Tool, "q-other").as_deref(),
            Some("fresh answer")
        );
        // An unsigned cache (a user's own machine) reads every readable entry.
        assert_eq!(
            unsigned.get(QuestionKind::Tool, "q-right").as_deref(),
            Some("right key's answer")
        );
    }

    #[test]
    fn a_tampered_answer_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let cache = AnswerCache::open(dir.path(), &[], "s", key("fake-right-key")).unwrap();
        cache.put(QuestionKind::Tool, "q1", "{\"score\":2}");
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("\\\"score\\\":2", "\\\"score\\\":5")).unwrap();
        assert_ne!(std::fs::read_to_string(&file).unwrap(), text);
        assert_eq!(cache.get(QuestionKind::Tool, "q1"), None);
        assert_eq!(cache.take_warnings().len(), 1);
    }

    #[test]
    fn the_key_comes_from_the_explicit_variable_else_the_judges_secret() {
        let judge = |mode, token_env: Option<&str>| JudgeOptions {
            mode,
            token_env: token_env.map(str::to_string),
            ..JudgeOptions::default()
        };
        use crate::platform::test_env::of_pairs as env;
        let both = env(&[
            (KEY_ENV, "fake-explicit-key"),
            ("ANTHROPIC_API_KEY", "fake-api-key"),
        ]);
        let source = |j: &JudgeOptions, e| signing_key_with(j, e).map(|(_, s)| s);
        assert_eq!(
            source(&judge(JudgeMode::Anthropic, None), &both),
            Some(KeySource::Explicit)
        );
        let api = env(&[("ANTHROPIC_API_KEY", "fake-api-key")]);
        assert_eq!(
            source(&judge(JudgeMode::Anthropic, None), &api),
            Some(KeySource::JudgeSecret("ANTHROPIC_API_KEY".into()))
        );
        let oauth = env(&[("CLAUDE_CODE_OAUTH_TOKEN", "fake-oauth-token")]);
        assert_eq!(
            source(
                &judge(JudgeMode::ClaudeCode, Some("CLAUDE_CODE_OAUTH_TOKEN")),
                &oauth
            ),
            Some(KeySource::JudgeSecret("CLAUDE_CODE_OAUTH_TOKEN".into()))
        );
        // The Claude Code judge on a local login has no secret of its own; an empty one is none.
        assert_eq!(source(&judge(JudgeMode::ClaudeCode, None), &oauth), None);
        let empty = env(&[(KEY_ENV, " "), ("ANTHROPIC_API_KEY", "")]);
        assert_eq!(source(&judge(JudgeMode::Anthropic, None), &empty), None);
    }

    #[test]
    fn the_choice_follows_the_flags() {
        assert_eq!(
            AnswerCacheChoice::from_args(Some("/x"), true),
            AnswerCacheChoice::Off
        );
        assert_eq!(
            AnswerCacheChoice::from_args(Some("OFF"), false),
            AnswerCacheChoice::Off
        );
        assert_eq!(
            AnswerCacheChoice::from_args(None, false),
            AnswerCacheChoice::UserCache
        );
        let env = |name: &str| (name == "XDG_CACHE_HOME").then(|| OsString::from("/xdg"));
        assert_eq!(
            AnswerCacheChoice::UserCache
                .folder_with(env, || None)
                .unwrap(),
            Some(PathBuf::from("/xdg/tdqs-gate/answers"))
        );
    }
}
