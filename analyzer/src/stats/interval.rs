//! A statistic's point estimate with its 95 % interval (has it moved?) and its 90 % interval
//! (the two one-sided 5 % tests of an equivalence test, TOST).

use serde::Serialize;

/// A point estimate with its 95 % and 90 % intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub lo95: f64,
    pub hi95: f64,
    pub lo90: f64,
    pub hi90: f64,
}

impl Interval {
    /// An exact value: every bound is the estimate.
    pub fn point(v: f64) -> Interval {
        Interval {
            estimate: v,
            lo95: v,
            hi95: v,
            lo90: v,
            hi90: v,
        }
    }

    /// `estimate ± half95` and `estimate ± half90`.
    pub fn symmetric(estimate: f64, half95: f64, half90: f64) -> Interval {
        Interval {
            estimate,
            lo95: estimate - half95,
            hi95: estimate + half95,
            lo90: estimate - half90,
            hi90: estimate + half90,
        }
    }

    /// Whether the 95 % interval leaves out `v`.
    pub fn excludes(&self, v: f64) -> bool {
        v < self.lo95 || v > self.hi95
    }

    /// Whether the 90 % interval lies strictly inside (lo, hi).
    pub fn within90(&self, lo: f64, hi: f64) -> bool {
        self.lo90 > lo && self.hi90 < hi
    }
}
