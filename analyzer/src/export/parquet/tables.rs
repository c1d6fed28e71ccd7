//! The dataset's tables: for each, where its rows come from in the database and every column with
//! its type and meaning. Windows read the `krphase_window_phase` view, the one place the phases'
//! arithmetic and bases are defined, so the dataset's figures are the report's.

use super::columns::Kind::{Bool, Float64, Float64List, Int32, Int64, Utf8};
use super::columns::{Column, col, key, of_run};

/// What a table's query binds: nothing, or `?1` the run id, and for the per-window tables `?2`/`?3` the run's
/// window id range (a run's windows are one contiguous range: a range scan in id order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Params {
    None,
    Run,
    RunWindows,
}

/// One table of the dataset.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub doc: &'static str,
    /// FROM, WHERE and ORDER BY of the query reading one run's rows.
    pub from: &'static str,
    pub params: Params,
    pub columns: &'static [Column],
}

impl Table {
    /// The query reading one run's rows: the columns read from the database, in order.
    pub fn select(&self) -> String {
        let exprs: Vec<&str> = self.columns.iter().filter_map(|c| c.sql).collect();
        format!("SELECT {} {}", exprs.join(", "), self.from)
    }
}

/// The run's context columns every per-run table repeats: a query over thousands of ranks filters
/// and groups by them without a join.
const RUN_CONTEXT: [Column; 3] = [
    of_run("label", Utf8, "the run's label (`import --label`)"),
    of_run("hostname", Utf8, "the host the run ran on"),
    of_run(
        "rank",
        Int32,
        "the run's rank (MPI or launcher rank; NULL when unknown)",
    ),
];

/// The values of [`RUN_CONTEXT`] for one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunContext {
    pub label: Option<String>,
    pub hostname: Option<String>,
    pub rank: Option<i32>,
}

macro_rules! with_run_context {
    ($($c:expr),* $(,)?) => {
        &[$($c,)* RUN_CONTEXT[0], RUN_CONTEXT[1], RUN_CONTEXT[2]]
    };
}

