//! The pure half of the persistent answer cache: what makes an answer reusable (its key), how
//! one cached answer is written down and read back, and which entries go when the folder is
//! over its bound. Reading and writing files is the engine's (`src/score/answer_cache.rs`).
//!
//! An answer is reusable exactly when everything the judge saw and everything that decides how
//! the answer is read are equal: the scoring digest (pins, hence the specification commit and
//! the prompts' SHA-256, plus the judge's mode, model and settings), the question's kind, the
//! question's digest (the system prompt and every input that fixes the rendered user prompt)
//! and the answer schema this build parses. The key is the SHA-256 of all of them, so an entry
//! written under any other judge, model, prompt or schema is simply never looked up.
//!
//! An entry may carry a tag: HMAC-SHA-256 over its key, kind and answer text (and the formats
//! they are read under) with a [`SigningKey`] only the trusted side holds. In CI the folder
//! comes back from a cache store a pull request's own jobs can write to, so there an entry is
//! used only when its tag verifies; a forged entry cannot hand a tool marks the judge never gave.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::judge::QuestionKind;

/// The version of the answer formats this build parses. A change to what an answer must
/// contain changes this, which retires every entry written before.
pub const ANSWER_SCHEMA: &str = "tdqs-answer-v1";

/// The version of the entry file's own layout.
pub const ENTRY_FORMAT: u32 = 1;

/// The default bound of the cache folder, in bytes: about ten thousand answers.
pub const DEFAULT_BOUND_BYTES: u64 = 32 * 1024 * 1024;

/// What is left after an eviction: below the bound, so that the next few writes do not each
/// trigger another scan of the folder.
const LOW_WATER_PERCENT: u64 = 90;

/// The key of one answer: SHA-256 (lowercase hex) of the answer schema, the scoring digest,
/// the question's kind and the question's digest.
pub fn entry_key(scoring_digest: &str, kind: QuestionKind, question_digest: &str) -> String {
    let mut hash = Sha256::new();
    for part in [
        ANSWER_SCHEMA,
        scoring_digest,
        kind_name(kind),
        question_digest,
    ] {
        hash.update(part.as_bytes());
        hash.update(b"\0");
    }
    hex::encode(hash.finalize())
}

fn kind_name(kind: QuestionKind) -> &'static str {
    match kind {
        QuestionKind::Tool => "tool",
        QuestionKind::Coherence => "coherence",
        QuestionKind::Selection => "selection",
        QuestionKind::EvalDraft => "eval-draft",
        QuestionKind::EvalValidate => "eval-validate",
        QuestionKind::Rewrite => "rewrite",
    }
}

/// What the signing key is derived under: a key for this purpose only, so the secret it comes
/// from (the judge's token) is never itself used as a MAC key.
const KEY_LABEL: &[u8] = b"tdqs-gate answer cache v1";

/// The key that signs and verifies entries: HMAC-SHA-256 of a secret only the trusted side
/// holds, under the label `tdqs-gate answer cache v1`. It lives in memory only; `Debug` shows
/// nothing of it.
#[derive(Clone)]
pub struct SigningKey([u8; 32]);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(..)")
    }
}

impl SigningKey {
    /// The signing key of `secret` (any length; an empty secret is the caller's to refuse).
    pub fn derive(secret: &[u8]) -> SigningKey {
        let mut mac = mac_with(secret);
        mac.update(KEY_LABEL);
        SigningKey(mac.finalize().into_bytes().into())
    }

