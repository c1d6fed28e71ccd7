//! The closing summary of a bench database, printed by `krphase bench` and by `krphase report`
//! on a database that holds bench (or imported replay_perf) measurements: P1's speedup over
//! application replay, P2's pass scaling, P3/P4's snapshot bytes per footprint, P5's drain share
//! of a window (phase files + SDK log lines), P6's non-replayed dispatch tax per dispatch.

use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::fmt::{bytes_b_or_mib, duration_us_ms, factor, percent, seconds, wrap};
use super::stats::median;
use crate::db::basis::Basis;
use crate::db::measurements::{
    MeasurementFilter, SOURCE_BENCH, SOURCE_REPLAY_PERF, read_measurements,
};

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
    Ok(Some(s))
}

/// One measurement row as `krphase report --format json` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct MeasurementJson {
    pub measurement_id: i64,
    pub source: Option<String>,
    pub variant: Option<String>,
    pub mode: Option<String>,
    pub median_s: Option<f64>,
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
    pub peak_child_rss_kib: Option<i64>,
    pub samples: Option<i64>,
    pub failures: Option<String>,
    /// Phase-file runs linked to the measurement.
    pub linked_runs: i64,
    pub valid: bool,
    pub invalid_reason: Option<String>,
}

/// One experiment (P1..P6) and its measurements: the latest row of each variant, by id.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentJson {
    pub experiment: Option<String>,
    pub measurements: Vec<MeasurementJson>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SpeedupJson {
    pub application_replay_s: Option<f64>,
    pub multiplexed_s: Option<f64>,
    pub kernel_replay_s: Option<f64>,
    /// Application replay time over kernel replay time.
    pub speedup_vs_application_replay_factor: Option<f64>,
    /// False when the kernel-replay row did not replay: the factor compares two application
    /// replays.
    pub speedup_valid: bool,
    pub speedup_invalid_reason: Option<String>,
    /// Whole-run medians of the harness.
    pub basis: Basis,
}

#[derive(Debug, Clone, Serialize)]
pub struct FootprintJson {
    pub measurement_id: i64,
    pub valid: bool,
    pub invalid_reason: Option<String>,
    pub variant: String,
    pub median_s: Option<f64>,
    pub peak_child_rss_kib: Option<i64>,
    pub replayed_windows: i64,
    pub tool_estimate_bytes_per_window: Option<f64>,
    pub sdk_bytes_per_window: Option<f64>,
}

/// P5 with units in the names; fractions are in 0..1.
#[derive(Debug, Clone, Serialize)]
pub struct DrainJson {
    pub measurement_id: i64,
    pub replayed_windows: i64,
    pub windows_with_drain: i64,
    pub drain_total_ns: Option<i64>,
    /// Window time summed over the windows with a drain figure.
    pub window_total_ns: Option<i64>,
    /// Σ drain / Σ window.
    pub drain_share_of_window_fraction: Option<f64>,
    /// Median over the windows of each window's drain / window.
    pub median_window_drain_share_fraction: Option<f64>,
    /// Σ pre-pass (lock + drain + snapshot) / Σ window: an upper bound on the drain share.
    pub prepass_share_of_window_fraction: Option<f64>,
    /// Why no window carries a drain figure, and how to get one.
    pub unavailable: Option<String>,
}

/// P6 with units in the names.
#[derive(Debug, Clone, Serialize)]
pub struct TaxJson {
    pub baseline_measurement_id: i64,
    pub baseline_median_s: Option<f64>,
    pub replay_active_measurement_id: i64,
    pub replay_active_median_s: Option<f64>,
    pub dispatches_per_run: Option<f64>,
    /// (replay-active − baseline median) / dispatches per run.
    pub whole_run_tax_per_dispatch_ns: Option<f64>,
    /// Mean enqueue cost measured by the tool, replay active minus baseline.
    pub in_process_tax_per_dispatch_ns: Option<f64>,
    pub enqueue_mean_ns_replay_active: Option<f64>,
    pub enqueue_mean_ns_baseline: Option<f64>,
    /// False when the replay-active row did not run with replay configured: the tax figures
    /// are null then.
    pub valid: bool,
    pub invalid_reason: Option<String>,
}

