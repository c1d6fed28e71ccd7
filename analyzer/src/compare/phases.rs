//! `krphase compare A B` over phase-file runs: per phase, each side's median per window (the
//! mean over its runs of each run's median), their difference with its 95 % interval, the test's
//! p-value, n (runs and windows) per side, the minimum detectable effect, and a verdict in the
//! words of `stats/verdict.rs`, sorted by contribution to the change in window time per run.
//!
//! Runs are the unit of evidence (`stats/run_test.rs` says why): each run is read once, window by
//! window, into its own sorted arrays, summarised per phase (windows, total, median, and the
//! median's spread inside the run), and dropped; the test is Welch's t on the per-run medians.
//! So the cost grows with the windows read once plus runs × phases, and the memory with the
//! largest single run, not with the windows of all runs nor with resamples. With fewer than
//! [`MIN_RUNS`] runs on a side the run-to-run spread is unknown: the interval then comes from the
//! spread of the medians inside the runs (distribution-free order-statistic bounds), the verdict
//! says "within-run only", and nothing is called "moved".
//!
//! The whole answer of `krphase compare` (whole-run rows, attribution, markdown) is in
//! `builds.rs`; this file is the per-window part.

use std::fmt::Write as _;

use anyhow::Result;
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::Connection;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::db::basis::Basis;
use crate::db::phases::{self, PHASES, WINDOW};
use crate::db::quantiles::{median_bound_ranks, median_ns};
use crate::db::summary::{self, PhaseSummary, RunSummary as StoredRun};
use crate::render::fmt::{duration_short, fixed2};
use crate::stats::interval::Interval;
use crate::stats::run_test::{MIN_RUNS, RunTest, welch};
use crate::stats::verdict::{ALPHA, DEFAULT_MARGIN_PCT, Verdict, on_difference};

/// The window time no measured top-level phase covers, when the tool saw the passes.
pub const WINDOW_REST: &str = "window rest";
/// The same when it did not (observe mode: no PASS callbacks), which is then mostly the passes.
pub const PASSES_AS_REST: &str = "pass exec (window rest)";

/// What the interval of a phase rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// Welch's t on per-run medians: the run-to-run spread.
    Runs,
    /// Fewer than [`MIN_RUNS`] runs a side: the spread inside the runs only.
    WithinRun,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseDelta {
    pub phase: String,
    /// Runs carrying the phase on each side.
    pub a_runs: usize,
    pub b_runs: usize,
    /// Their windows carrying it.
    pub a_samples: usize,
    pub b_samples: usize,
    pub a_total_ns: i64,
    pub b_total_ns: i64,
    /// Mean over the side's runs of each run's median per window.
    pub a_median_ns: Option<f64>,
    pub b_median_ns: Option<f64>,
    /// Change of the phase's total per run (mean over each side's runs).
    pub delta_total_per_run_ns: f64,
    pub delta_median_ns: Option<f64>,
    /// b median / a median.
    pub ratio: Option<f64>,
    pub p_value: Option<f64>,
    /// b median − a median with its 95 % and 90 % intervals (ns).
    pub delta_interval: Option<Interval>,
    /// The smallest change of the median (ns) the test finds 80 % of the time at its level,
    /// from the per-run spread; `None` on within-run evidence.
    pub mde_ns: Option<f64>,
    pub evidence: Evidence,
    /// `moved`, `moved, within ±M%`, `not significant`, `equivalent within ±M%`,
    /// `within-run only` or `n/a` (`stats/verdict.rs`).
    pub verdict: String,
    pub verdict_code: Verdict,
    /// Share of the end-to-end (window total per run) change.
    pub contribution: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The runs on each side (a label selects every run carrying it).
    pub a_runs: Vec<i64>,
    pub b_runs: Vec<i64>,
    pub a_windows: usize,
    pub b_windows: usize,
    pub a_restores_per_window: Option<f64>,
    pub b_restores_per_window: Option<f64>,
    pub a_passes_per_window: Option<f64>,
    pub b_passes_per_window: Option<f64>,
    pub test: String,
    /// Equivalence margin, percent of side A's median.
    pub margin_pct: f64,
    /// End-to-end first, then the phases by |contribution|.
    pub phases: Vec<PhaseDelta>,
    /// The figures neither side has, each with why and how to get it, and what the window is
    /// when it is not CONFIG ENTER to EXIT (observe mode without an SDK phase line).
    pub unavailable: Vec<String>,
}

