//! The synthetic selector measured on the labelled set in `tests/fixtures/selection/` (real
//! servers' definitions, requests with the expected tool, and a real model's recorded choices
//! where one is published): the floors docs/eval.md quotes, careful above careless on every
//! fixture pair, and the selector's thresholds being the optimum of the calibration sets.
//!
//! `cargo test -p tdqs-core --test selection_labelled_set -- --nocapture` prints the tables.
// The tables docs/eval.md quotes are printed on purpose.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use tdqs_core::eval::case::{CaseKind, Choice, Suite};
use tdqs_core::eval::lexical::Weights;
use tdqs_core::eval::metrics::{compute, CaseResult, Metrics, Ratio};
use tdqs_core::eval::reach::{
    classify, classify_with, reach_with, request_stems, tool_stems, ChoiceClass, Reach,
    RecordedCase, Sharing,
};
use tdqs_core::eval::synthetic::{SyntheticSelector, FLOOR, MARGIN};

#[derive(Debug, Deserialize)]
struct Manifest {
    set: Vec<SetEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetEntry {
    name: String,
    tools: String,
    cases: String,
    recorded: Option<String>,
    quality: String,
    pair: Option<String>,
    #[serde(default)]
    calibration: bool,
}

#[derive(Debug, Deserialize)]
struct Recorded {
    model: String,
    choices: Vec<RecordedChoice>,
}

#[derive(Debug, Deserialize)]
struct RecordedChoice {
    id: String,
    selected: String,
}

struct LabelledSet {
    entry: SetEntry,
    tools: Vec<Value>,
    suite: Suite,
    recorded: Option<(String, BTreeMap<String, Choice>)>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/selection")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load() -> Vec<LabelledSet> {
    let dir = root();
    let manifest: Manifest = toml::from_str(&read(&dir.join("sets.toml"))).unwrap();
    manifest
        .set
        .into_iter()
        .map(|entry| {
            let tools: Value = serde_json::from_str(&read(&dir.join(&entry.tools))).unwrap();
            let tools = match tools {
                Value::Array(list) => list,
                Value::Object(mut o) => match o.remove("tools") {
                    Some(Value::Array(list)) => list,
                    _ => panic!("{}: no tools", entry.tools),
                },
                _ => panic!("{}: not a tool list", entry.tools),
            };
            let suite: Suite = toml::from_str(&read(&dir.join(&entry.cases))).unwrap();
            suite
                .check()
                .unwrap_or_else(|e| panic!("{}: {e:?}", entry.cases));
            let names: Vec<String> = tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect();
            assert!(
                suite.unknown_tools(&names).is_empty(),
                "{}: cases name unknown tools {:?}",
                entry.name,
                suite.unknown_tools(&names)
            );
            let recorded = entry.recorded.as_ref().map(|r| {
                let rec: Recorded = serde_json::from_str(&read(&dir.join(r))).unwrap();
                let choices: BTreeMap<String, Choice> = rec
                    .choices
                    .into_iter()
                    .map(|c| (c.id, Choice::parse(&c.selected)))
                    .collect();
                for case in &suite.cases {
                    assert!(
                        choices.contains_key(&case.id),
                        "{}: no recorded choice for {}",
                        entry.name,
                        case.id
                    );
                }
                (rec.model, choices)
            });
            LabelledSet {
                entry,
                tools,
                suite,
                recorded,
            }
        })
        .collect()
}

struct Run {
    results: Vec<CaseResult>,
    metrics: Metrics,
    /// The selector's choice equals the model's recorded choice, over every case.
    agreement: Option<Ratio>,
    /// The recorded model's own figures on the same cases.
    model_metrics: Option<Metrics>,
}

fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

fn run(set: &LabelledSet, selector: &SyntheticSelector) -> Run {
    let results: Vec<CaseResult> = set
        .suite
        .cases
        .iter()
        .map(|case| {
            let answer = selector.select(&case.request);
            CaseResult {
                id: case.id.clone(),
                kind: case.kind,
                provenance: case.provenance,
                expected: case.expect.clone(),
                exploratory: case.exploratory,
                correct: answer.tool == case.expect,
                selected: answer.tool,
                arguments_valid: None,
                argument_errors: vec![],
                confidence: answer.confidence,
                reason: answer.reason,
            }
        })
        .collect();
    let names = tool_names(&set.tools);
    let metrics = compute(&results, &names);
    let (agreement, model_metrics) = match &set.recorded {
        Some((_, choices)) => {
            let mut agree = Ratio::default();
            let model_results: Vec<CaseResult> = results
                .iter()
                .map(|r| {
                    let model = choices[&r.id].clone();
                    agree.add(model == r.selected);
                    CaseResult {
                        correct: model == r.expected,
                        selected: model,
                        ..r.clone()
                    }
                })
                .collect();
            (Some(agree), Some(compute(&model_results, &names)))
        }
        None => (None, None),
    };
    Run {
        results,
        metrics,
        agreement,
        model_metrics,
    }
}

fn pct(r: &Ratio) -> String {
    match r.percent() {
        Some(p) => format!("{p} % ({}/{})", r.hit, r.of),
        None => "–".to_string(),
    }
}

/// Every set with the shipped selector, as the tables of docs/eval.md.
fn measured() -> Vec<(LabelledSet, Run)> {
    load()
        .into_iter()
        .map(|set| {
            let selector = SyntheticSelector::new(&set.tools);
            let r = run(&set, &selector);
            (set, r)
        })
        .collect()
}

fn sum(ratios: impl Iterator<Item = Ratio>) -> Ratio {
    ratios.fold(Ratio::default(), |a, b| Ratio {
        hit: a.hit + b.hit,
        of: a.of + b.of,
    })
}

#[test]
fn labelled_set_figures_reach_their_floors() {
    let all = measured();
    println!("\n| set | quality | selection | positives | siblings | abstention | all cases | agreement with the recorded model | the model's selection |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (set, r) in &all {
        let m = &r.metrics;
        println!(
            "| {}{} | {} | {} | {} | {} | {} | {} | {} | {} |",
            set.entry.name,
            if set.entry.calibration {
                " (calibration)"
            } else {
                ""
            },
            set.entry.quality,
            pct(&m.selection),
            pct(&m.positives),
            pct(&m.siblings),
            pct(&m.abstention),
            pct(&m.all_cases),
            r.agreement.as_ref().map_or("–".into(), pct),
            r.model_metrics
                .as_ref()
                .map_or("–".into(), |mm| pct(&mm.selection)),
        );
    }
    for (set, r) in &all {
        println!("\n{} misses:", set.entry.name);
        for c in r.results.iter().filter(|c| !c.correct) {
            let model = set
                .recorded
                .as_ref()
                .map(|(_, ch)| format!(" (model: {})", ch[&c.id].as_str()))
                .unwrap_or_default();
            println!(
                "  {} {}: expected {}, selected {}{model} — {}",
                c.id,
                c.kind.as_str(),
                c.expected.as_str(),
                c.selected.as_str(),
                c.reason
            );
        }
    }

    // Agreement with the recorded model choices, over every set that has them.
    let agreement = sum(all.iter().filter_map(|(_, r)| r.agreement));
    println!(
        "\nagreement with recorded model choices, all sets: {}",
        pct(&agreement)
    );
    // Accuracy (positives and siblings) over the careful servers.
    let careful = sum(all
        .iter()
        .filter(|(s, _)| s.entry.quality == "careful")
        .map(|(_, r)| r.metrics.selection));
    println!("selection accuracy, careful servers: {}", pct(&careful));
    let held_out = sum(all
        .iter()
        .filter(|(s, _)| s.entry.quality == "careful" && !s.entry.calibration)
        .map(|(_, r)| r.metrics.selection));
    println!(
        "selection accuracy, careful servers not used for calibration: {}",
        pct(&held_out)
    );

    let calibrated = sum(all
        .iter()
        .filter(|(s, _)| s.entry.quality == "careful" && s.entry.calibration)
        .map(|(_, r)| r.metrics.selection));
    println!(
        "selection accuracy, careful servers used for calibration: {}",
        pct(&calibrated)
    );

    // The floors docs/eval.md states: what this selector (synthetic-bm25f-v4) measured, pinned
    // so a change that loses a case is seen. The 75 % on careful servers is reached
    // (120/160, exactly the 75 %); its 75 % agreement is not, and cannot be by any word-only
    // selector on this set (`word_only_selector_ceiling_on_recorded_choices`).
    let at_least = |what: &str, r: &Ratio, hit: usize, of: usize| {
        assert_eq!(r.of, of, "{what}: the set changed");
        assert!(
            r.hit >= hit,
            "{what}: {} fell under the floor {hit}/{of}",
            pct(r)
        );
    };
    at_least("agreement with recorded model choices", &agreement, 48, 102);
    at_least("careful servers", &careful, 120, 160);
    assert!(
        careful.hit * 4 >= careful.of * 3,
        "the 75 % target on careful servers"
    );
    at_least("careful servers held out", &held_out, 67, 89);
    at_least("careful servers used for calibration", &calibrated, 53, 71);
    let good = &all
        .iter()
        .find(|(s, _)| s.entry.name == "toolgauge-good")
        .unwrap()
        .1;
    at_least(
        "agreement on the peer's careful server",
        good.agreement.as_ref().unwrap(),
        30,
        43,
    );
    at_least("the peer's careful server", &good.metrics.selection, 30, 40);
    // The recorded model's own figure on the peer's careful server is the peer's published one.
    let model = good.model_metrics.as_ref().unwrap();
    assert_eq!((model.selection.hit, model.selection.of), (37, 40));
    assert_eq!(
        model.selection.percent(),
        Some(92),
        "rounded as the peer rounds"
    );
}

#[test]
fn careful_ranks_above_careless_on_every_fixture_pair() {
    let all = measured();
    let mut pairs: BTreeMap<&str, BTreeMap<&str, &Run>> = BTreeMap::new();
    for (set, r) in &all {
        if let Some(pair) = &set.entry.pair {
            pairs
                .entry(pair.as_str())
                .or_default()
                .insert(set.entry.quality.as_str(), r);
        }
    }
    assert!(pairs.len() >= 4, "issue-tracker, toolgauge, git and memory");
    for (pair, sides) in &pairs {
        let careful = sides.get("careful").expect("a careful side");
        let careless = sides.get("careless").expect("a careless side");
        let (c, l) = (careful.metrics.selection, careless.metrics.selection);
        println!("{pair}: careful {} > careless {}", pct(&c), pct(&l));
        assert!(
            c.hit * l.of > l.hit * c.of,
            "{pair}: careful {} must rank above careless {}",
            pct(&c),
            pct(&l)
        );
    }
}

/// The objective the thresholds are chosen by: the mean, over the calibration sets, of the
/// accuracy over every scored case (abstentions included, so the floor is paid for both ways).
fn calibration_objective(sets: &[LabelledSet], floor: f64, margin: f64) -> f64 {
    weighted_objective(sets, floor, margin, Weights::SHIPPED)
}

fn weighted_objective(sets: &[LabelledSet], floor: f64, margin: f64, weights: Weights) -> f64 {
    let cal: Vec<&LabelledSet> = sets.iter().filter(|s| s.entry.calibration).collect();
    cal.iter()
        .map(|s| {
            let selector = SyntheticSelector::with_weights(&s.tools, floor, margin, weights);
            let m = run(s, &selector).metrics;
            m.all_cases.hit as f64 / m.all_cases.of as f64
        })
        .sum::<f64>()
        / cal.len() as f64
}

#[test]
fn selector_thresholds_are_the_calibration_optimum() {
    let sets = load();
    let shipped = calibration_objective(&sets, FLOOR, MARGIN);
    let mut best = (f64::MIN, 0.0, 0.0);
    for f in 0..=15 {
        for m in [0.0, 0.02, 0.05, 0.1] {
            let (floor, margin) = (f as f64 * 0.1, m);
            let o = calibration_objective(&sets, floor, margin);
            if o > best.0 + 1e-12 {
                best = (o, floor, margin);
            }
        }
    }
    println!(
        "calibration optimum {:.4} at floor {:.1}, margin {:.2}; shipped {shipped:.4} at floor {FLOOR}, margin {MARGIN}",
        best.0, best.1, best.2
    );
    assert!(
        shipped + 1e-12 >= best.0,
        "the shipped thresholds (floor {FLOOR}, margin {MARGIN}: {shipped:.4}) are not the optimum of the calibration sets (floor {:.1}, margin {:.2}: {:.4})",
        best.1,
        best.2,
        best.0
    );
    // Kinds are all represented in the calibration sets, so the floor is paid for both ways.
    let kinds: std::collections::BTreeSet<CaseKind> = sets
        .iter()
        .filter(|s| s.entry.calibration)
        .flat_map(|s| s.suite.cases.iter().map(|c| c.kind))
        .collect();
    assert_eq!(kinds.len(), 3);
}

/// The evidence weights: no single one moved a step up or down (a quarter of its value, or 0.1
/// for the share-like ones) scores better on the calibration sets. A local optimum of a coarse
/// grid, not a global one: the grid they were chosen on is in docs/eval.md.
#[test]
fn selector_weights_are_a_local_optimum_of_the_calibration_sets() {
    let sets = load();
    let shipped = weighted_objective(&sets, FLOOR, MARGIN, Weights::SHIPPED);
    type Field = fn(&mut Weights) -> &mut f64;
    let fields: [(&str, Field, f64); 7] = [
        ("name_uncovered", |w| &mut w.name_uncovered, 0.1),
        ("id_present", |w| &mut w.id_present, 0.5),
        ("id_missing", |w| &mut w.id_missing, 0.125),
        ("number_missing", |w| &mut w.number_missing, 0.1875),
        ("action_agrees", |w| &mut w.action_agrees, 0.25),
        ("action_conflicts", |w| &mut w.action_conflicts, 0.125),
        ("value_fits", |w| &mut w.value_fits, 0.5),
    ];
    for (name, field, step) in fields {
        for sign in [-1.0, 1.0] {
            let mut w = Weights::SHIPPED;
            let value = field(&mut w);
            *value = (*value + sign * step).max(0.0);
            let moved = *value;
            let o = weighted_objective(&sets, FLOOR, MARGIN, w);
            println!("{name} {moved:.3}: {o:.4} (shipped {shipped:.4})");
            assert!(
                shipped + 1e-12 >= o,
                "{name} at {moved} scores {o:.4} on the calibration sets, above the shipped {shipped:.4}"
            );
        }
    }
}

/// One server's reach on its recorded choices, with the selector's agreement.
struct ReachRow {
    name: String,
    reach: Reach,
    agreement: Ratio,
}

const CLASSES: [ChoiceClass; 3] = [
    ChoiceClass::NoTool,
    ChoiceClass::SharesWord,
    ChoiceClass::SharesNone,
];

/// Every recorded set's reach under `sharing`, its table printed; with `list`, the cases behind
/// it too. Returns the rows and the overall ceiling.
fn reach_table(all: &[(LabelledSet, Run)], sharing: Sharing, list: bool) -> (Vec<ReachRow>, usize) {
    let mut rows = Vec::new();
    for (set, r) in all {
        let Some((_, choices)) = &set.recorded else {
            continue;
        };
        let cases: Vec<(&str, &Choice, &Choice)> = set
            .suite
            .cases
            .iter()
            .zip(&r.results)
            .map(|(case, result)| (case.request.as_str(), &choices[&case.id], &result.selected))
            .collect();
        let reached = reach_with(
            &set.tools,
            cases
                .iter()
                .map(|&(request, model, selector)| RecordedCase {
                    request,
                    model,
                    selector,
                }),
            sharing,
        );
        if list {
            // The reachable cases the selector still misses: what a better word-only rule
            // would need.
            println!(
                "\n{}: recorded choices sharing a word that the selector does not make:",
                set.entry.name
            );
            for (case, &(request, model, selector)) in set.suite.cases.iter().zip(&cases) {
                if model == selector
                    || classify(request, model, &set.tools) != ChoiceClass::SharesWord
                {
                    continue;
                }
                let asked = request_stems(request);
                let shared = |name: &str| -> Vec<String> {
                    set.tools
                        .iter()
                        .find(|t| t["name"].as_str() == Some(name))
                        .map(|t| tool_stems(t).intersection(&asked).cloned().collect())
                        .unwrap_or_default()
                };
                println!(
                    "  {}: model {} {:?}, selector {} {:?} — {request}",
                    case.id,
                    model.as_str(),
                    shared(model.as_str()),
                    selector.as_str(),
                    selector.tool().map(shared).unwrap_or_default(),
                );
            }
            println!(
                "{}: recorded choices sharing no word with the request:",
                set.entry.name
            );
            for (case, &(request, model, _)) in set.suite.cases.iter().zip(&cases) {
                if classify(request, model, &set.tools) == ChoiceClass::SharesNone {
                    println!("  {}: model {} — {request}", case.id, model.as_str());
                }
            }
        }
        rows.push(ReachRow {
            name: set.entry.name.clone(),
            reach: reached,
            agreement: r.agreement.unwrap(),
        });
    }
    let ratio = |hit: usize, of: usize| pct(&Ratio { hit, of });
    println!("\nsharing {sharing:?}:");
    println!("| server | cases | model chose NO_TOOL | a tool sharing a word | a tool sharing no word | best fixed fallback | at most (ceiling) | agreement now | disagreements now: NO_TOOL / sharing / no word |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut total = [0usize; 3];
    let mut total_disagreements = [0usize; 3];
    let (mut cases, mut ceiling, mut fallbacks) = (0, 0, 0);
    let mut agreement = Ratio::default();
    for row in &rows {
        let r = &row.reach;
        let (fb_name, fb) = r.fallback.clone().unwrap_or(("–".into(), 0));
        println!(
            "| {} | {} | {} | {} | {} | {fb_name} ({fb}) | {} | {} | {} / {} / {} |",
            row.name,
            r.cases,
            r.count(CLASSES[0]),
            r.count(CLASSES[1]),
            r.count(CLASSES[2]),
            ratio(r.ceiling(), r.cases),
            pct(&row.agreement),
            r.disagreeing(CLASSES[0]),
            r.disagreeing(CLASSES[1]),
            r.disagreeing(CLASSES[2]),
        );
        for (i, class) in CLASSES.iter().enumerate() {
            total[i] += r.count(*class);
            total_disagreements[i] += r.disagreeing(*class);
        }
        cases += r.cases;
        ceiling += r.ceiling();
        fallbacks += fb;
        agreement.hit += row.agreement.hit;
        agreement.of += row.agreement.of;
        // Every disagreement is counted in exactly one class.
        assert_eq!(
            CLASSES.iter().map(|c| r.disagreeing(*c)).sum::<usize>(),
            row.agreement.of - row.agreement.hit,
            "{}",
            row.name
        );
    }
    println!(
        "| all | {cases} | {} | {} | {} | per server ({fallbacks}) | {} | {} | {} / {} / {} |",
        total[0],
        total[1],
        total[2],
        ratio(ceiling, cases),
        pct(&agreement),
        total_disagreements[0],
        total_disagreements[1],
        total_disagreements[2],
    );
    assert_eq!(cases, 102);
    (rows, ceiling)
}

/// What any selector that sees only words can reach on the recorded model's choices
/// (`tdqs_core::eval::reach`): each choice classed as `NO_TOOL`, a tool sharing a content stem
/// with the request, or a tool sharing none; the ceiling counts every `NO_TOOL` and every sharing
/// choice, plus the best single fallback tool per server for the rest. Measured twice: on
/// content stems alone, and with the selector's table of general verbs (`find` meets `search`).
/// docs/eval.md ("What a word-only selector can reach") quotes the tables.
#[test]
fn word_only_selector_ceiling_on_recorded_choices() {
    let all = measured();
    // The classes depend on the recorded choices and the selector's terms only, not on its
    // ranking: pinned, so a change of the tokenizer, stemmer or verb table that moves them is
    // seen.
    let counts = |rows: &[ReachRow], name: &str| {
        let r = &rows.iter().find(|row| row.name == name).unwrap().reach;
        (
            r.count(CLASSES[0]),
            r.count(CLASSES[1]),
            r.count(CLASSES[2]),
            r.fallback.clone(),
        )
    };
    let fallback = |name: &str, n: usize| Some((name.to_string(), n));

    let (rows, ceiling) = reach_table(&all, Sharing::Stems, true);
    assert_eq!(
        counts(&rows, "toolgauge-good"),
        (2, 38, 3, fallback("search_users", 3))
    );
    assert_eq!(
        counts(&rows, "toolgauge-bad"),
        (8, 13, 38, fallback("search", 11))
    );
    // At most 75 of the 102 recorded choices: 74 % as the peers round, under the 75 % target.
    assert_eq!(ceiling, 75);
    assert!(
        Ratio {
            hit: ceiling,
            of: 102
        }
        .percent()
            < Some(75)
    );

    let (rows, ceiling) = reach_table(&all, Sharing::StemsAndVerbClasses, false);
    let (good, bad) = (
        counts(&rows, "toolgauge-good"),
        counts(&rows, "toolgauge-bad"),
    );
    assert_eq!(good, (2, 38, 3, fallback("search_users", 3)));
    assert_eq!(bad, (8, 27, 24, fallback("search_orgs", 7)));
    // With the verb table the bound is 85 of 102 (83 %): above the target, so words and general
    // verbs alone do not rule it out. The choices it adds, for docs/eval.md's reading:
    assert_eq!(ceiling, 85);
    println!("\nreachable only through the verb table:");
    for (set, _) in &all {
        let Some((_, choices)) = &set.recorded else {
            continue;
        };
        for case in &set.suite.cases {
            let model = &choices[&case.id];
            let by = |sharing| classify_with(&case.request, model, &set.tools, sharing);
            if by(Sharing::Stems) != by(Sharing::StemsAndVerbClasses) {
                println!(
                    "  {} {}: model {} — {}",
                    set.entry.name,
                    case.id,
                    model.as_str(),
                    case.request
                );
            }
        }
    }
}