/// The bench summary in `krphase report --format json` (key `bench`).
#[derive(Debug, Clone, Serialize)]
pub struct BenchJson {
    pub experiments: Vec<ExperimentJson>,
    pub p1_speedup: Option<SpeedupJson>,
    pub p2_passes: Vec<MeasurementJson>,
    pub p3_footprints: Vec<FootprintJson>,
    pub p5_drain: Option<DrainJson>,
    pub p6_dispatch_tax: Option<TaxJson>,
}

/// The latest row of every (experiment, variant) from the bench sources, grouped by experiment.
fn experiment_rows(conn: &Connection) -> Result<Vec<ExperimentJson>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT m.id, m.source, m.experiment, m.variant, m.mode, m.median_s, m.min_s, m.max_s, \
         m.peak_child_rss_kib, m.samples, m.failures, \
         (SELECT COUNT(*) FROM krphase_measurement_run mr WHERE mr.measurement_id = m.id) \
         FROM krphase_measurement m \
         WHERE m.id IN (SELECT MAX(id) FROM krphase_measurement WHERE source IN {SOURCES} \
         GROUP BY experiment, variant) \
         ORDER BY m.experiment, m.id"
    ))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(2)?,
                MeasurementJson {
                    measurement_id: r.get(0)?,
                    source: r.get(1)?,
                    variant: r.get(3)?,
                    mode: r.get(4)?,
                    median_s: r.get(5)?,
                    min_s: r.get(6)?,
                    max_s: r.get(7)?,
                    peak_child_rss_kib: r.get(8)?,
                    samples: r.get(9)?,
                    failures: r.get(10)?,
                    linked_runs: r.get(11)?,
                    valid: true,
                    invalid_reason: None,
                },
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let checks = read_measurements(conn, &MeasurementFilter::All)?;
    let mut rows = rows;
    for (_, m) in &mut rows {
        m.invalid_reason = checks
            .iter()
            .find(|c| c.measurement_id == m.measurement_id)
            .and_then(|c| c.invalid_reason());
        m.valid = m.invalid_reason.is_none();
    }
    let mut out: Vec<ExperimentJson> = Vec::new();
    for (experiment, m) in rows {
        match out.last_mut() {
            Some(e) if e.experiment == experiment => e.measurements.push(m),
            _ => out.push(ExperimentJson {
                experiment,
                measurements: vec![m],
            }),
        }
    }
    Ok(out)
}

/// The JSON form of the summary; `None` when the database holds no bench measurement.
pub fn report_json(conn: &Connection) -> Result<Option<BenchJson>> {
    let Some(s) = summarize(conn)? else {
        return Ok(None);
    };
    let experiments = experiment_rows(conn)?;
    let p2_passes = experiments
        .iter()
        .filter(|e| e.experiment.as_deref() == Some("P2"))
        .flat_map(|e| e.measurements.iter().cloned())
        .filter(|m| s.passes.iter().any(|p| p.id == m.measurement_id))
        .collect();
    let p1 = (s.application_replay_s.is_some()
        || s.kernel_replay_s.is_some()
        || s.multiplexed_s.is_some())
    .then_some(SpeedupJson {
        application_replay_s: s.application_replay_s,
        multiplexed_s: s.multiplexed_s,
        kernel_replay_s: s.kernel_replay_s,
        speedup_vs_application_replay_factor: s.speedup_vs_application_replay,
        speedup_valid: s.speedup_invalid_reason.is_none(),
        speedup_invalid_reason: s.speedup_invalid_reason.clone(),
        basis: Basis::Harness,
    });
    Ok(Some(BenchJson {
        experiments,
        p1_speedup: p1,
        p2_passes,
        p3_footprints: s
            .footprints
            .into_iter()
            .map(|f| FootprintJson {
                measurement_id: f.measurement.id,
                valid: f.measurement.invalid_reason.is_none(),
                invalid_reason: f.measurement.invalid_reason.clone(),
                variant: f.measurement.variant,
                median_s: f.measurement.median_s,
                peak_child_rss_kib: f.measurement.peak_child_rss_kib,
                replayed_windows: f.replayed_windows,
                tool_estimate_bytes_per_window: f.estimate_bytes_per_window,
                sdk_bytes_per_window: f.sdk_bytes_per_window,
            })
            .collect(),
        p5_drain: s.drain.map(|d| DrainJson {
            measurement_id: d.measurement_id,
            replayed_windows: d.windows,
            windows_with_drain: d.windows_with_drain,
            drain_total_ns: d.drain_ns,
            window_total_ns: d.window_ns,
            drain_share_of_window_fraction: d.share,
            median_window_drain_share_fraction: d.median_window_share,
            prepass_share_of_window_fraction: d.prepass_share,
            unavailable: d.unavailable,
        }),
        p6_dispatch_tax: s.tax.map(|t| TaxJson {
            baseline_measurement_id: t.baseline.id,
            baseline_median_s: t.baseline.median_s,
            replay_active_measurement_id: t.filtered.id,
            replay_active_median_s: t.filtered.median_s,
            dispatches_per_run: t.dispatches_per_run,
            whole_run_tax_per_dispatch_ns: t.whole_run_tax_per_dispatch_s.map(|s| s * 1e9),
            in_process_tax_per_dispatch_ns: t.in_process_tax_per_dispatch_ns,
            enqueue_mean_ns_replay_active: t.enqueue_mean_ns_filtered,
            enqueue_mean_ns_baseline: t.enqueue_mean_ns_baseline,
            valid: t.invalid_reason.is_none(),
            invalid_reason: t.invalid_reason,
        }),
    }))
}