pub const RUNS: Table = Table {
    name: "runs",
    doc: "one row per run (one process's phase file)",
    from: "FROM krphase_run r WHERE r.id = ?1",
    params: Params::Run,
    columns: &[
        col(
            "label",
            Utf8,
            "r.label",
            "the run's label (`import --label`)",
        ),
        col("hostname", Utf8, "r.host", "the host the run ran on"),
        col(
            "rank",
            Int32,
            "r.rank",
            "the run's rank (MPI or launcher rank; NULL when unknown)",
        ),
        col(
            "world_size",
            Int32,
            "r.world_size",
            "the job's size in ranks, as the launcher announced it",
        ),
        col(
            "rank_var",
            Utf8,
            "r.rank_var",
            "the launcher variable the rank came from (OMPI_COMM_WORLD_RANK, SLURM_PROCID, ...)",
        ),
        col("pid", Int64, "r.pid", "process id"),
        col("ppid", Int64, "r.ppid", "parent process id"),
        col("command", Utf8, "r.command", "the process's command line"),
        col(
            "mode",
            Utf8,
            "r.mode",
            "drive (krphase owns replay) or observe (another tool does)",
        ),
        col("passes", Int32, "r.passes", "KRPHASE_PASSES (drive mode)"),
        col(
            "layout",
            Utf8,
            "r.layout",
            "the replay payload's field order",
        ),
        col(
            "kernel_filter",
            Utf8,
            "r.kernel_filter",
            "KRPHASE_KERNEL_FILTER",
        ),
        col(
            "sdk_version",
            Utf8,
            "r.sdk_version",
            "rocprofiler-sdk version",
        ),
        col(
            "format_version",
            Int32,
            "r.format_version",
            "phase file format major",
        ),
        col(
            "format_minor",
            Int32,
            "r.format_minor",
            "phase file format minor",
        ),
        col("path", Utf8, "r.path", "the phase file imported"),
        key(
            "file_hash",
            Utf8,
            "r.file_hash",
            "the phase file's content hash",
        ),
        col(
            "clock_boottime_ns",
            Int64,
            "r.clock_boottime_ns",
            "CLOCK_BOOTTIME at tool start (ns)",
        ),
        col(
            "clock_realtime_ns",
            Int64,
            "r.clock_realtime_ns",
            "CLOCK_REALTIME at the same instant (ns since the Unix epoch): add \
             clock_realtime_ns - clock_boottime_ns to a BOOTTIME stamp for wall-clock time",
        ),
        col(
            "utc_offset_s",
            Int32,
            "r.utc_offset_s",
            "the host's UTC offset (s)",
        ),
        col(
            "start_ns",
            Int64,
            "r.\"start\"",
            "first event (BOOTTIME ns)",
        ),
        col("end_ns", Int64, "r.\"end\"", "last event (BOOTTIME ns)"),
        col(
            "wall_ns",
            Int64,
            "r.\"end\" - r.\"start\"",
            "end_ns - start_ns",
        ),
        col(
            "finalize_ns",
            Int64,
            "r.finalize_ns",
            "the tool's finalize (BOOTTIME ns)",
        ),
        key(
            "truncated",
            Bool,
            "r.truncated",
            "the file ended without its trailer (the process died)",
        ),
        col("events", Int64, "r.events", "records imported"),
        col(
            "trailer_windows",
            Int64,
            "r.trailer_windows",
            "windows the tool counted",
        ),
        col(
            "trailer_declines",
            Int64,
            "r.trailer_declines",
            "declines the tool counted",
        ),
        col(
            "trailer_dispatches",
            Int64,
            "r.trailer_dispatches",
            "dispatches the tool counted",
        ),
        col(
            "dropped",
            Int64,
            "r.trailer_dropped",
            "records the tool dropped (all kinds)",
        ),
        col(
            "dropped_dispatch",
            Int64,
            "r.dropped_dispatch",
            "dispatch records dropped",
        ),
        col(
            "dropped_allocation",
            Int64,
            "r.dropped_allocation",
            "allocation records dropped",
        ),
        col(
            "dropped_window",
            Int64,
            "r.dropped_window",
            "window records dropped",
        ),
        col(
            "dropped_names",
            Int64,
            "r.dropped_names",
            "name records dropped",
        ),
        col(
            "stall_ns",
            Int64,
            "r.stall_ns",
            "the application's wait on the tool's output (ns)",
        ),
        col(
            "stalled",
            Bool,
            "r.stalled",
            "the tool's wait budget ran out",
        ),
        col(
            "reader_note",
            Utf8,
            "r.reader_note",
            "what the reader skipped or emitted early",
        ),
        key(
            "imported_at",
            Utf8,
            "r.imported_at",
            "import time (UTC, ISO 8601)",
        ),
    ],
};