/// One phase of one run: what the test and the tables need, nothing that grows with windows.
#[derive(Debug, Clone, Copy)]
struct RunPhase {
    windows: usize,
    total: i64,
    median: f64,
    /// Standard error of the median inside the run (order-statistic bounds).
    median_se: f64,
}

/// One run: each phase of [`PHASES`], then the window rest.
struct RunSummary {
    phases: Vec<Option<RunPhase>>,
    windows: usize,
    restores: i64,
    passes: i64,
    /// Windows another tool replayed (observe mode: the window's basis is not in process).
    observed: usize,
    /// Windows whose window is only the passes' span.
    spans: usize,
}

const REST: usize = PHASES.len();

/// The median's standard error from the order statistics of one run's `n` values (read through
/// `at`): the distribution-free 95 % bounds of a median are the order statistics
/// n/2 ± 1.96·√n/2 apart, 2 × 1.96 standard errors.
fn median_se(n: usize, at: impl Fn(usize) -> i64) -> f64 {
    let (lo, hi) = median_bound_ranks(n);
    (at(hi) - at(lo)) as f64 / (2.0 * 1.96)
}

fn summarize_phase(v: &mut [i64]) -> Option<RunPhase> {
    v.sort_unstable();
    Some(RunPhase {
        windows: v.len(),
        total: v.iter().sum(),
        median: median_ns(v)? as f64,
        median_se: median_se(v.len(), |i| v[i]),
    })
}

/// Reads one run's replayed windows into `buf` (one array per phase and the rest, reused from
/// run to run) and summarises them.
fn summarize(conn: &Connection, run: i64, buf: &mut [Vec<i64>]) -> Result<RunSummary> {
    for v in buf.iter_mut() {
        v.clear();
    }
    let (mut windows, mut restores, mut passes) = (0, 0, 0);
    let (mut observed, mut spans) = (0, 0);
    phases::for_each_replayed(conn, run, |w| {
        windows += 1;
        restores += w.restores.unwrap_or(0);
        passes += w.executed_passes.unwrap_or(0);
        let mut covered = 0;
        for (k, x) in w.phase_ns.iter().enumerate() {
            if let Some(x) = *x {
                buf[k].push(x);
                if crate::db::summary::covers(k, &w.phase_ns) {
                    covered += x.max(0);
                }
            }
        }
        if let Some(win) = w.phase_ns[WINDOW] {
            buf[REST].push(win.max(0) - covered);
        }
        let basis = w.window_basis;
        observed += usize::from(basis.is_some_and(|b| b != Basis::InProcess));
        spans += usize::from(basis == Some(Basis::Dispatch));
    })?;
    Ok(RunSummary {
        phases: buf.iter_mut().map(|v| summarize_phase(v)).collect(),
        windows,
        restores,
        passes,
        observed,
        spans,
    })
}

/// One phase of a run from its stored summary: the same figures from its exact order statistics.
fn stored_phase(p: &PhaseSummary) -> Option<RunPhase> {
    let n = p.windows as usize;
    let at = |i: usize| p.at(i).unwrap_or(0);
    Some(RunPhase {
        windows: n,
        total: p.total_ns,
        median: p.quantile(0.5, false)?.round(),
        median_se: median_se(n, at),
    })
}

