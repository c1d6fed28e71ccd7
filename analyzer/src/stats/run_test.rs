//! The test behind every verdict of `krphase compare`: Welch's unequal-variance t on one value
//! per run (a run's median per window of a phase, or a run's whole wall time on a log scale),
//! with its 95 % and 90 % confidence intervals and the minimum detectable effect at 80 % power.
//!
//! Runs, not windows, are the unit: the windows of one run share its conditions (load, page
//! cache, where the allocator put things), so they are not independent evidence about a build;
//! counting them as independent turns run-to-run drift into a "change". Welch's t on per-run
//! values is exact for normal per-run values and robust beyond (a run's median over hundreds of
//! windows is close to normal); unlike a bootstrap over 3–5 runs (whose percentile interval
//! covers far less than its nominal level: the resampled mean's spread is shrunk by (n − 1)/n and
//! takes only a handful of values) or a permutation test (20 arrangements of 3 + 3 runs: p can
//! never fall below 0.1), it keeps its stated error rate with three runs a side, which is what
//! a pull request usually has. Quantiles of Student's t come from crate `statrs`.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::interval::Interval;

/// Fewest runs a side for a verdict on the change between builds.
pub const MIN_RUNS: usize = 3;
/// Power at which the minimum detectable effect is stated.
pub const POWER: f64 = 0.8;

/// The outcome of the test on B − A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunTest {
    /// mean(B) − mean(A) with its 95 % and 90 % intervals.
    pub interval: Interval,
    /// Two-sided p-value of "no change".
    pub p: f64,
    /// Standard error of the difference.
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// The smallest |change| this test finds with probability [`POWER`] at level `alpha`, from
    /// the per-run spread seen.
    pub mde: f64,
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, var)
}

/// Quantile `q` of Student's t with `df` degrees of freedom.
fn t_quantile(df: f64, q: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(q))
}

/// Welch's test of mean(b) − mean(a) at level `alpha` (for the detectable effect); `None` with
/// fewer than two values a side.
pub fn welch(a: &[f64], b: &[f64], alpha: f64) -> Option<RunTest> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se = (sa + sb).sqrt();
    let est = mb - ma;
    if se.is_nan() || se <= 0.0 {
        // No spread on either side: every run gave the same value, so the change is exact.
        let interval = Interval::point(est);
        let p = if est == 0.0 { 1.0 } else { 0.0 };
        return Some(RunTest {
            interval,
            p,
            se: 0.0,
            df: f64::INFINITY,
            mde: 0.0,
        });
    }
    let df =
        (sa + sb).powi(2) / (sa.powi(2) / (a.len() - 1) as f64 + sb.powi(2) / (b.len() - 1) as f64);
    let (t95, t90) = (t_quantile(df, 0.975), t_quantile(df, 0.95));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * (1.0 - dist.cdf((est / se).abs()))).min(1.0);
    let mde = (t_quantile(df, 1.0 - alpha / 2.0) + t_quantile(df, POWER)) * se;
    Some(RunTest {
        interval: Interval::symmetric(est, t95 * se, t90 * se),
        p,
        se,
        df,
        mde,
    })
}

/// Welch's test on the logarithms of positive per-run values: the interval, back on the
/// original scale, is of the ratio of geometric means B/A, and the detectable effect a factor
/// above 1. `None` when a value is not positive or a side has fewer than two.
pub fn welch_ratio(a: &[f64], b: &[f64], alpha: f64) -> Option<RunTest> {
    if a.iter().chain(b).any(|v| !(*v > 0.0 && v.is_finite())) {
        return None;
    }
    let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let t = welch(&ln(a), &ln(b), alpha)?;
    let i = t.interval;
    Some(RunTest {
        interval: Interval {
            estimate: i.estimate.exp(),
            lo95: i.lo95.exp(),
            hi95: i.hi95.exp(),
            lo90: i.lo90.exp(),
            hi90: i.hi90.exp(),
        },
        mde: t.mde.exp(),
        ..t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_a_textbook_case() {
        // a = 1..5, b = 3, 5, .. 11: t = 4 / sqrt(2.5) = 2.530, df = 6.25 / 1.0625 = 5.882,
        // p = 0.04546 and t(0.975, 5.882) = 2.45882 (numerical integration of t's density).
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [3.0, 5.0, 7.0, 9.0, 11.0];
        let t = welch(&a, &b, 0.01).unwrap();
        assert!((t.interval.estimate - 4.0).abs() < 1e-12);
        assert!((t.df - 5.882_352_9).abs() < 1e-6, "{t:?}");
        assert!((t.p - 0.045_46).abs() < 1e-4, "{t:?}");
        assert!((t.interval.lo95 - 0.112_26).abs() < 1e-4, "{t:?}");
        assert!((t.interval.hi95 - 7.887_74).abs() < 1e-4, "{t:?}");
        assert!(t.interval.lo90 > t.interval.lo95 && t.mde > t.interval.hi95 - 4.0);
        assert!(welch(&[1.0], &b, 0.01).is_none());
    }

    #[test]
    fn no_spread_gives_an_exact_change() {
        let t = welch(&[2.0, 2.0, 2.0], &[2.0, 2.0, 2.0], 0.01).unwrap();
        assert_eq!((t.p, t.interval.lo95, t.interval.hi95), (1.0, 0.0, 0.0));
        let t = welch(&[2.0, 2.0, 2.0], &[3.0, 3.0, 3.0], 0.01).unwrap();
        assert_eq!(t.p, 0.0);
    }

    #[test]
    fn a_ratio_is_tested_on_logarithms() {
        let a = [1.0, 1.1, 0.9, 1.05];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let t = welch_ratio(&a, &b, 0.01).unwrap();
        assert!((t.interval.estimate - 2.0).abs() < 1e-12, "{t:?}");
        assert!(
            t.interval.lo95 > 1.7 && t.interval.hi95 < 2.4 && t.p < 1e-4,
            "{t:?}"
        );
        assert!(welch_ratio(&[0.0, 1.0], &b, 0.01).is_none());
    }
}