pub const WINDOWS: Table = Table {
    name: "windows",
    doc: "one row per replay window (replayed, declined or opted out), with its phases and the \
          basis of each",
    from: "FROM krphase_window_phase v JOIN krphase_window w ON w.id = v.window_id
           WHERE v.window_id BETWEEN ?2 AND ?3 AND +v.run_id = ?1 ORDER BY v.window_id",
    params: Params::RunWindows,
    columns: with_run_context![
        key(
            "window_id",
            Int64,
            "v.window_id",
            "the window's id in the database"
        ),
        key(
            "dispatch_id",
            Int64,
            "v.dispatch_id",
            "the SDK's dispatch id"
        ),
        col(
            "correlation_id",
            Int64,
            "w.correlation_id",
            "the SDK's correlation id"
        ),
        col("kernel_id", Int64, "w.kernel_id", "the SDK's kernel id"),
        col("kernel", Utf8, "v.kernel", "kernel name"),
        col("agent", Int64, "v.agent", "agent handle"),
        col("queue", Int64, "v.queue", "queue handle"),
        col("thread", Int64, "v.thread", "thread id"),
        key(
            "outcome",
            Utf8,
            "v.outcome",
            "replayed, declined (SDK) or opt_out (tool)"
        ),
        key(
            "reason",
            Utf8,
            "v.reason",
            "why a window was not replayed (none when it was)"
        ),
        col(
            "source",
            Utf8,
            "v.source",
            "drive (PASS callbacks) or observe (dispatch records)"
        ),
        col(
            "requested_passes",
            Int32,
            "v.requested_passes",
            "passes asked for"
        ),
        col("executed_passes", Int32, "v.executed_passes", "passes run"),
        col(
            "start_ns",
            Int64,
            "v.\"start\"",
            "CONFIG ENTER (observe: pass 0's enqueue), BOOTTIME ns"
        ),
        col(
            "end_ns",
            Int64,
            "v.\"end\"",
            "CONFIG EXIT (observe: the last completion), BOOTTIME ns"
        ),
        col("window_ns", Int64, "v.window_ns", "the window's length"),
        col("window_basis", Utf8, "v.window_basis", "basis of window_ns"),
        col(
            "config_ns",
            Int64,
            "v.config_ns",
            "CONFIG ENTER to replay_pass_count return"
        ),
        col("config_basis", Utf8, "v.config_basis", "basis of config_ns"),
        col(
            "prepass_ns",
            Int64,
            "v.prepass_ns",
            "pass-count return to PASS 0 ENTER: lock, drain, snapshot"
        ),
        col(
            "prepass_basis",
            Utf8,
            "v.prepass_basis",
            "basis of prepass_ns"
        ),
        col(
            "drain_ns",
            Int64,
            "v.drain_ns",
            "pre-pass minus the SDK's snapshot time (a joined log)"
        ),
        col("drain_basis", Utf8, "v.drain_basis", "basis of drain_ns"),
        col(
            "snapshot_ns",
            Int64,
            "v.snapshot_ns",
            "the SDK's snapshot time (a joined log)"
        ),
        col(
            "snapshot_basis",
            Utf8,
            "v.snapshot_basis",
            "basis of snapshot_ns"
        ),
        col(
            "pass_ns",
            Int64,
            "v.pass_ns",
            "sum of PASS ENTER to PASS EXIT"
        ),
        col("pass_basis", Utf8, "v.pass_basis", "basis of pass_ns"),
        col(
            "gpu_ns",
            Int64,
            "v.gpu_ns",
            "sum of the passes' GPU execution"
        ),
        col("gpu_basis", Utf8, "v.gpu_basis", "basis of gpu_ns"),
        col(
            "continue_ns",
            Int64,
            "v.continue_ns",
            "sum of PASS EXIT to the replay_continue return"
        ),
        col(
            "continue_basis",
            Utf8,
            "v.continue_basis",
            "basis of continue_ns"
        ),
        col(
            "restore_ns",
            Int64,
            "v.restore_ns",
            "sum of the restores between passes (observe: the SDK's figure)"
        ),
        col(
            "restore_basis",
            Utf8,
            "v.restore_basis",
            "basis of restore_ns"
        ),
        col(
            "restore_bound_ns",
            Int64,
            "v.restore_bound_ns",
            "observe: completion to next enqueue, an upper bound on the restore"
        ),
        col(
            "restore_bound_basis",
            Utf8,
            "v.restore_bound_basis",
            "basis of restore_bound_ns"
        ),
        col("restores", Int32, "v.restores", "restores in the window"),
        col(
            "tail_ns",
            Int64,
            "v.tail_ns",
            "last PASS EXIT to CONFIG EXIT"
        ),
        col("tail_basis", Utf8, "v.tail_basis", "basis of tail_ns"),
        col(
            "stuck_ns",
            Int64,
            "v.stuck_ns",
            "a stuck pass's ENTER to CONFIG EXIT"
        ),
        col(
            "snapshot_bytes",
            Int64,
            "v.snapshot_bytes",
            "bytes the snapshot moved"
        ),
        col(
            "snapshot_bytes_basis",
            Utf8,
            "v.snapshot_bytes_basis",
            "basis of snapshot_bytes"
        ),
        col(
            "bytes_tracked",
            Int64,
            "w.bytes_tracked",
            "tracked allocations' bytes (the tool's estimate's part)"
        ),
        col(
            "bytes_module",
            Int64,
            "w.bytes_module",
            "code objects' bytes (the tool's estimate's part)"
        ),
        col(
            "bytes_upper",
            Int64,
            "w.bytes_upper",
            "upper bound on the snapshot's bytes"
        ),
        col(
            "regions",
            Int32,
            "w.regions",
            "memory regions in the snapshot"
        ),
        key(
            "sdk_log_joined",
            Bool,
            "v.sdk_log_id IS NOT NULL",
            "an SDK log line is joined to the window"
        ),
    ],
};

