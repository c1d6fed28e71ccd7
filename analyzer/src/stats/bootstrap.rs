//! The method `krphase compare` used before runs became its unit, kept (in tests only) to show
//! what it gets wrong: percentile-bootstrap intervals of a ratio of medians and of a difference
//! of medians of samples pooled across runs. Each side is
//! resampled with replacement on its own, [`RESAMPLES`] times, from a ChaCha8 generator seeded
//! with [`SEED`] (crate `rand_chacha`), so the same data prints the same interval on every
//! machine. Both the 95 % interval (has it moved?) and the 90 % interval (the two one-sided 5 %
//! tests of an equivalence test, TOST) come from the same replicates.

use super::interval::Interval;
use crate::db::quantiles::{median_in_place, quantile_sorted_f64};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Bootstrap replicates per interval.
pub const RESAMPLES: usize = 2000;
/// Fixed seed: reproducible output.
pub const SEED: u64 = 0x6b72_7068_6173_6531;

fn resample(rng: &mut ChaCha8Rng, from: &[f64], into: &mut [f64]) -> f64 {
    for x in into.iter_mut() {
        *x = from[rng.random_range(0..from.len())];
    }
    median_in_place(into)
}

/// Replicates of `stat(median(a*), median(b*))`, dropping those it declines; with the estimate
/// on the samples themselves. `None` when a side has fewer than two values.
fn bootstrap(a: &[f64], b: &[f64], stat: impl Fn(f64, f64) -> Option<f64>) -> Option<Interval> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let estimate = stat(
        median_in_place(&mut a.to_vec()),
        median_in_place(&mut b.to_vec()),
    )?;
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let (mut ba, mut bb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut reps: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let ma = resample(&mut rng, a, &mut ba);
            let mb = resample(&mut rng, b, &mut bb);
            stat(ma, mb)
        })
        .collect();
    if reps.is_empty() {
        return None;
    }
    reps.sort_by(f64::total_cmp);
    let q = |p: f64| quantile_sorted_f64(&reps, p).unwrap_or(f64::NAN);
    Some(Interval {
        estimate,
        lo95: q(0.025),
        hi95: q(0.975),
        lo90: q(0.05),
        hi90: q(0.95),
    })
}

/// median(b) / median(a) with its intervals (replicates with a non-positive median of `a` are
/// dropped); `None` with fewer than two values a side or a non-positive median of `a`.
pub fn ratio_of_medians(a: &[f64], b: &[f64]) -> Option<Interval> {
    bootstrap(a, b, |ma, mb| (ma > 0.0).then(|| mb / ma))
}

/// median(b) − median(a) with its intervals; `None` with fewer than two values a side.
pub fn difference_of_medians(a: &[i64], b: &[i64]) -> Option<Interval> {
    let f = |v: &[i64]| v.iter().map(|x| *x as f64).collect::<Vec<f64>>();
    bootstrap(&f(a), &f(b), |ma, mb| Some(mb - ma))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_ratio_excludes_one_and_noise_does_not() {
        let a = [1.00, 1.02, 0.98, 1.01, 0.99];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let r = ratio_of_medians(&a, &b).unwrap();
        assert!((r.estimate - 2.0).abs() < 1e-12);
        assert!(r.excludes(1.0) && r.lo95 > 1.9 && r.hi95 < 2.1, "{r:?}");
        let same = ratio_of_medians(&a, &[1.01, 0.99, 1.0, 1.02, 0.98]).unwrap();
        assert!(!same.excludes(1.0), "{same:?}");
        assert!(same.within90(0.85, 1.15), "{same:?}");
        assert!(ratio_of_medians(&[1.0], &[2.0, 3.0]).is_none());
        assert!(ratio_of_medians(&[0.0, 0.0], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn the_same_data_gives_the_same_interval() {
        let a: Vec<i64> = (0..300).map(|i| 1000 + (i * 37) % 200).collect();
        let b: Vec<i64> = a.iter().map(|x| x + 50).collect();
        let x = difference_of_medians(&a, &b).unwrap();
        assert_eq!(Some(x), difference_of_medians(&a, &b));
        assert!((x.estimate - 50.0).abs() < 1e-9);
        assert!(
            x.excludes(0.0) && x.lo90 >= x.lo95 && x.hi90 <= x.hi95,
            "{x:?}"
        );
    }
}
