//! The dataset's tables: for each, where its rows come from in the database and every column with
//! its type and meaning. Windows read the `krphase_window_phase` view, the one place the phases'
//! arithmetic and bases are defined, so the dataset's figures are the report's.

mod counters;
mod dispatches;
mod measurements;
mod passes;
mod runs;
mod windows;

use super::columns::Kind::{Int32, Utf8};
use super::columns::{Column, of_run};

pub use counters::COUNTERS;
pub use dispatches::DISPATCHES;
pub use measurements::{MEASUREMENTS, UNLINKED_MEASUREMENTS};
pub use passes::PASSES;
pub use runs::RUNS;
pub use windows::WINDOWS;

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

/// A per-run table's columns: its own, then [`RUN_CONTEXT`]'s.
macro_rules! with_run_context {
    ($($c:expr),* $(,)?) => {
        &[$($c,)* RUN_CONTEXT[0], RUN_CONTEXT[1], RUN_CONTEXT[2]]
    };
}
use with_run_context;

/// Every table, in the order they are written and documented.
pub const TABLES: &[Table] = &[RUNS, WINDOWS, PASSES, DISPATCHES, MEASUREMENTS, COUNTERS];
