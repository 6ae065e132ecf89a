//! Pair rules that scale: near-duplicate names (`TDQS-N001`), near-identical descriptions
//! (`TDQS-D005`) and overlap without guidance (`TDQS-D006`).
//!
//! Comparing every pair costs the square of the tool count and, on a large server whose
//! descriptions share boilerplate, names the same problem thousands of times. Here:
//!
//! - **Boilerplate is set aside first.** A sentence of six words or more repeated in three or
//!   more descriptions is already one `TDQS-D013` finding; it is left out of the comparison, so
//!   two tools are compared on what each says about itself.
//! - **Candidates come from an inverted index** of each tool's own words. Only words held by at
//!   most [`RARE_DF`] tools feed it, and each tool keeps its [`CANDIDATES`] partners sharing the
//!   most such words, so the work is bounded by the tool count times a constant.
//! - **Templates are grouped.** Tools whose own words are almost all common words (held by more
//!   than [`RARE_DF`] tools) and the same common words are one template; near-identical pairs are
//!   joined into groups, and a group of three or more tools is one finding naming every member.
//! - **A cap per tool.** A tool takes part in at most [`PAIR_CAP`] pair findings, strongest
//!   first; the partners past the cap are named in one summary finding on that tool.
//!
//! Every pair is still judged on its own two tools: a third tool never changes whether a pair is
//! similar, only whether its finding stands alone or joins a group.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::catalogue::{Code, Finding};
use super::facts::ToolFacts;
use super::text;

/// A word held by more tools than this is common vocabulary: it does not make two tools
/// candidates by itself.
pub const RARE_DF: usize = 48;
/// Partners kept per tool from the index, those sharing the most rare words first.
pub const CANDIDATES: usize = 24;
/// Pair findings one tool takes part in before the rest are summarised.
pub const PAIR_CAP: usize = 3;
/// Near-identical tools that form one group finding instead of pairs.
pub const GROUP_MIN: usize = 3;
/// Jaccard similarity of the own words at which two descriptions are near-identical.
pub const NEAR_IDENTICAL: f64 = 0.7;
/// Jaccard similarity at which two descriptions overlap.
pub const OVERLAP: f64 = 0.4;

fn make(
    code: Code,
    tool: &str,
    message: String,
    suggestion: String,
    related: Vec<String>,
) -> Finding {
    let r = code.rule();
    Finding {
        code: r.code,
        slug: r.slug.to_string(),
        severity: r.severity,
        tool: Some(tool.to_string()),
        parameter: None,
        message,
        suggestion,
        related,
    }
}

fn ticks(names: &[&str], max: usize) -> String {
    let mut shown: Vec<String> = names.iter().take(max).map(|n| format!("`{n}`")).collect();
    if names.len() > max {
        shown.push(format!("and {} more", names.len() - max));
    }
    shown.join(", ")
}

/// The content words of the sentences that are not boilerplate.
fn own_words(f: &ToolFacts, boilerplate: &BTreeSet<String>) -> BTreeSet<String> {
    let kept: Vec<&str> = f
        .sentences
        .iter()
        .filter(|s| !boilerplate.contains(&text::bare(s)))
        .map(String::as_str)
        .collect();
    text::content_words(&kept.join(" "))
}

struct UnionFind(Vec<usize>);

impl UnionFind {
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // The smaller index is the root, so groups are named after their first tool.
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.0[hi] = lo;
        }
    }
}

