//! Order statistics: the one quantile definition every figure uses, and which ranks of the sorted
//! values a quantile or a median's spread reads. Kept apart from the report so that the database
//! can store exactly those ranks per run (`db/summary`) and the report can read them back: both
//! sides ask this file, so a stored summary holds every rank a printed quantile needs.
//!
//! **Quantiles** are exact, by linear interpolation between the closest order statistics
//! (Hyndman–Fan type 7, numpy's default): for `n` sorted values `x[0] ≤ … ≤ x[n-1]` and a
//! fraction `q`, with `h = (n - 1)·q`, `j = ⌊h⌋` and `g = h - j`, the quantile is
//! `(1 - g)·x[j] + g·x[j+1]`.

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
}
