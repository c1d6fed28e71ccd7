//! The closing summary of a bench database, printed by `krphase bench` and by `krphase report`
//! on a database that holds bench (or imported replay_perf) measurements: P1's speedup over
//! application replay, P2's pass scaling, P3/P4's snapshot bytes per footprint, P5's drain share
//! of a window (phase files + SDK log lines), P6's non-replayed dispatch tax per dispatch.
//! Gathered here; written as text (`text.rs`) or as the report's JSON (`json.rs`).

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::db::measurements::{
    MeasurementFilter, SOURCE_BENCH, SOURCE_REPLAY_PERF, read_measurements,
};
use crate::db::quantiles::median;

mod json;
mod text;
mod tracing_cost;

#[cfg(test)]
pub(crate) mod tests;

pub use json::{BenchJson, report_json};
pub use text::{render, render_summary};
pub use tracing_cost::{BASIS as TRACING_BASIS, PerDispatch, TracingCost};

/// One measurement as the summary uses it.
#[derive(Debug, Clone, Serialize)]
pub struct MeasurementRef {
    pub id: i64,
    pub variant: String,
    pub median_s: Option<f64>,
    pub peak_child_rss_kib: Option<i64>,
    /// Why figures built on it are invalid (its kernel-replay claim failed); `None` when valid.
    pub invalid_reason: Option<String>,
}

/// P5: the drain's share of the replayed windows of the linked runs.
#[derive(Debug, Clone, Serialize)]
pub struct DrainShare {
    pub measurement_id: i64,
    pub windows: i64,
    /// Windows with a drain figure: the pre-pass minus the SDK's snap_seconds (drive mode with a
    /// joined log), or an SDK phase line's lock+drain (no published SDK prints one).
    pub windows_with_drain: i64,
    pub drain_ns: Option<i64>,
    /// Sum of window time over the windows with a drain figure.
    pub window_ns: Option<i64>,
    pub share: Option<f64>,
    /// Median over the windows of each window's own drain share.
    pub median_window_share: Option<f64>,
    /// Pre-pass (lock + drain + snapshot) share over every replayed window: an upper bound.
    pub prepass_share: Option<f64>,
    /// Why no window carries a drain figure, and how to get one; `None` when some do.
    pub unavailable: Option<String>,
}

/// Why P5 has no drain figure: observe mode (no pre-pass measured) or no SDK log joined.
fn drain_unavailable(windows: i64, with_drain: i64, prepass: Option<i64>) -> Option<String> {
    if windows == 0 || with_drain > 0 {
        return None;
    }
    Some(if prepass.is_none() {
        "observe mode (rocprofv3 owns replay): the SDK prints no drain or pre-pass time, only \
         snap_seconds and restore_seconds; run P5 with krphase driving replay (drive mode), or \
         under an SDK whose log has a phase line"
            .into()
    } else {
        "no SDK log joined: the drain is the pre-pass minus the SDK's snap_seconds (keep the \
         SDK's INFO log and import it)"
            .into()
    })
}

/// P6: the tax a dispatch pays when replay is configured but matches nothing.
#[derive(Debug, Clone, Serialize)]
pub struct DispatchTax {
    pub baseline: MeasurementRef,
    pub filtered: MeasurementRef,
    /// Dispatches per run (phase files of the filtered runs).
    pub dispatches_per_run: Option<f64>,
    /// (filtered − baseline median) / dispatches.
    pub whole_run_tax_per_dispatch_s: Option<f64>,
    /// Mean enqueue cost the tool measured, filtered and baseline runs.
    pub enqueue_mean_ns_filtered: Option<f64>,
    pub enqueue_mean_ns_baseline: Option<f64>,
    /// Their difference: the tax per dispatch as measured in process.
    pub in_process_tax_per_dispatch_ns: Option<f64>,
    /// Why the tax is invalid (the replay-active row did not run with replay configured, or a
    /// side's row is invalid); no tax figure is given then.
    pub invalid_reason: Option<String>,
}

