//! The statistics every answer uses: quantiles and medians, ratios, and the rank test behind
//! `krphase compare`'s noise verdict.
//!
//! **Quantiles** (defined in `order_stats.rs`) are exact, computed from the sorted values by
//! linear interpolation between the closest order statistics (Hyndman–Fan type 7, numpy's
//! default): for `n` sorted values `x[0] ≤ … ≤ x[n-1]` and a fraction `q`, with `h = (n - 1)·q`,
//! `j = ⌊h⌋` and `g = h - j`, the quantile is `(1 - g)·x[j] + g·x[j+1]`. So p50 is the
//! conventional median (the middle value, or the mean of the two middle values for an even
//! count), p0 the minimum and p100 the maximum. Every value is available exactly from SQLite, so
//! there is no reason to approximate; and one definition shared by `report`, `compare` and the
//! bench summary means they print the same figure for the same windows (a histogram's
//! quantisation would make them disagree). A run's stored summary (`db/summary`) keeps the exact
//! values at the ranks these quantiles read. Quantiles of nanosecond samples are given in whole
//! nanoseconds, the unit of the measurements (rounded to the nearest, halves away from zero), by
//! [`quantile_ns`]: the report's p50/p90/p99 and compare's medians both come from it, so they are
//! the same number.
//!
//! **Noise test**: two-sided Mann–Whitney U on the per-window samples (normal approximation with
//! tie correction).

/// `a / b`, or `None` when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

use crate::order_stats::interpolated;

/// The `q` quantile of sorted integer samples (nanoseconds); `None` when empty.
pub fn quantile_sorted(sorted: &[i64], q: f64) -> Option<f64> {
    interpolated(sorted.len(), q, |i| sorted[i] as f64)
}

/// The `q` quantile of sorted nanosecond samples in whole nanoseconds (rounded to the nearest);
/// `None` when empty. Every quantile of a duration that krphase prints comes from here.
pub fn quantile_ns(sorted: &[i64], q: f64) -> Option<i64> {
    quantile_sorted(sorted, q).map(|v| v.round() as i64)
}

/// The median of sorted nanosecond samples in whole nanoseconds; `None` when empty.
pub fn median_ns(sorted: &[i64]) -> Option<i64> {
    quantile_ns(sorted, 0.5)
}

/// The `q` quantile of values sorted with [`f64::total_cmp`]; `None` when empty.
pub fn quantile_sorted_f64(sorted: &[f64], q: f64) -> Option<f64> {
    interpolated(sorted.len(), q, |i| sorted[i])
}

/// The median of unsorted values (NaN sorts last); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median_in_place(&mut values.to_vec()))
}

/// The median of `buf`, reordering it in place (a selection, not a sort: the bootstrap takes
/// thousands); the same value as [`quantile_sorted_f64`] at 0.5. `buf` is not empty.
pub fn median_in_place(buf: &mut [f64]) -> f64 {
    let n = buf.len();
    let (left, m, _) = buf.select_nth_unstable_by(n / 2, f64::total_cmp);
    let m = *m;
    if n % 2 == 1 {
        m
    } else {
        let below = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (below + m) / 2.0
    }
}

/// Standard normal CDF (Abramowitz–Stegun 7.1.26 erf, |error| < 1.5e-7).
fn norm_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + y)
    } else {
        0.5 * (1.0 - y)
    }
}

/// Two-sided Mann–Whitney U p-value for two sorted samples (normal approximation, tie-corrected).
pub fn mann_whitney_p(a: &[i64], b: &[i64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 < 2 || n2 < 2 {
        return None;
    }
    // Merge the sorted samples, assigning mid-ranks to ties.
    let (mut i, mut j, mut rank) = (0usize, 0usize, 0f64);
    let (mut r1, mut tie_term) = (0f64, 0f64);
    while i < n1 || j < n2 {
        let v = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let (mut ca, mut cb) = (0usize, 0usize);
        while a.get(i) == Some(&v) {
            ca += 1;
            i += 1;
        }
        while b.get(j) == Some(&v) {
            cb += 1;
            j += 1;
        }
        let t = (ca + cb) as f64;
        let mid = rank + (t + 1.0) / 2.0;
        r1 += mid * ca as f64;
        rank += t;
        tie_term += t * t * t - t;
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let n = n1f + n2f;
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let mean = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = (u1 - mean).abs() / var.sqrt();
    Some((2.0 * (1.0 - norm_cdf(z))).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_in_place_is_the_sorted_median() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0, 10.0]), 2.5);
        assert_eq!(median_in_place(&mut [5.0, 1.0, 3.0]), 3.0);
        let v = [4.0, 9.0, 1.0, 7.0, 7.5, 2.0];
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        assert_eq!(median(&v), quantile_sorted_f64(&s, 0.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let v = [10, 20, 30, 40];
        assert_eq!(quantile_sorted(&v, 0.5), Some(25.0));
        assert_eq!(quantile_sorted(&v, 0.0), Some(10.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(40.0));
        // numpy.quantile([10, 20, 30, 40], 0.9) == 37.0
        assert!((quantile_sorted(&v, 0.9).unwrap() - 37.0).abs() < 1e-9);
        assert_eq!(quantile_sorted(&[10, 20, 30], 0.5), Some(20.0));
        assert_eq!(quantile_sorted(&[7], 0.99), Some(7.0));
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn nanosecond_quantiles_are_whole_and_shared_by_report_and_compare() {
        assert_eq!(median_ns(&[10, 21]), Some(16)); // 15.5 rounds away from zero
        assert_eq!(median_ns(&[10, 20, 30, 40]), Some(25));
        assert_eq!(quantile_ns(&[10, 20, 30, 40], 0.9), Some(37));
        assert_eq!(quantile_ns(&[1, 2], 0.99), Some(2)); // 1.99
        assert_eq!(median_ns(&[]), None);
    }

    #[test]
    fn median_of_two_rounds_as_their_mean() {
        let (a, b) = (0.1_f64, 0.7_f64);
        assert_eq!(median(&[a, b]), Some((a + b) / 2.0));
    }

    #[test]
    fn mann_whitney_detects_a_shift_and_not_noise() {
        let a: Vec<i64> = (0..200).map(|i| 1000 + (i * 37) % 100).collect();
        let mut b: Vec<i64> = a.iter().map(|x| x + 300).collect();
        let mut a2: Vec<i64> = (0..200).map(|i| 1000 + (i * 53) % 100).collect();
        let mut a = a;
        a.sort_unstable();
        b.sort_unstable();
        a2.sort_unstable();
        assert!(mann_whitney_p(&a, &b).unwrap() < 1e-10);
        assert!(mann_whitney_p(&a, &a2).unwrap() > 0.5);
        // All ties: no evidence.
        assert_eq!(mann_whitney_p(&[5, 5, 5], &[5, 5]), Some(1.0));
        assert_eq!(mann_whitney_p(&[1], &[2, 3]), None);
    }

    #[test]
    fn norm_cdf_known_values() {
        assert!((norm_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((norm_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((norm_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }
}