/// A name word that sets `a` apart from `b`: in `a`'s name but not `b`'s, said in `a`'s
/// description and not in `b`'s (`delete_entities` / `delete_relations`,
/// `list_directory` / `list_directory_with_sizes`, `approve_…` / `unapprove_…`).
///
/// With `subjects_only`, the leading verb does not count: descriptions that differ only in their
/// verb ("Close an issue …" / "Delete an issue …") still leave the model guessing what each does.
fn name_sets_apart(
    a: &ToolFacts,
    b: &ToolFacts,
    wa: &BTreeSet<String>,
    wb: &BTreeSet<String>,
    subjects_only: bool,
) -> Option<String> {
    let b_name: BTreeSet<String> = b.name_tokens.iter().map(|t| text::singular(t)).collect();
    let tokens = if subjects_only {
        super::facts::subject_words(a.name_tokens.iter())
    } else {
        a.name_tokens.clone()
    };
    tokens
        .iter()
        .map(|t| text::singular(t))
        .filter(|t| t.chars().filter(|c| c.is_alphabetic()).count() >= 3)
        .find(|t| !b_name.contains(t) && wa.contains(t) && !wb.contains(t))
}

/// How many of the word sets hold each word.
fn document_frequency(words: &[BTreeSet<String>]) -> HashMap<&str, usize> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    for w in words {
        for word in w {
            *df.entry(word.as_str()).or_default() += 1;
        }
    }
    df
}

/// Candidate pairs `(i, j)`, `i < j`, sorted: tools of at least three words sharing a rare word
/// (held by at most [`RARE_DF`] tools), each tool keeping the [`CANDIDATES`] partners sharing the
/// most. On a server of up to [`CANDIDATES`] + 1 tools this is every pair sharing a word.
pub fn candidate_pairs(words: &[BTreeSet<String>]) -> Vec<(usize, usize)> {
    let df = document_frequency(words);
    candidate_pairs_with(words, &df).into_iter().collect()
}

fn candidate_pairs_with(
    words: &[BTreeSet<String>],
    df: &HashMap<&str, usize>,
) -> BTreeSet<(usize, usize)> {
    let comparable = |i: usize| words[i].len() >= 3;
    let mut postings: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, w) in words.iter().enumerate() {
        if !comparable(i) {
            continue;
        }
        for word in w {
            if df.get(word.as_str()).copied().unwrap_or(0) <= RARE_DF {
                postings.entry(word.as_str()).or_default().push(i);
            }
        }
    }
    let mut candidates: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut shared: HashMap<usize, usize> = HashMap::new();
    for (i, w) in words.iter().enumerate() {
        if !comparable(i) {
            continue;
        }
        shared.clear();
        for word in w {
            if let Some(list) = postings.get(word.as_str()) {
                for &j in list {
                    if j != i {
                        *shared.entry(j).or_default() += 1;
                    }
                }
            }
        }
        let mut ranked: Vec<(usize, usize)> = shared.iter().map(|(&j, &c)| (j, c)).collect();
        ranked.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        for (j, _) in ranked.into_iter().take(CANDIDATES) {
            candidates.insert((i.min(j), i.max(j)));
        }
    }
    candidates
}

/// True when the two names share a subject word (the same resource): tools about different
/// resources do not compete, however alike their wording.
fn share_subject(a: &ToolFacts, b: &ToolFacts) -> bool {
    let sa: BTreeSet<String> = super::facts::subject_words(a.name_tokens.iter())
        .iter()
        .map(|t| text::singular(t))
        .collect();
    super::facts::subject_words(b.name_tokens.iter())
        .iter()
        .any(|t| sa.contains(&text::singular(t)))
}

/// A near-identical pair that no name word sets apart: the two tools and their similarity.
type Near = (usize, usize, f64);
/// An overlapping pair neither description guides between: the two tools, their similarity and
/// the name word that alone tells them apart, if there is one.
type Overlap = (usize, usize, f64, Option<String>);

/// Every pair finding, each with the index of the tool it is reported on.
///
/// The findings come in a fixed order — names, near-identical groups, pairs, then the overflow
/// summaries — because the report lists them in the order they are pushed.
pub fn pair_findings(facts: &[ToolFacts], boilerplate: &BTreeSet<String>) -> Vec<(usize, Finding)> {
    let n = facts.len();
    let mut out = same_name_findings(facts);

    let words = description_words(facts, boilerplate);
    let df = document_frequency(&words);
    let candidates = candidate_pairs_with(&words, &df);

    let mut uf = UnionFind((0..n).collect());
    join_templates(&words, &df, &mut uf);
    let (near, overlaps) = judge_candidates(facts, &words, &candidates, &mut uf);

    let in_group = group_findings(facts, &words, &mut uf, &mut out);
    let pairs = ranked_pairs(near, overlaps, &in_group);
    capped_pair_findings(facts, pairs, &mut out);
    out
}