/// One run from its stored summary (`db/summary`), without reading a window.
fn stored(s: &StoredRun) -> RunSummary {
    let t = &s.tallies;
    RunSummary {
        phases: s.phases.iter().map(stored_phase).collect(),
        windows: t.replayed as usize,
        restores: t.restores,
        passes: t.executed_passes,
        observed: t.observed as usize,
        spans: t.spans as usize,
    }
}

/// Each run's summary: stored when current, else read window by window.
fn load(conn: &Connection, runs: &[i64], buf: &mut [Vec<i64>]) -> Result<Vec<RunSummary>> {
    runs.iter()
        .map(|&r| match summary::load(conn, r)? {
            Some(s) => Ok(stored(&s)),
            None => summarize(conn, r, buf),
        })
        .collect()
}

/// Compares the windows of runs `a` with those of runs `b` (default margin).
pub fn compare(conn: &Connection, a: &[i64], b: &[i64]) -> Result<Comparison> {
    compare_with(conn, a, b, DEFAULT_MARGIN_PCT)
}

/// The interval from the spread of the medians inside the runs (normal approximation), for
/// sides with too few runs to see the spread between them.
fn within_run(a: &[RunPhase], b: &[RunPhase], est: f64) -> Option<RunTest> {
    let se_side = |v: &[RunPhase]| {
        (v.iter().map(|r| r.median_se.powi(2)).sum::<f64>()).sqrt() / v.len() as f64
    };
    let se = (se_side(a).powi(2) + se_side(b).powi(2)).sqrt();
    if se.is_nan() || se <= 0.0 {
        return None;
    }
    let z = Normal::new(0.0, 1.0).ok()?;
    let (z95, z90) = (z.inverse_cdf(0.975), z.inverse_cdf(0.95));
    Some(RunTest {
        interval: Interval::symmetric(est, z95 * se, z90 * se),
        p: 2.0 * (1.0 - z.cdf((est / se).abs())),
        se,
        df: f64::INFINITY,
        mde: f64::NAN,
    })
}

/// A side's runs that carry phase `k`.
fn carrying(side: &[RunSummary], k: usize) -> Vec<RunPhase> {
    side.iter().filter_map(|r| r.phases[k]).collect()
}

fn mean(v: impl ExactSizeIterator<Item = f64>) -> Option<f64> {
    let n = v.len();
    (n > 0).then(|| v.sum::<f64>() / n as f64)
}

/// One phase's row from the run summaries of both sides.
fn phase_row(
    name: &str,
    k: usize,
    sa: &[RunSummary],
    sb: &[RunSummary],
    margin_pct: f64,
) -> PhaseDelta {
    let (ra, rb) = (carrying(sa, k), carrying(sb, k));
    let medians = |v: &[RunPhase]| v.iter().map(|r| r.median).collect::<Vec<f64>>();
    let (va, vb) = (medians(&ra), medians(&rb));
    let (ma, mb) = (mean(va.iter().copied()), mean(vb.iter().copied()));
    let enough = ra.len() >= MIN_RUNS && rb.len() >= MIN_RUNS;
    let dm = ma.zip(mb).map(|(x, y)| y - x);
    let test = if enough {
        welch(&va, &vb, ALPHA)
    } else {
        dm.and_then(|d| within_run(&ra, &rb, d))
    };
    let v = on_difference(test.as_ref(), ma, (ra.len(), rb.len()), margin_pct);
    let total = |v: &[RunPhase]| v.iter().map(|r| r.total).sum::<i64>();
    let per_run = |v: &[RunPhase], side: &[RunSummary]| total(v) as f64 / side.len().max(1) as f64;
    PhaseDelta {
        phase: name.to_string(),
        a_runs: ra.len(),
        b_runs: rb.len(),
        a_samples: ra.iter().map(|r| r.windows).sum(),
        b_samples: rb.iter().map(|r| r.windows).sum(),
        a_total_ns: total(&ra),
        b_total_ns: total(&rb),
        a_median_ns: ma,
        b_median_ns: mb,
        delta_total_per_run_ns: per_run(&rb, sb) - per_run(&ra, sa),
        delta_median_ns: dm,
        ratio: ma.zip(mb).and_then(|(x, y)| (x > 0.0).then(|| y / x)),
        p_value: test.map(|t| t.p),
        delta_interval: test.map(|t| t.interval),
        mde_ns: test.map(|t| t.mde).filter(|m| enough && m.is_finite()),
        evidence: if enough {
            Evidence::Runs
        } else {
            Evidence::WithinRun
        },
        verdict: v.words(margin_pct),
        verdict_code: v,
        contribution: None,
    }
}

