//! `krphase compare A B` over phase-file runs: per phase, the totals and per-window medians of the
//! two sides, the difference of medians with its bootstrap interval, the rank test, and a verdict
//! in the words of `verdict.rs`, sorted by contribution to the change in total window time.
//!
//! Noise test: two-sided Mann–Whitney U on the per-window samples (normal approximation with tie
//! correction), kept beside the interval: a phase has "moved" when p < [`ALPHA`] **and** the 95 %
//! interval of the median difference excludes zero; when the 90 % interval also lies inside the
//! equivalence margin it has "moved, within ±M %" (with thousands of windows the U test alone
//! flags shifts too small to matter, and the words say so without hiding them), and inside the
//! margin without a significant change it is "equivalent within ±M %".
//!
//! The whole answer of `krphase compare` (whole-run rows, attribution, markdown) is in
//! `compare_builds.rs`; this file is the per-window part.

use std::fmt::Write as _;

use anyhow::Result;
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::Connection;
use serde::Serialize;

use super::bootstrap::{Interval, difference_of_medians};
use super::fmt::{duration_short, factor, fixed2};
use super::stats::{mann_whitney_p, median_ns};
use super::verdict::{DEFAULT_MARGIN_PCT, Verdict, on_difference};
use crate::db::basis::Basis;
use crate::db::phases::{self, PHASES, WINDOW};

/// Significance level of the U test.
pub const ALPHA: f64 = 0.01;
/// The window time no measured top-level phase covers, when the tool saw the passes.
pub const WINDOW_REST: &str = "window rest";
/// The same when it did not (observe mode: no PASS callbacks), which is then mostly the passes.
pub const PASSES_AS_REST: &str = "pass exec (window rest)";