/// Plain-text rendering (fits 100 columns).
pub fn render_summary(s: &BenchSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "bench summary (basis: whole-run medians H; P3 snapshot/window SDK L, tool E;\n  P5 and the \
         in-process P6 tax M, M-L)"
    );
    if s.application_replay_s.is_some() || s.kernel_replay_s.is_some() {
        let _ = writeln!(
            o,
            "  P1  application replay {} | multiplexed {} | kernel replay {} | speedup {}",
            seconds(s.application_replay_s),
            seconds(s.multiplexed_s),
            seconds(s.kernel_replay_s),
            factor(s.speedup_vs_application_replay)
        );
        if let Some(why) = &s.speedup_invalid_reason {
            o.push_str(&wrap(why, 98, "      speedup INVALID: ", "        "));
        }
    }
    for m in &s.passes {
        let _ = writeln!(
            o,
            "  P2  {:<14} median {}{}",
            m.variant,
            seconds(m.median_s),
            invalid_mark(m)
        );
    }
    for f in &s.footprints {
        let _ = writeln!(
            o,
            "  P3  {:<17} {:>9} | RSS {:>9} | snapshot/window SDK {:>9}, tool {:>9}",
            f.measurement.variant,
            seconds(f.measurement.median_s),
            f.measurement
                .peak_child_rss_kib
                .map_or("-".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0)),
            bytes_b_or_mib(f.sdk_bytes_per_window),
            bytes_b_or_mib(f.estimate_bytes_per_window),
        );
        if f.measurement.invalid_reason.is_some() {
            let _ = writeln!(
                o,
                "      {}{}",
                f.measurement.variant,
                invalid_mark(&f.measurement)
            );
        }
    }
    if let Some(d) = &s.drain {
        let _ = writeln!(
            o,
            "  P5  drain share of window {} (median per window {}), pre-pass share {};",
            percent(d.share),
            percent(d.median_window_share),
            percent(d.prepass_share)
        );
        let _ = writeln!(
            o,
            "      {} of {} replayed windows carry a drain figure",
            d.windows_with_drain, d.windows
        );
        if let Some(why) = &d.unavailable {
            o.push_str(&wrap(why, 98, "      drain unavailable: ", "        "));
        }
    }
    if let Some(why) = s.tax.as_ref().and_then(|t| t.invalid_reason.as_ref()) {
        o.push_str(&wrap(
            why,
            98,
            "  P6  non-replayed dispatch tax INVALID: ",
            "        ",
        ));
    } else if let Some(t) = &s.tax {
        let _ = writeln!(
            o,
            "  P6  non-replayed dispatch tax {}/dispatch over whole runs",
            duration_us_ms(t.whole_run_tax_per_dispatch_s.map(|s| s * 1e9))
        );
        let _ = writeln!(
            o,
            "      (replay active {} vs not configured {}, {} dispatches per run);",
            seconds(t.filtered.median_s),
            seconds(t.baseline.median_s),
            t.dispatches_per_run
                .map_or("-".into(), |n| format!("{n:.0}"))
        );
        let _ = writeln!(
            o,
            "      in process {}/dispatch (enqueue {} replay active vs {} not configured)",
            duration_us_ms(t.in_process_tax_per_dispatch_ns),
            duration_us_ms(t.enqueue_mean_ns_filtered),
            duration_us_ms(t.enqueue_mean_ns_baseline)
        );
    }
    o
}

