//! The word-overlap measure shared by lint (confusable pairs, `TDQS-D005`/`TDQS-D006`) and the
//! synthetic selector of the selection eval: lower-cased words, stop words set aside, a crude
//! singular, and the Jaccard similarity of two word sets.
//!
//! Pure functions of their input, so every rule and selection built on them is deterministic.

use std::collections::BTreeSet;

/// Words that carry no subject: never taken for the thing a name promises ("as", "of", "by").
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "across", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "between", "both", "but", "by", "can", "could", "do", "does",
    "each", "either", "every", "for", "from", "has", "have", "how", "if", "in", "into", "is", "it",
    "its", "may", "more", "most", "must", "no", "nor", "not", "of", "on", "one", "only", "or",
    "other", "our", "out", "over", "per", "same", "should", "so", "some", "such", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "to",
    "too", "under", "up", "upon", "use", "used", "uses", "using", "via", "was", "were", "what",
    "when", "where", "whether", "which", "while", "who", "will", "with", "within", "without",
    "would", "you", "your",
];

/// Lower-case words of a text (letters and digits; everything else separates).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            current.extend(ch.to_lowercase());
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The words of a tool or parameter name: split at `_`, `-`, `.`, `/`, spaces and camelCase
/// boundaries, lower-cased, digits-only parts dropped.
pub fn name_tokens(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev: Option<char> = None;
    for ch in name.chars() {
        if !ch.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            prev = None;
            continue;
        }
        let boundary = match prev {
            Some(p) => (p.is_lowercase() || p.is_ascii_digit()) && ch.is_uppercase(),
            None => false,
        };
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(ch.to_lowercase());
        prev = Some(ch);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.retain(|t| !t.chars().all(|c| c.is_ascii_digit()));
    out
}

/// A crude singular: enough to equate `tickets`/`ticket` and `policies`/`policy`.
pub fn singular(word: &str) -> String {
    if word.len() > 4 && word.ends_with("ies") {
        format!("{}y", &word[..word.len() - 3])
    } else if word.len() > 4 && (word.ends_with("ses") || word.ends_with("xes")) {
        word[..word.len() - 2].to_string()
    } else if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word[..word.len() - 1].to_string()
    } else {
        word.to_string()
    }
}

pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// Meaningful words of a text: no stop words, no one-letter words, singularised.
pub fn content_words(text: &str) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|w| w.chars().count() > 1 && !is_stop_word(w))
        .map(|w| singular(&w))
        .collect()
}

/// Jaccard similarity of two word sets (0 when both are empty).
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}