    fn mac_of(&self, key: &str, kind: QuestionKind, text: &str) -> Hmac<Sha256> {
        let mut mac = mac_with(&self.0);
        // Each part with its length first: no two different entries feed the same bytes.
        let format = ENTRY_FORMAT.to_string();
        for part in [ANSWER_SCHEMA, &format, key, kind_name(kind), text] {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        mac
    }

    /// The tag (lowercase hex) of the answer `text` stored under `key` for a `kind` question.
    pub fn tag(&self, key: &str, kind: QuestionKind, text: &str) -> String {
        hex::encode(self.mac_of(key, kind, text).finalize().into_bytes())
    }

    /// Whether `entry` carries this key's tag over exactly its key, kind and text; the
    /// comparison takes the same time whichever byte differs.
    pub fn verifies(&self, entry: &Entry) -> bool {
        let Some(tag) = entry.tag.as_deref().and_then(|t| hex::decode(t).ok()) else {
            return false;
        };
        self.mac_of(&entry.key, entry.kind, &entry.text)
            .verify_slice(&tag)
            .is_ok()
    }
}

fn mac_with(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length; this cannot fail.
    <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC accepts any key length")
}

/// One cached answer as stored: the raw text the judge returned, parsed again on every read
/// by the same validation a fresh answer goes through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    pub format: u32,
    pub key: String,
    pub kind: QuestionKind,
    /// The answer text exactly as the judge returned it.
    pub text: String,
    /// HMAC-SHA-256 (hex) of key, kind and text under the run's [`SigningKey`]; absent in an
    /// unsigned cache (a user's own machine, without a key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

impl Entry {
    /// An unsigned entry.
    pub fn new(key: String, kind: QuestionKind, text: String) -> Entry {
        Entry {
            format: ENTRY_FORMAT,
            key,
            kind,
            text,
            tag: None,
        }
    }

    /// An entry tagged with `signing` (unsigned when `None`).
    pub fn signed(
        key: String,
        kind: QuestionKind,
        text: String,
        signing: Option<&SigningKey>,
    ) -> Entry {
        let tag = signing.map(|s| s.tag(&key, kind, &text));
        Entry {
            tag,
            ..Entry::new(key, kind, text)
        }
    }

    /// The file's bytes (compact JSON).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads an entry that must be the answer under `key` to a question of `kind`; the error
    /// says what is wrong with the file.
    pub fn read(bytes: &[u8], key: &str, kind: QuestionKind) -> Result<Entry, String> {
        let entry: Entry =
            serde_json::from_slice(bytes).map_err(|e| format!("not a cache entry ({e})"))?;
        if entry.format != ENTRY_FORMAT {
            return Err(format!(
                "entry format {} where {ENTRY_FORMAT} is read",
                entry.format
            ));
        }
        if entry.key != key {
            return Err("it records another key than its file name".to_string());
        }
        if entry.kind != kind {
            return Err(format!(
                "it answers a {} question, not a {} question",
                kind_name(entry.kind),
                kind_name(kind)
            ));
        }
        Ok(entry)
    }
}

/// One file of the cache folder, as eviction sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    pub name: String,
    pub bytes: u64,
    /// Last use (written or read), in any monotonic unit (seconds since the epoch).
    pub last_used: u64,
}

