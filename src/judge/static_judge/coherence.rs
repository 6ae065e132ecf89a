//! The static judge's coherence answer: tool count, disambiguation, naming consistency,
//! lifecycle completeness and shadowing risks, from the facts of every tool of a side.

use super::*;

pub(super) fn tool_count_score(n: usize) -> (u8, String) {
    let s = match n {
        0 | 1 => 2,
        2 => 4,
        3..=15 => 5,
        16..=20 => 4,
        21..=30 => 3,
        31..=49 => 2,
        _ => 1,
    };
    let why = match s {
        5 => {
            format!("{n} tools is a well-scoped surface: each can be told apart without overload.")
        }
        4 if n == 2 => {
            "Two tools is a thin surface; the domain is likely only partly covered.".to_string()
        }
        4 => format!("{n} tools is slightly above the ideal range of 3 to 15, still manageable."),
        3 => format!("{n} tools is a heavy surface; selection among so many gets harder."),
        2 if n <= 1 => format!(
            "{n} tool{} is too few for most servers' purpose.",
            if n == 1 { "" } else { "s" }
        ),
        2 => format!("{n} tools is well beyond the ideal range; agents will confuse some of them."),
        _ => format!("{n} tools overwhelms selection; the server should be split."),
    };
    (s, why)
}

/// One coherence dimension: its score before clamping, and why.
pub(super) type CoherenceDim = (i32, String);

/// Disambiguation: pairs from the lint's word index (every sharing pair on a server of up to
/// 25 tools; bounded per tool beyond), plus identical descriptions found by their text.
pub(super) fn disambiguation(all: &[ToolFacts], words: &[BTreeSet<String>]) -> CoherenceDim {
    let n = all.len();
    let pair = |i: usize, j: usize| format!("{} / {}", code(&all[i].name), code(&all[j].name));
    let mut identical = Vec::new();
    let mut near: Vec<String> = Vec::new();
    let mut near_count = 0usize;
    let mut overlap: Vec<String> = Vec::new();
    let mut overlap_count = 0usize;
    let mut same_text: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in all.iter().enumerate() {
        if words[i].len() >= 3 {
            same_text.entry(text::bare(&f.clean)).or_default().push(i);
        }
    }
    // The first identical pair in listing order, as a pass over every pair would find it.
    if let Some(members) = same_text
        .values()
        .filter(|m| m.len() >= 2)
        .min_by_key(|m| m[0])
    {
        identical.push(pair(members[0], members[1]));
    }
    for (i, j) in crate::lint::pairs::candidate_pairs(words) {
        if text::bare(&all[i].clean) == text::bare(&all[j].clean) {
            continue;
        }
        let sim = text::jaccard(&words[i], &words[j]);
        let guided = all[i].mentioned_siblings.contains(&all[j].name)
            || all[j].mentioned_siblings.contains(&all[i].name);
        if sim >= 0.7 {
            near_count += 1;
            if near.is_empty() {
                near.push(pair(i, j));
            }
        } else if sim >= 0.4 && !guided {
            overlap_count += 1;
            if overlap.is_empty() {
                overlap.push(pair(i, j));
            }
        }
    }
    let undescribed = all
        .iter()
        .filter(|f| !f.has_description() || f.is_tautology() || f.is_placeholder())
        .count();
    let mut dis: i32 = if !identical.is_empty() {
        1
    } else if near_count > 1 {
        2
    } else if near_count > 0 || overlap_count * 4 > n.max(1) {
        3
    } else if !overlap.is_empty() {
        4
    } else {
        5
    };
    if undescribed * 2 > n {
        dis = dis.min(2);
    } else if undescribed > 0 {
        dis = dis.min(3);
    }
    let mut dis_why = match (identical.first(), near.first(), overlap.first()) {
        (Some(p), _, _) => format!("{p} share one description, so they cannot be told apart."),
        (None, Some(p), _) => format!(
            "{} pair{} of descriptions are near-identical, e.g. {p}.",
            near_count,
            if near_count == 1 { "" } else { "s" }
        ),
        (None, None, Some(p)) => format!(
            "{} pair{} overlap without saying which to prefer, e.g. {p}.",
            overlap_count,
            if overlap_count == 1 { "" } else { "s" }
        ),
        _ => "No two descriptions overlap enough to be confused.".to_string(),
    };
    if undescribed > 0 {
        dis_why.push_str(&format!(
            " {undescribed} tool{} ha{} no real description.",
            if undescribed == 1 { "" } else { "s" },
            if undescribed == 1 { "s" } else { "ve" }
        ));
    }

    (dis, dis_why)
}

