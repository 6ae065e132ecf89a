//! The statistics of a calibration, on exact integers wherever the value is rational.

use serde::{Deserialize, Serialize};

use tdqs_core::arith::{frac_to_f64, Frac};

/// An exact fraction with its float value for display (`"-7/20"`, -0.35).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exact {
    pub fraction: String,
    pub value: f64,
}

impl Exact {
    pub fn of(x: Frac) -> Exact {
        Exact {
            fraction: format!("{}/{}", x.numer(), x.denom()),
            value: frac_to_f64(x),
        }
    }
}

/// The middle value of an odd number of values.
pub fn median<T: Ord + Copy>(values: &[T]) -> Option<T> {
    if values.len() % 2 == 0 {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort();
    Some(sorted[sorted.len() / 2])
}

/// How a set of paired differences (gate minus registry) is distributed.
#[derive(Debug, Clone, PartialEq)]
pub struct Differences {
    /// Σ|d| / (scale·n).
    pub mean_absolute: Frac,
    /// Σd / (scale·n).
    pub mean_signed: Frac,
    pub higher: usize,
    pub lower: usize,
    pub equal: usize,
}

/// Summarises differences given in units of `1/scale` (10 for TDQS tenths, 1 for dimensions).
pub fn differences(diffs: &[i64], scale: i64) -> Option<Differences> {
    if diffs.is_empty() {
        return None;
    }
    let n = diffs.len() as i64;
    let absolute: i64 = diffs.iter().map(|d| d.abs()).sum();
    let signed: i64 = diffs.iter().sum();
    Some(Differences {
        mean_absolute: Frac::new(absolute, scale * n),
        mean_signed: Frac::new(signed, scale * n),
        higher: diffs.iter().filter(|d| **d > 0).count(),
        lower: diffs.iter().filter(|d| **d < 0).count(),
        equal: diffs.iter().filter(|d| **d == 0).count(),
    })
}

/// Pearson's correlation of paired integer values. The sums are exact; only the final square
/// root is taken in floating point. `None` when either side does not vary (r is undefined).
pub fn pearson(xs: &[i64], ys: &[i64]) -> Option<f64> {
    if xs.len() != ys.len() || xs.len() < 2 {
        return None;
    }
    let n = xs.len() as i128;
    let sx: i128 = xs.iter().map(|&x| i128::from(x)).sum();
    let sy: i128 = ys.iter().map(|&y| i128::from(y)).sum();
    let sxx: i128 = xs.iter().map(|&x| i128::from(x) * i128::from(x)).sum();
    let syy: i128 = ys.iter().map(|&y| i128::from(y) * i128::from(y)).sum();
    let sxy: i128 = xs
        .iter()
        .zip(ys)
        .map(|(&x, &y)| i128::from(x) * i128::from(y))
        .sum();
    let covariance = n * sxy - sx * sy;
    let var_x = n * sxx - sx * sx;
    let var_y = n * syy - sy * sy;
    if var_x == 0 || var_y == 0 {
        return None;
    }
    Some(covariance as f64 / ((var_x as f64).sqrt() * (var_y as f64).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_needs_an_odd_count() {
        assert_eq!(median(&[3, 1, 2]), Some(2));
        assert_eq!(median(&[5]), Some(5));
        assert_eq!(median::<i32>(&[1, 2]), None);
    }

    #[test]
    fn differences_are_exact_fractions() {
        let d = differences(&[-8, 0, 3, -2], 10).unwrap();
        assert_eq!(d.mean_absolute, Frac::new(13, 40));
        assert_eq!(d.mean_signed, Frac::new(-7, 40));
        assert_eq!((d.higher, d.lower, d.equal), (1, 2, 1));
        assert_eq!(Exact::of(d.mean_signed).fraction, "-7/40");
    }

    #[test]
    fn pearson_of_known_pairs() {
        // x = 1,2,3 ; y = 2,4,7: n·Σxy − ΣxΣy = 3·31 − 6·13 = 15; n·Σx² − (Σx)² = 6;
        // n·Σy² − (Σy)² = 3·69 − 169 = 38; r = 15 / √(6·38).
        let r = pearson(&[1, 2, 3], &[2, 4, 7]).unwrap();
        assert!((r - 15.0 / (228f64).sqrt()).abs() < 1e-12);
        assert_eq!(pearson(&[1, 1, 1], &[1, 2, 3]), None);
    }
}
