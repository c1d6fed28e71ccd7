//! The verdict words of `krphase compare`, one definition for whole-run rows and phases, each
//! from the test on per-run values (`run_test.rs`):
//!
//! - **equivalent within ±M %**: the 90 % interval of the change lies inside ±M % of side A (an
//!   equivalence test: two one-sided tests at 5 %, TOST), and the change is not significant.
//! - **moved, within ±M %**: both at once: the change is real and smaller than the margin. Kept
//!   apart from "equivalent" so that a significant change (a 14 % speed-up under a 15 % margin)
//!   is never hidden behind a word for no change.
//! - **moved**: the test rejects "no change" at p < [`ALPHA`] (so the 95 % interval excludes it
//!   too), and the change is not inside the margin.
//! - **not significant**: neither; the data cannot tell. It is *not* "unchanged": a wide interval
//!   may hide a large change (the minimum detectable effect beside it says how large).
//! - **within-run only** (phases) / **too few runs** (whole-run rows): fewer than
//!   [`MIN_RUNS`] runs on a side. The run-to-run spread, against which a build change must be
//!   judged, cannot be estimated, so no verdict about the builds is given; a phase still shows
//!   its interval from the spread inside the runs, which says nothing about drift between them.
//! - **n/a**: no interval (no values on a side, or nothing on side A to scale by).

use serde::Serialize;

use super::run_test::{MIN_RUNS, RunTest};

/// The default equivalence margin (`--margin`, percent of side A).
pub const DEFAULT_MARGIN_PCT: f64 = 15.0;

/// What a comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Moved,
    MovedWithin,
    NotSignificant,
    Equivalent,
    WithinRunOnly,
    TooFewRuns,
    NotAvailable,
}

impl Verdict {
    /// The two tests' answers in one verdict.
    fn of(equivalent: bool, moved: bool) -> Verdict {
        match (equivalent, moved) {
            (true, true) => Verdict::MovedWithin,
            (true, false) => Verdict::Equivalent,
            (false, true) => Verdict::Moved,
            (false, false) => Verdict::NotSignificant,
        }
    }

    /// Whether the equivalence test passed (the change lies inside the margin).
    pub fn within_margin(self) -> bool {
        matches!(self, Verdict::Equivalent | Verdict::MovedWithin)
    }

    /// The words printed, with the margin for an equivalence.
    pub fn words(self, margin_pct: f64) -> String {
        match self {
            Verdict::Moved => "moved".into(),
            Verdict::MovedWithin => format!("moved, within ±{margin_pct:.0}%"),
            Verdict::NotSignificant => "not significant".into(),
            Verdict::Equivalent => format!("equivalent within ±{margin_pct:.0}%"),
            Verdict::WithinRunOnly => "within-run only".into(),
            Verdict::TooFewRuns => format!("too few runs (<{MIN_RUNS} a side)"),
            Verdict::NotAvailable => "n/a".into(),
        }
    }
}

/// Significance level of the test on per-run values.
pub const ALPHA: f64 = 0.01;

/// The verdict on a ratio B/A (whole-run rows) from the test on the runs' logarithms, with
/// `runs` values on each side.
pub fn on_ratio(t: Option<&RunTest>, runs: (usize, usize), margin_pct: f64) -> Verdict {
    let Some(t) = t else {
        return Verdict::NotAvailable;
    };
    if runs.0 < MIN_RUNS || runs.1 < MIN_RUNS {
        return Verdict::TooFewRuns;
    }
    let m = margin_pct / 100.0;
    let ci = &t.interval;
    Verdict::of(
        ci.within90(1.0 - m, 1.0 + m),
        ci.excludes(1.0) && t.p < ALPHA,
    )
}

