//! The detector: how far a kernel's passes stray from each other, from one value per pass of
//! each window (a pass's GPU time, or a counter collected in more than one pass).
//!
//! Windows are the unit. Each window gives its own ratio of the later passes to its reference
//! pass (pass 0 for GPU time; the first pass that collected the counter), so what a window
//! shares (its input, the load of the moment) cancels inside it; the kernel's figure is the
//! median of those ratios over its windows, with the distribution-free 95 % interval of a median
//! (the order statistics `db/quantiles.rs` names), which holds for any shape of noise.
//!
//! A kernel is flagged only when the interval lies wholly past the threshold, that is, when the
//! data say the passes differ by more than [`THRESHOLD`], not merely that they differ: on
//! equal passes a flag needs at least half of the windows past the threshold in the same
//! direction at once, and at a true difference of exactly the threshold the rule flags at most
//! 2.5 % of the time (one side of the 95 % interval). The calibration
//! (`calibration_tests.rs`) checks both on seeded synthetic passes.

use serde::Serialize;

use crate::db::quantiles::{median, median_bound_ranks};

/// Relative pass-to-pass difference past which counters combined across passes are not trusted.
pub const THRESHOLD: f64 = 0.05;
/// Windows a kernel needs before its interval is stated (below six the order statistics of a
/// median cannot cover 95 %).
pub const MIN_WINDOWS: usize = 6;

/// A median over windows with its distribution-free 95 % interval and its n.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Median {
    pub estimate: f64,
    /// The 95 % bounds; `None` with fewer than [`MIN_WINDOWS`] windows.
    pub lo95: Option<f64>,
    pub hi95: Option<f64>,
    /// Windows behind it.
    pub n: usize,
}

impl Median {
    /// The median of `values` and its interval; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Median> {
        let estimate = median(values)?;
        let n = values.len();
        let (lo95, hi95) = if n >= MIN_WINDOWS {
            let mut sorted = values.to_vec();
            sorted.sort_by(f64::total_cmp);
            let (lo, hi) = median_bound_ranks(n);
            (Some(sorted[lo]), Some(sorted[hi]))
        } else {
            (None, None)
        };
        Some(Median {
            estimate,
            lo95,
            hi95,
            n,
        })
    }

    /// Whether the interval of a ratio lies wholly outside `[1/(1+t), 1+t]`.
    pub fn ratio_past(&self, t: f64) -> bool {
        match (self.lo95, self.hi95) {
            (Some(lo), Some(hi)) => lo > 1.0 + t || hi < 1.0 / (1.0 + t),
            _ => false,
        }
    }

    /// Whether the interval of a non-negative difference lies wholly above `t`.
    pub fn above(&self, t: f64) -> bool {
        self.lo95.is_some_and(|lo| lo > t)
    }
}

/// Why a measure was flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Flag {
    /// The later passes are systematically faster or slower (larger or smaller) than the
    /// reference pass: warm caches, or state a restore left behind.
    Shift,
    /// The passes disagree window by window in both directions: a non-deterministic kernel.
    Stray,
}

/// One value per pass of one window, in pass order; the first is the reference.
pub type WindowPasses = Vec<f64>;

/// What the detector says of one measure of one kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detection {
    /// Median over windows of (median of the later passes) / (reference pass).
    pub ratio: Option<Median>,
    /// Median over windows of the median |later pass / reference − 1| (a window's typical
    /// disagreement, not its worst, so that one noisy pass does not make a window stray).
    pub stray: Option<Median>,
    /// The largest |later pass / reference − 1| of any window.
    pub max_rel_diff: Option<f64>,
    /// Every window's passes were exactly equal.
    pub exact: bool,
    pub flag: Option<Flag>,
}

/// The later passes of `w` as ratios to its reference; empty when there is no later pass or a
/// negative reference. A zero reference (a miss counter on a warm cache) gives 1 for a later
/// zero and an unbounded ratio for anything else.
fn ratios(w: &[f64]) -> Vec<f64> {
    match w.split_first() {
        Some((&r, later)) if r > 0.0 => later.iter().map(|v| v / r).collect(),
        Some((&0.0, later)) => later
            .iter()
            .map(|v| if *v == 0.0 { 1.0 } else { f64::INFINITY })
            .collect(),
        _ => Vec::new(),
    }
}

/// Detects on `windows`; `judge_stray` says whether window-by-window disagreement may flag
/// (counters, which are exact on a deterministic kernel; not times, whose noise is of the same
/// kind).
pub fn detect(windows: &[WindowPasses], judge_stray: bool) -> Detection {
    let mut per_ratio = Vec::new();
    let mut per_stray = Vec::new();
    let mut max_rel: Option<f64> = None;
    let mut exact = true;
    for w in windows {
        let r = ratios(w);
        if r.is_empty() {
            continue;
        }
        exact &= r.iter().all(|x| *x == 1.0);
        let dev: Vec<f64> = r.iter().map(|x| (x - 1.0).abs()).collect();
        let largest = dev.iter().copied().fold(0.0, f64::max);
        max_rel = Some(max_rel.map_or(largest, |m: f64| m.max(largest)));
        per_ratio.extend(median(&r));
        per_stray.extend(median(&dev));
    }
    let ratio = Median::of(&per_ratio);
    let stray = Median::of(&per_stray);
    let flag = if ratio.is_some_and(|m| m.ratio_past(THRESHOLD)) {
        Some(Flag::Shift)
    } else if judge_stray && stray.is_some_and(|m| m.above(THRESHOLD)) {
        Some(Flag::Stray)
    } else {
        None
    };
    Detection {
        ratio,
        stray,
        max_rel_diff: max_rel,
        exact: exact && ratio.is_some(),
        flag,
    }
}

/// Median over windows of the spread among passes 1…N−1, (max − min) / median, for windows of
/// three passes or more.
pub fn later_spread(windows: &[WindowPasses]) -> Option<Median> {
    let spreads: Vec<f64> = windows
        .iter()
        .filter(|w| w.len() >= 3)
        .filter_map(|w| {
            let later = &w[1..];
            let m = median(later)?;
            let (lo, hi) = later
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(*v), b.max(*v))
                });
            (m > 0.0).then(|| (hi - lo) / m)
        })
        .collect();
    Median::of(&spreads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_shift_is_flagged_and_equal_passes_are_exact() {
        let warm: Vec<WindowPasses> = (0..10)
            .map(|i| vec![100.0 + i as f64, 70.0, 71.0])
            .collect();
        let d = detect(&warm, false);
        assert_eq!(d.flag, Some(Flag::Shift));
        let r = d.ratio.unwrap();
        assert!(r.estimate < 0.72 && r.n == 10, "{r:?}");
        let same: Vec<WindowPasses> = (0..10).map(|_| vec![5.0, 5.0, 5.0]).collect();
        let d = detect(&same, true);
        assert!(d.exact && d.flag.is_none() && d.max_rel_diff == Some(0.0));
        // Too few windows: figures, but no interval and so no flag.
        let d = detect(&warm[..3], false);
        assert!(d.ratio.unwrap().lo95.is_none() && d.flag.is_none());
    }

    #[test]
    fn disagreement_both_ways_flags_only_counters() {
        let w: Vec<WindowPasses> = (0..20)
            .map(|i| {
                let s = if i % 2 == 0 { 1.2 } else { 0.8 };
                vec![100.0, 100.0 * s]
            })
            .collect();
        assert_eq!(detect(&w, true).flag, Some(Flag::Stray));
        assert_eq!(detect(&w, false).flag, None);
    }
}
