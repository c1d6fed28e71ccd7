//! Pass fidelity between builds: per kernel both sides ran, each run's stitching bound (the
//! largest relative pass-to-pass difference of what should be identical, `answers/fidelity`)
//! as one value per run, and Welch's test on those values (`stats/run_test.rs`: runs are the
//! unit). A build whose passes differ more than the baseline's gets a verdict of its own, even
//! when it is faster: an optimization that stops restoring a region, or changes the state
//! between passes, shows here. The verdict needs the change to be significant and the worse
//! side's median bound past the threshold, so two builds alike (A/A) stay quiet.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::answers::fidelity::{self, detect::THRESHOLD};
use crate::db::basis::Basis;
use crate::db::quantiles::median;
use crate::render::fmt::percent;
use crate::render::table::{push_table, table};
use crate::stats::interval::Interval;
use crate::stats::run_test::{MIN_RUNS, welch};
use crate::stats::verdict::ALPHA;

/// What the comparison of one kernel's pass fidelity concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FidelityVerdict {
    /// B's passes differ more than A's, and past the threshold.
    DifferMore,
    DifferLess,
    /// The 90 % interval of the change lies within ±threshold.
    Alike,
    NotSignificant,
    TooFewRuns,
    NotAvailable,
}

impl FidelityVerdict {
    pub fn words(self) -> String {
        match self {
            FidelityVerdict::DifferMore => "fidelity: B's passes differ more".into(),
            FidelityVerdict::DifferLess => "fidelity: B's passes differ less".into(),
            FidelityVerdict::Alike => format!(
                "fidelity alike within ±{} points",
                (THRESHOLD * 100.0).round()
            ),
            FidelityVerdict::NotSignificant => "not significant".into(),
            FidelityVerdict::TooFewRuns => format!("too few runs (<{MIN_RUNS} a side)"),
            FidelityVerdict::NotAvailable => "n/a".into(),
        }
    }
}

/// One kernel's stitching bound on each side.
#[derive(Debug, Clone, Serialize)]
pub struct FidelityDelta {
    pub kernel: String,
    /// Each run's bound (relative), by side.
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub a_median: Option<f64>,
    pub b_median: Option<f64>,
    /// median(B) − median(A)'s test: mean(B) − mean(A) with its intervals.
    pub change: Option<Interval>,
    pub p: Option<f64>,
    pub verdict: FidelityVerdict,
    /// The measures the bounds came from, with their bases.
    pub basis: Vec<(String, Basis)>,
}

type Side = BTreeMap<String, (Vec<f64>, Vec<(String, Basis)>)>;

fn side(conn: &Connection, runs: &[i64]) -> Result<Side> {
    let mut out: Side = BTreeMap::new();
    for &r in runs {
        for k in fidelity::of_run(conn, r)?.kernels {
            if let Some(b) = k.bound {
                let e = out.entry(k.kernel).or_default();
                e.0.push(b.value);
                if !e.1.contains(&(b.measure.clone(), b.basis)) {
                    e.1.push((b.measure, b.basis));
                }
            }
        }
    }
    Ok(out)
}

fn verdict(a: &[f64], b: &[f64]) -> (FidelityVerdict, Option<Interval>, Option<f64>) {
    let t = welch(a, b, ALPHA);
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return (
            FidelityVerdict::TooFewRuns,
            t.map(|t| t.interval),
            t.map(|t| t.p),
        );
    }
    let Some(t) = t else {
        return (FidelityVerdict::NotAvailable, None, None);
    };
    let ci = t.interval;
    let significant = ci.excludes(0.0) && t.p < ALPHA;
    let (ma, mb) = (median(a).unwrap_or(0.0), median(b).unwrap_or(0.0));
    let v = if significant && ci.estimate > 0.0 && mb > THRESHOLD {
        FidelityVerdict::DifferMore
    } else if significant && ci.estimate < 0.0 && ma > THRESHOLD {
        FidelityVerdict::DifferLess
    } else if ci.within90(-THRESHOLD, THRESHOLD) {
        FidelityVerdict::Alike
    } else {
        FidelityVerdict::NotSignificant
    };
    (v, Some(ci), Some(t.p))
}

/// The kernels both sides ran, compared.
pub fn sides(conn: &Connection, ra: &[i64], rb: &[i64]) -> Result<Vec<FidelityDelta>> {
    let (sa, mut sb) = (side(conn, ra)?, side(conn, rb)?);
    let mut out = Vec::new();
    for (kernel, (a, mut basis)) in sa {
        let Some((b, bb)) = sb.remove(&kernel) else {
            continue;
        };
        for x in bb {
            if !basis.contains(&x) {
                basis.push(x);
            }
        }
        let (v, change, p) = verdict(&a, &b);
        out.push(FidelityDelta {
            a_median: median(&a),
            b_median: median(&b),
            kernel,
            a,
            b,
            change,
            p,
            verdict: v,
            basis,
        });
    }
    Ok(out)
}

/// The comparison as a table (text or Markdown).
pub fn render(deltas: &[FidelityDelta], markdown: bool, out: &mut String) {
    if deltas.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\npass fidelity: each run's stitching bound (largest relative pass-to-pass difference),\n\
         runs as the unit, Welch's t; threshold ±{}:",
        percent(Some(THRESHOLD))
    );
    if markdown {
        out.push('\n');
    }
    let mut t = table(
        markdown,
        &[
            "kernel",
            "A median (runs)",
            "B median (runs)",
            "B − A [95%]",
            "verdict",
            "basis",
        ],
    );
    for d in deltas {
        let change = d.change.map_or("-".into(), |c| {
            format!(
                "{} [{}, {}]",
                percent(Some(c.estimate)),
                percent(Some(c.lo95)),
                percent(Some(c.hi95))
            )
        });
        let basis: Vec<String> = d
            .basis
            .iter()
            .map(|(m, b)| format!("{m} [{}]", b.marker()))
            .collect();
        t.add_row(vec![
            d.kernel.clone(),
            format!("{} ({})", percent(d.a_median), d.a.len()),
            format!("{} ({})", percent(d.b_median), d.b.len()),
            change,
            d.verdict.words(),
            basis.join(", "),
        ]);
    }
    push_table(out, &t, markdown);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_difference_is_a_verdict_and_a_a_stays_quiet() {
        let a = [0.010, 0.012, 0.009, 0.011];
        let aa = [0.011, 0.010, 0.012, 0.009];
        assert_ne!(verdict(&a, &aa).0, FidelityVerdict::DifferMore);
        assert_ne!(verdict(&a, &aa).0, FidelityVerdict::DifferLess);
        let worse = [0.49, 0.51, 0.50, 0.52];
        assert_eq!(verdict(&a, &worse).0, FidelityVerdict::DifferMore);
        assert_eq!(verdict(&worse, &a).0, FidelityVerdict::DifferLess);
        // Significant but both sides under the threshold: not a fidelity verdict.
        let slightly = [0.030, 0.031, 0.029, 0.030];
        assert!(!matches!(
            verdict(&a, &slightly).0,
            FidelityVerdict::DifferMore | FidelityVerdict::DifferLess
        ));
        assert_eq!(verdict(&a[..2], &worse).0, FidelityVerdict::TooFewRuns);
    }
}