/// The verdict on a difference B − A of per-run medians whose side-A value is `a_median`, with
/// `runs` runs on each side.
pub fn on_difference(
    t: Option<&RunTest>,
    a_median: Option<f64>,
    runs: (usize, usize),
    margin_pct: f64,
) -> Verdict {
    let (Some(t), Some(a)) = (t, a_median) else {
        return Verdict::NotAvailable;
    };
    if runs.0 < MIN_RUNS || runs.1 < MIN_RUNS {
        return Verdict::WithinRunOnly;
    }
    let band = a.abs() * margin_pct / 100.0;
    let ci = &t.interval;
    Verdict::of(
        band > 0.0 && ci.within90(-band, band),
        ci.excludes(0.0) && t.p < ALPHA,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::interval::Interval;

    fn t(lo95: f64, lo90: f64, hi90: f64, hi95: f64, p: f64) -> RunTest {
        RunTest {
            interval: Interval {
                estimate: (lo90 + hi90) / 2.0,
                lo95,
                hi95,
                lo90,
                hi90,
            },
            p,
            se: 1.0,
            df: 4.0,
            mde: 1.0,
        }
    }

    #[test]
    fn equivalence_and_significance_each_decide_their_word() {
        let (m, n) = (DEFAULT_MARGIN_PCT, (3, 3));
        let r = |lo95, lo90, hi90, hi95, p| on_ratio(Some(&t(lo95, lo90, hi90, hi95, p)), n, m);
        assert_eq!(r(0.95, 0.96, 1.04, 1.05, 0.5), Verdict::Equivalent);
        // Significant but inside the margin: a real change smaller than the margin, never
        // "equivalent" alone (a 14 % speed-up is not "no change").
        assert_eq!(r(1.02, 1.03, 1.05, 1.06, 1e-3), Verdict::MovedWithin);
        assert_eq!(r(0.851, 0.852, 0.863, 0.864, 1e-4), Verdict::MovedWithin);
        assert!(Verdict::MovedWithin.within_margin() && Verdict::Equivalent.within_margin());
        assert!(!Verdict::Moved.within_margin());
        assert_eq!(r(1.5, 1.6, 2.0, 2.1, 1e-3), Verdict::Moved);
        // The interval excludes 1 at 95 % but the test's level is 1 %: not enough.
        assert_eq!(r(1.5, 1.6, 2.0, 2.1, 0.03), Verdict::NotSignificant);
        // Wide: cannot tell, which is not "unchanged".
        assert_eq!(r(0.5, 0.6, 1.6, 1.8, 0.5), Verdict::NotSignificant);
        assert_eq!(on_ratio(None, n, m), Verdict::NotAvailable);
        // Two runs a side: never a verdict on the builds, however clear the interval.
        let clear = t(1.5, 1.6, 2.0, 2.1, 1e-6);
        assert_eq!(on_ratio(Some(&clear), (2, 5), m), Verdict::TooFewRuns);
        let d = t(-30.0, -25.0, 25.0, 30.0, 0.5);
        assert_eq!(
            on_difference(Some(&d), Some(1000.0), n, m),
            Verdict::Equivalent
        );
        assert_eq!(
            on_difference(Some(&d), Some(100.0), n, m),
            Verdict::NotSignificant
        );
        let up = t(200.0, 210.0, 290.0, 300.0, 1e-6);
        assert_eq!(on_difference(Some(&up), Some(100.0), n, m), Verdict::Moved);
        assert_eq!(
            on_difference(Some(&up), Some(100.0), (5, 2), m),
            Verdict::WithinRunOnly
        );
        let small = t(2.0, 3.0, 5.0, 6.0, 1e-6);
        assert_eq!(
            on_difference(Some(&small), Some(100.0), n, m),
            Verdict::MovedWithin
        );
        let small = t(2.0, 3.0, 5.0, 6.0, 0.2);
        assert_eq!(
            on_difference(Some(&small), Some(100.0), n, m),
            Verdict::Equivalent
        );
        assert_eq!(Verdict::MovedWithin.words(15.0), "moved, within ±15%");
        assert_eq!(Verdict::Equivalent.words(15.0), "equivalent within ±15%");
        assert_eq!(Verdict::TooFewRuns.words(15.0), "too few runs (<3 a side)");
    }
}
