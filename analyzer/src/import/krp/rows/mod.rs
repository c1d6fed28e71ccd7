//! The rows the decoding thread hands the inserting thread: one reconstructed output turned into
//! rows ready to bind ([`window`] shapes a window's), the run's summary gathered on the way.

mod window;

use krphase_windows::{CounterReading, Output, PlainDispatch};

use crate::db;
pub use window::{PassValues, WindowRows};

/// `a - b` when both are known (SQL's NULL arithmetic).
fn minus(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a? - b?)
}

pub(super) fn i(v: Option<u64>) -> Option<i64> {
    v.map(|x| x as i64)
}

/// What the decoding thread hands the inserting thread: rows ready to bind.
// Rows travel by value in batches that are reused: boxing the large variant would add an
// allocation (and a cross-thread free) per window.
#[allow(clippy::large_enum_variant)]
pub enum Row {
    /// A window or an opt-out, with the counter values of its passes.
    Window(WindowRows, Vec<CounterReading>),
    Plain(PlainDispatch),
    Counter(CounterReading),
}

/// Turns one reconstructed output into its rows, adding windows to the run's summary.
pub(super) struct RowMaker {
    pub(super) summary: db::summary::Builder,
    pub(super) scratch: db::phases::WindowRow,
}

impl RowMaker {
    pub(super) fn row(&mut self, o: Output) -> Row {
        let rows = match o {
            Output::Window(mut w) => {
                let kernel = w.kernel_name.take();
                let counters = w
                    .passes
                    .iter_mut()
                    .flat_map(|p| p.counters.drain(..))
                    .collect();
                (WindowRows::window(&w, kernel), counters)
            }
            Output::Decline(mut d) => {
                let kernel = d.kernel_name.take();
                (WindowRows::decline(&d, kernel), Vec::new())
            }
            Output::Plain(p) => {
                let enqueue = minus(i(p.enqueue_exit), i(p.enqueue_enter));
                let seen = self.summary.rows_seen();
                seen.plain(p.dispatch_id as i64, p.had_config, enqueue);
                return Row::Plain(p);
            }
            Output::Counter(c) => return Row::Counter(c),
        };
        let seen = self.summary.rows_seen();
        if rows.0.outcome != "replayed" {
            seen.declined(rows.0.dispatch_id);
        }
        for p in &rows.0.passes {
            seen.pass(
                p[0].unwrap_or(0),
                minus(p[2], p[1]),
                minus(p[4], p[3]),
                p[7] == Some(1),
            );
        }
        db::summary::fill(&rows.0.fresh(), &mut self.scratch);
        self.summary.add(&self.scratch);
        Row::Window(rows.0, rows.1)
    }
}
