//! `krphase compare A B`: per phase, the totals and per-window medians of two runs, the delta and
//! ratio, and whether the change is beyond noise, sorted by contribution to the end-to-end change.
//!
//! Noise test: two-sided Mann–Whitney U on the per-window samples (normal approximation with tie
//! correction). A phase has "changed" when p < [`ALPHA`] **and** its median moved by more than
//! [`MIN_EFFECT`] of run A's median: with thousands of windows the U test alone flags shifts too
//! small to matter.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::Connection;
use serde::Serialize;

use super::fmt::{duration_short, factor, fixed2};
use super::stats::{mann_whitney_p, median_ns};
use crate::db::phases::{self, PHASES, WINDOW};

/// Significance level of the U test.
pub const ALPHA: f64 = 0.01;
/// Smallest relative median change called a change.
pub const MIN_EFFECT: f64 = 0.25;

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
    /// `grown`, `shrunk`, `unchanged` (within noise) or `n/a`.
    pub verdict: String,
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
    /// End-to-end first, then the phases by |contribution|.
    pub phases: Vec<PhaseDelta>,
}

struct Samples {
    per_phase: Vec<Vec<i64>>,
    windows: usize,
    restores: i64,
    passes: i64,
}

fn load(conn: &Connection, runs: &[i64]) -> Result<Samples> {
    let mut s = Samples {
        per_phase: vec![Vec::new(); PHASES.len()],
        windows: 0,
        restores: 0,
        passes: 0,
    };
    for &run in runs {
        phases::for_each_window(conn, run, |w| {
            if !w.replayed() {
                return Ok(());
            }
            s.windows += 1;
            s.restores += w.restores.unwrap_or(0);
            s.passes += w.executed_passes.unwrap_or(0);
            for (v, x) in s.per_phase.iter_mut().zip(w.phase_ns) {
                if let Some(x) = x {
                    v.push(x);
                }
            }
            Ok(())
        })?;
    }
    Ok(s)
}

/// Compares the windows of runs `a` with those of runs `b`.
pub fn compare(conn: &Connection, a: &[i64], b: &[i64]) -> Result<Comparison> {
    let mut sa = load(conn, a)?;
    let mut sb = load(conn, b)?;
    for v in sa.per_phase.iter_mut().chain(sb.per_phase.iter_mut()) {
        v.sort_unstable();
    }
    let mut rows: Vec<PhaseDelta> = Vec::new();
    for (k, p) in PHASES.iter().enumerate() {
        let (va, vb) = (&sa.per_phase[k], &sb.per_phase[k]);
        let (ta, tb) = (va.iter().sum::<i64>(), vb.iter().sum::<i64>());
        let median = |v: &[i64]| median_ns(v).map(|m| m as f64);
        let (ma, mb) = (median(va), median(vb));
        let pv = mann_whitney_p(va, vb);
        let dm = ma.zip(mb).map(|(x, y)| y - x);
        let ratio = ma.zip(mb).and_then(|(x, y)| (x > 0.0).then(|| y / x));
        let verdict = match (pv, dm, ma) {
            (Some(p), Some(d), Some(m)) => {
                let effect = if m.abs() > 0.0 {
                    d.abs() / m.abs()
                } else {
                    f64::INFINITY
                };
                if p < ALPHA && effect > MIN_EFFECT {
                    if d > 0.0 { "grown" } else { "shrunk" }
                } else {
                    "unchanged"
                }
            }
            _ => "n/a",
        };
        rows.push(PhaseDelta {
            phase: p.name.to_string(),
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
            verdict: verdict.to_string(),
            contribution: None,
        });
    }
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
            "two-sided Mann-Whitney U on per-window samples (normal approx., tie-corrected);\n  \
             changed when p < {ALPHA} and the median moved by more than {:.0}%",
            MIN_EFFECT * 100.0
        ),
        phases: rows,
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
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(100)
        .set_header(vec![
            "phase", "A total", "B total", "A median", "B median", "ratio", "p", "verdict",
            "Δ share",
        ]);
    let ns = |v: Option<f64>| v.map_or("-".into(), duration_short);
    for r in &c.phases {
        t.add_row(vec![
            r.phase.clone(),
            duration_short(r.a_total_ns as f64),
            duration_short(r.b_total_ns as f64),
            ns(r.a_median_ns),
            ns(r.b_median_ns),
            factor(r.ratio),
            r.p_value.map_or("-".into(), |v| format!("{v:.1e}")),
            r.verdict.clone(),
            r.contribution
                .map_or("-".into(), |v| format!("{:.0}%", v * 100.0)),
        ]);
    }
    let _ = writeln!(s, "{t}");
    let _ = writeln!(s, "test: {}", c.test);
    s
}

/// `krphase compare --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    Table,
    Json,
}

/// What `krphase compare` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareWhat {
    /// Runs when both sides select runs, else measurement sets when both sides are
    /// measurement labels.
    Auto,
    Runs,
    Measurements,
}

/// `krphase compare A B`: each side a run id or a label (pooling all its runs, the selection
/// rule of `db/runs.rs`), or two measurement labels (whole-run medians row by row), printed in
/// `format`.
pub fn compare_command(
    db: &Path,
    a: &str,
    b: &str,
    what: CompareWhat,
    format: CompareFormat,
) -> Result<()> {
    let conn = crate::db::open_existing(db)?;
    let runs = || -> Result<(Vec<i64>, Vec<i64>)> {
        Ok((
            crate::db::runs::select(&conn, a)?,
            crate::db::runs::select(&conn, b)?,
        ))
    };
    let measurement_sets = || -> Result<bool> {
        let labels = crate::db::measurements::measurement_labels(&conn)?;
        Ok([a, b].iter().all(|s| labels.iter().any(|l| l == s)))
    };
    let pair = match what {
        CompareWhat::Runs => Some(runs()?),
        CompareWhat::Measurements => None,
        CompareWhat::Auto => match runs() {
            Ok(p) => Some(p),
            Err(_) if measurement_sets()? => None,
            Err(e) => return Err(e),
        },
    };
    let Some((a_ids, b_ids)) = pair else {
        let c = super::compare_measurements::compare_measurements(&conn, a, b)?;
        match format {
            CompareFormat::Table => print!("{}", super::compare_measurements::render_table(&c)),
            CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&c)?),
        }
        return Ok(());
    };
    let c = compare(&conn, &a_ids, &b_ids)?;
    match format {
        CompareFormat::Table => print!("{}", render_table(&c)),
        CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&c)?),
    }
    Ok(())
}
