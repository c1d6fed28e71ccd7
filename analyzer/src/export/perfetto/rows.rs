//! Reading a run's windows, passes and plain dispatches for the trace, as plain rows sent in
//! batches to the thread that draws them ([`super::windows`]): reading the database and encoding
//! the trace then run on two cores. One query per table for the run, passes merged into their
//! windows by id (a query per window would cost more than all the writing at a million windows).

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc::SyncSender;

use anyhow::{Result, anyhow};
use rusqlite::Connection;
use rusqlite::types::ValueRef;
use rustc_hash::FxHashMap as HashMap;

use super::model::RunInfo;
use crate::db::basis::Basis;

/// Windows per batch: large enough that the channel costs nothing per window, small enough that
/// the drawing thread starts at once and memory stays flat.
const BATCH: usize = 4096;

/// What the reading thread sends, run after run: the run, its windows (in id order) and plain
/// dispatches in batches, then its end.
pub enum Batch {
    Run(RunInfo),
    Windows(WindowBatch),
    Plain(Vec<PlainDispatch>),
    RunEnd,
}

/// Windows and, beside them, their passes (each window holds its range of `passes`).
#[derive(Default)]
pub struct WindowBatch {
    pub windows: Vec<WindowSlices>,
    pub passes: Vec<Pass>,
}

/// A basis code as the view gives it: one of [`Basis`]'s codes without a copy per window.
pub type Code = Cow<'static, str>;

/// One window as the trace needs it.
pub struct WindowSlices {
    pub id: i64,
    pub dispatch: i64,
    pub kernel: Arc<str>,
    pub tid: i64,
    pub queue: Option<i64>,
    /// `None` for a replayed window; else its outcome and the view's reason.
    pub declined: Option<(String, String)>,
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub passes: Option<i64>,
    pub pass_count_return: Option<i64>,
    pub first_enter: Option<i64>,
    pub last_exit: Option<i64>,
    pub snapshot_ns: Option<i64>,
    pub drain_ns: Option<i64>,
    pub snapshot_bytes: Option<i64>,
    pub stuck: bool,
    /// The view's basis of the window, restore and snapshot bytes.
    pub window_basis: Option<Code>,
    pub restore_basis: Option<Code>,
    pub bytes_basis: Option<Code>,
    /// Observe mode: the slice between a completion and the next enqueue is the restore's
    /// upper bound (the SDK's restore lies inside it), named so.
    pub restore_is_bound: bool,
    /// `sdk_phase_line` or `sdk_log`: where the snapshot time came from.
    pub snapshot_basis: Option<Code>,
    /// This window's passes in its batch's `passes`.
    pub pass_rows: Range<usize>,
    /// The hardware counters of its passes: (pass index, name, value).
    pub counters: Vec<(i64, String, f64)>,
}

/// One pass row.
pub struct Pass {
    pub window: i64,
    pub idx: i64,
    pub start: Option<i64>,
    pub exit: Option<i64>,
    pub gpu: (Option<i64>, Option<i64>),
    pub restore: (Option<i64>, Option<i64>),
    pub continue_ns: Option<i64>,
    pub incomplete: bool,
}

/// A dispatch outside any window.
pub struct PlainDispatch {
    pub dispatch: i64,
    pub kernel: Arc<str>,
    pub tid: i64,
    pub queue: Option<i64>,
    pub span: (Option<i64>, Option<i64>),
    pub gpu: (Option<i64>, Option<i64>),
}

const WINDOWS_SQL: &str =
    "SELECT w.id, w.dispatch_id, COALESCE(w.kernel, '?'), COALESCE(w.thread, 0), w.queue,
        w.outcome, v.reason, w.executed_passes, w.\"start\", w.\"end\", w.pass_count_return,
        w.first_pass_enter, w.last_pass_exit, v.snapshot_ns, v.drain_ns, v.snapshot_bytes,
        w.stuck_ns, v.window_basis, COALESCE(v.restore_bound_basis, v.restore_basis),
        v.snapshot_bytes_basis, v.restore_bound_basis IS NOT NULL, v.snapshot_basis
 FROM krphase_window w JOIN krphase_window_phase v ON v.window_id = w.id
 WHERE w.id BETWEEN (SELECT MIN(id) FROM krphase_window WHERE run_id = ?1)
                AND (SELECT MAX(id) FROM krphase_window WHERE run_id = ?1)
   -- A run's windows are one id range: walked in id order, no sort (the unary + keeps the
   -- planner off the run index).
   AND +w.run_id = ?1
 ORDER BY w.id";

const PASSES_SQL: &str = "SELECT window_id, pass_index, \"start\", \"end\", gpu_start, gpu_end,
        restore_start, restore_end, continue_ns, incomplete
 FROM krphase_pass
 WHERE window_id BETWEEN (SELECT MIN(id) FROM krphase_window WHERE run_id = ?1)
                     AND (SELECT MAX(id) FROM krphase_window WHERE run_id = ?1)
   AND run_id = ?1
 ORDER BY window_id, pass_index";

const PLAIN_SQL: &str =
    "SELECT dispatch_id, COALESCE(kernel, '?'), COALESCE(thread, 0), queue, \"start\", \"end\",
        gpu_start, gpu_end FROM krphase_dispatch WHERE run_id = ?1 ORDER BY id";

/// Kernel names of a run, each held once and shared by its windows.
#[derive(Default)]
struct Kernels(HashMap<String, Arc<str>>);

