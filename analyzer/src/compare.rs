//! `krphase compare A B`: per phase, the totals and per-window medians of two runs, the delta and
//! ratio, and whether the change is beyond noise, sorted by contribution to the end-to-end change.
//!
//! Noise test: two-sided Mann–Whitney U on the per-window samples (normal approximation with tie
//! correction). A phase has "changed" when p < [`ALPHA`] **and** its median moved by more than
//! [`MIN_EFFECT`] of run A's median: with thousands of windows the U test alone flags shifts too
//! small to matter.

use std::fmt::Write as _;

use anyhow::Result;
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::Connection;
use serde::Serialize;

use crate::phases::{self, PHASES, WINDOW};

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

fn median(sorted: &[i64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2] as f64),
        _ => Some((sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0),
    }
}

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

/// Run ids for a selector: a numeric id, or every run with that label.
pub fn select(conn: &Connection, sel: &str) -> Result<Vec<i64>> {
    if sel.parse::<i64>().is_ok() {
        return Ok(vec![crate::db::resolve_run(conn, sel)?]);
    }
    crate::report::select_runs(conn, None, Some(sel))
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

/// A duration in 3–4 significant digits, short enough for a 9-column table.
fn short(ns: f64) -> String {
    let (v, unit) = match ns.abs() {
        a if a >= 1e9 => (ns / 1e9, "s"),
        a if a >= 1e6 => (ns / 1e6, "ms"),
        a if a >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0} {unit}"),
        a if a >= 10.0 => format!("{v:.1} {unit}"),
        _ => format!("{v:.2} {unit}"),
    }
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
    let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
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
    let ns = |v: Option<f64>| v.map_or("-".into(), short);
    for r in &c.phases {
        t.add_row(vec![
            r.phase.clone(),
            short(r.a_total_ns as f64),
            short(r.b_total_ns as f64),
            ns(r.a_median_ns),
            ns(r.b_median_ns),
            r.ratio.map_or("-".into(), |v| format!("{v:.2}x")),
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

    #[test]
    fn compare_synthetic_two_vs_four_passes() {
        use crate::synth::{SynthSpec, write_synthetic_file};
        let dir = tempfile::tempdir().unwrap();
        let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
        let mut ids = Vec::new();
        for (passes, seed) in [(2, 1), (4, 2)] {
            let f = dir.path().join(format!("{passes}.krp"));
            let spec = SynthSpec {
                windows: 300,
                passes,
                seed,
                ..SynthSpec::default()
            };
            write_synthetic_file(&f, &spec).unwrap();
            ids.push(crate::import::import_phase_file(&mut c, &f, None).unwrap());
        }
        let cmp = compare(&c, &ids[..1], &ids[1..]).unwrap();
        let v = |n: &str| {
            cmp.phases
                .iter()
                .find(|p| p.phase == n)
                .unwrap()
                .verdict
                .clone()
        };
        assert_eq!(v("restore"), "grown");
        assert_eq!(v("pass exec"), "grown");
        assert_eq!(v("pre-pass"), "unchanged");
        assert_eq!(cmp.phases[0].phase, "window");
        assert_eq!(
            (cmp.a_restores_per_window, cmp.b_restores_per_window),
            (Some(1.0), Some(3.0))
        );
        let table = render_table(&cmp);
        assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    }
}
