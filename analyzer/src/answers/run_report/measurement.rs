//! The whole-run measurement linked to a run, with each phase's share of its wall time and of the
//! overhead over a single-pass reference.

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension};

use super::{Measurement, PhaseShare, PhaseStats};
use crate::db::basis::Basis;
use crate::stats::ratio;

/// The whole-run measurement linked to the run, with a single-pass reference from the same
/// source (same experiment first) to measure the overhead against.
pub(super) fn linked_measurement(
    conn: &Connection,
    run_id: i64,
    phase_stats: &[PhaseStats],
    window_total: i64,
) -> Result<Option<Measurement>> {
    type Row = (
        i64,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<f64>,
        Option<String>,
    );
    let row: Option<Row> = conn
        .query_row(
            "SELECT measurement_id, experiment, variant, mode, median_s, source
             FROM krphase_run_measurement WHERE run_id = ?1 ORDER BY measurement_id DESC LIMIT 1",
            [run_id],
            |r| Row::try_from(r),
        )
        .optional()?;
    let Some((id, experiment, variant, mode, median_s, source)) = row else {
        return Ok(None);
    };
    let reference: Option<(Option<String>, Option<f64>)> = conn
        .query_row(
            "SELECT variant, median_s FROM krphase_measurement
             WHERE mode = 'single-pass' AND median_s IS NOT NULL AND source IS ?1
             ORDER BY (experiment IS ?2) DESC, id DESC LIMIT 1",
            rusqlite::params![source, experiment],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (reference_variant, reference_median_s) = reference.unwrap_or((None, None));
    let overhead_s = match (median_s, reference_median_s) {
        (Some(m), Some(r)) => Some(m - r),
        _ => None,
    };
    let phases = phase_stats
        .iter()
        .filter(|p| p.samples > 0)
        .map(|p| {
            let s = p.total_ns as f64 / 1e9;
            PhaseShare {
                phase: p.phase.clone(),
                share_of_wall: median_s.and_then(|m| ratio(s, m)),
                share_of_overhead: overhead_s.and_then(|o| ratio(s, o)),
            }
        })
        .collect();
    let drain = phase_stats
        .iter()
        .find(|p| p.phase == "drain")
        .expect("every phase has a row");
    Ok(Some(Measurement {
        measurement_id: id,
        experiment,
        variant,
        mode,
        median_s,
        reference_variant,
        reference_median_s,
        overhead_s,
        phases,
        drain_fraction_of_window: (drain.samples > 0)
            .then(|| ratio(drain.total_ns as f64, window_total as f64))
            .flatten(),
        basis: vec![Basis::InProcess, Basis::Harness],
        invalid_reason: crate::db::measurements::read_measurements(
            conn,
            &crate::db::measurements::MeasurementFilter::Id(id),
        )?
        .first()
        .and_then(|m| m.invalid_reason()),
    }))
}
