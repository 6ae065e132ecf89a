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
}

impl Entry {
    pub fn new(key: String, kind: QuestionKind, text: String) -> Entry {
        Entry {
            format: ENTRY_FORMAT,
            key,
            kind,
            text,
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