/// P3/P4: one footprint.
#[derive(Debug, Clone, Serialize)]
pub struct Footprint {
    pub measurement: MeasurementRef,
    pub replayed_windows: i64,
    /// The tool's byte estimate from the phase files.
    pub estimate_bytes_per_window: Option<f64>,
    /// The SDK log line's snapshot (or footprint) bytes.
    pub sdk_bytes_per_window: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct BenchSummary {
    pub application_replay_s: Option<f64>,
    pub kernel_replay_s: Option<f64>,
    pub multiplexed_s: Option<f64>,
    pub speedup_vs_application_replay: Option<f64>,
    /// Why the speedup is invalid: the kernel-replay row did not replay.
    pub speedup_invalid_reason: Option<String>,
    pub passes: Vec<MeasurementRef>,
    pub footprints: Vec<Footprint>,
    pub drain: Option<DrainShare>,
    pub tax: Option<DispatchTax>,
    /// P6's split of krphase's dispatch tracing from replay's tax.
    pub tracing: Option<TracingCost>,
}

/// The measurement sources the summary reads (`krphase bench` rows and imported replay_perf
/// CSVs), as an SQL list for `source IN {SOURCES}`.
const SOURCES: Sources = Sources;
struct Sources;
impl std::fmt::Display for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "('{SOURCE_BENCH}', '{SOURCE_REPLAY_PERF}')")
    }
}

/// The `krphase_measurement` columns [`MeasurementRef::from_row`] reads, in order.
const MEASUREMENT_COLUMNS: &str = "id, variant, median_s, peak_child_rss_kib";

impl MeasurementRef {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(MeasurementRef {
            id: r.get(0)?,
            variant: r.get(1)?,
            median_s: r.get(2)?,
            peak_child_rss_kib: r.get(3)?,
            invalid_reason: None,
        })
    }

    /// The same reference with its replay claim checked.
    fn checked(mut self, conn: &Connection) -> Result<Self> {
        self.invalid_reason = read_measurements(conn, &MeasurementFilter::Id(self.id))?
            .first()
            .and_then(|m| m.invalid_reason());
        Ok(self)
    }
}

fn latest(conn: &Connection, experiment: &str, variant: &str) -> Result<Option<MeasurementRef>> {
    conn.query_row(
        &format!(
            "SELECT {MEASUREMENT_COLUMNS} FROM krphase_measurement \
                 WHERE source IN {SOURCES} AND experiment = ?1 AND variant = ?2 \
                 ORDER BY id DESC LIMIT 1"
        ),
        params![experiment, variant],
        MeasurementRef::from_row,
    )
    .optional()?
    .map(|m| m.checked(conn))
    .transpose()
}

fn latest_like(conn: &Connection, experiment: &str, prefix: &str) -> Result<Vec<MeasurementRef>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT MAX(id) FROM krphase_measurement WHERE source IN {SOURCES} AND experiment = ?1 \
         AND variant LIKE ?2 GROUP BY variant ORDER BY MAX(id)"
    ))?;
    let ids: Vec<i64> = stmt
        .query_map(params![experiment, format!("{prefix}%")], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for id in ids {
        out.push(
            conn.query_row(
                &format!("SELECT {MEASUREMENT_COLUMNS} FROM krphase_measurement WHERE id = ?1"),
                [id],
                MeasurementRef::from_row,
            )?
            .checked(conn)?,
        );
    }
    Ok(out)
}