/// A description is compared only when it has at least three own words: fewer say too little
/// for a similarity to mean anything.
fn comparable(words: &[BTreeSet<String>], i: usize) -> bool {
    words[i].len() >= 3
}

/// `TDQS-N001`: tools whose names reduce to the same words, grouped by that key — one finding
/// per group of [`GROUP_MIN`] or more, else one per pair (or per duplicate name).
fn same_name_findings(facts: &[ToolFacts]) -> Vec<(usize, Finding)> {
    let mut out: Vec<(usize, Finding)> = Vec::new();
    let mut by_key: BTreeMap<Vec<String>, Vec<usize>> = BTreeMap::new();
    for (i, f) in facts.iter().enumerate() {
        let key = name_key(&f.name);
        if !key.is_empty() {
            by_key.entry(key).or_default().push(i);
        }
    }
    for (key, members) in &by_key {
        if members.len() < 2 {
            continue;
        }
        let first = members[0];
        let a = &facts[first];
        if members.len() >= GROUP_MIN {
            let others: Vec<&str> = members[1..]
                .iter()
                .map(|&j| facts[j].name.as_str())
                .collect();
            out.push((
                first,
                make(
                    Code::N001,
                    &a.name,
                    format!(
                        "{} tools reduce to the same words ({}): `{}`, {}.",
                        members.len(),
                        key.join(" "),
                        a.name,
                        ticks(&others, 8)
                    ),
                    "Keep one name, or name what differs in each.".into(),
                    others.iter().map(|s| s.to_string()).collect(),
                ),
            ));
            continue;
        }
        out.push((first, same_name_pair_finding(key, a, &facts[members[1]])));
    }
    out
}

/// The `TDQS-N001` finding for exactly two tools sharing a name key: a duplicate listing reads
/// differently from two names that merely reduce to the same words.
fn same_name_pair_finding(key: &[String], a: &ToolFacts, b: &ToolFacts) -> Finding {
    let (message, suggestion) = if a.name == b.name {
        (
            format!("`{}` is listed twice.", a.name),
            "Remove the duplicate tool.".to_string(),
        )
    } else {
        (
            format!(
                "`{}` and `{}` reduce to the same words ({}).",
                a.name,
                b.name,
                key.join(" ")
            ),
            format!(
                "Keep one of `{}` and `{}`, or name what differs.",
                a.name, b.name
            ),
        )
    };
    make(
        Code::N001,
        &a.name,
        message,
        suggestion,
        vec![b.name.clone()],
    )
}

/// Each tool's own description words (boilerplate sentences left out); empty for a tool without
/// a description, so it is never compared.
fn description_words(facts: &[ToolFacts], boilerplate: &BTreeSet<String>) -> Vec<BTreeSet<String>> {
    facts
        .iter()
        .map(|f| {
            if f.has_description() {
                own_words(f, boilerplate)
            } else {
                BTreeSet::new()
            }
        })
        .collect()
}

/// Templates: tools made almost only of the same common words are joined into one group, since
/// the inverted index (rare words only) would never pair them.
fn join_templates(words: &[BTreeSet<String>], df: &HashMap<&str, usize>, uf: &mut UnionFind) {
    let mut templates: HashMap<Vec<&str>, Vec<usize>> = HashMap::new();
    for (i, w) in words.iter().enumerate() {
        if !comparable(words, i) {
            continue;
        }
        let common: Vec<&str> = w
            .iter()
            .map(String::as_str)
            .filter(|word| df[word] > RARE_DF)
            .collect();
        // Jaccard between two members is at least |C| / (|C| + both rare parts) >= 0.7 when
        // each rare part is at most 15 % of the tool's words.
        if common.len() >= 3 && common.len() * 100 >= w.len() * 85 {
            templates.entry(common).or_default().push(i);
        }
    }
    let mut template_groups: Vec<&Vec<usize>> =
        templates.values().filter(|m| m.len() >= 2).collect();
    template_groups.sort();
    for members in &template_groups {
        for &j in &members[1..] {
            uf.union(members[0], j);
        }
    }
}

