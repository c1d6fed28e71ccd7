//! Per-phase statistics over a run's replayed windows: each phase's values (read window by window,
//! or a stored summary's exact order statistics), their quantiles, mean and spread, each phase's
//! share of the window and of its parent, the `unattributed` rest, and why a phase is missing in
//! the run's mode.

use std::collections::BTreeMap;

use super::{PhaseStats, UNATTRIBUTED};
use crate::db::basis::Basis;
use crate::db::phases::{self, PHASES, WINDOW};
use crate::db::quantiles::quantile_ns;
use crate::db::summary::PhaseSummary;
use crate::stats::ratio;

/// The values of one phase over a run's replayed windows: read window by window (then sorted),
/// or a stored summary's exact order statistics (clamped at zero when `clamp`, as the values
/// read are).
pub(super) enum Order {
    Values(Vec<i64>),
    Stored { summary: PhaseSummary, clamp: bool },
}

impl Default for Order {
    fn default() -> Self {
        Order::Values(Vec::new())
    }
}

impl Order {
    pub(super) fn push(&mut self, v: i64) {
        if let Order::Values(values) = self {
            values.push(v);
        }
    }

    fn len(&self) -> usize {
        match self {
            Order::Values(v) => v.len(),
            Order::Stored { summary, .. } => summary.windows as usize,
        }
    }

    fn quantile(&self, q: f64) -> Option<i64> {
        match self {
            Order::Values(v) => quantile_ns(v, q),
            Order::Stored { summary, clamp } => {
                summary.quantile(q, *clamp).map(|v| v.round() as i64)
            }
        }
    }

    fn max(&self) -> Option<i64> {
        match self {
            Order::Values(v) => v.last().copied(),
            Order::Stored { summary, clamp } => {
                let top = summary.at((summary.windows as usize).checked_sub(1)?)?;
                Some(if *clamp { top.max(0) } else { top })
            }
        }
    }

    fn sort(&mut self) {
        if let Order::Values(v) = self {
            v.sort_unstable();
        }
    }

    /// Whether any value is not zero.
    fn any_nonzero(&self) -> bool {
        match self {
            Order::Values(v) => v.iter().any(|x| *x != 0),
            Order::Stored { summary, clamp } => {
                let n = summary.windows as usize;
                let c = |x: i64| if *clamp { x.max(0) } else { x };
                n > 0
                    && [0, n - 1]
                        .iter()
                        .any(|&r| summary.at(r).is_some_and(|x| c(x) != 0))
            }
        }
    }
}

/// One phase's values over the replayed windows of a run.
#[derive(Default)]
pub(super) struct PhaseSamples {
    pub(super) values: Order,
    pub(super) total: i64,
    /// The values' sum and sum of squares before any clamping: the standard deviation is of
    /// the values as measured (what a stored summary keeps), whichever path reads them.
    pub(super) raw_total: i64,
    pub(super) raw_sum_sq: f64,
    pub(super) bases: BTreeMap<Basis, u64>,
}

impl PhaseSamples {
    pub(super) fn stored(p: PhaseSummary, clamp: bool) -> PhaseSamples {
        PhaseSamples {
            total: if clamp { p.positive_ns } else { p.total_ns },
            raw_total: p.total_ns,
            raw_sum_sq: p.sum_sq,
            bases: p.bases.clone(),
            values: Order::Stored { summary: p, clamp },
        }
    }

    /// Counts one measured value `raw`.
    pub(super) fn add_raw(&mut self, raw: i64) {
        self.raw_total += raw;
        self.raw_sum_sq += (raw as f64) * (raw as f64);
    }

    /// The sample standard deviation of the values as measured; `None` below two.
    fn sd(&self) -> Option<f64> {
        let n = self.values.len() as u64;
        crate::answers::kernels::mean_sd(n, self.raw_total as f64, self.raw_sum_sq).1
    }
}

