//! The names of one side's tools, held once and shared by every question of the side.
//!
//! A tool's question needs "every other tool's name". Copying that list into each question costs
//! the square of the tool count (10,000 tools: 10⁸ strings); here each question holds a shared
//! [`SideNames`] and its own position, and the list is walked or rendered only when needed.
//! [`SideNames`] also indexes the names so "which sibling names does this text mention" costs the
//! length of the text, not the number of tools.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

/// Every tool name of one side, in listing order, with a lookup by lowercase name.
#[derive(Debug)]
pub struct SideNames {
    names: Vec<String>,
    /// Lowercase name → positions, for names made only of identifier characters.
    by_lower: HashMap<String, Vec<usize>>,
    /// Positions of names with other characters (`.`, `/`, spaces): looked up by scanning.
    irregular: Vec<usize>,
    /// SHA-256 of the names, each followed by a newline.
    digest: [u8; 32],
    /// The names' words, indexed, built on first use (see [`Self::token_index`]).
    tokens: OnceLock<TokenIndex>,
}

/// Each name's words (as a caller's tokenizer splits them) and, per word, the names holding it.
#[derive(Debug, Default)]
pub struct TokenIndex {
    pub tokens: Vec<Vec<String>>,
    pub by_token: HashMap<String, Vec<usize>>,
}

/// A character that may continue an identifier (a tool name) in running text.
pub(crate) fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

impl SideNames {
    pub fn new(names: Vec<String>) -> SideNames {
        let mut by_lower: HashMap<String, Vec<usize>> = HashMap::new();
        let mut irregular = Vec::new();
        let mut h = Sha256::new();
        for (i, name) in names.iter().enumerate() {
            h.update(name.as_bytes());
            h.update(b"\n");
            if !name.is_empty() && name.chars().all(is_identifier_char) {
                by_lower.entry(name.to_lowercase()).or_default().push(i);
            } else {
                irregular.push(i);
            }
        }
        SideNames {
            names,
            by_lower,
            irregular,
            digest: h.finalize().into(),
            tokens: OnceLock::new(),
        }
    }

    /// The names split by `tokenize`, indexed by word; built once per side, on first use (every
    /// caller of one side must pass the same tokenizer).
    pub fn token_index(&self, tokenize: impl Fn(&str) -> Vec<String>) -> &TokenIndex {
        self.tokens.get_or_init(|| {
            let mut index = TokenIndex::default();
            for (i, name) in self.names.iter().enumerate() {
                let mut words = tokenize(name);
                words.sort();
                words.dedup();
                for w in &words {
                    index.by_token.entry(w.clone()).or_default().push(i);
                }
                index.tokens.push(words);
            }
            index
        })
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    /// Positions of the names that `lower` (already lowercase) mentions as a whole identifier (no
    /// identifier character on either side), in listing order, each once.
    pub fn mentioned_in(&self, lower: &str) -> Vec<usize> {
        let mut found: Vec<usize> = Vec::new();
        for run in lower.split(|c: char| !is_identifier_char(c)) {
            if let Some(positions) = self.by_lower.get(run) {
                found.extend(positions);
            }
        }
        for &i in &self.irregular {
            if contains_identifier(lower, &self.names[i]) {
                found.push(i);
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// The names of every other tool of the side: a shared [`SideNames`] and this tool's position.
#[derive(Debug, Clone)]
pub struct Siblings {
    side: Arc<SideNames>,
    own: Option<usize>,
}

impl Siblings {
    /// The siblings of the tool at `own` in `side`.
    pub fn of(side: Arc<SideNames>, own: usize) -> Siblings {
        Siblings {
            side,
            own: Some(own),
        }
    }

    /// The side's names, listing order, this tool's own entry included.
    pub fn side(&self) -> &SideNames {
        &self.side
    }

    /// This tool's position in [`Self::side`], when it is one of them.
    pub fn own(&self) -> Option<usize> {
        self.own
    }

    /// The other tools' names, in listing order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let own = self.own;
        self.side
            .names
            .iter()
            .enumerate()
            .filter(move |(i, _)| Some(*i) != own)
            .map(|(_, n)| n.as_str())
    }

    pub fn len(&self) -> usize {
        self.side.names.len() - usize::from(self.own.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The other tools' names as an owned list (for rendering one prompt).
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_string).collect()
    }

    /// A digest of what these siblings are: the side's names and this tool's position.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.side.digest);
        h.update(self.own.map_or(u64::MAX, |o| o as u64).to_be_bytes());
        h.finalize().into()
    }
}

impl From<Vec<String>> for Siblings {
    /// A plain list of sibling names (the tool itself not among them).
    fn from(names: Vec<String>) -> Siblings {
        Siblings {
            side: Arc::new(SideNames::new(names)),
            own: None,
        }
    }
}

impl FromIterator<String> for Siblings {
    fn from_iter<I: IntoIterator<Item = String>>(names: I) -> Siblings {
        Siblings::from(names.into_iter().collect::<Vec<String>>())
    }
}

/// Contains `needle` with no identifier character on either side (case-insensitive).
pub fn contains_identifier(haystack_lower: &str, needle: &str) -> bool {
    let needle = needle.to_lowercase();
    if needle.is_empty() {
        return false;
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let mut start = 0;
    while let Some(pos) = haystack_lower[start..].find(&needle) {
        let at = start + pos;
        let before = haystack_lower[..at].chars().next_back();
        let after = haystack_lower[at + needle.len()..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return true;
        }
        start = at + needle.len().max(1);
        if start >= haystack_lower.len() {
            break;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_share_one_list_and_skip_their_own_name() {
        let side = Arc::new(SideNames::new(vec![
            "get_user".into(),
            "list_users".into(),
            "github.search".into(),
        ]));
        let a = Siblings::of(Arc::clone(&side), 0);
        let b = Siblings::of(Arc::clone(&side), 1);
        assert_eq!(a.to_vec(), vec!["list_users", "github.search"]);
        assert_eq!(b.to_vec(), vec!["get_user", "github.search"]);
        assert_eq!(a.len(), 2);
        // One list, not one per tool.
        assert_eq!(Arc::strong_count(&side), 3);
        assert_ne!(a.digest(), b.digest());
        let text = "use list_users first; github.search finds more. not get_user_x".to_lowercase();
        assert_eq!(side.mentioned_in(&text), vec![1, 2]);
    }
}