/// The window's source as the view infers it for rows that predate the column.
const PASS_FROM: &str = "FROM krphase_pass p JOIN krphase_window w ON w.id = p.window_id
     WHERE p.window_id BETWEEN ?2 AND ?3 AND +p.run_id = ?1 ORDER BY p.window_id, p.pass_index";

pub const PASSES: Table = Table {
    name: "passes",
    doc: "one row per pass of a replayed window",
    from: PASS_FROM,
    params: Params::RunWindows,
    columns: with_run_context![
        key(
            "window_id",
            Int64,
            "p.window_id",
            "the pass's window (windows.window_id)"
        ),
        key(
            "dispatch_id",
            Int64,
            "w.dispatch_id",
            "the window's dispatch id"
        ),
        key("pass_index", Int32, "p.pass_index", "0-based pass number"),
        col("start_ns", Int64, "p.\"start\"", "PASS ENTER (BOOTTIME ns)"),
        col("end_ns", Int64, "p.\"end\"", "PASS EXIT (BOOTTIME ns)"),
        col(
            "host_ns",
            Int64,
            "p.\"end\" - p.\"start\"",
            "PASS ENTER to PASS EXIT"
        ),
        col(
            "host_basis",
            Utf8,
            "CASE WHEN p.\"end\" - p.\"start\" IS NOT NULL THEN 'in_process' END",
            "basis of host_ns",
        ),
        col(
            "complete_host_ns",
            Int64,
            "p.complete_host",
            "host time at the pass's COMPLETE callback (observe)"
        ),
        col(
            "gpu_start_ns",
            Int64,
            "p.gpu_start",
            "the pass's kernel starts on the GPU"
        ),
        col("gpu_end_ns", Int64, "p.gpu_end", "... and ends"),
        col(
            "gpu_ns",
            Int64,
            "p.gpu_end - p.gpu_start",
            "the pass's GPU execution"
        ),
        col(
            "gpu_basis",
            Utf8,
            "CASE WHEN p.gpu_end - p.gpu_start IS NOT NULL THEN 'in_process' END",
            "basis of gpu_ns",
        ),
        col(
            "continue_ns",
            Int64,
            "p.continue_ns",
            "PASS EXIT to the replay_continue return"
        ),
        col(
            "continue_basis",
            Utf8,
            "CASE WHEN p.continue_ns IS NOT NULL THEN 'in_process' END",
            "basis of continue_ns",
        ),
        col(
            "restore_start_ns",
            Int64,
            "p.restore_start",
            "the restore after this pass starts"
        ),
        col(
            "restore_end_ns",
            Int64,
            "p.restore_end",
            "... and ends (the next PASS ENTER)"
        ),
        col(
            "restore_ns",
            Int64,
            "p.restore_end - p.restore_start",
            "the restore after this pass"
        ),
        col(
            "restore_basis",
            Utf8,
            "CASE WHEN p.restore_end - p.restore_start IS NULL THEN NULL
                  WHEN COALESCE(w.source, CASE WHEN w.pass_count_return IS NULL
                       AND w.first_pass_enter IS NULL THEN 'observe' END) = 'observe'
                  THEN 'dispatch' ELSE 'in_process' END",
            "basis of restore_ns: dispatch (observe mode) marks completion to the next enqueue, \
             an upper bound on the restore",
        ),
        key(
            "incomplete",
            Bool,
            "p.incomplete",
            "ENTER without EXIT (a stuck pass)"
        ),
    ],
};