/// ` INVALID (no kernel replay ran)` for a row whose replay claim failed, else nothing.
fn invalid_mark(m: &MeasurementRef) -> &'static str {
    if m.invalid_reason.is_some() {
        " INVALID (no kernel replay ran)"
    } else {
        ""
    }
}

/// The summary text of a database, empty when it holds no bench measurements.
pub fn render(conn: &Connection) -> Result<String> {
    Ok(summarize(conn)?
        .map(|s| render_summary(&s))
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run 1 (P5): two replayed windows with joined phase lines; runs 2 and 3 (P6 baseline and
    /// replay active): four plain dispatches each, enqueue 100 ns and 150 ns. All figures known.
    fn bench_db() -> Connection {
        let c = crate::db::open_in_memory().unwrap();
        for run in 1..=3 {
            c.execute(
                "INSERT INTO krphase_run (id, path, file_hash, imported_at) \
                 VALUES (?1, 'f', ?2, 'now')",
                params![run, format!("h{run}")],
            )
            .unwrap();
        }
        c.execute(
            "INSERT INTO krphase_log_file (id, path, file_hash, imported_at) \
             VALUES (1, 'l', 'lh', 'now')",
            [],
        )
        .unwrap();
        // (start, pass_count_return, first_pass_enter, end, SDK snapshot ns): drain = pre-pass
        // − snapshot = 800 and 400 ns over windows of 2100 and 1000 ns.
        for (i, w) in [[0, 100, 1100, 2100, 200], [5000, 5100, 5600, 6000, 100]]
            .iter()
            .enumerate()
        {
            let id = i as i64 + 1;
            c.execute(
                "INSERT INTO krphase_window (id, run_id, dispatch_id, outcome, \"start\", \
                 pass_count_return, first_pass_enter, \"end\") \
                 VALUES (?1, 1, ?1, 'replayed', ?2, ?3, ?4, ?5)",
                params![id, w[0], w[1], w[2], w[3]],
            )
            .unwrap();
            c.execute(
                "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, pid, dispatch_id, \
                 snapshot_ns) VALUES (1, 1, ?1, 1, ?1, ?2)",
                params![id, w[4]],
            )
            .unwrap();
        }
        for (run, enqueue) in [(2, 100), (3, 150)] {
            for d in 0..4 {
                c.execute(
                    "INSERT INTO krphase_dispatch (run_id, dispatch_id, \"start\", \"end\") \
                     VALUES (?1, ?2, ?3, ?4)",
                    params![run, d, d * 1000, d * 1000 + enqueue],
                )
                .unwrap();
            }
        }
        // (id, experiment, variant, median_s, linked run); id 4 is an older P6 baseline that
        // the newer id 6 supersedes.
        let rows: [(i64, &str, &str, f64, Option<i64>); 7] = [
            (1, "P1", "application-replay-all-groups", 3.0, None),
            (2, "P1", "multiplexed-all-groups", 2.0, None),
            (3, "P1", "replay-all-groups", 1.5, None),
            (4, "P6", "no-replay", 9.0, None),
            (5, "P5", "drain-share", 0.5, Some(1)),
            (6, "P6", "no-replay", 1.0, Some(2)),
            (7, "P6", "replay-active-none-matched", 1.000_002, Some(3)),
        ];
        for (id, experiment, variant, median, run) in rows {
            c.execute(
                "INSERT INTO krphase_measurement (id, source, experiment, variant, median_s, \
                 samples) VALUES (?1, 'krphase-bench', ?2, ?3, ?4, 2)",
                params![id, experiment, variant, median],
            )
            .unwrap();
            if let Some(run) = run {
                c.execute(
                    "INSERT INTO krphase_measurement_run VALUES (?1, ?2)",
                    params![id, run],
                )
                .unwrap();
            }
        }
        c
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9 * b.abs().max(1.0))
    }

    #[test]
    fn json_summary_carries_p5_and_p6_with_units() {
        let c = bench_db();
        let j = report_json(&c)
            .unwrap()
            .expect("bench measurements present");
        let d = j.p5_drain.as_ref().expect("P5");
        assert_eq!((d.replayed_windows, d.windows_with_drain), (2, 2));
        assert_eq!(
            (d.drain_total_ns, d.window_total_ns),
            (Some(1200), Some(3100))
        );
        assert!(close(d.drain_share_of_window_fraction, 1200.0 / 3100.0));
        assert!(close(
            d.median_window_drain_share_fraction,
            (800.0 / 2100.0 + 400.0 / 1000.0) / 2.0
        ));
        assert!(close(d.prepass_share_of_window_fraction, 1500.0 / 3100.0));
        let t = j.p6_dispatch_tax.as_ref().expect("P6");
        assert_eq!(
            (t.baseline_measurement_id, t.replay_active_measurement_id),
            (6, 7),
            "the latest baseline"
        );
        assert_eq!(t.dispatches_per_run, Some(4.0));
        assert!(close(t.whole_run_tax_per_dispatch_ns, 2e-6 / 4.0 * 1e9));
        assert!(close(t.in_process_tax_per_dispatch_ns, 50.0));
        assert!(close(t.enqueue_mean_ns_baseline, 100.0));
        let p1 = j.p1_speedup.as_ref().expect("P1");
        assert!(close(p1.speedup_vs_application_replay_factor, 2.0));
        // Per experiment: the latest row of each variant, in experiment order.
        let per: Vec<(Option<&str>, Vec<i64>)> = j
            .experiments
            .iter()
            .map(|e| {
                (
                    e.experiment.as_deref(),
                    e.measurements.iter().map(|m| m.measurement_id).collect(),
                )
            })
            .collect();
        assert_eq!(
            per,
            vec![
                (Some("P1"), vec![1, 2, 3]),
                (Some("P5"), vec![5]),
                (Some("P6"), vec![6, 7]),
            ]
        );
        assert_eq!(j.experiments[2].measurements[0].linked_runs, 1);

        // The report's JSON carries it under `bench`, next to the runs.
        let v: serde_json::Value = serde_json::from_str(
            &crate::report::render_with_bench(&c, &[], crate::report::Format::Json).unwrap(),
        )
        .unwrap();
        assert_eq!(v["runs"], serde_json::json!([]));
        assert_eq!(v["bench"]["p5_drain"]["drain_total_ns"], 1200);
        assert_eq!(v["bench"]["p6_dispatch_tax"]["dispatches_per_run"], 4.0);
        assert!(v["bench"]["p6_dispatch_tax"]["in_process_tax_per_dispatch_ns"].is_number());
        assert!(v["bench"]["p6_dispatch_tax"]["whole_run_tax_per_dispatch_ns"].is_number());
    }

    #[test]
    fn json_has_no_bench_key_without_bench_measurements() {
        let c = crate::db::open_in_memory().unwrap();
        assert!(report_json(&c).unwrap().is_none());
        let v: serde_json::Value = serde_json::from_str(
            &crate::report::render_with_bench(&c, &[], crate::report::Format::Json).unwrap(),
        )
        .unwrap();
        assert!(v.get("bench").is_none(), "{v}");
    }

    /// P6 with the seed's flags: its replay-active row lacks `--replay-mode kernel`, so
    /// rocprofv3 ran application replay and the tax is no figure: INVALID in the text, null
    /// with `valid: false` in the JSON.
    #[test]
    fn p6_without_replay_configured_gives_no_tax() {
        let c = bench_db();
        c.execute(
            "UPDATE krphase_measurement SET mode = 'kernel-replay', command = \
             'rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled --kernel-include-regex x \
             -d w/p6-filtered -- app' WHERE id = 7",
            [],
        )
        .unwrap();
        let text = render(&c).unwrap();
        assert!(
            text.contains("P6  non-replayed dispatch tax INVALID"),
            "{text}"
        );
        assert!(!text.contains("/dispatch over whole runs"), "{text}");
        let t = report_json(&c).unwrap().unwrap().p6_dispatch_tax.unwrap();
        assert!(!t.valid);
        assert!(t.invalid_reason.unwrap().contains("--replay-mode kernel"));
        assert_eq!(
            (
                t.whole_run_tax_per_dispatch_ns,
                t.in_process_tax_per_dispatch_ns
            ),
            (None, None)
        );
        // With replay configured the same rows give the figure.
        c.execute(
            "UPDATE krphase_measurement SET command = 'rocprofv3 --pmc A --pmc B --replay-mode \
             kernel --kernel-replay-beta-enabled -d w -- app' WHERE id = 7",
            [],
        )
        .unwrap();
        let t = report_json(&c).unwrap().unwrap().p6_dispatch_tax.unwrap();
        assert!(t.valid && t.whole_run_tax_per_dispatch_ns.is_some());
    }
}
