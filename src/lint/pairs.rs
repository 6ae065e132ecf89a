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
use super::namespaces::Namespaces;
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

/// The content words of the sentences that are not boilerplate: neither a repeated note
/// (`TDQS-D013`) nor a short segment repeated in [`GROUP_MIN`] or more descriptions.
fn own_words(f: &ToolFacts, boilerplate: &BTreeSet<String>) -> BTreeSet<String> {
    let all = segments(&f.description);
    let kept: Vec<&String> = all.iter().filter(|s| !boilerplate.contains(*s)).collect();
    if kept.is_empty() {
        // A description made only of repeated text is compared as it is: three tools sharing
        // one description are near-identical, not boilerplate with nothing of their own.
        return text::content_words(&all.join(" "));
    }
    text::content_words(
        &kept
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// A description cut into the pieces generated text repeats: sentences, lines and
/// `|`-separated parts, each in its bare form. "Notion | Retrieve a block … Error Responses:
/// 400: 400" repeats "notion" and "error responses 400 400" in every tool, though no piece is the
/// six-word sentence a repeated note needs.
fn segments(description: &str) -> Vec<String> {
    description
        .split(['\n', '|'])
        .flat_map(text::sentences)
        .map(|s| text::bare(&s))
        .filter(|s| !s.is_empty())
        .collect()
}

/// Pieces of description ([`segments`]) that three or more tools repeat: set aside before two
/// tools are compared, whatever their length.
pub(crate) fn repeated_segments(facts: &[ToolFacts]) -> BTreeSet<String> {
    let mut owners: HashMap<String, usize> = HashMap::new();
    for f in facts {
        let mine: BTreeSet<String> = segments(&f.description).into_iter().collect();
        for s in mine {
            *owners.entry(s).or_default() += 1;
        }
    }
    owners
        .into_iter()
        .filter(|(_, n)| *n >= GROUP_MIN)
        .map(|(s, _)| s)
        .collect()
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
///
/// A namespace prefix (`git_` of `git_status` and `git_log`) is the server's name, not a
/// resource, so it is not a shared subject.
fn share_subject(a: &ToolFacts, b: &ToolFacts, namespaces: &Namespaces) -> bool {
    let subjects = |f: &ToolFacts| -> BTreeSet<String> {
        super::facts::subject_words(namespaces.strip(&f.name_tokens).iter())
            .iter()
            .map(|t| text::singular(t))
            .collect()
    };
    let sa = subjects(a);
    subjects(b).iter().any(|t| sa.contains(t))
}

/// The pair says when to use which: a sentence of one description names the other tool with
/// a word of guidance ("for a single request use `browser_network_request`", "to delete it,
/// use …"). Such a pair is neither near-identical nor an unguided overlap.
fn says_which(a: &ToolFacts, b: &ToolFacts) -> bool {
    fn names_with_guidance(from: &ToolFacts, other: &str) -> bool {
        from.mentioned_siblings.iter().any(|m| m == other)
            && from.sentences.iter().any(|s| {
                let lower = s.to_lowercase();
                super::facts::contains_identifier(&lower, &other.to_lowercase())
                    && guidance_word().is_match(&lower)
            })
    }
    names_with_guidance(a, &b.name) || names_with_guidance(b, &a.name)
}

fn guidance_word() -> &'static regex::Regex {
    static CELL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        match regex::Regex::new(r"\b(use|call|prefer|instead|rather|when|for|only|single|one|multiple|many|several|batch|bulk|see|vs|versus|unlike|whereas|otherwise)\b") {
            Ok(re) => re,
            Err(err) => unreachable!("built-in pattern does not compile: {err}"),
        }
    })
}

/// Names that differ only in number (`play_pipeline_job` / `play_pipeline_jobs`), where the
/// plural one's description says it handles many ("multiple", "all", "in bulk"): the model can
/// tell one from many.
fn number_sets_apart(a: &ToolFacts, b: &ToolFacts) -> bool {
    if name_key(&a.name) != name_key(&b.name) || a.name_tokens == b.name_tokens {
        return false;
    }
    let plural_of = |x: &ToolFacts, y: &ToolFacts| {
        x.name_tokens.len() == y.name_tokens.len()
            && x.name_tokens
                .iter()
                .zip(&y.name_tokens)
                .any(|(p, q)| p != q && text::singular(p) == *q)
    };
    let plural = if plural_of(a, b) {
        a
    } else if plural_of(b, a) {
        b
    } else {
        return false;
    };
    text::plurality_cue().is_match(&plural.clean)
}

