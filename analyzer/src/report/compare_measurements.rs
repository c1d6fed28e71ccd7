//! `krphase compare A B` of two measurement sets (two import labels): per experiment row
//! (experiment, variant, metric), the median of each side and their ratio. Whole-run medians of a
//! few timed runs each: there is no noise test here, and a ratio built on a row whose
//! kernel-replay claim failed is marked invalid. The rows come from
//! `db::measurements::read_measurements`, so a fuller comparison (intervals from the raw runs)
//! can pair the same rows.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use comfy_table::{ContentArrangement, Table, presets};
use rusqlite::Connection;
use serde::Serialize;

use super::fmt::{factor, seconds, wrap};
use super::stats::ratio;
use crate::db::basis::Basis;
use crate::db::measurements::{MeasurementFilter, StoredMeasurement, read_measurements};

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
    /// False when either side's row claims kernel replay and did not replay.
    pub valid: bool,
    pub invalid_reason: Option<String>,
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
    pub note: String,
    pub rows: Vec<MeasurementDelta>,
}

type Key = (Option<String>, Option<String>, Option<String>);

fn key(m: &StoredMeasurement) -> Key {
    (m.experiment.clone(), m.variant.clone(), m.metric.clone())
}

/// The latest row of each (experiment, variant, metric) carrying `label`.
fn side(conn: &Connection, label: &str) -> Result<Vec<StoredMeasurement>> {
    let all = read_measurements(conn, &MeasurementFilter::Label(label.to_string()))?;
    if all.is_empty() {
        bail!("no measurements labelled {label:?}");
    }
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

/// Compares the measurements labelled `a` with those labelled `b`, row by row.
pub fn compare_measurements(conn: &Connection, a: &str, b: &str) -> Result<MeasurementComparison> {
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
            MeasurementDelta {
                mode: ma.or(mb).and_then(|m| m.mode.clone()),
                experiment: k.0,
                variant: k.1,
                metric: k.2,
                a_measurement_id: ma.map(|m| m.measurement_id),
                b_measurement_id: mb.map(|m| m.measurement_id),
                a_median_s: am,
                b_median_s: bm,
                ratio: am.zip(bm).and_then(|(x, y)| ratio(y, x)),
                valid: why.is_empty(),
                invalid_reason: (!why.is_empty()).then(|| why.join("; ")),
            }
        })
        .collect();
    Ok(MeasurementComparison {
        a_label: a.to_string(),
        b_label: b.to_string(),
        a_measurements: sa.len(),
        b_measurements: sb.len(),
        basis: Basis::Harness,
        note: "medians of whole runs as the harness measured them; no noise test (a few timed \
               runs per row)"
            .into(),
        rows,
    })
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
        ]);
    for r in &c.rows {
        let name = format!(
            "{}/{}{}",
            r.experiment.as_deref().unwrap_or("?"),
            r.variant.as_deref().unwrap_or("?"),
            match r.metric.as_deref() {
                Some("wall_time") | None => String::new(),
                Some(m) => format!(" ({m})"),
            }
        );
        let ratio = factor(r.ratio);
        t.add_row(vec![
            name,
            r.mode.clone().unwrap_or_else(|| "-".into()),
            seconds(r.a_median_s),
            seconds(r.b_median_s),
            if r.valid || ratio == "-" {
                ratio
            } else {
                format!("{ratio} INVALID")
            },
        ]);
    }
    let _ = writeln!(s, "{t}");
    let _ = writeln!(s, "note: {}", c.note);
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
        assert!(t.contains("1.25x INVALID"), "{t}");
        assert!(compare_measurements(&c, "old", "nope").is_err());
    }
}