/// Drain per window: from the phase file (pre-pass − the SDK line's snapshot time, the
/// `krphase_window_phase` view) when the tool saw the pass-count return and the first PASS
/// ENTER; otherwise an SDK phase line's own lock+drain over its own window time, if an SDK
/// printed one; else unavailable, with the reason.
fn drain_share(conn: &Connection, m: &MeasurementRef) -> Result<DrainShare> {
    let (windows, with_drain, drain, window, prepass, all_window) = conn.query_row(
        "SELECT COUNT(*), \
                COUNT(COALESCE(v.drain_ns, l.lock_drain_ns)), \
                SUM(COALESCE(v.drain_ns, l.lock_drain_ns)), \
                SUM(CASE WHEN v.drain_ns IS NOT NULL THEN v.window_ns \
                         WHEN l.lock_drain_ns IS NOT NULL THEN l.window_ns END), \
                SUM(v.prepass_ns), SUM(CASE WHEN v.prepass_ns IS NOT NULL THEN v.window_ns END) \
         FROM krphase_window_phase v \
         JOIN krphase_measurement_run mr ON mr.run_id = v.run_id \
         LEFT JOIN krphase_sdk_log l ON l.id = v.sdk_log_id \
         WHERE mr.measurement_id = ?1 AND v.outcome = 'replayed'",
        [m.id],
        |r| <(i64, i64, Option<i64>, Option<i64>, Option<i64>, Option<i64>)>::try_from(r),
    )?;
    let ratio = |a: Option<i64>, b: Option<i64>| match (a, b) {
        (Some(a), Some(b)) if b > 0 => Some(a as f64 / b as f64),
        _ => None,
    };
    let mut stmt = conn.prepare(
        "SELECT CAST(COALESCE(v.drain_ns, l.lock_drain_ns) AS REAL) / \
                (CASE WHEN v.drain_ns IS NOT NULL THEN v.window_ns ELSE l.window_ns END) \
         FROM krphase_window_phase v \
         JOIN krphase_measurement_run mr ON mr.run_id = v.run_id \
         LEFT JOIN krphase_sdk_log l ON l.id = v.sdk_log_id \
         WHERE mr.measurement_id = ?1 AND v.outcome = 'replayed' \
           AND COALESCE(v.drain_ns, l.lock_drain_ns) IS NOT NULL \
           AND (CASE WHEN v.drain_ns IS NOT NULL THEN v.window_ns ELSE l.window_ns END) > 0",
    )?;
    let shares: Vec<f64> = stmt
        .query_map([m.id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(DrainShare {
        measurement_id: m.id,
        windows,
        windows_with_drain: with_drain,
        drain_ns: drain,
        window_ns: window,
        share: ratio(drain, window),
        median_window_share: median(&shares),
        prepass_share: ratio(prepass, all_window),
        unavailable: drain_unavailable(windows, with_drain, prepass),
    })
}

fn dispatch_stats(conn: &Connection, measurement: i64) -> Result<(Option<f64>, Option<f64>)> {
    let (runs, dispatches, windows, enqueue_ns, enqueue_n): (i64, i64, i64, Option<f64>, i64) =
        conn.query_row(
            "SELECT COUNT(*), \
                COALESCE(SUM((SELECT COUNT(*) FROM krphase_dispatch d WHERE d.run_id = mr.run_id)), 0), \
                COALESCE(SUM((SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = mr.run_id)), 0), \
                SUM((SELECT SUM(d.\"end\" - d.\"start\") FROM krphase_dispatch d \
                     WHERE d.run_id = mr.run_id AND d.\"end\" IS NOT NULL)), \
                COALESCE(SUM((SELECT COUNT(*) FROM krphase_dispatch d \
                     WHERE d.run_id = mr.run_id AND d.\"end\" IS NOT NULL)), 0) \
             FROM krphase_measurement_run mr WHERE mr.measurement_id = ?1",
            [measurement],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
    let per_run = (runs > 0).then(|| (dispatches + windows) as f64 / runs as f64);
    let enqueue = (enqueue_n > 0).then(|| enqueue_ns.unwrap_or(0.0) / enqueue_n as f64);
    Ok((per_run, enqueue))
}

/// Reads the summary; `None` when the database holds no bench or replay_perf measurement.
pub fn summarize(conn: &Connection) -> Result<Option<BenchSummary>> {
    let any: i64 = conn.query_row(
        &format!("SELECT COUNT(*) FROM krphase_measurement WHERE source IN {SOURCES}"),
        [],
        |r| r.get(0),
    )?;
    if any == 0 {
        return Ok(None);
    }
    let mut s = BenchSummary::default();
    let app = latest(conn, "P1", "application-replay-all-groups")?;
    let replay = latest(conn, "P1", "replay-all-groups")?;
    s.application_replay_s = app.as_ref().and_then(|m| m.median_s).or_else(|| {
        // replay_perf.py writes no total row: sum its single-group runs.
        latest_like(conn, "P1", "application-replay-run-")
            .ok()
            .filter(|v| !v.is_empty())
            .and_then(|v| v.iter().map(|m| m.median_s).sum())
    });
    s.speedup_invalid_reason = replay.as_ref().and_then(|m| {
        m.invalid_reason
            .as_ref()
            .map(|why| format!("measurement {} ({}) {why}", m.id, m.variant))
    });
    s.kernel_replay_s = replay.and_then(|m| m.median_s);
    s.multiplexed_s = latest(conn, "P1", "multiplexed-all-groups")?.and_then(|m| m.median_s);
    s.speedup_vs_application_replay = match (s.application_replay_s, s.kernel_replay_s) {
        (Some(a), Some(k)) if k > 0.0 => Some(a / k),
        _ => None,
    };
    s.passes = latest_like(conn, "P2", "passes-")?;
    for m in latest_like(conn, "P3", "elements-")? {
        let (n, estimate, sdk): (i64, Option<f64>, Option<f64>) = conn.query_row(
            "SELECT COUNT(*), AVG(w.bytes_estimate), \
                    AVG(COALESCE(l.snapshot_bytes, l.footprint_bytes)) \
             FROM krphase_window w \
             JOIN krphase_measurement_run mr ON mr.run_id = w.run_id \
             LEFT JOIN krphase_sdk_log l ON l.window_id = w.id \
             WHERE mr.measurement_id = ?1 AND w.outcome = 'replayed'",
            [m.id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        s.footprints.push(Footprint {
            measurement: m,
            replayed_windows: n,
            estimate_bytes_per_window: estimate,
            sdk_bytes_per_window: sdk,
        });
    }
    if let Some(m) = latest(conn, "P5", "drain-share")? {
        s.drain = Some(drain_share(conn, &m)?);
    }
    if let (Some(b), Some(f)) = (
        latest(conn, "P6", "no-replay")?,
        latest(conn, "P6", "replay-active-none-matched")?,
    ) {
        let (per_run, enq_f) = dispatch_stats(conn, f.id)?;
        let (_, enq_b) = dispatch_stats(conn, b.id)?;
        let invalid_reason = [&f, &b].iter().find_map(|m| {
            m.invalid_reason
                .as_ref()
                .map(|why| format!("measurement {} ({}) {why}", m.id, m.variant))
        });
        let tax = match (f.median_s, b.median_s, per_run) {
            (Some(fm), Some(bm), Some(n)) if n > 0.0 => Some((fm - bm) / n),
            _ => None,
        };
        let valid = invalid_reason.is_none();
        s.tax = Some(DispatchTax {
            invalid_reason,
            baseline: b,
            filtered: f,
            dispatches_per_run: per_run,
            whole_run_tax_per_dispatch_s: tax.filter(|_| valid),
            enqueue_mean_ns_filtered: enq_f,
            enqueue_mean_ns_baseline: enq_b,
            in_process_tax_per_dispatch_ns: enq_f.zip(enq_b).map(|(f, b)| f - b).filter(|_| valid),
        });
    }
    s.tracing = tracing_cost::tracing_cost(conn)?;
    Ok(Some(s))
}
