//! `krphase compare A B` of two measurement sets (labels of bench runs or imports, or run ids):
//! per experiment row (experiment, variant, metric: P1 mode, P2 pass count, P3 footprint, P6
//! variant, a benchmark database's config), the median of each side, their ratio, a 95 %
//! interval of the ratio from Welch's t on the logarithms of the rows' stored per-run values
//! (`stats/run_test.rs`), n per side, the minimum detectable effect, and a verdict
//! (`stats/verdict.rs`). A CSV row keeps no per-run values, so it has a ratio and no interval.
//! A ratio built on a row whose kernel-replay claim failed is marked invalid.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::Connection;
use serde::Serialize;

use crate::db::basis::Basis;
use crate::db::launch_times::launch_times;
use crate::db::measurements::{MeasurementFilter, StoredMeasurement, read_measurements};
use crate::db::quantiles::median;
use crate::db::samples::samples_of;
use crate::render::fmt::{factor, factor_digits, factor_pair, seconds, wrap};
use crate::stats::interval::Interval;
use crate::stats::ratio;
use crate::stats::run_test::{MIN_RUNS, welch_ratio};
use crate::stats::verdict::{ALPHA, DEFAULT_MARGIN_PCT, Verdict, on_ratio};

/// One experiment row on both sides.
#[derive(Debug, Clone, Serialize)]
pub struct MeasurementDelta {
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub metric: Option<String>,
    pub mode: Option<String>,
    pub a_measurement_id: Option<i64>,
    pub b_measurement_id: Option<i64>,
    pub a_median_s: Option<f64>,
    pub b_median_s: Option<f64>,
    /// b median / a median.
    pub ratio: Option<f64>,
    /// Stored per-run values behind each median.
    pub a_runs: usize,
    pub b_runs: usize,
    /// The 95 % (and 90 %) interval of the ratio of geometric means over those runs.
    pub interval: Option<Interval>,
    /// What the per-run values are: the harness's (H), or for a CSV row, which keeps none, its
    /// phase files' own run time per timed launch (M).
    pub values_basis: Option<Basis>,
    /// How the interval was found, or why there is none, when that is not the harness's
    /// stored runs (one line).
    pub interval_note: Option<String>,
    /// The test's two-sided p-value.
    pub p_value: Option<f64>,
    /// The smallest factor away from 1 the test finds 80 % of the time at its level, from the
    /// per-run spread (e.g. 1.05: a 5 % change).
    pub mde_factor: Option<f64>,
    /// `moved`, `moved, within ±M%`, `not significant`, `equivalent within ±M%` or `n/a`.
    pub verdict: String,
    pub verdict_code: Verdict,
    /// False when either side's row claims kernel replay and did not replay.
    pub valid: bool,
    pub invalid_reason: Option<String>,
    /// The rows themselves, for the attribution and the per-row phases.
    #[serde(skip)]
    pub a_row: Option<StoredMeasurement>,
    #[serde(skip)]
    pub b_row: Option<StoredMeasurement>,
}

/// Two measurement sets side by side.
#[derive(Debug, Clone, Serialize)]
pub struct MeasurementComparison {
    pub a_label: String,
    pub b_label: String,
    pub a_measurements: usize,
    pub b_measurements: usize,
    /// Whole-run medians measured by the harness.
    pub basis: Basis,
    pub margin_pct: f64,
    pub note: String,
    pub rows: Vec<MeasurementDelta>,
}

type Key = (Option<String>, Option<String>, Option<String>);

fn key(m: &StoredMeasurement) -> Key {
    (m.experiment.clone(), m.variant.clone(), m.metric.clone())
}

/// The rows a selector names: a label's rows, or the rows linked to a run id.
fn filter_of(sel: &str) -> MeasurementFilter {
    match sel.parse::<i64>() {
        Ok(id) => MeasurementFilter::LinkedTo(vec![id]),
        Err(_) => MeasurementFilter::Label(sel.to_string()),
    }
}

/// The latest row of each (experiment, variant, metric) that `sel` names (empty when none).
pub fn side_rows(conn: &Connection, sel: &str) -> Result<Vec<StoredMeasurement>> {
    let all = read_measurements(conn, &filter_of(sel))?;
    let mut out: Vec<StoredMeasurement> = Vec::new();
    for m in all {
        // Rows come in id order: a later row of the same experiment replaces an earlier one.
        match out.iter_mut().find(|o| key(o) == key(&m)) {
            Some(o) => *o = m,
            None => out.push(m),
        }
    }
    Ok(out)
}

fn side(conn: &Connection, sel: &str) -> Result<Vec<StoredMeasurement>> {
    let rows = side_rows(conn, sel)?;
    if rows.is_empty() {
        bail!("no measurements labelled {sel:?}");
    }
    Ok(rows)
}

