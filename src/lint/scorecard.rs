//! The per-tool 0–100 scorecard: purpose 20, when to use 20, arguments 25, return value 15,
//! constraints and side effects 10, examples 10.
//!
//! Each item is scored from the tool alone, so a large, well-annotated server scores as well as
//! a small one: nothing here is a server-wide penalty.

use serde::{Deserialize, Serialize};

use super::facts::ToolFacts;

/// One tool's scorecard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scorecard {
    pub tool: String,
    /// Out of 20.
    pub purpose: u8,
    /// Out of 20.
    pub when_to_use: u8,
    /// Out of 25.
    pub arguments: u8,
    /// Out of 15.
    pub return_value: u8,
    /// Out of 10.
    pub constraints: u8,
    /// Out of 10.
    pub examples: u8,
    /// Out of 100.
    pub total: u8,
}

pub const ITEMS: [(&str, u8); 6] = [
    ("purpose", 20),
    ("when to use", 20),
    ("arguments", 25),
    ("return value", 15),
    ("constraints and side effects", 10),
    ("examples", 10),
];

fn ratio_points(part: usize, whole: usize, points: u32) -> u32 {
    if whole == 0 {
        return points;
    }
    // Rounded half up, in integers.
    ((part as u32) * points * 2 + whole as u32) / (2 * whole as u32)
}

pub fn score(f: &ToolFacts, unmentioned_subjects: usize) -> Scorecard {
    let described = f.has_description() && !f.is_placeholder();

    let purpose: u32 = if !f.has_description() {
        0
    } else if f.is_placeholder() {
        2
    } else if f.is_tautology() {
        4
    } else {
        let mut p: u32 = 8;
        if f.opening_verb().is_some() {
            p += 4;
        }
        if unmentioned_subjects == 0 {
            p += 4;
        }
        if f.distinguishes() {
            p += 4;
        } else if f.word_count() >= 12 {
            p += 2;
        }
        if !f.injections.is_empty() {
            p = p.saturating_sub(4);
        }
        p.min(20)
    };

    let when_to_use: u32 = if !described {
        0
    } else {
        let mut w = 0;
        if f.cues.usage.is_some() {
            w += 10;
        }
        if f.cues.contrast.is_some() {
            w += 5;
        }
        if !f.mentioned_siblings.is_empty() {
            w += 5;
        }
        w
    };

    let arguments: u32 = if !f.input_schema_is_object {
        0
    } else if f.params.is_empty() {
        25
    } else {
        let described_params = f
            .params
            .iter()
            .filter(|p| !p.description.is_empty())
            .count();
        let strings: Vec<_> = f.params.iter().filter(|p| p.is_string()).collect();
        let constrained = strings
            .iter()
            .filter(|p| p.is_constrained() || p.has_example())
            .count();
        let mut a = ratio_points(described_params, f.params.len(), 15)
            + ratio_points(constrained, strings.len(), 5);
        if f.has_required_list {
            a += 3;
        }
        if f.additional_properties_false {
            a += 2;
        }
        a
    };

    let return_value: u32 = {
        let mut r = if f.output.documented() {
            8
        } else if f.output.present {
            3
        } else {
            0
        };
        if described && f.cues.returns.is_some() {
            r += 7;
        }
        r
    };

    let contradiction = f.annotations.read_only == Some(true)
        && (f.operation.is_write() || f.annotations.destructive == Some(true));
    let constraints: u32 = if contradiction {
        0
    } else {
        let mut c = 0;
        if f.annotations.present {
            c += 4;
            if f.annotations.any_hint() {
                c += 2;
            }
        }
        if described && !f.cues.behaviour().is_empty() {
            c += 4;
        }
        c
    };

    let examples: u32 = {
        let mut e = 0;
        if described && f.cues.example.is_some() {
            e += 5;
        }
        if f.params.is_empty() || f.params.iter().any(|p| p.has_example()) {
            e += 5;
        }
        e
    };

    let total = purpose + when_to_use + arguments + return_value + constraints + examples;
    let narrow = |v: u32| u8::try_from(v).unwrap_or(u8::MAX);
    Scorecard {
        tool: f.name.clone(),
        purpose: narrow(purpose),
        when_to_use: narrow(when_to_use),
        arguments: narrow(arguments),
        return_value: narrow(return_value),
        constraints: narrow(constraints),
        examples: narrow(examples),
        total: narrow(total),
    }
}

/// The mean of the totals in tenths, rounded half up once (712 means 71.2).
pub fn average_tenths(cards: &[Scorecard]) -> u32 {
    if cards.is_empty() {
        return 0;
    }
    let sum: u64 = cards.iter().map(|c| u64::from(c.total)).sum();
    let n = cards.len() as u64;
    u32::try_from((sum * 20 + n) / (2 * n)).unwrap_or(u32::MAX)
}

/// Tenths rendered with one decimal.
pub fn format_tenths(tenths: u32) -> String {
    format!("{}.{}", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_rounds_half_up_once() {
        let card = |total| Scorecard {
            tool: String::new(),
            purpose: 0,
            when_to_use: 0,
            arguments: 0,
            return_value: 0,
            constraints: 0,
            examples: 0,
            total,
        };
        assert_eq!(average_tenths(&[card(70), card(71)]), 705);
        assert_eq!(average_tenths(&[card(70), card(70), card(71)]), 703);
        assert_eq!(format_tenths(705), "70.5");
        assert_eq!(average_tenths(&[]), 0);
    }
}
