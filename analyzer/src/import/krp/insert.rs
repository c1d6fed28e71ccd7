//! The inserting side of an import: cached statements that bind and step the rows of one run.

use anyhow::Result;
use krphase_windows::{CounterReading, PlainDispatch};
use rusqlite::{Transaction, params};

use super::Imported;
use super::rows::{Row, WindowRows, i};

/// Cached insert statements for one run.
pub(super) struct Inserter<'t> {
    run_id: i64,
    window: rusqlite::CachedStatement<'t>,
    /// One pass row per statement, as every other row: an INSERT of several rows makes SQLite
    /// open a statement journal for each execution (so that a failing row could be undone
    /// alone), which cost more than the steps it saved.
    pass: rusqlite::CachedStatement<'t>,
    dispatch: rusqlite::CachedStatement<'t>,
    counter: rusqlite::CachedStatement<'t>,
    conn: &'t Transaction<'t>,
}

impl<'t> Inserter<'t> {
    pub(super) fn new(tx: &'t Transaction<'t>, run_id: i64) -> Result<Self> {
        Ok(Inserter {
            run_id,
            window: tx.prepare_cached(
                "INSERT INTO krphase_window (run_id, dispatch_id, correlation_id, kernel_id, kernel,
                   agent, queue, thread, outcome, reason, requested_passes, executed_passes,
                   \"start\", \"end\", pass_count_return, first_pass_enter, last_pass_exit,
                   pass_ns, gpu_ns, restore_ns, restores, bytes_estimate, bytes_upper, regions,
                   continue_ns, stuck_ns, source, restore_in_pass)
                 VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27,?28)",
            )?,
            pass: tx.prepare_cached(
                "INSERT INTO krphase_pass (window_id, run_id, pass_index, \"start\", \"end\",
                   gpu_start, gpu_end, restore_start, restore_end, incomplete, continue_ns,
                   complete_host)
                 VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
            )?,
            dispatch: tx.prepare_cached(
                "INSERT INTO krphase_dispatch (run_id, dispatch_id, correlation_id, kernel, agent,
                   queue, thread, had_config, \"start\", \"end\", gpu_start, gpu_end)
                 VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
            )?,
            counter: tx.prepare_cached(
                "INSERT INTO krphase_counter (run_id, window_id, dispatch_id, pass_index,
                   counter_id, name, value, instances)
                 VALUES (?1, COALESCE(?2, (SELECT MAX(id) FROM krphase_window
                   WHERE run_id = ?1 AND dispatch_id = ?3)), ?3,?4,?5,?6,?7,?8)",
            )?,
            conn: tx,
        })
    }

    /// One counter value; without `window_id`, the run's window of that dispatch (if any).
    fn counter(&mut self, c: &CounterReading, window_id: Option<i64>) -> Result<()> {
        self.counter.execute(params![
            self.run_id,
            window_id,
            c.dispatch_id as i64,
            i64::from(c.pass),
            c.counter as i64,
            c.name,
            c.value.0,
            i64::from(c.instances),
        ])?;
        Ok(())
    }

    pub(super) fn row(&mut self, r: &Row, out: &mut Imported) -> Result<()> {
        match r {
            Row::Window(w, counters) => {
                if w.outcome == "opt_out" {
                    out.declines += 1;
                } else {
                    out.windows += 1;
                }
                out.counters += counters.len() as u64;
                let window_id = self.window(w)?;
                for c in counters {
                    self.counter(c, Some(window_id))?;
                }
            }
            Row::Plain(p) => {
                out.dispatches += 1;
                self.plain(p)?;
            }
            Row::Counter(c) => {
                out.counters += 1;
                self.counter(c, None)?;
            }
        }
        Ok(())
    }

    /// Inserts a window row and its passes; returns the window's id.
    fn window(&mut self, w: &WindowRows) -> Result<i64> {
        self.window.execute(params![
            self.run_id,
            w.dispatch_id,
            w.correlation_id,
            w.kernel_id,
            w.kernel,
            w.agent,
            w.queue,
            w.thread,
            w.outcome,
            w.reason.as_ref(),
            w.requested_passes,
            w.executed_passes,
            w.start,
            w.end,
            w.pass_count_return,
            w.first_pass_enter,
            w.last_pass_exit,
            w.pass_ns,
            w.gpu_ns,
            w.restore_ns,
            w.restores,
            w.bytes_estimate,
            w.bytes_upper,
            w.regions,
            w.continue_ns,
            w.stuck_ns,
            w.source,
            w.restore_in_pass,
        ])?;
        let window_id = self.conn.last_insert_rowid();
        for values in &w.passes {
            self.pass.raw_bind_parameter(1, window_id)?;
            self.pass.raw_bind_parameter(2, self.run_id)?;
            for (c, v) in values.iter().enumerate() {
                self.pass.raw_bind_parameter(c + 3, v)?;
            }
            self.pass.raw_execute()?;
        }
        Ok(window_id)
    }

    fn plain(&mut self, p: &PlainDispatch) -> Result<()> {
        self.dispatch.execute(params![
            self.run_id,
            p.dispatch_id as i64,
            i(p.correlation_id),
            p.kernel_name,
            i(p.agent),
            i(p.queue),
            p.thread,
            p.had_config,
            i(p.enqueue_enter),
            i(p.enqueue_exit),
            i(p.gpu_start),
            i(p.gpu_end),
        ])?;
        Ok(())
    }
}
