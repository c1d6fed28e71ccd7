//! Quantiles and medians: the one quantile definition every figure uses, the medians built on
//! it, and which ranks of the sorted values a quantile or a median's spread reads. Kept in the
//! database's folder so that a run's stored summary (`db/summary`) can hold exactly those ranks
//! and every reader (the answers, `compare`, the bench summary, the plots) reads them back: all
//! ask this file, so a stored summary holds every rank a printed quantile needs.
//!
//! **Quantiles** are exact, by linear interpolation between the closest order statistics
//! (Hyndman–Fan type 7, numpy's default): for `n` sorted values `x[0] ≤ … ≤ x[n-1]` and a
//! fraction `q`, with `h = (n - 1)·q`, `j = ⌊h⌋` and `g = h - j`, the quantile is
//! `(1 - g)·x[j] + g·x[j+1]`. So p50 is the conventional median (the middle value, or the mean of
//! the two middle values for an even count), p0 the minimum and p100 the maximum. Every value is
//! available exactly from SQLite, so there is no reason to approximate; and one definition shared
//! by `report`, `compare` and the bench summary means they print the same figure for the same
//! windows (a histogram's quantisation would make them disagree). Quantiles of nanosecond samples
//! are given in whole nanoseconds, the unit of the measurements (rounded to the nearest, halves
//! away from zero), by [`quantile_ns`]: the report's p50/p90/p99 and compare's medians both come
//! from it, so they are the same number.

/// The `q` quantile (0 ≤ q ≤ 1) of `n` sorted values read through `at(i)`; `None` when `n` is 0.
pub fn interpolated(n: usize, q: f64, at: impl Fn(usize) -> f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let j = h.floor() as usize;
    if j + 1 >= n {
        return Some(at(n - 1));
    }
    let g = h - j as f64;
    // Weighted form: for g = 0.5 it rounds exactly as (x[j] + x[j+1]) / 2 does.
    Some((1.0 - g) * at(j) + g * at(j + 1))
}

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

/// The ranks [`interpolated`] reads for the `q` quantile of `n` values (`n` > 0): `j` and the
/// one above it (both `n - 1` at the top).
pub fn quantile_ranks(n: usize, q: f64) -> [usize; 2] {
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let j = (h.floor() as usize).min(n - 1);
    [j, (j + 1).min(n - 1)]
}

/// The ranks of the distribution-free 95 % bounds of a median of `n` values (`n` > 0): the order
/// statistics `n/2 ± 1.96·√n/2`, clamped to the values.
pub fn median_bound_ranks(n: usize) -> (usize, usize) {
    let half = 1.96 * (n as f64).sqrt() / 2.0;
    let mid = (n as f64 - 1.0) / 2.0;
    let lo = (mid - half).floor().max(0.0) as usize;
    let hi = ((mid + half).ceil() as usize).min(n - 1);
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranks named are exactly the ones the interpolation reads.
    #[test]
    fn quantile_ranks_are_the_ranks_read() {
        for n in 1..60 {
            for q in [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0] {
                let read = std::cell::RefCell::new(Vec::new());
                interpolated(n, q, |i| {
                    read.borrow_mut().push(i);
                    i as f64
                });
                let ranks = quantile_ranks(n, q);
                for i in read.into_inner() {
                    assert!(ranks.contains(&i), "n {n} q {q}: {i} not in {ranks:?}");
                }
            }
        }
    }

    #[test]
    fn median_bounds_widen_with_the_square_root_of_n() {
        assert_eq!(median_bound_ranks(1), (0, 0));
        // n = 101: ranks 50 ± 9.85 → 40 and 60.
        assert_eq!(median_bound_ranks(101), (40, 60));
    }

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
}
