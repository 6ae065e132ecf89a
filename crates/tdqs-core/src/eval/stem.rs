//! A light English stemmer for the synthetic selector: enough to make `tickets`, `ticket`;
//! `created`, `creating`, `create`; `permanently`, `permanent`; `organization`, `organize` meet,
//! and nothing cleverer.
//!
//! It strips one inflectional suffix (plural `-s`/`-es`/`-ies`, `-ing`, `-ed`, `-ly`), folds
//! `-ization`/`-ation` to their verb, then drops a final silent `e`, so a verb and its forms share
//! a stem. It never leaves a stem shorter than three letters, and leaves words of three letters
//! or fewer, digits and identifiers alone. Porter's full algorithm would merge more (and
//! over-merge more: `general`/`generate`); tool definitions and requests are short, so a miss
//! costs one term, and an over-merge costs a wrong tool.

/// The stem of one lower-case word.
pub fn stem(word: &str) -> String {
    if word.chars().count() <= 3 || !word.chars().all(|c| c.is_ascii_lowercase()) {
        return word.to_string();
    }
    let mut w = word.to_string();
    strip_inflection(&mut w);
    fold_derivation(&mut w);
    if w.len() > 3 && w.ends_with('e') && !w.ends_with("ee") {
        w.pop();
    }
    w
}

/// Replaces `suffix` by `with` when at least `min_stem` letters remain before it.
fn replace(w: &mut String, suffix: &str, with: &str, min_stem: usize) -> bool {
    if w.len() >= suffix.len() + min_stem && w.ends_with(suffix) {
        w.truncate(w.len() - suffix.len());
        w.push_str(with);
        true
    } else {
        false
    }
}

fn is_vowel(c: u8) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

/// `stopp` → `stop`, `runn` → `run`; never `ll`, `ss`, `zz` (`fill`, `pass`, `buzz`).
fn undouble(w: &mut String) {
    let b = w.as_bytes();
    let n = b.len();
    if n >= 4
        && b[n - 1] == b[n - 2]
        && !is_vowel(b[n - 1])
        && !matches!(b[n - 1], b'l' | b's' | b'z')
    {
        w.pop();
    }
}

fn has_vowel(s: &str) -> bool {
    s.bytes().any(is_vowel)
}

fn strip_inflection(w: &mut String) {
    if replace(w, "ies", "y", 3)
        || replace(w, "sses", "ss", 2)
        || replace(w, "xes", "x", 2)
        || replace(w, "ches", "ch", 2)
        || replace(w, "shes", "sh", 2)
    {
        return;
    }
    if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        replace(w, "s", "", 3);
        return;
    }
    for suffix in ["ing", "ed"] {
        if w.ends_with(suffix) && has_vowel(&w[..w.len() - suffix.len()]) {
            if replace(w, suffix, "", 3) {
                undouble(w);
            }
            return;
        }
    }
    replace(w, "ly", "", 4);
}

fn fold_derivation(w: &mut String) {
    let _ = replace(w, "ization", "iz", 3)
        || replace(w, "isation", "iz", 3)
        || replace(w, "ation", "at", 3)
        || replace(w, "ition", "it", 3)
        || replace(w, "ion", "", 4);
}

#[cfg(test)]
mod tests {
    use super::stem;

    fn same(words: &[&str]) {
        let first = stem(words[0]);
        for w in words {
            assert_eq!(stem(w), first, "{w} vs {}", words[0]);
        }
    }

    fn differ(a: &str, b: &str) {
        assert_ne!(stem(a), stem(b), "{a} and {b} must not meet");
    }

    #[test]
    fn stem_joins_inflections_of_one_word() {
        same(&["ticket", "tickets"]);
        same(&["create", "created", "creates", "creating", "creation"]);
        same(&["delete", "deleted", "deletes", "deleting", "deletion"]);
        same(&["close", "closed", "closes", "closing"]);
        same(&["archive", "archived", "archiving"]);
        same(&["update", "updated", "updates", "updating"]);
        same(&["organization", "organizations", "organize"]);
        same(&["policy", "policies"]);
        same(&["permanent", "permanently"]);
        same(&["stop", "stopped", "stopping"]);
        same(&["search", "searches", "searching", "searched"]);
        same(&["match", "matches"]);
        same(&["comment", "comments"]);
        same(&["directory", "directories"]);
    }

    #[test]
    fn stem_keeps_distinct_words_apart() {
        differ("user", "use");
        differ("file", "fill");
        differ("list", "last");
        differ("general", "generate");
        differ("status", "state");
        differ("address", "add");
    }

    #[test]
    fn stem_leaves_short_words_and_identifiers_alone() {
        for w in [
            "id", "csv", "usr", "tkt", "1a2b", "org_9f2b", "is", "bus", "gas",
        ] {
            assert_eq!(stem(w), w);
        }
        // A word that only looks inflected keeps its body.
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("analysis"), "analysis");
        assert_eq!(stem("address"), "address");
        assert_eq!(stem("thing"), "thing");
    }
}
