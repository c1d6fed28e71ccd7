//! Whole-run measurements in the analyzer database (`krphase_measurement`, and
//! `krphase_measurement_run` linking a measurement to the phase-file runs it produced): the row
//! type every source produces, where rows come from, and the writes. `krphase bench` and the
//! importers (`import-harness`, `import-benchmark`) share this one implementation.

use std::fmt;
use std::path::Path;

use anyhow::Result;
use rusqlite::{Connection, params};

use super::benchmark::CollectionMode;

/// `krphase_measurement.source` of rows measured by `krphase bench`.
pub const SOURCE_BENCH: &str = "krphase-bench";
/// `krphase_measurement.source` of rows imported from a replay_perf.py (or `krphase bench`) CSV.
pub const SOURCE_REPLAY_PERF: &str = "replay_perf";
/// `krphase_measurement.source` of rows imported from a rocprofv3-benchmark database.
pub const SOURCE_BENCHMARK_DB: &str = "rocprofv3-benchmark";

/// Failed timed runs of a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failures {
    Count(u32),
    /// No timed run succeeded.
    All,
}

impl fmt::Display for Failures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failures::Count(n) => write!(f, "{n}"),
            Failures::All => f.write_str("all"),
        }
    }
}

/// Statistics of the successful timed runs (absent when every run failed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub peak_child_rss_kib: u64,
}

/// One whole-run measurement: one CSV row, one `krphase_measurement` row.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasurementRow {
    pub experiment: String,
    pub variant: String,
    pub mode: CollectionMode,
    pub detail: String,
    pub timing: Option<Timing>,
    pub samples: u32,
    pub failures: Failures,
    /// The full rocprofv3 command, arguments joined with single spaces.
    pub command: String,
}

impl MeasurementRow {
    /// The `-d` (or `--output-directory`) argument of the command, if any.
    pub fn output_dir(&self) -> Option<&str> {
        output_dir_of(&self.command)
    }

    /// The output directory of each command of the row: one, or several for a row derived from
    /// other measurements (commands joined with " ; ", e.g. P1's application-replay total).
    pub fn output_dirs(&self) -> Vec<&str> {
        self.command
            .split(" ; ")
            .filter_map(output_dir_of)
            .collect()
    }
}

fn output_dir_of(command: &str) -> Option<&str> {
    let mut tokens = command.split(' ');
    while let Some(t) = tokens.next() {
        if t == "--" {
            break;
        }
        if t == "-d" || t == "--output-directory" {
            return tokens.next();
        }
        if let Some(v) = t.strip_prefix("--output-directory=") {
            return Some(v);
        }
    }
    None
}

/// Inserts one measurement row and returns its id. With `replace`, an earlier row of the same
/// measurement (source, experiment, variant, command, output directory) goes first, so
/// re-importing a file does not duplicate it.
pub fn insert_measurement(
    conn: &Connection,
    source: &str,
    row: &MeasurementRow,
    outdir: Option<&Path>,
    label: Option<&str>,
    replace: bool,
) -> Result<i64> {
    let outdir = outdir.map(|p| p.display().to_string());
    if replace {
        delete_measurement(conn, source, row, outdir.as_deref())?;
    }
    let t = row.timing;
    conn.execute(
        "INSERT INTO krphase_measurement (source, experiment, variant, mode, detail, median_s, \
         min_s, max_s, peak_child_rss_kib, samples, failures, command, outdir, label, \
         imported_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            source,
            row.experiment,
            row.variant,
            row.mode.as_str(),
            row.detail,
            t.map(|t| t.median_s),
            t.map(|t| t.min_s),
            t.map(|t| t.max_s),
            t.map(|t| t.peak_child_rss_kib as i64),
            row.samples,
            row.failures.to_string(),
            row.command,
            outdir,
            label,
            super::now_utc(),
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

fn delete_measurement(
    conn: &Connection,
    source: &str,
    row: &MeasurementRow,
    outdir: Option<&str>,
) -> Result<()> {
    let key = params![source, row.experiment, row.variant, row.command, outdir];
    conn.execute(
        "DELETE FROM krphase_measurement_run WHERE measurement_id IN (SELECT id FROM \
         krphase_measurement WHERE source = ?1 AND experiment = ?2 AND variant = ?3 AND command \
         = ?4 AND outdir IS ?5)",
        key,
    )?;
    conn.execute(
        "DELETE FROM krphase_measurement WHERE source = ?1 AND experiment = ?2 AND variant = ?3 \
         AND command = ?4 AND outdir IS ?5",
        key,
    )?;
    Ok(())
}

/// Links an imported run to a measurement (linking twice is a no-op).
pub fn link_run(conn: &Connection, measurement_id: i64, run_id: i64) -> Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO krphase_measurement_run (measurement_id, run_id) VALUES (?1, ?2)",
        params![measurement_id, run_id],
    )?;
    Ok(())
}