/// One row of both sides (either may be missing).
fn delta(
    conn: &Connection,
    k: Key,
    ma: Option<&StoredMeasurement>,
    mb: Option<&StoredMeasurement>,
    margin_pct: f64,
) -> Result<MeasurementDelta> {
    let why: Vec<String> = [("A", ma), ("B", mb)]
        .into_iter()
        .filter_map(|(s, m)| {
            let m = m?;
            Some(format!(
                "{s} (measurement {}) {}",
                m.measurement_id,
                m.invalid_reason()?
            ))
        })
        .collect();
    let (am, bm) = (ma.and_then(|m| m.median_s), mb.and_then(|m| m.median_s));
    let (va, vb, values_basis, interval_note) = run_values(conn, ma, mb)?;
    let test = welch_ratio(&va, &vb, ALPHA);
    let v = on_ratio(test.as_ref(), (va.len(), vb.len()), margin_pct);
    Ok(MeasurementDelta {
        mode: ma.or(mb).and_then(|m| m.mode.clone()),
        experiment: k.0,
        variant: k.1,
        metric: k.2,
        a_measurement_id: ma.map(|m| m.measurement_id),
        b_measurement_id: mb.map(|m| m.measurement_id),
        a_median_s: am,
        b_median_s: bm,
        ratio: am.zip(bm).and_then(|(x, y)| ratio(y, x)),
        a_runs: va.len(),
        b_runs: vb.len(),
        interval: test.map(|t| t.interval),
        values_basis,
        interval_note,
        p_value: test.map(|t| t.p),
        mde_factor: test.map(|t| t.mde).filter(|m| m.is_finite()),
        verdict: v.words(margin_pct),
        verdict_code: v,
        valid: why.is_empty(),
        invalid_reason: (!why.is_empty()).then(|| why.join("; ")),
        a_row: ma.cloned(),
        b_row: mb.cloned(),
    })
}

type RunValues = (Vec<f64>, Vec<f64>, Option<Basis>, Option<String>);

/// The per-run values of both sides: the stored runs (harness) when both sides have them, else
/// the linked phase files' own run time per timed launch (in process), else none with the
/// reason.
fn run_values(
    conn: &Connection,
    ma: Option<&StoredMeasurement>,
    mb: Option<&StoredMeasurement>,
) -> Result<RunValues> {
    let (Some(a), Some(b)) = (ma, mb) else {
        return Ok((Vec::new(), Vec::new(), None, None));
    };
    let (sa, sb) = (
        samples_of(conn, a.measurement_id)?,
        samples_of(conn, b.measurement_id)?,
    );
    if !sa.is_empty() && !sb.is_empty() {
        return Ok((sa, sb, Some(Basis::Harness), None));
    }
    let (la, lb) = (launch_times(conn, a)?, launch_times(conn, b)?);
    if la.len() >= 2 && lb.len() >= 2 {
        let ratio = median(&lb)
            .zip(median(&la))
            .and_then(|(b, a)| ratio(b, a))
            .map_or("-".into(), |r| factor_digits(r, 4));
        let note = format!(
            "no per-run wall times in a CSV row: the interval is over the phase files' own run \
             time per timed launch (M: tool start to last event; launcher, process start and \
             exit left out), whose ratio of medians is {ratio}; warm-ups excluded"
        );
        return Ok((la, lb, Some(Basis::InProcess), Some(note)));
    }
    let why = format!(
        "no interval: no per-run values (the CSV keeps median, min and max only) and {} timed \
         launch(es) with phase files on A, {} on B (2 a side needed)",
        la.len(),
        lb.len()
    );
    Ok((la, lb, None, Some(why)))
}

/// Compares the measurements labelled `a` with those labelled `b`, row by row (default margin).
pub fn compare_measurements(conn: &Connection, a: &str, b: &str) -> Result<MeasurementComparison> {
    compare_measurements_with(conn, a, b, DEFAULT_MARGIN_PCT)
}

