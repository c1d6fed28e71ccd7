//! The rank test behind `krphase compare`'s noise verdict before runs became its unit, kept for
//! the tests that show what it gets wrong: two-sided Mann–Whitney U on per-window samples (normal
//! approximation with tie correction).

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