/// Judge each candidate pair on its own two tools: near-identical pairs that no name word sets
/// apart are joined in `uf` and returned as near; the others that neither description guides
/// between are returned as overlaps.
fn judge_candidates(
    facts: &[ToolFacts],
    words: &[BTreeSet<String>],
    candidates: &BTreeSet<(usize, usize)>,
    uf: &mut UnionFind,
) -> (Vec<Near>, Vec<Overlap>) {
    let mut near: Vec<Near> = Vec::new();
    let mut overlaps: Vec<Overlap> = Vec::new();
    for &(i, j) in candidates {
        if !comparable(words, i) || !comparable(words, j) {
            continue;
        }
        let (a, b) = (&facts[i], &facts[j]);
        let sim = text::jaccard(&words[i], &words[j]);
        if sim < OVERLAP {
            continue;
        }
        let guided =
            a.mentioned_siblings.contains(&b.name) || b.mentioned_siblings.contains(&a.name);
        if sim >= NEAR_IDENTICAL {
            let apart = name_sets_apart(a, b, &words[i], &words[j], true)
                .or_else(|| name_sets_apart(b, a, &words[j], &words[i], true));
            if apart.is_none() {
                near.push((i, j, sim));
                uf.union(i, j);
                continue;
            }
            if !guided {
                overlaps.push((i, j, sim, apart));
            }
        } else if !guided
            && share_subject(a, b)
            && name_sets_apart(a, b, &words[i], &words[j], false).is_none()
            && name_sets_apart(b, a, &words[j], &words[i], false).is_none()
        {
            overlaps.push((i, j, sim, None));
        }
    }
    (near, overlaps)
}

/// Near-identical groups of [`GROUP_MIN`] or more: one `TDQS-D005` finding each, pushed onto
/// `out`. Returns which tools are in such a group, so their pairs are not reported again.
fn group_findings(
    facts: &[ToolFacts],
    words: &[BTreeSet<String>],
    uf: &mut UnionFind,
    out: &mut Vec<(usize, Finding)>,
) -> Vec<bool> {
    let n = facts.len();
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let root = uf.find(i);
        groups.entry(root).or_default().push(i);
    }
    let mut in_group = vec![false; n];
    for members in groups.values().filter(|m| m.len() >= GROUP_MIN) {
        for &m in members {
            in_group[m] = true;
        }
        let first = &facts[members[0]];
        let others: Vec<&str> = members[1..]
            .iter()
            .map(|&j| facts[j].name.as_str())
            .collect();
        let shared_words: Vec<&str> = words[members[0]]
            .iter()
            .filter(|w| members[1..].iter().all(|&j| words[j].contains(*w)))
            .map(String::as_str)
            .take(8)
            .collect();
        out.push((
            members[0],
            make(
                Code::D005,
                &first.name,
                format!(
                    "{} tools have near-identical descriptions (shared words: {}): `{}`, {}.",
                    members.len(),
                    shared_words.join(" "),
                    first.name,
                    ticks(&others, 8)
                ),
                "Open each description with what only that tool handles, or merge the tools into one with a parameter.".into(),
                others.iter().map(|s| s.to_string()).collect(),
            ),
        ));
    }
    in_group
}

/// A pair to report: the two tools, their similarity, the word setting them apart, and whether
/// it is near-identical (`TDQS-D005`) rather than an overlap (`TDQS-D006`).
type RankedPair = (usize, usize, f64, Option<String>, bool);

