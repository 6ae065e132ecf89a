//! Simulates the decision rules at the judge noise the reference measured and prints false-BLOCK
//! and catch rates with the model calls they cost (docs/decision.md).
//!
//! `cargo run --release --example decision_bench -- [RUNS] [SEED]` (defaults 4000 and 13).
//!
//! The judge stand-in: every (tool, dimension) has a fractional true score drawn uniformly from
//! 1.5 to 4.5; each call adds N(0, 0.2) and rounds half up to the whole 1–5 scale, as a judge
//! answers. The tool's TDQS, the means and the decision are computed by the gate's own code
//! (`Weights::tdqs`, `Weights::exact_mean`, `round1_frac`, `decide::next`,
//! `decide::noise::next`). The questions are asked as the gate asks them: a question identical
//! on both sides (an unchanged tool) once per pair for both sides; the noise-aware rule keeps
//! that answer, and the coherence answers, for its confirmation pairs.
//!
//! "Reworded": the same true scores on the head. "Cut to six words": purpose clarity −1,
//! usage guidelines, behavioral transparency and contextual completeness fall to a true score
//! drawn uniformly from 1.0 to 1.6 (unless already lower), parameter semantics −0.5 (the schema
//! keeps its own descriptions), conciseness unchanged; nothing below 1. "Deleted": an empty description, which the specification scores 1 on every
//! dimension without a call.
// A benchmark prints its table; the library lint against printing does not apply here.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;

use tdqs_core::arith::Frac;
use tdqs_core::arith::{round1_frac, Tenths, Weights};
use tdqs_core::decide::noise::{self, NoiseNext, NoiseParams, PairTools, ToolScore};
use tdqs_core::decide::{self, ConfirmationRule, Next, PairMeans};
use tdqs_core::exit::Verdict;
use tdqs_core::rubric::ToolDimension;

struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(1e-300);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

const NOISE_SD: f64 = 0.2;

#[derive(Clone, Copy, PartialEq)]
enum Change {
    Same,
    Reworded,
    Cut,
    Deleted,
}