/// Compares the measurements `a` names with those `b` names, row by row; `margin_pct` is the
/// equivalence margin of the verdicts.
pub fn compare_measurements_with(
    conn: &Connection,
    a: &str,
    b: &str,
    margin_pct: f64,
) -> Result<MeasurementComparison> {
    let (sa, sb) = (side(conn, a)?, side(conn, b)?);
    let mut keys: Vec<Key> = sa.iter().map(key).collect();
    for m in &sb {
        if !keys.contains(&key(m)) {
            keys.push(key(m));
        }
    }
    let rows = keys
        .into_iter()
        .map(|k| {
            let ma = sa.iter().find(|m| key(m) == k);
            let mb = sb.iter().find(|m| key(m) == k);
            delta(conn, k, ma, mb, margin_pct)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(MeasurementComparison {
        a_label: a.to_string(),
        b_label: b.to_string(),
        a_measurements: sa.len(),
        b_measurements: sb.len(),
        basis: Basis::Harness,
        margin_pct,
        note: format!(
            "medians of whole runs as the harness measured them; runs are the unit: 95% \
             interval of B/A (ratio of geometric means) from Welch's t on the logarithms of \
             each row's stored runs (a CSV row keeps none and uses its phase files' run time \
             per timed launch, marked [M]); moved: p < {ALPHA}; equivalent: 90% interval inside \
             ±{margin_pct:.0}% and not moved; moved, within: both; MDE: the change found 80% of \
             the time; fewer than {MIN_RUNS} runs a side: no verdict"
        ),
        rows,
    })
}

/// `experiment/variant (metric)`, the metric only when not wall time.
pub fn row_name(r: &MeasurementDelta) -> String {
    format!(
        "{}/{}{}",
        r.experiment.as_deref().unwrap_or("?"),
        r.variant.as_deref().unwrap_or("?"),
        match r.metric.as_deref() {
            Some("wall_time") | None => String::new(),
            Some(m) => format!(" ({m})"),
        }
    )
}

/// The ratio with `INVALID` when it rests on an invalid row.
pub fn ratio_text(r: &MeasurementDelta) -> String {
    let ratio = factor(r.ratio);
    if r.valid || ratio == "-" {
        ratio
    } else {
        format!("{ratio} INVALID")
    }
}

/// The 95 % interval as `1.02x .. 1.10x`, with enough digits that its ends differ, and
/// `[M]` when it rests on the phase files' run times rather than the harness's.
pub fn interval_text(r: &MeasurementDelta) -> String {
    r.interval.map_or("-".into(), |i| {
        let (lo, hi) = factor_pair(i.lo95, i.hi95);
        match r.values_basis {
            Some(Basis::Harness) | None => format!("{lo} .. {hi}"),
            Some(b) => format!("{lo} .. {hi} [{}]", b.marker()),
        }
    })
}

/// The minimum detectable effect as a percentage: `±4.2%`.
pub fn mde_text(r: &MeasurementDelta) -> String {
    r.mde_factor
        .map_or("-".into(), |f| format!("±{:.1}%", (f - 1.0) * 100.0))
}

/// The comparison as a table (≤ 100 columns).
pub fn render_table(c: &MeasurementComparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "A = measurements labelled {:?} ({} rows)\nB = measurements labelled {:?} ({} rows)",
        c.a_label, c.a_measurements, c.b_label, c.b_measurements
    );
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(100)
        .set_header(vec![
            "experiment",
            "mode",
            "A median H",
            "B median H",
            "B/A",
            "95% interval",
            "n runs A/B",
            "MDE",
            "verdict",
        ]);
    for r in &c.rows {
        t.add_row(vec![
            row_name(r),
            r.mode.clone().unwrap_or_else(|| "-".into()),
            seconds(r.a_median_s),
            seconds(r.b_median_s),
            ratio_text(r),
            interval_text(r),
            format!("{}/{}", r.a_runs, r.b_runs),
            mde_text(r),
            r.verdict.clone(),
        ]);
    }
    crate::render::term_table::fit(&mut t);
    let _ = writeln!(s, "{t}");
    let _ = writeln!(s, "note: {}", c.note);
    for r in &c.rows {
        if let Some(n) = &r.interval_note {
            s.push_str(&wrap(&format!("{}: {n}", row_name(r)), 98, "  * ", "    "));
        }
    }
    for r in c.rows.iter().filter_map(|r| r.invalid_reason.as_ref()) {
        s.push_str(&wrap(r, 98, "  ! ", "    "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pair_by_experiment_and_an_invalid_side_marks_the_ratio() {
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch(
            "INSERT INTO krphase_measurement (source, experiment, variant, mode, median_s, label,
               command, metric) VALUES
               ('replay_perf', 'P2', 'passes-1', 'single-pass', 1.0, 'old', 'r --pmc A -- a', 'wall_time'),
               ('replay_perf', 'P2', 'passes-1', 'single-pass', 2.0, 'old', 'r --pmc A -- a', 'wall_time'),
               ('replay_perf', 'P2', 'passes-2', 'kernel-replay', 4.0, 'old',
                'r --pmc A --pmc B --kernel-replay-beta-enabled -- a', 'wall_time'),
               ('replay_perf', 'P2', 'passes-1', 'single-pass', 3.0, 'new', 'r --pmc A -- a', 'wall_time'),
               ('replay_perf', 'P2', 'passes-2', 'kernel-replay', 5.0, 'new',
                'r --pmc A --pmc B --replay-mode kernel --kernel-replay-beta-enabled -- a',
                'wall_time');",
        )
        .unwrap();
        let cmp = compare_measurements(&c, "old", "new").unwrap();
        assert_eq!(cmp.rows.len(), 2);
        let p1 = &cmp.rows[0];
        assert_eq!(
            (p1.a_median_s, p1.b_median_s),
            (Some(2.0), Some(3.0)),
            "latest row"
        );
        assert_eq!(p1.ratio, Some(1.5));
        assert!(p1.valid);
        let p2 = &cmp.rows[1];
        assert!(!p2.valid);
        assert!(
            p2.invalid_reason
                .as_deref()
                .unwrap()
                .starts_with("A (measurement 3)")
        );
        let t = render_table(&cmp);
        assert!(t.contains("1.25x") && t.contains("INVALID"), "{t}");
        assert_eq!(ratio_text(p2), "1.25x INVALID");
        assert_eq!(
            (p2.verdict_code, p2.interval),
            (Verdict::NotAvailable, None),
            "no runs"
        );
        assert!(compare_measurements(&c, "old", "nope").is_err());
    }
}