/// How the rows were tested, in words.
fn test_text(margin_pct: f64) -> String {
    format!(
        "runs are the unit: each run's median per window, per phase; Welch's t on those \
         medians\n  (95% interval of the difference, p); moved: p < {ALPHA}; equivalent: 90% \
         interval inside\n  ±{margin_pct:.0}% of A (TOST) and not moved; moved, within: both; \
         MDE: the change found 80% of\n  the time at p < {ALPHA}; fewer than {MIN_RUNS} runs a \
         side: within-run only (the interval from the\n  spread inside the runs, no verdict \
         on the builds)"
    )
}

/// Compares the windows of runs `a` with those of runs `b`; `margin_pct` is the equivalence
/// margin.
pub fn compare_with(
    conn: &Connection,
    a: &[i64],
    b: &[i64],
    margin_pct: f64,
) -> Result<Comparison> {
    let mut buf = vec![Vec::new(); PHASES.len() + 1];
    let sa = load(conn, a, &mut buf)?;
    let sb = load(conn, b, &mut buf)?;
    drop(buf);
    let mut rows: Vec<PhaseDelta> = PHASES
        .iter()
        .enumerate()
        .map(|(k, p)| phase_row(p.name, k, &sa, &sb, margin_pct))
        .collect();
    let pass = phases::index("pass exec").expect("phase");
    let rest = if rows[pass].a_samples + rows[pass].b_samples == 0 {
        PASSES_AS_REST
    } else {
        WINDOW_REST
    };
    let nonzero = |s: &[RunSummary]| {
        s.iter()
            .any(|r| r.phases[REST].is_some_and(|p| p.total != 0 || p.median != 0.0))
    };
    if nonzero(&sa) || nonzero(&sb) {
        rows.push(phase_row(rest, REST, &sa, &sb, margin_pct));
    }
    let unavailable = unavailable(&rows, &sa, &sb);
    let e2e = rows[WINDOW].delta_total_per_run_ns;
    for r in &mut rows {
        r.contribution = (e2e != 0.0).then(|| r.delta_total_per_run_ns / e2e);
    }
    let window = rows.remove(WINDOW);
    rows.sort_by(|p, q| {
        q.delta_total_per_run_ns
            .abs()
            .total_cmp(&p.delta_total_per_run_ns.abs())
    });
    rows.insert(0, window);
    let count = |s: &[RunSummary], f: fn(&RunSummary) -> i64| s.iter().map(f).sum::<i64>();
    let windows = |s: &[RunSummary]| s.iter().map(|r| r.windows).sum::<usize>();
    let per = |x: i64, n: usize| (n > 0).then(|| x as f64 / n as f64);
    let (wa, wb) = (windows(&sa), windows(&sb));
    Ok(Comparison {
        a_runs: a.to_vec(),
        b_runs: b.to_vec(),
        a_windows: wa,
        b_windows: wb,
        a_restores_per_window: per(count(&sa, |r| r.restores), wa),
        b_restores_per_window: per(count(&sb, |r| r.restores), wb),
        a_passes_per_window: per(count(&sa, |r| r.passes), wa),
        b_passes_per_window: per(count(&sb, |r| r.passes), wb),
        test: test_text(margin_pct),
        margin_pct,
        phases: rows,
        unavailable,
    })
}