pub const DISPATCHES: Table = Table {
    name: "dispatches",
    doc: "one row per dispatch recorded outside a replay window: the tax dispatches pay while \
          replay is active, and observe mode's dispatch records",
    from: "FROM krphase_dispatch d WHERE d.run_id = ?1 ORDER BY d.dispatch_id, d.id",
    params: Params::Run,
    columns: with_run_context![
        key("id", Int64, "d.id", "the record's id in the database"),
        col(
            "dispatch_id",
            Int64,
            "d.dispatch_id",
            "the SDK's dispatch id"
        ),
        col(
            "correlation_id",
            Int64,
            "d.correlation_id",
            "the SDK's correlation id"
        ),
        col("kernel", Utf8, "d.kernel", "kernel name"),
        col("agent", Int64, "d.agent", "agent handle"),
        col("queue", Int64, "d.queue", "queue handle"),
        col("thread", Int64, "d.thread", "thread id"),
        key(
            "had_config",
            Bool,
            "d.had_config",
            "a CONFIG pair (opt-out or SDK decline) preceded it"
        ),
        col(
            "start_ns",
            Int64,
            "d.\"start\"",
            "enqueue callback enter (BOOTTIME ns)"
        ),
        col(
            "end_ns",
            Int64,
            "d.\"end\"",
            "enqueue callback exit (BOOTTIME ns)"
        ),
        col(
            "enqueue_ns",
            Int64,
            "d.\"end\" - d.\"start\"",
            "the enqueue's host time (in_process)"
        ),
        col(
            "gpu_start_ns",
            Int64,
            "d.gpu_start",
            "the kernel starts on the GPU"
        ),
        col("gpu_end_ns", Int64, "d.gpu_end", "... and ends"),
        col(
            "gpu_ns",
            Int64,
            "d.gpu_end - d.gpu_start",
            "the kernel's GPU execution (in_process)"
        ),
    ],
};

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

pub const COUNTERS: Table = Table {
    name: "counters",
    doc: "one row per hardware counter value a pass delivered through the SDK's dispatch \
          counting service (the tool's counter records), summed over the counter's dimension \
          instances: the counters beside the passes they were read in",
    from: "FROM krphase_counter c WHERE c.run_id = ?1
           ORDER BY c.dispatch_id, c.pass_index, c.counter_id, c.rowid",
    params: Params::Run,
    columns: with_run_context![
        col(
            "window_id",
            Int64,
            "c.window_id",
            "the replay window the value belongs to (windows.window_id; NULL outside one)"
        ),
        key(
            "dispatch_id",
            Int64,
            "c.dispatch_id",
            "the SDK's dispatch id"
        ),
        key(
            "pass_index",
            Int32,
            "c.pass_index",
            "0-based pass the value was read in (passes.pass_index)"
        ),
        key("counter_id", Int64, "c.counter_id", "the SDK's counter id"),
        col(
            "counter",
            Utf8,
            "c.name",
            "the counter's name (NULL when the file did not name it)"
        ),
        key(
            "value",
            Float64,
            "c.value",
            "the value, summed over the counter's dimension instances"
        ),
        key(
            "instances",
            Int32,
            "c.instances",
            "instance records summed (saturating at 255)"
        ),
        key(
            "basis",
            Utf8,
            "'sdk_counting'",
            "basis of value: the SDK's dispatch counting service"
        ),
    ],
};

/// Every table, in the order they are written and documented.
pub const TABLES: &[Table] = &[RUNS, WINDOWS, PASSES, DISPATCHES, MEASUREMENTS, COUNTERS];
