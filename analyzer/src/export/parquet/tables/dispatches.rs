//! The `dispatches` table: one row per dispatch recorded outside a replay window.

use super::{Params, RUN_CONTEXT, Table, with_run_context};
use crate::export::parquet::columns::Kind::{Bool, Int64, Utf8};
use crate::export::parquet::columns::{col, key};

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
        col(
            "kernel",
            Utf8,
            "krphase_kernel_name(d.kernel)",
            "kernel name as rocprofv3 shows it (demangled, .kd stripped; --truncate-kernels, --mangled-kernels)"
        ),
        col(
            "kernel_symbol",
            Utf8,
            "d.kernel",
            "the SDK's kernel name: the descriptor's ELF symbol, mangled, .kd kept"
        ),
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