/// The figures neither side has (why, and how to get them), and the window's meaning when every
/// window is only the passes' span.
fn unavailable(rows: &[PhaseDelta], sa: &[RunSummary], sb: &[RunSummary]) -> Vec<String> {
    let sum = |f: fn(&RunSummary) -> usize| sa.iter().chain(sb).map(f).sum::<usize>();
    let windows = sum(|r| r.windows);
    let observe = windows > 0 && sum(|r| r.observed) == windows;
    let mut out: Vec<String> = PHASES
        .iter()
        .zip(rows)
        .filter(|(_, r)| r.a_samples + r.b_samples == 0)
        .map(|(p, _)| format!("{}: {}", p.name, phases::missing_reason(p, observe)))
        .collect();
    if windows > 0 && sum(|r| r.spans) == windows {
        out.push(format!(
            "{}: {}",
            PHASES[WINDOW].name,
            phases::SPAN_WINDOW_NOTE
        ));
    }
    out
}

/// The unavailable figures as indented lines below a table.
pub fn unavailable_lines(c: &Comparison) -> String {
    if c.unavailable.is_empty() {
        return String::new();
    }
    let mut s = String::from("not measured on either side, and why:\n");
    for u in &c.unavailable {
        s.push_str(&crate::render::fmt::wrap(u, 98, "  - ", "    "));
    }
    s
}

fn ids(v: &[i64]) -> String {
    v.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("+")
}

/// Renders a comparison as a table (≤ 100 columns).
pub fn render_table(c: &Comparison) -> String {
    let mut s = String::new();
    let f = fixed2;
    for (name, runs, windows, passes, restores) in [
        (
            "A",
            &c.a_runs,
            c.a_windows,
            c.a_passes_per_window,
            c.a_restores_per_window,
        ),
        (
            "B",
            &c.b_runs,
            c.b_windows,
            c.b_passes_per_window,
            c.b_restores_per_window,
        ),
    ] {
        let _ = writeln!(
            s,
            "{name} = {} run{} {} ({windows} windows, {} passes and {} restores per window)",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            ids(runs),
            f(passes),
            f(restores),
        );
    }
    let _ = writeln!(s, "{}", phase_table(&c.phases));
    s.push_str(&unavailable_lines(c));
    let _ = writeln!(s, "test: {}", c.test);
    s
}

/// A signed duration: `+1.2 ms`, `-300 µs`.
pub fn signed_duration(ns: f64) -> String {
    let sign = if ns < 0.0 { "-" } else { "+" };
    format!("{sign}{}", duration_short(ns.abs()))
}

/// n per side: `3/3 (600/600)`, runs then windows.
pub fn n_text(r: &PhaseDelta) -> String {
    format!(
        "{}/{} ({}/{})",
        r.a_runs, r.b_runs, r.a_samples, r.b_samples
    )
}

/// The change with its interval below it, and n per side below that.
fn change_cell(r: &PhaseDelta) -> String {
    format!(
        "{}\n{}\nn {}",
        r.delta_median_ns.map_or("-".into(), signed_duration),
        phase_interval_text(r),
        n_text(r)
    )
}

/// The 95 % interval of a phase's change, marked when it rests on the runs' insides only.
pub fn phase_interval_text(r: &PhaseDelta) -> String {
    r.delta_interval.map_or("-".into(), |i| {
        let w = if r.evidence == Evidence::WithinRun {
            " (within-run)"
        } else {
            ""
        };
        format!(
            "{} .. {}{w}",
            signed_duration(i.lo95),
            signed_duration(i.hi95)
        )
    })
}

