//! Name prefixes that are namespaces, not subjects: read from one side's tool names, used by
//! the per-tool checks and the pair checks alike.

use std::collections::{BTreeMap, BTreeSet};

use super::facts::ToolFacts;
use super::text;

/// Name prefixes that are namespaces, not subjects: a first word shared by most tools (`git_`,
/// `browser_`), or a first word that is no verb and is followed by a verb in three or more names
/// (`wit_get_work_item`, `wit_list_work_items`, `repo_create_branch`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespaces(BTreeSet<String>);

impl Namespaces {
    pub fn contains(&self, token: &str) -> bool {
        self.0.contains(token)
    }

    /// The name's words after its namespace prefix, if it has one (and words remain).
    pub fn strip<'a>(&self, tokens: &'a [String]) -> &'a [String] {
        match tokens.split_first() {
            Some((first, rest)) if !rest.is_empty() && self.contains(first) => rest,
            _ => tokens,
        }
    }

    /// The namespace prefixes of a side's tools.
    pub fn of(facts: &[ToolFacts]) -> Namespaces {
        let mut set = BTreeSet::new();
        if facts.len() >= 3 {
            let mut leading: BTreeMap<&str, usize> = BTreeMap::new();
            let mut before_verb: BTreeMap<&str, usize> = BTreeMap::new();
            for f in facts {
                if let [first, second, ..] = f.name_tokens.as_slice() {
                    *leading.entry(first.as_str()).or_default() += 1;
                    if text::verb_base(second).is_some() {
                        *before_verb.entry(first.as_str()).or_default() += 1;
                    }
                }
            }
            if let Some((token, _)) = leading
                .iter()
                .filter(|(token, n)| {
                    **n * 10 >= facts.len() * 6 && text::verb_base(token).is_none()
                })
                .max_by_key(|(_, n)| **n)
            {
                set.insert(token.to_string());
            }
            for (token, n) in before_verb {
                if n >= 3 && text::verb_base(token).is_none() && !text::is_stop_word(token) {
                    set.insert(token.to_string());
                }
            }
        }
        Namespaces(set)
    }
}
