//! The `passes` table: one row per pass of a replayed window.

use super::{Params, RUN_CONTEXT, Table, with_run_context};
use crate::export::parquet::columns::Kind::{Bool, Int32, Int64, Utf8};
use crate::export::parquet::columns::{col, key};

/// A run's passes in window and pass order, each joined to its window (the restore basis reads the
/// window's source).
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
