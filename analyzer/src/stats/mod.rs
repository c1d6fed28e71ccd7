//! The statistics behind the answers and `krphase compare`: ratios, the test on per-run values
//! every verdict rests on ([`run_test`]) with its intervals ([`interval`]), the verdict words
//! ([`verdict`]), and the two methods compare used before runs became its unit, kept to show what
//! they get wrong ([`mann_whitney`], and `bootstrap` in tests). Quantiles and medians are the
//! database's (`db/quantiles.rs`): a run's stored summary holds the ranks they read.

#[cfg(test)]
pub mod bootstrap;
pub mod interval;
pub mod mann_whitney;
pub mod run_test;
pub mod verdict;

/// `a / b`, or `None` when `b` is not positive.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}
