//! What the evidence behind one compared row lacks or left out, said in one line each beside
//! its attribution: warm-up launches kept out of the statistics, an SDK log that no
//! replay_perf.py row can have, and the phases observe mode cannot time without the SDK's
//! phase line (their change then sits in the unexplained rest, never in a phase).

use anyhow::Result;
use rusqlite::Connection;

use crate::db::measurements::{NO_SDK_LOG, SOURCE_REPLAY_PERF, StoredMeasurement};

/// Counts over a side's linked runs: observed windows, SDK log lines joined, phase lines.
fn counts(conn: &Connection, m: &StoredMeasurement) -> Result<(i64, i64, i64)> {
    Ok(conn.query_row(
        "SELECT
           (SELECT COUNT(*) FROM krphase_window_phase w JOIN krphase_measurement_run mr
              ON mr.run_id = w.run_id
            WHERE mr.measurement_id = ?1 AND w.outcome = 'replayed' AND w.source = 'observe'),
           (SELECT COUNT(*) FROM krphase_sdk_log l JOIN krphase_measurement_run mr
              ON mr.run_id = l.run_id WHERE mr.measurement_id = ?1),
           (SELECT COUNT(*) FROM krphase_sdk_log l JOIN krphase_measurement_run mr
              ON mr.run_id = l.run_id WHERE mr.measurement_id = ?1 AND l.window_ns IS NOT NULL)",
        [m.measurement_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?)
}

/// The notes of one row compared between `a` and `b`.
pub fn row_notes(
    conn: &Connection,
    a: Option<&StoredMeasurement>,
    b: Option<&StoredMeasurement>,
) -> Result<Vec<String>> {
    let sides: Vec<(&str, &StoredMeasurement)> = [("A", a), ("B", b)]
        .into_iter()
        .filter_map(|(n, m)| Some((n, m?)))
        .collect();
    let mut out = Vec::new();
    let warm: Vec<String> = sides
        .iter()
        .filter(|(_, m)| !m.warmup_runs.is_empty())
        .map(|(n, m)| format!("{n} {} phase file(s)", m.warmup_runs.len()))
        .collect();
    if !warm.is_empty() {
        out.push(format!(
            "warm-up launches found beside the timed runs and left out of every figure: {}",
            warm.join(", ")
        ));
    }
    let (mut observed, mut logged, mut phase_lines) = (0, 0, 0);
    let mut csv_rows = false;
    for (_, m) in &sides {
        let (o, l, p) = counts(conn, m)?;
        observed += o;
        logged += l;
        phase_lines += p;
        csv_rows |= m.source.as_deref() == Some(SOURCE_REPLAY_PERF) && !m.linked_runs.is_empty();
    }
    if csv_rows && logged == 0 {
        out.push(NO_SDK_LOG.to_string());
    }
    if observed > 0 && phase_lines == 0 {
        out.push(
            "observe mode without the SDK's phase line: lock, drain and snapshot are not timed \
             in process, so their change is in the unexplained rest, not in a phase (drive mode, \
             KRPHASE_PASSES, times them; or an SDK log with the phase line)"
                .into(),
        );
    }
    Ok(out)
}
