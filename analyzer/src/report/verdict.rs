//! The verdict words of `krphase compare`, one definition for whole-run rows and phases:
//!
//! - **equivalent within ±M %**: the 90 % interval of the change lies inside ±M % of side A (an
//!   equivalence test: two one-sided tests at 5 %, TOST), and the change is not significant.
//! - **moved, within ±M %**: both at once: the change is real and smaller than the margin. Kept
//!   apart from "equivalent" so that a significant change (a 14 % speed-up under a 15 % margin,
//!   or a few per cent over thousands of windows) is never hidden behind a word for no change.
//! - **moved**: the 95 % interval of the change excludes no change (and, for per-window phases,
//!   the rank test agrees at p < [`super::compare::ALPHA`]), and it is not inside the margin.
//! - **not significant**: neither; the data cannot tell. It is *not* "unchanged": a wide interval
//!   may hide a large change.
//! - **n/a**: no interval (fewer than two values a side, or nothing on side A to scale by).

use serde::Serialize;

use super::bootstrap::Interval;

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
            Verdict::NotAvailable => "n/a".into(),
        }
    }
}

/// The verdict on a ratio B/A (whole-run rows).
pub fn on_ratio(ci: Option<&Interval>, margin_pct: f64) -> Verdict {
    let Some(ci) = ci else {
        return Verdict::NotAvailable;
    };
    let m = margin_pct / 100.0;
    Verdict::of(ci.within90(1.0 - m, 1.0 + m), ci.excludes(1.0))
}

/// The verdict on a difference B − A of medians whose side-A median is `a_median`, with the
/// rank test's p-value.
pub fn on_difference(
    ci: Option<&Interval>,
    a_median: Option<f64>,
    p: Option<f64>,
    alpha: f64,
    margin_pct: f64,
) -> Verdict {
    let (Some(ci), Some(a)) = (ci, a_median) else {
        return Verdict::NotAvailable;
    };
    let band = a.abs() * margin_pct / 100.0;
    Verdict::of(
        band > 0.0 && ci.within90(-band, band),
        ci.excludes(0.0) && p.is_some_and(|p| p < alpha),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo95: f64, lo90: f64, hi90: f64, hi95: f64) -> Interval {
        Interval {
            estimate: (lo90 + hi90) / 2.0,
            lo95,
            hi95,
            lo90,
            hi90,
        }
    }

    #[test]
    fn equivalence_and_significance_each_decide_their_word() {
        let m = DEFAULT_MARGIN_PCT;
        assert_eq!(
            on_ratio(Some(&iv(0.95, 0.96, 1.04, 1.05)), m),
            Verdict::Equivalent
        );
        // Significant but inside the margin: a real change smaller than the margin, never
        // "equivalent" alone (a 14 % speed-up is not "no change").
        assert_eq!(
            on_ratio(Some(&iv(1.02, 1.03, 1.05, 1.06)), m),
            Verdict::MovedWithin
        );
        assert_eq!(
            on_ratio(Some(&iv(0.851, 0.852, 0.863, 0.864)), m),
            Verdict::MovedWithin
        );
        assert!(Verdict::MovedWithin.within_margin() && Verdict::Equivalent.within_margin());
        assert!(!Verdict::Moved.within_margin());
        assert_eq!(on_ratio(Some(&iv(1.5, 1.6, 2.0, 2.1)), m), Verdict::Moved);
        // Wide: cannot tell, which is not "unchanged".
        assert_eq!(
            on_ratio(Some(&iv(0.5, 0.6, 1.6, 1.8)), m),
            Verdict::NotSignificant
        );
        assert_eq!(on_ratio(None, m), Verdict::NotAvailable);
        let d = iv(-30.0, -25.0, 25.0, 30.0);
        assert_eq!(
            on_difference(Some(&d), Some(1000.0), Some(0.5), 0.01, m),
            Verdict::Equivalent
        );
        assert_eq!(
            on_difference(Some(&d), Some(100.0), Some(0.5), 0.01, m),
            Verdict::NotSignificant
        );
        let up = iv(200.0, 210.0, 290.0, 300.0);
        assert_eq!(
            on_difference(Some(&up), Some(100.0), Some(1e-6), 0.01, m),
            Verdict::Moved
        );
        // The rank test must agree.
        assert_eq!(
            on_difference(Some(&up), Some(100.0), Some(0.2), 0.01, m),
            Verdict::NotSignificant
        );
        let small = iv(2.0, 3.0, 5.0, 6.0);
        assert_eq!(
            on_difference(Some(&small), Some(100.0), Some(1e-6), 0.01, m),
            Verdict::MovedWithin
        );
        assert_eq!(
            on_difference(Some(&small), Some(100.0), Some(0.2), 0.01, m),
            Verdict::Equivalent
        );
        assert_eq!(Verdict::MovedWithin.words(15.0), "moved, within ±15%");
        assert_eq!(Verdict::Equivalent.words(15.0), "equivalent within ±15%");
    }
}