/// The phase rows either side has, as a table (≤ 100 columns).
pub fn phase_table(phases: &[PhaseDelta]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(100)
        .set_header(vec![
            "phase",
            "A median",
            "B median",
            "Δ median, 95% interval,\nn A/B runs (windows)",
            "p",
            "MDE",
            "verdict",
            "Δ share",
        ]);
    let ns = |v: Option<f64>| v.map_or("-".into(), duration_short);
    for r in phases.iter().filter(|r| r.a_runs + r.b_runs > 0) {
        t.add_row(vec![
            r.phase.clone(),
            ns(r.a_median_ns),
            ns(r.b_median_ns),
            change_cell(r),
            r.p_value.map_or("-".into(), |v| format!("{v:.1e}")),
            ns(r.mde_ns),
            r.verdict.clone(),
            r.contribution
                .map_or("-".into(), |v| format!("{:.0}%", v * 100.0)),
        ]);
    }
    crate::render::term_table::fit(&mut t);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::bootstrap::difference_of_medians;
    use crate::stats::mann_whitney::mann_whitney_p;
    use rusqlite::params;

    const WINDOWS: i64 = 200;

    /// Run `id`: `WINDOWS` replayed windows whose pre-pass is 100 µs × `drift` and whose pass
    /// execution is 50 µs × `drift` × `pass`, each with a deterministic ±2 % jitter inside the run.
    fn run(c: &Connection, id: i64, label: &str, drift: f64, pass: f64) {
        c.execute(
            "INSERT INTO krphase_run (id, path, file_hash, label, pid, \"start\", \"end\",
               truncated, imported_at) VALUES (?1, 'f', ?1, ?2, 1, 0, 1, 0, 'now')",
            params![id, label],
        )
        .unwrap();
        let mut t = 0i64;
        for w in 0..WINDOWS {
            let jitter = 1.0 + 0.02 * (((w * 7919 + id * 104_729) % 201) as f64 / 100.0 - 1.0);
            let pre = (100_000.0 * drift * jitter) as i64;
            let exec = (50_000.0 * drift * pass * jitter) as i64;
            let (pcr, enter) = (t + 1_000, t + 1_000 + pre);
            let exit = enter + exec;
            c.execute(
                "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason,
                   executed_passes, \"start\", pass_count_return, first_pass_enter,
                   last_pass_exit, \"end\", pass_ns, restore_ns, restores)
                 VALUES (?1, ?2, 'k', 'replayed', 'none', 1, ?3, ?4, ?5, ?6, ?7, ?8, 0, 0)",
                params![id, w, t, pcr, enter, exit, exit + 1_000, exec],
            )
            .unwrap();
            t = exit + 10_000;
        }
    }

    /// Side A's runs drift between 0.7x and 1.5x, side B's likewise: no build effect, but B's
    /// middle run sits 30 % above A's. `pass` scales B's pass execution (a real effect).
    fn drifting(pass: f64, b_runs: usize) -> (Connection, Vec<i64>, Vec<i64>) {
        let c = crate::db::open_in_memory().unwrap();
        let a_drift = [0.7, 0.9, 1.0, 1.2, 1.5];
        let b_drift = [0.75, 1.1, 1.3, 1.35, 1.45];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        // Interleaved, as a careful bench would run them.
        for (i, (da, db)) in a_drift.iter().zip(&b_drift).enumerate() {
            let i = i as i64;
            run(&c, 2 * i + 1, "a", *da, 1.0);
            a.push(2 * i + 1);
            if (i as usize) < b_runs {
                run(&c, 2 * i + 2, "b", *db, pass);
                b.push(2 * i + 2);
            }
        }
        (c, a, b)
    }

    /// The verdict the method before runs became the unit gave: the bootstrap and the rank test
    /// on every window of every run, pooled.
    fn pooled_verdict(c: &Connection, a: &[i64], b: &[i64], phase: &str) -> Verdict {
        let k = phases::index(phase).unwrap();
        let pool = |runs: &[i64]| {
            let mut v = Vec::new();
            for &r in runs {
                phases::for_each_window(c, r, |w| {
                    v.extend(w.phase_ns[k]);
                    Ok(())
                })
                .unwrap();
            }
            v.sort_unstable();
            v
        };
        let (va, vb) = (pool(a), pool(b));
        let ci = difference_of_medians(&va, &vb).unwrap();
        let p = mann_whitney_p(&va, &vb).unwrap();
        let band = median_ns(&va).unwrap() as f64 * DEFAULT_MARGIN_PCT / 100.0;
        assert!(p < ALPHA && ci.excludes(0.0), "pooled: p {p}, {ci:?}");
        if ci.within90(-band, band) {
            Verdict::MovedWithin
        } else {
            Verdict::Moved
        }
    }

    fn row<'a>(c: &'a Comparison, phase: &str) -> &'a PhaseDelta {
        c.phases.iter().find(|p| p.phase == phase).unwrap()
    }

    #[test]
    fn run_to_run_drift_is_no_change_but_a_real_effect_still_moves() {
        let (c, a, b) = drifting(1.0, 5);
        // Pooled windows: the drift reads as a 30 % change of both phases.
        assert_eq!(pooled_verdict(&c, &a, &b, "pre-pass"), Verdict::Moved);
        assert_eq!(pooled_verdict(&c, &a, &b, "pass exec"), Verdict::Moved);
        let cmp = compare(&c, &a, &b).unwrap();
        for name in ["pre-pass", "pass exec", "window"] {
            let r = row(&cmp, name);
            assert_eq!(r.verdict_code, Verdict::NotSignificant, "{r:#?}");
            assert_eq!((r.a_runs, r.b_runs), (5, 5));
            assert_eq!((r.a_samples, r.b_samples), (1000, 1000));
            assert_eq!(r.evidence, Evidence::Runs);
            // The detectable effect is of the order of the drift, not of the jitter.
            let mde = r.mde_ns.unwrap() / r.a_median_ns.unwrap();
            assert!(mde > 0.3, "{name}: MDE {mde}");
        }
        // A real effect on the same drift: the pass execution 2.5x longer on B.
        let (c, a, b) = drifting(2.5, 5);
        let cmp = compare(&c, &a, &b).unwrap();
        let pass = row(&cmp, "pass exec");
        assert_eq!(pass.verdict_code, Verdict::Moved, "{pass:#?}");
        assert!(pass.p_value.unwrap() < ALPHA);
        assert_eq!(row(&cmp, "pre-pass").verdict_code, Verdict::NotSignificant);
        let text = render_table(&cmp);
        assert!(
            text.contains("n 5/5") && text.contains("(1000/1000)"),
            "{text}"
        );
        // A phase neither side has gets no row; it is listed below the table with its reason.
        assert!(
            !text.lines().any(|l| l.starts_with("│ drain")),
            "a phase neither side has is left out: {text}"
        );
        assert!(
            cmp.unavailable.iter().any(|u| u.starts_with("drain: ")),
            "{:?}",
            cmp.unavailable
        );
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    }

    #[test]
    fn fewer_than_three_runs_a_side_is_within_run_evidence_only() {
        let (c, a, b) = drifting(2.5, 2);
        let cmp = compare(&c, &a, &b).unwrap();
        for r in &cmp.phases {
            assert!(
                matches!(
                    r.verdict_code,
                    Verdict::WithinRunOnly | Verdict::NotAvailable
                ),
                "{r:#?}"
            );
            assert_eq!(r.mde_ns, None);
        }
        let pass = row(&cmp, "pass exec");
        assert_eq!(
            (pass.a_runs, pass.b_runs, pass.evidence),
            (5, 2, Evidence::WithinRun)
        );
        // The within-run interval exists (and is narrow), but says nothing about the builds.
        assert!(pass.delta_interval.unwrap().excludes(0.0));
        let text = render_table(&cmp);
        assert!(text.contains("within-run only"), "{text}");
    }

    #[test]
    fn the_median_standard_error_follows_the_order_statistics() {
        let v: Vec<i64> = (0..101).collect();
        // n = 101: ranks 50 ± 9.85 → 40 and 60, 20 apart, over 2 × 1.96.
        assert!((median_se(v.len(), |i| v[i]) - 20.0 / 3.92).abs() < 1e-9);
        assert_eq!(median_se(1, |_| 5), 0.0);
    }
}
