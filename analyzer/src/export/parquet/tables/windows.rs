//! The `windows` table: one row per replay window, with its phases and the basis of each, read
//! from the `krphase_window_phase` view.

use super::{Params, RUN_CONTEXT, Table, with_run_context};
use crate::export::parquet::columns::Kind::{Bool, Int32, Int64, Utf8};
use crate::export::parquet::columns::{col, key};

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
        col(
            "kernel",
            Utf8,
            "krphase_kernel_name(v.kernel)",
            "kernel name as rocprofv3 shows it (demangled, .kd stripped; --truncate-kernels, --mangled-kernels)"
        ),
        col(
            "kernel_symbol",
            Utf8,
            "v.kernel",
            "the SDK's kernel name: the descriptor's ELF symbol, mangled, .kd kept"
        ),
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