/// The files to delete so the folder holds at most `bound` bytes: none while it fits, else the
/// least recently used first (ties by name, so concurrent runs choose alike) until what is left
/// is at most 90% of the bound.
pub fn evictions(files: &[StoredFile], bound: u64) -> Vec<String> {
    let total: u64 = files.iter().map(|f| f.bytes).sum();
    if total <= bound {
        return Vec::new();
    }
    let target = bound / 100 * LOW_WATER_PERCENT;
    let mut order: Vec<&StoredFile> = files.iter().collect();
    order.sort_by(|a, b| a.last_used.cmp(&b.last_used).then(a.name.cmp(&b.name)));
    let mut left = total;
    let mut out = Vec::new();
    for file in order {
        if left <= target {
            break;
        }
        left -= file.bytes;
        out.push(file.name.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_of_the_key_changes_it() {
        let base = entry_key("digest-a", QuestionKind::Tool, "question-a");
        assert_eq!(base.len(), 64);
        assert_eq!(
            base,
            entry_key("digest-a", QuestionKind::Tool, "question-a")
        );
        assert_ne!(
            base,
            entry_key("digest-b", QuestionKind::Tool, "question-a")
        );
        assert_ne!(
            base,
            entry_key("digest-a", QuestionKind::Coherence, "question-a")
        );
        assert_ne!(
            base,
            entry_key("digest-a", QuestionKind::Tool, "question-b")
        );
        // Parts are separated: moving a character across a boundary is another key.
        assert_ne!(
            entry_key("ab", QuestionKind::Tool, "c"),
            entry_key("a", QuestionKind::Tool, "bc")
        );
    }

    #[test]
    fn an_entry_reads_back_and_a_mismatch_says_what_is_wrong() {
        let entry = Entry::new("k1".into(), QuestionKind::Tool, "{\"x\":1}".into());
        let bytes = entry.to_bytes();
        assert_eq!(Entry::read(&bytes, "k1", QuestionKind::Tool), Ok(entry));
        let other_key = Entry::read(&bytes, "k2", QuestionKind::Tool).unwrap_err();
        assert!(other_key.contains("another key"), "{other_key}");
        let other_kind = Entry::read(&bytes, "k1", QuestionKind::Coherence).unwrap_err();
        assert!(other_kind.contains("tool question"), "{other_kind}");
        let garbage = Entry::read(b"{\"format\":1,", "k1", QuestionKind::Tool).unwrap_err();
        assert!(garbage.starts_with("not a cache entry"), "{garbage}");
        let future = br#"{"format":2,"key":"k1","kind":"tool","text":""}"#;
        let future = Entry::read(future, "k1", QuestionKind::Tool).unwrap_err();
        assert!(future.contains("format 2"), "{future}");
    }

    #[test]
    fn a_signed_entry_verifies_only_unchanged_and_under_its_own_key() {
        let right = SigningKey::derive(b"fake-judge-token-for-tests");
        let wrong = SigningKey::derive(b"another-fake-token");
        let key = entry_key("digest", QuestionKind::Tool, "question");
        let entry = Entry::signed(
            key.clone(),
            QuestionKind::Tool,
            "{\"score\":2}".into(),
            Some(&right),
        );
        // Right key: used, also after a round trip through the file's bytes.
        let read = Entry::read(&entry.to_bytes(), &key, QuestionKind::Tool).unwrap();
        assert!(right.verifies(&read));
        // Wrong key: rejected.
        assert!(!wrong.verifies(&read));
        // Tampered answer (top marks instead of the judge's 2): rejected.
        let tampered = Entry {
            text: "{\"score\":5}".into(),
            ..read.clone()
        };
        assert!(!right.verifies(&tampered));
        // The same answer moved to another question or kind: rejected.
        let moved = Entry {
            key: entry_key("digest", QuestionKind::Tool, "other"),
            ..read.clone()
        };
        assert!(!right.verifies(&moved));
        let rekinded = Entry {
            kind: QuestionKind::Coherence,
            ..read.clone()
        };
        assert!(!right.verifies(&rekinded));
        // Unsigned, or a tag that is not hex: rejected.
        let unsigned = Entry::new(key.clone(), QuestionKind::Tool, read.text.clone());
        assert!(!right.verifies(&unsigned));
        let garbage = Entry {
            tag: Some("not hex".into()),
            ..read.clone()
        };
        assert!(!right.verifies(&garbage));
        // The key shows nothing of itself.
        assert_eq!(format!("{right:?}"), "SigningKey(..)");
    }

    #[test]
    fn an_unsigned_entry_has_no_tag_field_and_older_entries_still_read() {
        let unsigned = Entry::new("k1".into(), QuestionKind::Tool, "t".into());
        let bytes = String::from_utf8(unsigned.to_bytes()).unwrap();
        assert!(!bytes.contains("tag"), "{bytes}");
        let old = br#"{"format":1,"key":"k1","kind":"tool","text":"t"}"#;
        assert_eq!(Entry::read(old, "k1", QuestionKind::Tool), Ok(unsigned));
    }

    fn file(name: &str, bytes: u64, last_used: u64) -> StoredFile {
        StoredFile {
            name: name.into(),
            bytes,
            last_used,
        }
    }

    #[test]
    fn nothing_goes_while_the_folder_fits() {
        let files = [file("a", 40, 1), file("b", 60, 2)];
        assert!(evictions(&files, 100).is_empty());
    }

    #[test]
    fn the_least_recently_used_go_first_down_to_the_low_water_mark() {
        // 130 bytes over a bound of 100: down to 90 or less, oldest first, ties by name.
        let files = [
            file("new", 30, 9),
            file("old-b", 30, 1),
            file("old-a", 30, 1),
            file("mid", 40, 5),
        ];
        assert_eq!(evictions(&files, 100), ["old-a", "old-b"]);
    }
}