#[derive(Debug, Clone, Serialize)]
pub struct PhaseDelta {
    pub phase: String,
    pub a_samples: usize,
    pub b_samples: usize,
    pub a_total_ns: i64,
    pub b_total_ns: i64,
    pub a_median_ns: Option<f64>,
    pub b_median_ns: Option<f64>,
    pub delta_total_ns: i64,
    pub delta_median_ns: Option<f64>,
    /// b median / a median.
    pub ratio: Option<f64>,
    pub p_value: Option<f64>,
    /// median(B) − median(A) with its 95 % and 90 % bootstrap intervals (ns).
    pub delta_interval: Option<Interval>,
    /// `moved`, `moved, within ±M%`, `not significant`, `equivalent within ±M%` or `n/a`
    /// (`verdict.rs`).
    pub verdict: String,
    pub verdict_code: Verdict,
    /// Share of the end-to-end (window total) change.
    pub contribution: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The runs pooled on each side (a label selects every run carrying it).
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

struct Samples {
    per_phase: Vec<Vec<i64>>,
    /// Per window: window time minus the top-level phases it carries (the window rest).
    rest: Vec<i64>,
    windows: usize,
    restores: i64,
    passes: i64,
    /// Windows another tool replayed (observe mode: the window's basis is not in process).
    observed: usize,
    /// Windows whose window is only the passes' span.
    spans: usize,
}

fn load(conn: &Connection, runs: &[i64]) -> Result<Samples> {
    let mut s = Samples {
        per_phase: vec![Vec::new(); PHASES.len()],
        rest: Vec::new(),
        windows: 0,
        restores: 0,
        passes: 0,
        observed: 0,
        spans: 0,
    };
    for &run in runs {
        phases::for_each_window(conn, run, |w| {
            if !w.replayed() {
                return Ok(());
            }
            s.windows += 1;
            s.restores += w.restores.unwrap_or(0);
            s.passes += w.executed_passes.unwrap_or(0);
            let mut covered = 0;
            for (k, (v, x)) in s.per_phase.iter_mut().zip(w.phase_ns).enumerate() {
                if let Some(x) = x {
                    v.push(x);
                    let p = &PHASES[k];
                    if k != WINDOW && p.parent.is_none() && p.bound_of.is_none() {
                        covered += x.max(0);
                    }
                }
            }
            if let Some(win) = w.phase_ns[WINDOW] {
                s.rest.push(win.max(0) - covered);
            }
            let basis = w.phase_basis[WINDOW];
            s.observed += usize::from(basis.is_some_and(|b| b != Basis::InProcess));
            s.spans += usize::from(basis == Some(Basis::Dispatch));
            Ok(())
        })?;
    }
    Ok(s)
}

/// Compares the windows of runs `a` with those of runs `b` (default margin).
pub fn compare(conn: &Connection, a: &[i64], b: &[i64]) -> Result<Comparison> {
    compare_with(conn, a, b, DEFAULT_MARGIN_PCT)
}

/// One phase's row from the sorted samples of both sides.
fn phase_row(name: &str, va: &[i64], vb: &[i64], margin_pct: f64) -> PhaseDelta {
    let (ta, tb) = (va.iter().sum::<i64>(), vb.iter().sum::<i64>());
    let median = |v: &[i64]| median_ns(v).map(|m| m as f64);
    let (ma, mb) = (median(va), median(vb));
    let pv = mann_whitney_p(va, vb);
    let dm = ma.zip(mb).map(|(x, y)| y - x);
    let ratio = ma.zip(mb).and_then(|(x, y)| (x > 0.0).then(|| y / x));
    let ci = difference_of_medians(va, vb);
    let v = on_difference(ci.as_ref(), ma, pv, ALPHA, margin_pct);
    PhaseDelta {
        phase: name.to_string(),
        a_samples: va.len(),
        b_samples: vb.len(),
        a_total_ns: ta,
        b_total_ns: tb,
        a_median_ns: ma,
        b_median_ns: mb,
        delta_total_ns: tb - ta,
        delta_median_ns: dm,
        ratio,
        p_value: pv,
        delta_interval: ci,
        verdict: v.words(margin_pct),
        verdict_code: v,
        contribution: None,
    }
}

/// The figures neither side has (why, and how to get them), and the window's meaning when every
/// window is only the passes' span.
fn unavailable(rows: &[PhaseDelta], sa: &Samples, sb: &Samples) -> Vec<String> {
    let windows = sa.windows + sb.windows;
    let observe = windows > 0 && sa.observed + sb.observed == windows;
    let mut out: Vec<String> = PHASES
        .iter()
        .zip(rows)
        .filter(|(_, r)| r.a_samples + r.b_samples == 0)
        .map(|(p, _)| format!("{}: {}", p.name, phases::missing_reason(p, observe)))
        .collect();
    if windows > 0 && sa.spans + sb.spans == windows {
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
        s.push_str(&super::fmt::wrap(u, 98, "  - ", "    "));
    }
    s
}

/// Compares the windows of runs `a` with those of runs `b`; `margin_pct` is the equivalence
/// margin.
pub fn compare_with(
    conn: &Connection,
    a: &[i64],
    b: &[i64],
    margin_pct: f64,
) -> Result<Comparison> {
    let mut sa = load(conn, a)?;
    let mut sb = load(conn, b)?;
    for v in sa.per_phase.iter_mut().chain(sb.per_phase.iter_mut()) {
        v.sort_unstable();
    }
    let mut rows: Vec<PhaseDelta> = PHASES
        .iter()
        .enumerate()
        .map(|(k, p)| phase_row(p.name, &sa.per_phase[k], &sb.per_phase[k], margin_pct))
        .collect();
    sa.rest.sort_unstable();
    sb.rest.sort_unstable();
    let pass = phases::index("pass exec").expect("phase");
    let rest = if rows[pass].a_samples + rows[pass].b_samples == 0 {
        PASSES_AS_REST
    } else {
        WINDOW_REST
    };
    if sa.rest.iter().chain(&sb.rest).any(|v| *v != 0) {
        rows.push(phase_row(rest, &sa.rest, &sb.rest, margin_pct));
    }
    let unavailable = unavailable(&rows, &sa, &sb);
    let e2e = rows[WINDOW].delta_total_ns as f64;
    for r in &mut rows {
        r.contribution = (e2e != 0.0).then(|| r.delta_total_ns as f64 / e2e);
    }
    let window = rows.remove(WINDOW);
    rows.sort_by_key(|r| std::cmp::Reverse(r.delta_total_ns.unsigned_abs()));
    rows.insert(0, window);
    let per = |x: i64, n: usize| (n > 0).then(|| x as f64 / n as f64);
    Ok(Comparison {
        a_runs: a.to_vec(),
        b_runs: b.to_vec(),
        a_windows: sa.windows,
        b_windows: sb.windows,
        a_restores_per_window: per(sa.restores, sa.windows),
        b_restores_per_window: per(sb.restores, sb.windows),
        a_passes_per_window: per(sa.passes, sa.windows),
        b_passes_per_window: per(sb.passes, sb.windows),
        test: format!(
            "medians' difference with a 95% bootstrap interval ({} resamples, fixed seed) and a \
             two-sided\n  Mann-Whitney U on per-window samples; moved: interval excludes 0 and \
             p < {ALPHA};\n  equivalent: 90% interval inside ±{margin_pct:.0}% of A's median \
             (TOST) and not moved;\n  moved, within: both; else not significant",
            super::bootstrap::RESAMPLES
        ),
        margin_pct,
        phases: rows,
        unavailable,
    })
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
    let _ = writeln!(
        s,
        "A = run {} ({} windows, {} passes and {} restores per window)\n\
         B = run {} ({} windows, {} passes and {} restores per window)",
        ids(&c.a_runs),
        c.a_windows,
        f(c.a_passes_per_window),
        f(c.a_restores_per_window),
        ids(&c.b_runs),
        c.b_windows,
        f(c.b_passes_per_window),
        f(c.b_restores_per_window),
    );
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

/// The phase rows as a table (≤ 100 columns).
pub fn phase_table(phases: &[PhaseDelta]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(100)
        .set_header(vec![
            "phase",
            "A median",
            "B median",
            "Δ median",
            "95% interval",
            "B/A",
            "p",
            "verdict",
            "Δ share",
        ]);
    let ns = |v: Option<f64>| v.map_or("-".into(), duration_short);
    for r in phases {
        t.add_row(vec![
            r.phase.clone(),
            ns(r.a_median_ns),
            ns(r.b_median_ns),
            r.delta_median_ns.map_or("-".into(), signed_duration),
            r.delta_interval.map_or("-".into(), |i| {
                format!("{} .. {}", signed_duration(i.lo95), signed_duration(i.hi95))
            }),
            factor(r.ratio),
            r.p_value.map_or("-".into(), |v| format!("{v:.1e}")),
            r.verdict.clone(),
            r.contribution
                .map_or("-".into(), |v| format!("{:.0}%", v * 100.0)),
        ]);
    }
    t
}
