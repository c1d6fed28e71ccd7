//! The `counters` table: one row per hardware counter value a pass delivered.

use super::{Params, RUN_CONTEXT, Table, with_run_context};
use crate::export::parquet::columns::Kind::{Float64, Int32, Int64, Utf8};
use crate::export::parquet::columns::{col, key};

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