/// One description speaks of everything ("across all projects") and the other of one thing
/// ("within a specific project"): the scope tells the tools apart, though the words are shared.
fn scope_sets_apart(a: &ToolFacts, b: &ToolFacts) -> bool {
    fn cue(
        cell: &'static std::sync::OnceLock<regex::Regex>,
        source: &str,
    ) -> &'static regex::Regex {
        cell.get_or_init(|| match regex::Regex::new(source) {
            Ok(re) => re,
            Err(err) => unreachable!("built-in pattern does not compile: {err}"),
        })
    }
    static MANY: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static ONE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let many = cue(
        &MANY,
        r"(?i)\b(across (all|every|multiple)|in all|all (the )?\w+s\b|multiple|in bulk|batch)",
    );
    let one = cue(
        &ONE,
        r"(?i)\b(a specific|a single|one specific|within (a|one|the given)|a given|by (its )?id\b)",
    );
    (many.is_match(&a.clean) && one.is_match(&b.clean) && !one.is_match(&a.clean))
        || (many.is_match(&b.clean) && one.is_match(&a.clean) && !one.is_match(&b.clean))
}

/// The share of ordered word pairs two descriptions have in common: "Convert an address into
/// coordinates" and "Convert coordinates into an address" share every word but no pair, so
/// they say different things.
fn bigram_similarity(a: &ToolFacts, b: &ToolFacts, set_aside: &BTreeSet<String>) -> f64 {
    let pairs = |f: &ToolFacts| -> BTreeSet<(String, String)> {
        let kept: Vec<String> = segments(&f.description)
            .into_iter()
            .filter(|s| !set_aside.contains(s))
            .collect();
        let words: Vec<String> = text::words(&kept.join(" "))
            .into_iter()
            .filter(|w| !text::is_stop_word(w))
            .map(|w| text::singular(&w))
            .collect();
        words
            .windows(2)
            .map(|w| (w[0].clone(), w[1].clone()))
            .collect()
    };
    let (pa, pb) = (pairs(a), pairs(b));
    let union = pa.union(&pb).count();
    if union == 0 {
        return 1.0;
    }
    pa.intersection(&pb).count() as f64 / union as f64
}

/// Tools whose names open with verbs of different kinds (list / create / delete) and whose
/// annotations say so (read-only against not, destructive against not): the verb and the hints
/// tell them apart even when the rest of the text is one template.
fn verb_and_hints_set_apart(a: &ToolFacts, b: &ToolFacts) -> bool {
    use super::facts::Operation;
    let known = |o: Operation| o != Operation::Unknown;
    let differ = |x: Option<bool>, y: Option<bool>| {
        (x.is_some() || y.is_some()) && x.unwrap_or(false) != y.unwrap_or(false)
    };
    known(a.operation)
        && known(b.operation)
        && a.operation != b.operation
        && (differ(a.annotations.read_only, b.annotations.read_only)
            || differ(a.annotations.destructive, b.annotations.destructive))
}

/// The `TDQS-N001` findings with the tool each is reported on, and the pairs they name.
type SameNames = (Vec<(usize, Finding)>, BTreeSet<(usize, usize)>);

/// A near-identical pair that no name word sets apart: the two tools and their similarity.
type Near = (usize, usize, f64);
/// An overlapping pair neither description guides between: the two tools, their similarity and
/// the name word that alone tells them apart, if there is one.
type Overlap = (usize, usize, f64, Option<String>);

