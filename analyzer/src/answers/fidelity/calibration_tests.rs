//! The detector's calibration on seeded synthetic pass records with known differences: each
//! case is one kernel of [`WINDOWS`] windows of [`PASSES`] passes, every pass's time drawn with
//! [`NOISE`] (relative, normal) multiplicative noise around its window's own base (windows
//! differ by up to 2×), the later passes scaled by the injected factor. A thousand cases per
//! setting; the counts are exact for the fixed seeds.
//!
//! The stated false-positive rate is 2.5 % at a true difference of exactly the threshold (the
//! interval's one side); equal passes must be flagged at no more than that, and are flagged
//! never. A 10 % difference, twice the threshold, must be found every time.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::detect::{Flag, THRESHOLD, WindowPasses, detect};

const CASES: usize = 1000;
const WINDOWS: usize = 30;
const PASSES: usize = 4;
const NOISE: f64 = 0.03;
/// The exact counts the fixed seeds give (see the tests).
const EXPECTED_AT_THRESHOLD: usize = 22;
const EXPECTED_STRAYS: usize = 960;

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// One kernel's windows with the later passes scaled by `later`, or each later pass scaled by
/// `1 ± stray` at random (a non-deterministic kernel) when `stray` is positive.
fn case(rng: &mut ChaCha8Rng, later: f64, stray: f64, noise: f64) -> Vec<WindowPasses> {
    (0..WINDOWS)
        .map(|_| {
            let base = 1_000.0 * (1.0 + rng.random::<f64>());
            (0..PASSES)
                .map(|p| {
                    let mut f = if p == 0 { 1.0 } else { later };
                    if p > 0 && stray > 0.0 {
                        f *= if rng.random::<bool>() {
                            1.0 + stray
                        } else {
                            1.0 - stray
                        };
                    }
                    base * f * (1.0 + noise * normal(rng))
                })
                .collect()
        })
        .collect()
}

/// How many of [`CASES`] cases seeded from `seed` are flagged.
fn flagged(seed: u64, later: f64, stray: f64, noise: f64, counters: bool) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..CASES)
        .filter(|_| {
            detect(&case(&mut rng, later, stray, noise), counters)
                .flag
                .is_some()
        })
        .count()
}

#[test]
fn equal_passes_are_never_flagged_and_a_ten_percent_difference_always_is() {
    assert_eq!(flagged(1, 1.0, 0.0, NOISE, false), 0);
    assert_eq!(flagged(2, 0.90, 0.0, NOISE, false), CASES);
    // 10 % the other way on the ratio's log scale (the band is symmetric there).
    assert_eq!(flagged(3, 1.0 / 0.90, 0.0, NOISE, false), CASES);
}

#[test]
fn at_exactly_the_threshold_the_rule_keeps_its_stated_rate() {
    let n = flagged(4, 1.0 + THRESHOLD, 0.0, NOISE, false);
    assert!(
        n <= CASES / 40,
        "{n} of {CASES} flagged at the threshold itself"
    );
    assert_eq!(n, EXPECTED_AT_THRESHOLD);
}

#[test]
fn counters_exact_on_a_deterministic_kernel_and_straying_ones_are_found() {
    // Counters repeat exactly on a deterministic kernel: no noise, no flag, every case exact.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..CASES {
        let d = detect(&case(&mut rng, 1.0, 0.0, 0.0), true);
        assert!(d.exact && d.flag.is_none());
    }
    // A kernel whose later passes land 10 % either side at random: no shift, found as strays.
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let flags: Vec<Option<Flag>> = (0..CASES)
        .map(|_| detect(&case(&mut rng, 1.0, 0.10, 0.0), true).flag)
        .collect();
    assert!(flags.iter().all(Option::is_some));
    // A few cases whose windows happened to lean one way are called a shift; most, strays.
    let strays = flags.iter().filter(|f| **f == Some(Flag::Stray)).count();
    assert_eq!(strays, EXPECTED_STRAYS);
    // Noise of 3 % alone does not make a counter stray past the threshold.
    assert_eq!(flagged(7, 1.0, 0.0, NOISE, true), 0);
}
