//! The `runs` table: one row per run (one process's phase file).

use super::{Params, Table};
use crate::export::parquet::columns::Kind::{Bool, Int32, Int64, Utf8};
use crate::export::parquet::columns::{col, key};

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
            "emulated",
            Bool,
            crate::db::emulated::RUN_IS_EMULATED_SQL,
            "true when the run came from krphase-emu, the emulated SDK and device (EMULATED)",
        ),
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
