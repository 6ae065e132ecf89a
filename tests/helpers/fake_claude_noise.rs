//! The fake `claude`'s seeded noise mode: answers that vary between calls the way a judge model's
//! do, reproducibly.
//!
//! Turned on by a `noise` object in `fake-claude.json`:
//!
//! ```json
//! {"noise": {"seed": 7, "sigma": 0.1, "jump_probability": 0.01, "jump": 1.0, "spread": 0.5,
//!            "truth": [{"kind": "tool", "contains": ["Tool under review: t01\n"],
//!                       "all": 3.4, "scores": {"purpose_clarity": 4.2}}]}}
//! ```
//!
//! Every dimension of an answer has a true score, a real number from 1 to 5: the first `truth`
//! rule that applies (`kind` and every `contains` string matched against the user prompt, as for
//! script rules) gives it through `scores`, else `all`; a dimension no rule covers takes the
//! prompt-derived whole score (see `tool_answer` / `coherence_answer`) moved by an offset in
//! [-spread, spread) fixed by the tool's name line and the dimension, so a tool keeps its true
//! score whatever its siblings, the seed or the call. The answer's score is that true score plus
//! a normal jitter of standard deviation `sigma`, plus, with probability `jump_probability`, a
//! jump of `jump` up or down, rounded half up and kept within 1–5.
//!
//! The draw is a function of the seed, the exact prompt (system and user text), how many times
//! that prompt was asked before from the directory (its occurrence) and the dimension: the same
//! seed and counters give the same answers. Two calls of one identical prompt that reach the
//! fake at the same time get the first two draws in the order they arrive.
//!
//! Defaults (sigma 0.1, jump probability 0.01, jump 1) give a mean run-to-run difference of about
//! 0.10 TDQS per tool, rarely more than 0.5 — the spread the reference measured.

use serde_json::{json, Map, Value};

pub struct Noise {
    seed: u64,
    sigma: f64,
    jump_probability: f64,
    jump: f64,
    spread: f64,
    truth: Vec<Value>,
}

impl Noise {
    /// The `noise` object of the control file, when there is one.
    pub fn from_control(control: &Value) -> Option<Noise> {
        let noise = control.get("noise")?.as_object()?;
        let number =
            |key: &str, default: f64| noise.get(key).and_then(Value::as_f64).unwrap_or(default);
        Some(Noise {
            seed: noise.get("seed").and_then(Value::as_u64).unwrap_or(0),
            sigma: number("sigma", 0.1),
            jump_probability: number("jump_probability", 0.01),
            jump: number("jump", 1.0),
            spread: number("spread", 0.5),
            truth: noise
                .get("truth")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        })
    }

    /// Replaces the scores of `derived` (the prompt-derived answer) with noisy draws around the
    /// true scores; returns what the log records of the draw.
    pub fn apply(
        &self,
        derived: &mut Value,
        kind: &str,
        system_prompt: &str,
        user_prompt: &str,
        occurrence: u64,
    ) -> Value {
        let rule = self
            .truth
            .iter()
            .position(|r| truth_rule_applies(r, kind, user_prompt));
        let rule_value = rule.map(|i| &self.truth[i]);
        let name_line = user_prompt
            .lines()
            .find(|l| l.starts_with("Tool under review: ") || l.starts_with("Tool name: "))
            .unwrap_or(kind);
        let prompt_key = fnv1a(&[
            &self.seed.to_le_bytes(),
            system_prompt.as_bytes(),
            &[0],
            user_prompt.as_bytes(),
            &occurrence.to_le_bytes(),
        ]);
        let scores = derived["scores"]
            .as_object_mut()
            .expect("an answer has scores");
        let dimensions: Vec<String> = scores.keys().cloned().collect();
        let mut drawn = Map::new();
        let mut truths = Map::new();
        let mut jumps = 0;
        for dimension in dimensions {
            let derived_score = scores[&dimension]["score"].as_f64().unwrap_or(3.0);
            let truth = rule_value
                .and_then(|r| {
                    r.get("scores")
                        .and_then(|s| s.get(&dimension))
                        .and_then(Value::as_f64)
                        .or_else(|| r.get("all").and_then(Value::as_f64))
                })
                .unwrap_or_else(|| {
                    let h = fnv1a(&[name_line.as_bytes(), &[0], dimension.as_bytes()]);
                    derived_score + self.spread * (2.0 * unit(h) - 1.0)
                })
                .clamp(1.0, 5.0);
            let mut rng = SplitMix(fnv1a(&[&prompt_key.to_le_bytes(), dimension.as_bytes()]));
            let mut value = truth + self.sigma * rng.normal();
            if rng.uniform() < self.jump_probability {
                jumps += 1;
                value += if rng.uniform() < 0.5 {
                    -self.jump
                } else {
                    self.jump
                };
            }
            let score = ((value + 0.5).floor() as i64).clamp(1, 5) as u64;
            scores.insert(
                dimension.clone(),
                json!({"score": score, "justification": format!(
                    "The noisy stand-in judge drew {score} for {dimension} around a true {truth:.2}."
                )}),
            );
            drawn.insert(dimension.clone(), json!(score));
            truths.insert(dimension, json!(truth));
        }
        json!({"seed": self.seed, "truth_rule": rule, "truth": truths, "scores": drawn, "jumps": jumps})
    }
}

fn truth_rule_applies(rule: &Value, kind: &str, user_prompt: &str) -> bool {
    if let Some(wanted) = rule.get("kind").and_then(Value::as_str) {
        if wanted != kind {
            return false;
        }
    }
    match rule.get("contains") {
        Some(Value::String(s)) => user_prompt.contains(s.as_str()),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .all(|c| user_prompt.contains(c)),
        _ => true,
    }
}

/// FNV-1a over the parts, then mixed: stable across builds and Rust versions (unlike the
/// standard library's hasher).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in *part {
            h ^= u64::from(*byte);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    SplitMix(h).next()
}

/// A value in [0, 1) from 53 bits of `h`.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// SplitMix64: small, seedable, good enough for test noise.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f64 {
        unit(self.next())
    }

    /// A standard normal draw (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}
