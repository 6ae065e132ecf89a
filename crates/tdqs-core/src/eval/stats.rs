//! The exact paired test the gate uses on base and head: McNemar's test in its exact form, the
//! two-sided sign test on the discordant cases.
//!
//! Only cases whose outcome differs between the sides carry information: `worse` (right on the
//! base, wrong on the head) and `better` (the reverse). Under "no change" each discordant case is
//! equally likely to go either way, so `worse` is Binomial(n, ½) with n = worse + better, and the
//! two-sided p-value is `min(1, 2·P(X ≤ min(worse, better)))`.
//!
//! The binomial terms are summed in the log domain, so no term underflows however many cases
//! there are; for n ≤ 60 the sum is also exact in integers and the two agree (tested).

use serde::{Deserialize, Serialize};

/// The significance level the gate blocks at.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McNemar {
    pub worse: usize,
    pub better: usize,
    pub p_value: f64,
}

impl McNemar {
    /// A significant fall: more cases got worse than better, at p < [`ALPHA`].
    pub fn significant_fall(&self) -> bool {
        self.worse > self.better && self.p_value < ALPHA
    }

    pub fn significant_rise(&self) -> bool {
        self.better > self.worse && self.p_value < ALPHA
    }
}

fn ln_choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k)
        .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
        .sum()
}

/// The exact two-sided p-value for `worse` and `better` discordant cases.
pub fn mcnemar_exact(worse: usize, better: usize) -> McNemar {
    let n = worse + better;
    let k = worse.min(better);
    let p_value = if n == 0 {
        1.0
    } else {
        let ln_half_n = n as f64 * std::f64::consts::LN_2;
        let terms: Vec<f64> = (0..=k).map(|i| ln_choose(n, i) - ln_half_n).collect();
        let top = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let tail = top.exp() * terms.iter().map(|t| (t - top).exp()).sum::<f64>();
        (2.0 * tail).min(1.0)
    };
    McNemar {
        worse,
        better,
        p_value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same p-value in exact integers (n ≤ 60 fits u128 comfortably).
    fn exact(worse: usize, better: usize) -> f64 {
        let n = worse + better;
        let k = worse.min(better);
        let mut c: u128 = 1;
        let mut sum: u128 = 0;
        for i in 0..=k {
            if i > 0 {
                c = c * (n - i + 1) as u128 / i as u128;
            }
            sum += c;
        }
        ((2 * sum) as f64 / 2f64.powi(n as i32)).min(1.0)
    }

    #[test]
    fn mcnemar_exact_values() {
        // 5 worse, 0 better: 2 · (1/32) = 0.0625, not significant.
        let m = mcnemar_exact(5, 0);
        assert!((m.p_value - 0.0625).abs() < 1e-12);
        assert!(!m.significant_fall());
        // 6 worse, 0 better: 2/64 = 0.03125, significant.
        assert!(mcnemar_exact(6, 0).significant_fall());
        assert!(!mcnemar_exact(0, 6).significant_fall());
        assert!(mcnemar_exact(0, 6).significant_rise());
        assert_eq!(mcnemar_exact(0, 0).p_value, 1.0);
        assert_eq!(mcnemar_exact(3, 3).p_value, 1.0);
        for (w, b) in [(1, 0), (7, 2), (10, 3), (20, 11), (30, 30), (40, 15)] {
            let m = mcnemar_exact(w, b);
            assert!((m.p_value - exact(w, b)).abs() < 1e-12, "{w},{b}");
        }
        // No underflow far past 1074 cases.
        let big = mcnemar_exact(1200, 1000);
        assert!(big.p_value > 0.0 && big.p_value < 1e-4, "{}", big.p_value);
    }
}