/// Naming consistency: one convention, a consistent verb position, few generic names.
pub(super) fn naming_consistency(all: &[ToolFacts]) -> CoherenceDim {
    let n = all.len();
    let mut conventions: BTreeMap<&str, usize> = BTreeMap::new();
    let mut verb_first = 0;
    let mut multi = 0;
    for f in all {
        if f.name_tokens.len() > 1 {
            multi += 1;
            if text::verb_base(&f.name_tokens[0]).is_some() {
                verb_first += 1;
            }
            let conv = if f.name.contains('_') {
                "snake_case"
            } else if f.name.contains('-') {
                "kebab-case"
            } else if f.name.contains('.') {
                "dot.case"
            } else {
                "camelCase"
            };
            *conventions.entry(conv).or_default() += 1;
        }
    }
    let generic = all
        .iter()
        .filter(|f| {
            !f.name_tokens.is_empty() && f.name_tokens.iter().all(|t| text::is_generic_name_word(t))
        })
        .count();
    let majority = conventions.values().copied().max().unwrap_or(0);
    let minority = multi - majority;
    let pattern_share_ok =
        multi == 0 || verb_first * 10 >= multi * 8 || verb_first * 10 <= multi * 2;
    let mut naming: i32 = if conventions.len() <= 1 && pattern_share_ok {
        5
    } else if conventions.len() <= 1 {
        4
    } else if minority * 5 <= multi {
        3
    } else {
        2
    };
    if generic * 5 > n.max(1) {
        naming -= 1;
    }
    let naming_why = format!(
        "{}; {} of {} multi-word names start with a verb{}.",
        if conventions.len() <= 1 {
            format!(
                "All names follow one convention ({})",
                conventions.keys().next().copied().unwrap_or("single words")
            )
        } else {
            format!(
                "Names mix conventions ({})",
                conventions
                    .iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        verb_first,
        multi,
        if generic > 0 {
            format!(
                "; {generic} name{} only generic words",
                if generic == 1 { " uses" } else { "s use" }
            )
        } else {
            String::new()
        }
    );

    (naming, naming_why)
}

/// Completeness: lifecycle coverage per resource the server creates.
pub(super) fn lifecycle_completeness(all: &[ToolFacts]) -> CoherenceDim {
    let n = all.len();
    let mut resources: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for f in all {
        let subject = f.subject_tokens().last().map(|t| text::singular(t));
        if let Some(s) = subject {
            let op = match f.operation {
                Operation::Create => "create",
                Operation::Read => "read",
                Operation::Update => "update",
                Operation::Delete => "delete",
                Operation::Unknown => "other",
            };
            resources.entry(s).or_default().insert(op);
        }
    }
    let managed: Vec<(&String, &BTreeSet<&str>)> = resources
        .iter()
        .filter(|(_, ops)| ops.contains("create"))
        .collect();
    let gaps: Vec<String> = managed
        .iter()
        .filter_map(|(r, ops)| {
            let missing: Vec<&str> = ["read", "update", "delete"]
                .into_iter()
                .filter(|op| !ops.contains(op))
                .collect();
            if missing.len() >= 2 {
                Some(format!("'{r}' lacks {}", missing.join(" and ")))
            } else {
                None
            }
        })
        .collect();
    let (complete, complete_why): (i32, String) = if n <= 1 {
        (
            2,
            "A single tool covers at most one step of any workflow.".to_string(),
        )
    } else if managed.is_empty() {
        (4, "The tools read and act without creating resources, so no lifecycle gap can be seen; coverage looks adequate for the names given.".to_string())
    } else if gaps.is_empty() {
        (5, format!("Every resource the server creates can also be read and changed or removed ({} resource{}).", managed.len(), if managed.len() == 1 { "" } else { "s" }))
    } else if gaps.len() * 2 <= managed.len() {
        (4, format!("Minor lifecycle gaps: {}.", gaps.join("; ")))
    } else {
        (
            3,
            format!("Several lifecycles are incomplete: {}.", gaps.join("; ")),
        )
    };

    (complete, complete_why)
}

/// Shadowing risks: only supplied candidates whose purposes overlap are confirmed, one per tool.
pub(super) fn shadowing_risks(
    all: &[ToolFacts],
    words: &[BTreeSet<String>],
    candidates: &[ShadowCandidate],
) -> Vec<Value> {
    let index: BTreeMap<&str, usize> = all
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut risks = Vec::new();
    let mut flagged = BTreeSet::new();
    for c in candidates {
        let (Some(&i), Some(&j)) = (
            index.get(c.tool.as_str()),
            index.get(c.cheaper_sibling.as_str()),
        ) else {
            continue;
        };
        let sim = text::jaccard(&words[i], &words[j]);
        let shared_subject = {
            let a: BTreeSet<String> = all[i]
                .subject_tokens()
                .iter()
                .map(|t| text::singular(t))
                .collect();
            let b: BTreeSet<String> = all[j]
                .subject_tokens()
                .iter()
                .map(|t| text::singular(t))
                .collect();
            a.intersection(&b).count() > 0
        };
        if sim >= 0.35
            && shared_subject
            && all[i].operation == all[j].operation
            && flagged.insert(c.tool.clone())
        {
            risks.push(json!({
                "tool": c.tool,
                "cheaper_sibling": c.cheaper_sibling,
                "justification": format!("{} (cost {}) and {} (cost {}) both {} the same resource and share {:.0}% of their description words, so the cheaper call may be chosen for work that needs the dearer one.", code(&c.tool), c.invocation_cost, code(&c.cheaper_sibling), c.cheaper_sibling_invocation_cost, all[i].operation.label(), sim * 100.0),
            }));
        }
    }

    risks
}

/// The set-level (coherence) answer as a JSON value.
pub fn coherence_answer(
    server_name: &str,
    tools: &[Value],
    candidates: &[ShadowCandidate],
) -> Value {
    let names: Vec<String> = tools
        .iter()
        .map(|t| tdqs_core::digest::tool_name(t).to_string())
        .collect();
    let side = SideNames::new(names);
    let all: Vec<ToolFacts> = tools
        .iter()
        .map(|t| facts::extract_with(t, &side))
        .collect();
    let n = all.len();
    let words: Vec<BTreeSet<String>> = all.iter().map(|f| text::content_words(&f.clean)).collect();
    let (dis, dis_why) = disambiguation(&all, &words);
    let (naming, naming_why) = naming_consistency(&all);
    let (count_score, count_why) = tool_count_score(n);
    let (complete, complete_why) = lifecycle_completeness(&all);
    let risks = shadowing_risks(&all, &words, candidates);

    let scores = json!({
        "disambiguation": {"score": clamp(dis), "justification": dis_why},
        "naming_consistency": {"score": clamp(naming), "justification": naming_why},
        "tool_count_appropriateness": {"score": count_score, "justification": count_why},
        "completeness": {"score": clamp(complete), "justification": complete_why},
    });
    let summary = format!(
        "Static rules ({STATIC_MODEL}, no model) judged the {n} tools of {}: disambiguation {}, naming {}, tool count {}, completeness {}. {}",
        if server_name.is_empty() { "this server".to_string() } else { code(server_name) },
        clamp(dis),
        clamp(naming),
        count_score,
        clamp(complete),
        if risks.is_empty() { "No supplied candidate pair was confirmed as a shadowing risk." } else { "Some supplied candidate pairs overlap enough to be shadowing risks." }
    );
    json!({
        "scores": scores,
        "shadowing_risks": risks,
        "summary": summary,
    })
}
