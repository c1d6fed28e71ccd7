//! The run time of each timed launch of a measurement as its phase files measured it: for each
//! launch (one rocprofv3 command; one phase file, or one per group under application replay),
//! the sum over its files of the tool's start to the file's last event (CLOCK_BOOTTIME, in
//! process). It leaves out the launcher, the process's start before the tool loads and its exit
//! after the last event, so it is not the harness's wall time; it is what a replay_perf.py row,
//! which keeps only median, min and max of its runs, still holds per run.

use anyhow::Result;
use rusqlite::Connection;

use super::measurements::StoredMeasurement;

/// Seconds per timed launch, in launch order; empty when a launch has a file without events.
pub fn launch_times(conn: &Connection, m: &StoredMeasurement) -> Result<Vec<f64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT \"end\" - COALESCE(clock_boottime_ns, \"start\") FROM krphase_run WHERE id = ?1",
    )?;
    let mut out = Vec::with_capacity(m.launches.len());
    for launch in &m.launches {
        let mut total = 0i64;
        for run in launch {
            let span: Option<i64> = stmt.query_row([run], |r| r.get(0))?;
            match span {
                Some(ns) if ns >= 0 => total += ns,
                _ => return Ok(Vec::new()),
            }
        }
        out.push(total as f64 / 1e9);
    }
    Ok(out)
}
