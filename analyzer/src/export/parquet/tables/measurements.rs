//! The `measurements` table: whole-run measurements, one row per link to a run, and those linked
//! to no run.

use super::{Params, Table};
use crate::export::parquet::columns::Kind::{Float64, Float64List, Int32, Int64, Utf8};
use crate::export::parquet::columns::{Column, col, key};

/// A measurement's own columns; [`MEASUREMENTS`] and [`UNLINKED_MEASUREMENTS`] read them from
/// different links (`x`).
const MEASUREMENT_COLUMNS: &[Column] = &[
    key(
        "measurement_id",
        Int64,
        "m.id",
        "the measurement's id (one per harness row)",
    ),
    col(
        "role",
        Utf8,
        "x.role",
        "timed (a timed launch's run), warmup, or NULL (linked to no run)",
    ),
    col(
        "launch",
        Int64,
        "x.launch",
        "the timed launch the run belongs to",
    ),
    col(
        "source",
        Utf8,
        "m.source",
        "replay_perf, rocprofv3-benchmark or krphase-bench",
    ),
    col(
        "experiment",
        Utf8,
        "m.experiment",
        "the harness's experiment",
    ),
    col("variant", Utf8, "m.variant", "the experiment's variant"),
    col("mode", Utf8, "m.mode", "the collection mode"),
    col("detail", Utf8, "m.detail", "the harness's detail text"),
    col("metric", Utf8, "m.metric", "wall_time or cpu_time"),
    col(
        "median_s",
        Float64,
        "m.median_s",
        "median of the timed runs (s, harness basis)",
    ),
    col("min_s", Float64, "m.min_s", "fastest timed run (s)"),
    col("max_s", Float64, "m.max_s", "slowest timed run (s)"),
    col("samples", Int64, "m.samples", "timed runs"),
    col(
        "sample_values_s",
        Float64List,
        "(SELECT CASE WHEN COUNT(*) > 0 THEN json_group_array(value_s) END FROM
           (SELECT value_s FROM krphase_measurement_sample s WHERE s.measurement_id = m.id
            ORDER BY s.seq))",
        "each timed run's value in run order (s; NULL when the source kept none: a CSV)",
    ),
    col("failures", Utf8, "m.failures", "failed timed runs"),
    col(
        "counter_groups",
        Int32,
        "m.counter_groups",
        "counter groups (passes) of the command",
    ),
    col(
        "projected_s",
        Float64,
        "m.projected_s",
        "the harness's projected application-replay time",
    ),
    col(
        "speedup",
        Float64,
        "m.speedup",
        "the harness's speedup against application replay",
    ),
    col(
        "mixed_modes",
        Utf8,
        "m.mixed_modes",
        "modes a benchmark database's row mixes",
    ),
    col(
        "run_order",
        Utf8,
        "m.run_order",
        "the order interleaved builds' runs ran in",
    ),
    col(
        "peak_child_rss_kib",
        Int64,
        "m.peak_child_rss_kib",
        "peak RSS of the measured command",
    ),
    col("command", Utf8, "m.command", "the measured command"),
    col("outdir", Utf8, "m.outdir", "its output directory"),
    col(
        "measurement_label",
        Utf8,
        "m.label",
        "the measurement's label",
    ),
    col(
        "imported_at",
        Utf8,
        "m.imported_at",
        "import time (UTC, ISO 8601)",
    ),
];

pub const MEASUREMENTS: Table = Table {
    name: "measurements",
    doc: "one row per link of a whole-run measurement (harness CSV, benchmark database, `krphase \
          bench`) to a run: a measurement of several runs is in each of their partitions",
    from: "FROM (SELECT mr.measurement_id, 'timed' AS role,
                        (SELECT l.launch FROM krphase_measurement_launch l
                         WHERE l.measurement_id = mr.measurement_id AND l.run_id = mr.run_id) AS launch
                 FROM krphase_measurement_run mr WHERE mr.run_id = ?1
                 UNION ALL
                 SELECT mw.measurement_id, 'warmup', NULL
                 FROM krphase_measurement_warmup mw WHERE mw.run_id = ?1) x
           JOIN krphase_measurement m ON m.id = x.measurement_id ORDER BY m.id, x.role",
    params: Params::Run,
    columns: MEASUREMENT_COLUMNS,
};

/// Measurements linked to no run (a CSV row whose phase files were not imported), in the
/// partition Hive names for NULL; exported only with every run.
pub const UNLINKED_MEASUREMENTS: Table = Table {
    name: "measurements",
    doc: MEASUREMENTS.doc,
    from: "FROM (SELECT NULL AS role, NULL AS launch) x JOIN krphase_measurement m
           WHERE NOT EXISTS (SELECT 1 FROM krphase_measurement_run mr WHERE mr.measurement_id = m.id)
             AND NOT EXISTS (SELECT 1 FROM krphase_measurement_warmup mw WHERE mw.measurement_id = m.id)
           ORDER BY m.id",
    params: Params::None,
    columns: MEASUREMENT_COLUMNS,
};