/// The pairs still to report (near pairs outside a group, and every overlap), strongest first:
/// near-identical before overlap, then by similarity, then by index so the order is stable.
fn ranked_pairs(near: Vec<Near>, overlaps: Vec<Overlap>, in_group: &[bool]) -> Vec<RankedPair> {
    let mut pairs: Vec<RankedPair> = near
        .into_iter()
        .filter(|(i, j, _)| !in_group[*i] && !in_group[*j])
        .map(|(i, j, s)| (i, j, s, None, true))
        .chain(
            overlaps
                .into_iter()
                .map(|(i, j, s, apart)| (i, j, s, apart, false)),
        )
        .collect();
    pairs.sort_by(|x, y| {
        y.4.cmp(&x.4)
            .then(y.2.partial_cmp(&x.2).unwrap_or(std::cmp::Ordering::Equal))
            .then((x.0, x.1).cmp(&(y.0, y.1)))
    });
    pairs
}

/// One finding per ranked pair while both tools are within [`PAIR_CAP`]; the partners past the
/// cap are summarised in one finding per tool, pushed after all the pairs.
fn capped_pair_findings(
    facts: &[ToolFacts],
    pairs: Vec<RankedPair>,
    out: &mut Vec<(usize, Finding)>,
) {
    let n = facts.len();
    let mut used = vec![0usize; n];
    let mut overflow: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, j, sim, apart, is_near) in pairs {
        if used[i] >= PAIR_CAP || used[j] >= PAIR_CAP {
            overflow.entry(i).or_default().push(j);
            continue;
        }
        used[i] += 1;
        used[j] += 1;
        out.push((i, pair_finding(&facts[i], &facts[j], sim, apart, is_near)));
    }
    for (i, partners) in overflow {
        let a = &facts[i];
        let names: Vec<&str> = partners.iter().map(|&j| facts[j].name.as_str()).collect();
        out.push((
            i,
            make(
                Code::D006,
                &a.name,
                format!(
                    "`{}` also overlaps {} more tool{} past the {PAIR_CAP} shown: {}.",
                    a.name,
                    names.len(),
                    if names.len() == 1 { "" } else { "s" },
                    ticks(&names, 8)
                ),
                "Say in each description which tool to prefer for what.".into(),
                names.iter().map(|s| s.to_string()).collect(),
            ),
        ));
    }
}

/// The finding for one pair: `TDQS-D005` when near-identical, else `TDQS-D006`, whose message
/// names the one word that tells the tools apart when there is one.
fn pair_finding(
    a: &ToolFacts,
    b: &ToolFacts,
    sim: f64,
    apart: Option<String>,
    is_near: bool,
) -> Finding {
    let pct = sim * 100.0;
    if is_near {
        make(Code::D005, &a.name, format!("`{}` and `{}` share {pct:.0}% of their meaningful words.", a.name, b.name), format!("Rewrite one of `{}` and `{}` around what only it handles; if they do the same thing, drop one.", a.name, b.name), vec![b.name.clone()])
    } else {
        let why = match apart {
            Some(word) => format!("share {pct:.0}% of their words; only \"{word}\" tells them apart, and neither says which to prefer"),
            None => format!("overlap ({pct:.0}% shared words) and neither says which to prefer"),
        };
        make(
            Code::D006,
            &a.name,
            format!("`{}` and `{}` {why}.", a.name, b.name),
            format!(
                "Add to each a sentence such as 'for … use `{}` instead'.",
                b.name
            ),
            vec![b.name.clone()],
        )
    }
}

/// The words a name reduces to: case, separators, trailing digits and plurals ignored.
fn name_key(name: &str) -> Vec<String> {
    text::name_tokens(name)
        .into_iter()
        .map(|t| t.trim_end_matches(|c: char| c.is_ascii_digit()).to_string())
        .filter(|t| !t.is_empty())
        .map(|t| text::singular(&t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_equate_case_and_digits() {
        assert_eq!(name_key("getUser"), name_key("get_user"));
        assert_eq!(name_key("ticket"), name_key("ticket2"));
        assert_ne!(name_key("get_user"), name_key("get_users_list"));
    }
}
