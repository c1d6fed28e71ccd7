//! The bench summary as `krphase report --format json` carries it (key `bench`): the latest row
//! of every experiment and variant, and P1's speedup, P2's passes, P3's footprints, P5's drain and
//! P6's tax, each with the check of its replay claim.

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use super::{SOURCES, summarize};
use crate::db::basis::Basis;
use crate::db::measurements::{MeasurementFilter, read_measurements};

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
    /// P6's split of krphase's own dispatch tracing from replay's tax (`tracing_cost.rs`);
    /// `basis` says how each figure was measured, `emulated` marks EMULATED figures.
    pub p6_tracing_cost: Option<TracingCostJson>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TracingCostJson {
    #[serde(flatten)]
    pub cost: super::TracingCost,
    pub basis: &'static str,
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
        p6_tracing_cost: s.tracing.map(|cost| TracingCostJson {
            cost,
            basis: super::TRACING_BASIS,
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