/// Statistics of one set of per-window values (unsorted on entry).
fn stats_of(
    name: &str,
    parent: Option<&str>,
    s: &mut PhaseSamples,
    total: i64,
    window_total: i64,
    parent_total: Option<i64>,
) -> PhaseStats {
    s.values.sort();
    let n = s.values.len() as u64;
    let q = |x: f64| s.values.quantile(x);
    let some = |v: Option<f64>| v.filter(|_| n > 0);
    PhaseStats {
        phase: name.to_string(),
        parent: parent.map(String::from),
        bound_of: None,
        samples: n,
        total_ns: total,
        share_of_window: some(ratio(total as f64, window_total as f64)),
        share_of_parent: parent_total.and_then(|t| some(ratio(total as f64, t as f64))),
        mean_ns: (n > 0).then(|| total as f64 / n as f64),
        sd_ns: s.sd(),
        p50_ns: q(0.5),
        p90_ns: q(0.9),
        p99_ns: q(0.99),
        max_ns: s.values.max(),
        basis: s.bases.keys().copied().collect(),
        basis_windows: std::mem::take(&mut s.bases),
        missing: None,
    }
}

/// Per-phase statistics; shares are of the replayed windows' total time, a part's also of its
/// parent's. When the top-level phases do not cover the window time (observe mode has no PASS
/// callbacks, older files no CONTINUE records), an `unattributed` row holds the rest, so the
/// top-level shares add up to 100%.
pub(super) fn phase_stats(
    samples: &mut [PhaseSamples],
    unattributed: &mut PhaseSamples,
) -> Vec<PhaseStats> {
    let window_total = samples[WINDOW].total;
    let totals: Vec<i64> = samples.iter().map(|s| s.total).collect();
    let totals_n: Vec<usize> = samples.iter().map(|s| s.values.len()).collect();
    let mut out: Vec<PhaseStats> = PHASES
        .iter()
        .zip(samples)
        .enumerate()
        .map(|(k, (p, s))| {
            let parent_total = p.parent.and_then(phases::index).map(|i| totals[i]);
            let mut st = stats_of(p.name, p.parent, s, totals[k], window_total, parent_total);
            if st.samples == 0 {
                st.missing = Some(p.missing.to_string());
            }
            if let Some(b) = p.bound_of {
                st.bound_of = Some(b.to_string());
                st.share_of_window = None;
            }
            st
        })
        .collect();
    // A part whose parent no window times (observe mode's gpu: no PASS callbacks) stands on
    // its own, a row of the window beside the top-level ones, as `covers` has it per window.
    for st in out.iter_mut() {
        let k = phases::index(&st.phase).expect("a phase");
        let untimed = |parent: &String| out_samples(&totals_n, parent) == 0;
        if st.samples > 0
            && st.parent.as_ref().is_some_and(untimed)
            && !phases::before_the_passes(&PHASES[k])
        {
            st.parent = None;
            st.share_of_parent = None;
        }
    }
    let covered: i64 = PHASES
        .iter()
        .zip(&out)
        .enumerate()
        .filter(|(k, (p, st))| *k != WINDOW && p.bound_of.is_none() && st.parent.is_none())
        .map(|(k, _)| totals[k])
        .sum();
    let rest = window_total - covered;
    if rest != 0 || unattributed.values.any_nonzero() {
        let st = stats_of(UNATTRIBUTED, None, unattributed, rest, window_total, None);
        out.insert(WINDOW, st);
    }
    out
}

/// Says why a phase is missing in the run's mode; and, where the window is the passes' span
/// (observe mode without an SDK phase line), gives the phases before the passes no share of it:
/// they lie outside it.
pub(super) fn in_mode(stats: &mut [PhaseStats], observe: bool) {
    let span = stats
        .iter()
        .find(|s| s.phase == PHASES[WINDOW].name)
        .is_some_and(|w| phases::window_is_span(w.basis.iter()));
    for (st, p) in stats
        .iter_mut()
        .filter(|s| s.phase != UNATTRIBUTED)
        .zip(PHASES)
    {
        if st.samples == 0 {
            st.missing = Some(phases::missing_reason(p, observe).to_string());
        }
        if span && phases::before_the_passes(p) {
            st.share_of_window = None;
        }
    }
}

/// The windows that carry phase `name`, from the per-phase counts in [`PHASES`] order.
fn out_samples(counts: &[usize], name: &str) -> usize {
    phases::index(name).map_or(0, |k| counts[k])
}