struct Shape {
    name: &'static str,
    tools: usize,
    changed: Vec<(usize, Change)>,
    real_drop: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Rule {
    NoiseAware,
    Reference,
    ReferenceIndependent,
}

fn cut(t: [f64; 6], rng: &mut Rng) -> [f64; 6] {
    let mut low = || 1.0 + 0.6 * rng.uniform();
    let (u, b, c) = (low(), low(), low());
    [
        (t[0] - 1.0).max(1.0),
        t[1].min(u),
        t[2].min(b),
        (t[3] - 0.5).max(1.0),
        t[4],
        t[5].min(c),
    ]
}

/// One judge call: a whole 1–5 score per dimension, then the gate's TDQS.
fn call(truth: &[f64; 6], rng: &mut Rng, weights: &Weights) -> Tenths {
    let scores: BTreeMap<ToolDimension, u8> = ToolDimension::ALL
        .into_iter()
        .zip(truth.iter())
        .map(|(d, t)| {
            let v = (t + NOISE_SD * rng.normal() + 0.5).floor().clamp(1.0, 5.0);
            (d, v as u8)
        })
        .collect();
    weights.tdqs(&scores)
}

struct Outcome {
    block: bool,
    pairs: usize,
    calls: usize,
}

fn simulate(
    shape: &Shape,
    rule: Rule,
    guard: Tenths,
    params: &NoiseParams,
    rng: &mut Rng,
    w: &Weights,
) -> Outcome {
    let n = shape.tools;
    let base: Vec<[f64; 6]> = (0..n)
        .map(|_| std::array::from_fn(|_| 1.5 + 3.0 * rng.uniform()))
        .collect();
    let cut_truth: Vec<[f64; 6]> = base.iter().map(|t| cut(*t, rng)).collect();
    let change: Vec<Change> = (0..n)
        .map(|i| {
            shape
                .changed
                .iter()
                .find(|(j, _)| *j == i)
                .map(|(_, c)| *c)
                .unwrap_or(Change::Same)
        })
        .collect();
    let deleted = Tenths(10);
    let mut calls = 0;
    let mut first_shared: Vec<Option<Tenths>> = vec![None; n];
    let mut pair = |rng: &mut Rng, index: usize| -> PairTools {
        let mut p = PairTools::default();
        for i in 0..n {
            let name = format!("t{i:02}");
            let (b, h) = match change[i] {
                Change::Same if rule != Rule::ReferenceIndependent => {
                    let v = match (rule, index, first_shared[i]) {
                        (Rule::NoiseAware, i2, Some(v)) if i2 > 0 => v,
                        _ => {
                            calls += 1;
                            let v = call(&base[i], rng, w);
                            first_shared[i] = Some(v);
                            v
                        }
                    };
                    (
                        ToolScore {
                            tdqs: v,
                            noisy: false,
                        },
                        ToolScore {
                            tdqs: v,
                            noisy: false,
                        },
                    )
                }
                Change::Deleted => {
                    calls += 1;
                    (
                        ToolScore {
                            tdqs: call(&base[i], rng, w),
                            noisy: true,
                        },
                        ToolScore {
                            tdqs: deleted,
                            noisy: false,
                        },
                    )
                }
                c => {
                    calls += 2;
                    let head = if c == Change::Cut {
                        cut_truth[i]
                    } else {
                        base[i]
                    };
                    (
                        ToolScore {
                            tdqs: call(&base[i], rng, w),
                            noisy: true,
                        },
                        ToolScore {
                            tdqs: call(&head, rng, w),
                            noisy: true,
                        },
                    )
                }
            };
            p.base.insert(name.clone(), b);
            p.head.insert(name, h);
        }
        // The two coherence questions: asked every pair, except that the noise-aware rule
        // keeps the first pair's answers.
        if !(rule == Rule::NoiseAware && index > 0) {
            calls += 2;
        }
        p
    };
    let mut pairs: Vec<PairTools> = Vec::new();
    let confirmation = ConfirmationRule::default();
    loop {
        let decided = match rule {
            Rule::NoiseAware => match noise::next_with(&pairs, guard, 2, params) {
                NoiseNext::ScoreMore(_) => None,
                NoiseNext::Decided { verdict, .. } => Some(verdict),
            },
            Rule::Reference | Rule::ReferenceIndependent => {
                let means: Vec<PairMeans> = pairs
                    .iter()
                    .map(|p| {
                        let mean = |s: &BTreeMap<String, ToolScore>| {
                            let v: Vec<Tenths> = s.values().map(|t| t.tdqs).collect();
                            round1_frac(Weights::exact_mean(&v).expect("tools"))
                        };
                        PairMeans {
                            base: mean(&p.base),
                            head: mean(&p.head),
                        }
                    })
                    .collect();
                match decide::next(&means, confirmation) {
                    Next::ScoreMore(_) => None,
                    Next::Decided(d) => Some(d.verdict),
                }
            }
        };
        if let Some(verdict) = decided {
            return Outcome {
                block: verdict == Verdict::Block,
                pairs: pairs.len(),
                calls,
            };
        }
        let index = pairs.len();
        let p = pair(rng, index);
        pairs.push(p);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(4000);
    let seed: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(13);
    let w = Weights::default();
    let guard = noise::DEFAULT_GUARD;
    // Exploration only: Z² and the floor variance as fractions, e.g. TDQS_BENCH_Z2=25/4.
    let frac = |name: &str| -> Option<Frac> {
        let v = std::env::var(name).ok()?;
        let (p, q) = v.split_once('/').unwrap_or((&v, "1"));
        Some(Frac::new(p.parse().ok()?, q.parse().ok()?))
    };
    let mut params = NoiseParams::default();
    if let Some(z2) = frac("TDQS_BENCH_Z2") {
        params.z_squared = z2;
    }
    if let Some(floor) = frac("TDQS_BENCH_FLOOR_VARIANCE") {
        params.floor_variance = floor;
    }
    let only: Option<String> = std::env::var("TDQS_BENCH_ONLY").ok();
    let shapes = [
        Shape {
            name: "1 tool of 1 reworded",
            tools: 1,
            changed: vec![(0, Change::Reworded)],
            real_drop: false,
        },
        Shape {
            name: "1 tool of 3 reworded",
            tools: 3,
            changed: vec![(0, Change::Reworded)],
            real_drop: false,
        },
        Shape {
            name: "every one of 10 reworded",
            tools: 10,
            changed: (0..10).map(|i| (i, Change::Reworded)).collect(),
            real_drop: false,
        },
        Shape {
            name: "1 tool of 20 reworded",
            tools: 20,
            changed: vec![(0, Change::Reworded)],
            real_drop: false,
        },
        Shape {
            name: "3 of 20 cut to six words",
            tools: 20,
            changed: (0..3).map(|i| (i, Change::Cut)).collect(),
            real_drop: true,
        },
        Shape {
            name: "1 of 3 cut to six words",
            tools: 3,
            changed: vec![(0, Change::Cut)],
            real_drop: true,
        },
        Shape {
            name: "1 of 44 description deleted",
            tools: 44,
            changed: vec![(0, Change::Deleted)],
            real_drop: true,
        },
    ];
    let rules = [
        (Rule::NoiseAware, "noise-aware (default)"),
        (Rule::Reference, "reference"),
        (Rule::ReferenceIndependent, "reference, --independent-sides"),
    ];
    println!(
        "runs per cell: {runs}; seed {seed}; judge noise N(0, {NOISE_SD}) per dimension, rounded to 1-5; guard {guard}; Z² {}; floor variance {}",
        params.z_squared, params.floor_variance
    );
    println!();
    println!("| Shape | Rule | False BLOCK % | Caught % | Pairs per run | Model calls per run | Calls per pair |");
    println!("|---|---|---|---|---|---|---|");
    for shape in &shapes {
        if only.as_deref().is_some_and(|o| !shape.name.contains(o)) {
            continue;
        }
        for (rule, label) in rules {
            let mut rng = Rng(seed ^ (shape.tools as u64 * 7919) ^ shape.changed.len() as u64);
            let (mut blocks, mut pairs, mut calls) = (0usize, 0usize, 0usize);
            for _ in 0..runs {
                let o = simulate(shape, rule, guard, &params, &mut rng, &w);
                blocks += usize::from(o.block);
                pairs += o.pairs;
                calls += o.calls;
            }
            let rate = 100.0 * blocks as f64 / runs as f64;
            let (fb, caught) = if shape.real_drop {
                ("".to_string(), format!("{rate:.1}"))
            } else {
                (format!("{rate:.2}"), "".to_string())
            };
            println!(
                "| {} | {} | {} | {} | {:.2} | {:.1} | {:.1} |",
                shape.name,
                label,
                fb,
                caught,
                pairs as f64 / runs as f64,
                calls as f64 / runs as f64,
                calls as f64 / pairs as f64
            );
        }
    }
}