/// Every pair finding, each with the index of the tool it is reported on.
///
/// The findings come in a fixed order — names, near-identical groups, pairs, then the overflow
/// summaries — because the report lists them in the order they are pushed.
pub fn pair_findings(
    facts: &[ToolFacts],
    boilerplate: &BTreeSet<String>,
    namespaces: &Namespaces,
) -> Vec<(usize, Finding)> {
    let n = facts.len();
    let (mut out, named_pairs) = same_name_findings(facts);

    let mut set_aside = repeated_segments(facts);
    set_aside.extend(boilerplate.iter().cloned());
    let words = description_words(facts, &set_aside);
    let df = document_frequency(&words);
    let candidates = candidate_pairs_with(&words, &df);

    let mut uf = UnionFind((0..n).collect());
    join_templates(&words, &df, &mut uf);
    let (near, overlaps) =
        judge_candidates(facts, &words, &candidates, &mut uf, namespaces, &set_aside);

    let in_group = group_findings(facts, &words, &mut uf, &mut out);
    // A pair already reported for its names is not reported again for its descriptions.
    let pairs: Vec<RankedPair> = ranked_pairs(near, overlaps, &in_group)
        .into_iter()
        .filter(|p| !named_pairs.contains(&(p.0, p.1)))
        .collect();
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
///
/// Two names that differ only in number are not reported when the pair says which is which
/// (one names the other with guidance, or the plural says it handles many). Returns the pairs
/// reported, so the description rules do not report them again.
fn same_name_findings(facts: &[ToolFacts]) -> SameNames {
    let mut out: Vec<(usize, Finding)> = Vec::new();
    let mut named: BTreeSet<(usize, usize)> = BTreeSet::new();
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
        let b = &facts[members[1]];
        if a.name != b.name && (says_which(a, b) || number_sets_apart(a, b)) {
            continue;
        }
        named.insert((first, members[1]));
        out.push((first, same_name_pair_finding(key, a, b)));
    }
    (out, named)
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
    namespaces: &Namespaces,
    set_aside: &BTreeSet<String>,
) -> (Vec<Near>, Vec<Overlap>) {
    let mut near: Vec<Near> = Vec::new();
    let mut overlaps: Vec<Overlap> = Vec::new();
    for &(i, j) in candidates {
        if !comparable(words, i) || !comparable(words, j) {
            continue;
        }
        let (a, b) = (&facts[i], &facts[j]);
        let sim = text::jaccard(&words[i], &words[j]);
        if sim < OVERLAP || says_which(a, b) {
            continue;
        }
        let guided =
            a.mentioned_siblings.contains(&b.name) || b.mentioned_siblings.contains(&a.name);
        if sim >= NEAR_IDENTICAL {
            let apart = name_sets_apart(a, b, &words[i], &words[j], true)
                .or_else(|| name_sets_apart(b, a, &words[j], &words[i], true))
                .or_else(|| number_sets_apart(a, b).then(|| "one or many".to_string()))
                .or_else(|| scope_sets_apart(a, b).then(|| "all or one".to_string()))
                .or_else(|| {
                    (bigram_similarity(a, b, set_aside) < 0.5)
                        .then(|| "the order of their words".to_string())
                })
                .or_else(|| {
                    verb_and_hints_set_apart(a, b)
                        .then(|| "the verb and the annotations".to_string())
                });
            if verb_and_hints_set_apart(a, b) {
                // Different operations, declared differently: not confusable by their text.
                continue;
            }
            if apart.is_none() {
                near.push((i, j, sim));
                uf.union(i, j);
                continue;
            }
            if !guided {
                overlaps.push((i, j, sim, apart));
            }
        } else if !guided
            && !verb_and_hints_set_apart(a, b)
            && share_subject(a, b, namespaces)
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
            Some(word) if word.contains(' ') => format!("share {pct:.0}% of their words; only {word} tells them apart, and neither says which to prefer"),
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
    use serde_json::{json, Value};

    use crate::lint::catalogue::Code;
    use crate::lint::{lint_tools, LintConfig};

    fn codes_between(tools: &[Value], a: &str, b: &str) -> Vec<Code> {
        lint_tools(None, None, tools, &LintConfig::default())
            .findings
            .into_iter()
            .filter(|f| matches!(f.code, Code::N001 | Code::D005 | Code::D006))
            .filter(|f| {
                let tool = f.tool.as_deref().unwrap_or_default();
                (tool == a && f.related.iter().any(|r| r == b))
                    || (tool == b && f.related.iter().any(|r| r == a))
            })
            .map(|f| f.code)
            .collect()
    }

    fn tool(name: &str, description: &str, annotations: Value) -> Value {
        json!({"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {}}, "annotations": annotations})
    }

    #[test]
    fn a_singular_plural_pair_that_says_which_is_which_is_not_a_duplicate() {
        let tools = vec![
            tool("browser_network_request", "Returns the details of one network request made by the page, headers and body included. To see multiple requests at once use browser_network_requests.", json!({"readOnlyHint": true})),
            tool("browser_network_requests", "Returns all network requests made by the page since it loaded, with their headers and body. For one request in full use browser_network_request.", json!({"readOnlyHint": true})),
            tool("browser_click", "Click an element of the current page.", json!({})),
        ];
        let codes = codes_between(
            &tools,
            "browser_network_request",
            "browser_network_requests",
        );
        assert!(codes.is_empty(), "{codes:?}");
        // Without guidance the same names are still one finding.
        let bare = vec![
            tool(
                "get_issue",
                "Returns the issue data for the given project and number.",
                json!({}),
            ),
            tool(
                "get_issues",
                "Returns the issue data for the given project and number.",
                json!({}),
            ),
        ];
        assert_eq!(
            codes_between(&bare, "get_issue", "get_issues"),
            vec![Code::N001]
        );
    }

    #[test]
    fn a_pair_is_reported_under_one_code_only() {
        let tools = vec![
            tool(
                "play_pipeline_job",
                "Run a manual pipeline job of a project and wait until it starts running.",
                json!({}),
            ),
            tool(
                "play_pipeline_jobs",
                "Run a manual pipeline job of a project and wait until it starts running.",
                json!({}),
            ),
        ];
        assert_eq!(
            codes_between(&tools, "play_pipeline_job", "play_pipeline_jobs").len(),
            1
        );
    }

    #[test]
    fn list_create_delete_with_their_own_verbs_and_hints_are_not_confusable() {
        let text = |verb: &str| {
            format!("{verb} the pipeline triggers of a project. Triggers run pipelines of the project for a branch or a tag on request.")
        };
        let tools = vec![
            tool(
                "list_pipeline_triggers",
                &text("List"),
                json!({"readOnlyHint": true}),
            ),
            tool(
                "create_pipeline_trigger",
                &text("Create"),
                json!({"readOnlyHint": false, "destructiveHint": false}),
            ),
            tool(
                "delete_pipeline_trigger",
                &text("Delete"),
                json!({"readOnlyHint": false, "destructiveHint": true}),
            ),
        ];
        let report = lint_tools(None, None, &tools, &LintConfig::default());
        let pairs: Vec<String> = report
            .findings
            .iter()
            .filter(|f| matches!(f.code, Code::D005 | Code::D006))
            .map(|f| f.message.clone())
            .collect();
        assert!(pairs.is_empty(), "{pairs:#?}");
    }

    #[test]
    fn short_generated_boilerplate_does_not_make_tools_alike() {
        let notion = |summary: &str| {
            format!("Notion | {summary}\nError Responses:\n400: 400\n401: 401\n404: 404")
        };
        let tools = vec![
            tool(
                "API-retrieve-a-block",
                &notion("Retrieve a block"),
                json!({}),
            ),
            tool("API-update-a-block", &notion("Update a block"), json!({})),
            tool("API-retrieve-a-page", &notion("Retrieve a page"), json!({})),
            tool(
                "API-post-search",
                &notion("Search pages by title"),
                json!({}),
            ),
        ];
        let report = lint_tools(None, None, &tools, &LintConfig::default());
        let d005: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.code == Code::D005)
            .map(|f| f.message.clone())
            .collect();
        assert!(d005.is_empty(), "{d005:#?}");
    }

    #[test]
    fn a_namespace_prefix_is_not_a_shared_subject() {
        let tools = vec![
            tool(
                "git_status",
                "Shows the working tree status of the repository at the given path.",
                json!({"readOnlyHint": true}),
            ),
            tool(
                "git_log",
                "Shows the commit log of the repository at the given path.",
                json!({"readOnlyHint": true}),
            ),
            tool(
                "git_diff",
                "Shows the changes of the repository at the given path.",
                json!({"readOnlyHint": true}),
            ),
        ];
        for (a, b) in [
            ("git_status", "git_log"),
            ("git_status", "git_diff"),
            ("git_log", "git_diff"),
        ] {
            let codes = codes_between(&tools, a, b);
            assert!(!codes.contains(&Code::D006), "{a}/{b}: {codes:?}");
        }
    }

    #[test]
    fn name_keys_equate_case_and_digits() {
        use super::name_key;
        assert_eq!(name_key("getUser"), name_key("get_user"));
        assert_eq!(name_key("ticket"), name_key("ticket2"));
        assert_ne!(name_key("get_user"), name_key("get_users_list"));
    }
}