impl Kernels {
    fn get(&mut self, r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Arc<str>> {
        let s = r.get_ref(i)?.as_str()?;
        if let Some(k) = self.0.get(s) {
            return Ok(Arc::clone(k));
        }
        let k: Arc<str> = Arc::from(s);
        self.0.insert(s.to_owned(), Arc::clone(&k));
        Ok(k)
    }
}

/// A basis code from the view: the static code when it is one of [`Basis`]'s.
fn code(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Code>> {
    let Some(s) = r.get_ref(i)?.as_str_or_null()? else {
        return Ok(None);
    };
    Ok(Some(match Basis::ALL.iter().find(|b| b.code() == s) {
        Some(b) => Cow::Borrowed(b.code()),
        None => Cow::Owned(s.to_owned()),
    }))
}

fn window_row(r: &rusqlite::Row<'_>, kernels: &mut Kernels) -> rusqlite::Result<WindowSlices> {
    let declined = match r.get_ref(5)? {
        ValueRef::Text(b"replayed") => None,
        _ => Some((r.get(5)?, r.get(6)?)),
    };
    Ok(WindowSlices {
        id: r.get(0)?,
        dispatch: r.get(1)?,
        kernel: kernels.get(r, 2)?,
        tid: r.get(3)?,
        queue: r.get(4)?,
        declined,
        passes: r.get(7)?,
        start: r.get(8)?,
        end: r.get(9)?,
        pass_count_return: r.get(10)?,
        first_enter: r.get(11)?,
        last_exit: r.get(12)?,
        snapshot_ns: r.get(13)?,
        drain_ns: r.get(14)?,
        snapshot_bytes: r.get(15)?,
        stuck: r.get::<_, Option<i64>>(16)?.is_some(),
        window_basis: code(r, 17)?,
        restore_basis: code(r, 18)?,
        bytes_basis: code(r, 19)?,
        restore_is_bound: r.get(20)?,
        snapshot_basis: code(r, 21)?,
        pass_rows: 0..0,
        counters: Vec::new(),
    })
}

fn pass_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Pass> {
    Ok(Pass {
        window: r.get(0)?,
        idx: r.get(1)?,
        start: r.get(2)?,
        exit: r.get(3)?,
        gpu: (r.get(4)?, r.get(5)?),
        restore: (r.get(6)?, r.get(7)?),
        continue_ns: r.get(8)?,
        incomplete: r.get::<_, i64>(9)? != 0,
    })
}

/// Reads `runs` one after the other into `tx`; stops quietly when the drawing thread has
/// stopped (its error is the one to report).
pub fn read_runs(conn: &Connection, runs: &[i64], tx: &SyncSender<Batch>) -> Result<()> {
    let send = |b: Batch| tx.send(b).map_err(|_| anyhow!("the trace writer stopped"));
    for &id in runs {
        send(Batch::Run(run_info(conn, id)?))?;
        let mut kernels = Kernels::default();
        read_windows(conn, id, &mut kernels, &send)?;
        read_plain(conn, id, &mut kernels, &send)?;
        send(Batch::RunEnd)?;
    }
    Ok(())
}

fn run_info(conn: &Connection, id: i64) -> Result<RunInfo> {
    let (label, pid): (Option<String>, Option<i64>) = conn
        .query_row(
            "SELECT label, pid FROM krphase_run WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|_| anyhow!("unknown run id {id}"))?;
    Ok(RunInfo {
        id,
        label,
        pid: pid.unwrap_or(id),
    })
}

/// The windows of `run_id` with their passes (and counters, when the run has any).
fn read_windows(
    conn: &Connection,
    run_id: i64,
    kernels: &mut Kernels,
    send: &dyn Fn(Batch) -> Result<()>,
) -> Result<()> {
    let has_counters: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM krphase_counter WHERE run_id = ?1)",
        [run_id],
        |r| r.get(0),
    )?;
    let mut pass_stmt = conn.prepare(PASSES_SQL)?;
    let mut passes = pass_stmt.query_map([run_id], pass_row)?.peekable();
    let mut windows = conn.prepare(WINDOWS_SQL)?;
    let mut rows = windows.query([run_id])?;
    let mut batch = WindowBatch::default();
    while let Some(r) = rows.next()? {
        let mut w = window_row(r, kernels)?;
        let first = batch.passes.len();
        while let Some(p) = passes.next_if(|p| p.as_ref().map_or(true, |p| p.window <= w.id)) {
            let p = p?;
            if p.window == w.id {
                batch.passes.push(p);
            }
        }
        w.pass_rows = first..batch.passes.len();
        if has_counters {
            w.counters = crate::db::counters::window_counters(conn, w.id)?;
        }
        batch.windows.push(w);
        if batch.windows.len() == BATCH {
            send(Batch::Windows(std::mem::take(&mut batch)))?;
        }
    }
    if !batch.windows.is_empty() {
        send(Batch::Windows(batch))?;
    }
    Ok(())
}

/// The plain dispatches of `run_id`, in id order.
fn read_plain(
    conn: &Connection,
    run_id: i64,
    kernels: &mut Kernels,
    send: &dyn Fn(Batch) -> Result<()>,
) -> Result<()> {
    let mut plain = conn.prepare(PLAIN_SQL)?;
    let mut rows = plain.query([run_id])?;
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(r) = rows.next()? {
        batch.push(PlainDispatch {
            dispatch: r.get(0)?,
            kernel: kernels.get(r, 1)?,
            tid: r.get(2)?,
            queue: r.get(3)?,
            span: (r.get(4)?, r.get(5)?),
            gpu: (r.get(6)?, r.get(7)?),
        });
        if batch.len() == BATCH {
            send(Batch::Plain(std::mem::replace(
                &mut batch,
                Vec::with_capacity(BATCH),
            )))?;
        }
    }
    if !batch.is_empty() {
        send(Batch::Plain(batch))?;
    }
    Ok(())
}
