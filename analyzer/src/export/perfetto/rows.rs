//! Reading a run's windows, passes and plain dispatches for the trace, as plain rows sent in
//! batches to the thread that draws them ([`super::windows`]): reading the database and encoding
//! the trace then run on two cores. One query per table for the run, passes merged into their
//! windows by id (a query per window would cost more than all the writing at a million windows).

use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc::SyncSender;

use anyhow::{Result, anyhow};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use rustc_hash::FxHashMap as HashMap;

use crate::db::basis::Basis;

/// The run a sink is told about before its events.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: i64,
    pub label: Option<String>,
    pub pid: i64,
    /// The thread of the run's first window (or plain dispatch): most of its events are there.
    pub main_thread: Option<i64>,
    /// The run came from the emulator (`db::emulated`).
    pub emulated: bool,
}

impl RunInfo {
    /// The process track's name: label, run id and pid, and EMULATED for an emulator run.
    pub fn name(&self) -> String {
        let emulated = if self.emulated {
            format!(", {}", crate::db::emulated::EMULATED)
        } else {
            String::new()
        };
        match &self.label {
            Some(l) => format!("krphase {l} (run {}, pid {}{emulated})", self.id, self.pid),
            None => format!("krphase run {} (pid {}{emulated})", self.id, self.pid),
        }
    }
}

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

impl WindowBatch {
    /// An empty batch with room for a full one (two passes a window), so it is not regrown
    /// and copied window by window.
    fn with_capacity() -> Self {
        WindowBatch {
            windows: Vec::with_capacity(BATCH),
            passes: Vec::with_capacity(2 * BATCH),
        }
    }
}

/// A basis code: one of [`Basis`]'s.
pub type Code = &'static str;

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
    /// The basis of the window, restore and snapshot bytes, as the view gives them.
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

/// The window's own columns, then its SDK log's (NULL without one). The derived figures are
/// computed here from these rather than read from the view `krphase_window_phase`, whose
/// per-row CASEs cost more than the rest of the reading at a million windows; [`derive`]
/// follows the view's cases exactly (a test compares the two on every kind of window).
const WINDOW_COLUMNS: &str = "w.id, w.dispatch_id, w.kernel, COALESCE(w.thread, 0), w.queue,
        w.outcome, w.reason, w.executed_passes, w.\"start\", w.\"end\", w.pass_count_return,
        w.first_pass_enter, w.last_pass_exit, w.stuck_ns, w.source, w.restore_ns,
        w.bytes_estimate";

const LOG_COLUMNS: &str = "l.reason, l.snapshot_ns, l.snap_ns, l.lock_drain_ns, l.snapshot_bytes,
        l.footprint_bytes, l.window_ns, l.restore_ns";

/// The windows of run `?1` in id order. A run's windows are one id range, `?2` to `?3`
/// ([`window_ids`]): walked in id order, no sort (the unary + keeps the planner off the run
/// index).
fn windows_sql(with_log: bool) -> String {
    // Without a log, its columns are not selected at all: `window_row` reads them only then.
    let (log, join) = if with_log {
        (
            format!(", {LOG_COLUMNS}"),
            "LEFT JOIN krphase_sdk_log l ON l.window_id = w.id",
        )
    } else {
        (String::new(), "")
    };
    format!(
        "SELECT {WINDOW_COLUMNS}{log} FROM krphase_window w {join}
         WHERE w.id BETWEEN ?2 AND ?3 AND +w.run_id = ?1
         ORDER BY w.id"
    )
}

const PASSES_SQL: &str = "SELECT window_id, pass_index, \"start\", \"end\", gpu_start, gpu_end,
        restore_start, restore_end, continue_ns, incomplete
 FROM krphase_pass
 WHERE window_id BETWEEN ?2 AND ?3 AND run_id = ?1
 ORDER BY window_id, pass_index";

const PLAIN_SQL: &str =
    "SELECT dispatch_id, kernel, COALESCE(thread, 0), queue, \"start\", \"end\",
        gpu_start, gpu_end FROM krphase_dispatch WHERE run_id = ?1 ORDER BY id";

/// Kernel names of a run as the trace shows them, each formatted and held once and shared by its
/// windows, by raw name: formatting in SQL (`krphase_kernel_name`) would copy and look up the
/// name once per row.
#[derive(Default)]
struct Kernels {
    by_raw: HashMap<String, Arc<str>>,
    null: Option<Arc<str>>,
}

impl Kernels {
    /// Column `i`'s raw kernel name as shown (`kernel_names::shown`), `?` for NULL.
    fn get(&mut self, r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Arc<str>> {
        let Some(raw) = r.get_ref(i)?.as_str_or_null()? else {
            return Ok(Arc::clone(self.null.get_or_insert_with(|| Arc::from("?"))));
        };
        if let Some(k) = self.by_raw.get(raw) {
            return Ok(Arc::clone(k));
        }
        let k: Arc<str> = Arc::from(crate::db::kernel_names::shown(raw));
        self.by_raw.insert(raw.to_owned(), Arc::clone(&k));
        Ok(k)
    }
}

/// A window's SDK log figures (all `None` without a joined log).
#[derive(Default)]
struct Log {
    reason: Option<String>,
    snapshot_ns: Option<i64>,
    snap_ns: Option<i64>,
    lock_drain_ns: Option<i64>,
    snapshot_bytes: Option<i64>,
    footprint_bytes: Option<i64>,
    window_ns: Option<i64>,
    restore_ns: Option<i64>,
}

/// An integer column or NULL, read without the generic conversion (the reading's hot path: a
/// million windows are some 25 million columns); any other type takes the checked path for its
/// error.
#[inline]
fn int(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<i64>> {
    match r.get_ref(i)? {
        ValueRef::Integer(v) => Ok(Some(v)),
        ValueRef::Null => Ok(None),
        _ => r.get(i),
    }
}

/// A window row of [`windows_sql`]`(with_log)`.
fn window_row(
    r: &rusqlite::Row<'_>,
    kernels: &mut Kernels,
    with_log: bool,
) -> rusqlite::Result<WindowSlices> {
    let declined = match r.get_ref(5)? {
        ValueRef::Text(b"replayed") => None,
        _ => Some((r.get(5)?, r.get(6)?)),
    };
    let mut w = WindowSlices {
        id: r.get(0)?,
        dispatch: r.get(1)?,
        kernel: kernels.get(r, 2)?,
        tid: r.get(3)?,
        queue: int(r, 4)?,
        declined,
        passes: int(r, 7)?,
        start: int(r, 8)?,
        end: int(r, 9)?,
        pass_count_return: int(r, 10)?,
        first_enter: int(r, 11)?,
        last_exit: int(r, 12)?,
        stuck: int(r, 13)?.is_some(),
        snapshot_ns: None,
        drain_ns: None,
        snapshot_bytes: None,
        window_basis: None,
        restore_basis: None,
        bytes_basis: None,
        restore_is_bound: false,
        snapshot_basis: None,
        pass_rows: 0..0,
        counters: Vec::new(),
    };
    let observe = match r.get_ref(14)?.as_str_or_null()? {
        Some(s) => s == "observe",
        None => w.pass_count_return.is_none() && w.first_enter.is_none(),
    };
    let log = if with_log {
        Log {
            reason: r.get(17)?,
            snapshot_ns: int(r, 18)?,
            snap_ns: int(r, 19)?,
            lock_drain_ns: int(r, 20)?,
            snapshot_bytes: int(r, 21)?,
            footprint_bytes: int(r, 22)?,
            window_ns: int(r, 23)?,
            restore_ns: int(r, 24)?,
        }
    } else {
        Log::default()
    };
    derive(&mut w, observe, int(r, 15)?, int(r, 16)?, log);
    Ok(w)
}

/// The view's derived figures and bases of a window, by the view's own cases
/// (`krphase_window_phase` in `db/mod.rs`): `restore_ns` and `bytes_estimate` are the window's.
fn derive(
    w: &mut WindowSlices,
    observe: bool,
    restore_ns: Option<i64>,
    bytes_estimate: Option<i64>,
    l: Log,
) {
    let code = |b: Basis| Some(b.code());
    if let (Some((outcome, reason)), Some(r)) = (&mut w.declined, l.reason)
        && outcome == "declined"
    {
        *reason = r;
    }
    w.snapshot_ns = l.snapshot_ns.or(l.snap_ns);
    let prepass = (w.first_enter.zip(w.pass_count_return)).and_then(|(f, p)| f.checked_sub(p));
    w.drain_ns = prepass
        .zip(w.snapshot_ns)
        .and_then(|(p, s)| p.checked_sub(s))
        .or(l.lock_drain_ns);
    w.snapshot_bytes = l.snapshot_bytes.or(l.footprint_bytes).or(bytes_estimate);
    w.window_basis = if w.pass_count_return.is_some() {
        code(Basis::InProcess)
    } else if observe && l.window_ns.is_some() {
        code(Basis::SdkPhaseLine)
    } else if w.start.is_some() && w.end.is_some() {
        code(Basis::Dispatch)
    } else {
        None
    };
    // COALESCE(restore_bound_basis, restore_basis).
    w.restore_is_bound = observe && restore_ns.is_some();
    w.restore_basis = if w.restore_is_bound {
        code(Basis::Dispatch)
    } else if observe {
        l.restore_ns.and(code(Basis::SdkLog))
    } else {
        restore_ns.and(code(Basis::InProcess))
    };
    w.bytes_basis = if l.snapshot_bytes.is_some() {
        code(Basis::SdkPhaseLine)
    } else if l.footprint_bytes.is_some() {
        code(Basis::SdkLog)
    } else {
        bytes_estimate.and(code(Basis::Estimate))
    };
    w.snapshot_basis = if l.snapshot_ns.is_some() {
        code(Basis::SdkPhaseLine)
    } else {
        l.snap_ns.and(code(Basis::SdkLog))
    };
}

fn pass_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Pass> {
    Ok(Pass {
        window: r.get(0)?,
        idx: r.get(1)?,
        start: int(r, 2)?,
        exit: int(r, 3)?,
        gpu: (int(r, 4)?, int(r, 5)?),
        restore: (int(r, 6)?, int(r, 7)?),
        continue_ns: int(r, 8)?,
        incomplete: r.get::<_, i64>(9)? != 0,
    })
}

/// Reads `runs` one after the other into `tx`; stops when the drawing thread has stopped (the
/// caller reports the drawing thread's error before this one).
pub fn read_runs(conn: &Connection, runs: &[i64], tx: &SyncSender<Batch>) -> Result<()> {
    let send = |b: Batch| tx.send(b).map_err(|_| anyhow!("the trace writer stopped"));
    for &id in runs {
        let ids = window_ids(conn, id)?;
        send(Batch::Run(run_info(conn, id, ids)?))?;
        let mut kernels = Kernels::default();
        if let Some(ids) = ids {
            read_windows(conn, id, ids, &mut kernels, &send)?;
        }
        read_plain(conn, id, &mut kernels, &send)?;
        send(Batch::RunEnd)?;
    }
    Ok(())
}

/// The first and last window ids of run `id` (None without windows), found once per run: each
/// is a walk over the run's index entries, which the queries would otherwise repeat.
fn window_ids(conn: &Connection, id: i64) -> Result<Option<(i64, i64)>> {
    let (lo, hi): (Option<i64>, Option<i64>) = conn.query_row(
        "SELECT MIN(id), MAX(id) FROM krphase_window WHERE run_id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(lo.zip(hi))
}

fn run_info(conn: &Connection, id: i64, ids: Option<(i64, i64)>) -> Result<RunInfo> {
    let (label, pid, command): (Option<String>, Option<i64>, Option<String>) = conn
        .query_row(
            "SELECT label, pid, command FROM krphase_run WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|_| anyhow!("unknown run id {id}"))?;
    // The first window's thread, read by its id: ORDER BY id LIMIT 1 over the run's index
    // entries fetched and sorted every window of the run.
    let main_thread = match ids {
        Some((first, _)) => conn.query_row(
            "SELECT COALESCE(thread, 0) FROM krphase_window WHERE id = ?1",
            [first],
            |r| r.get(0),
        )?,
        None => conn
            .query_row(
                "SELECT COALESCE(thread, 0) FROM krphase_dispatch WHERE run_id = ?1
                 ORDER BY id LIMIT 1",
                [id],
                |r| r.get(0),
            )
            .optional()?,
    };
    Ok(RunInfo {
        id,
        label,
        pid: pid.unwrap_or(id),
        main_thread,
        emulated: command.is_some_and(|c| crate::db::emulated::command_is_emulated(&c)),
    })
}

/// The windows of `run_id` with their passes (and counters, when the run has any).
fn read_windows(
    conn: &Connection,
    run_id: i64,
    (first, last): (i64, i64),
    kernels: &mut Kernels,
    send: &dyn Fn(Batch) -> Result<()>,
) -> Result<()> {
    let has_counters: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM krphase_counter WHERE run_id = ?1)",
        [run_id],
        |r| r.get(0),
    )?;
    let mut pass_stmt = conn.prepare(PASSES_SQL)?;
    let mut passes = pass_stmt
        .query_map([run_id, first, last], pass_row)?
        .peekable();
    let has_log: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM krphase_sdk_log WHERE window_id BETWEEN ?1 AND ?2)",
        [first, last],
        |r| r.get(0),
    )?;
    let mut windows = conn.prepare(&windows_sql(has_log))?;
    let mut rows = windows.query([run_id, first, last])?;
    let mut batch = WindowBatch::with_capacity();
    while let Some(r) = rows.next()? {
        let mut w = window_row(r, kernels, has_log)?;
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
            send(Batch::Windows(std::mem::replace(
                &mut batch,
                WindowBatch::with_capacity(),
            )))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination of what the view's cases look at: mode (stored or inferred), the
    /// in-process timestamps present or not, restore and byte estimate present or not, outcome,
    /// and no SDK log, its outcome line, its phase line or both.
    fn every_kind_of_window(conn: &Connection) {
        conn.execute_batch(
            "INSERT INTO krphase_run (id, path, file_hash, imported_at) VALUES (1, 'p', 'h', 'then');
             INSERT INTO krphase_log_file (id, path, file_hash, imported_at) VALUES (1, 'l', 'h', 'then');",
        )
        .unwrap();
        let n = |on: bool, v: i64| on.then_some(v);
        let mut id = 0i64;
        for source in [None, Some("drive"), Some("observe")] {
            for bits in 0..64u32 {
                for log in 0..4 {
                    id += 1;
                    let b = |i: u32| bits & (1 << i) != 0;
                    let outcome = if b(5) { "declined" } else { "replayed" };
                    conn.execute(
                        "INSERT INTO krphase_window (id, run_id, dispatch_id, kernel, outcome,
                             reason, \"start\", \"end\", pass_count_return, first_pass_enter,
                             restore_ns, bytes_estimate, source)
                         VALUES (?1, 1, ?1, 'k', ?2, 'tool', ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                        rusqlite::params![
                            id,
                            outcome,
                            n(b(0), 1000 * id),
                            n(b(0), 1000 * id + 900),
                            n(b(1), 1000 * id + 10),
                            n(b(2), 1000 * id + 400),
                            n(b(3), 77),
                            n(b(4), 4096),
                            source
                        ],
                    )
                    .unwrap();
                    let (line, phase) = (log & 1 != 0, log & 2 != 0);
                    if log != 0 {
                        conn.execute(
                            "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id,
                                 dispatch_id, reason, snap_ns, footprint_bytes, restore_ns,
                                 lock_drain_ns, snapshot_ns, snapshot_bytes, window_ns)
                             VALUES (1, 1, ?1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                            rusqlite::params![
                                id,
                                line.then_some("sdk"),
                                n(line, 300),
                                n(line, 8192),
                                n(line, 100),
                                n(phase, 50),
                                n(phase, 250),
                                n(phase, 16384),
                                n(phase, 700)
                            ],
                        )
                        .unwrap();
                    }
                }
            }
        }
    }

    type Derived = (
        Option<String>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<String>,
        bool,
        Option<String>,
    );

    #[test]
    fn the_figures_derived_from_the_tables_are_the_views() {
        let conn = crate::db::open_in_memory().unwrap();
        every_kind_of_window(&conn);
        let mut view = conn
            .prepare(
                "SELECT CASE WHEN outcome = 'replayed' THEN NULL ELSE reason END, snapshot_ns,
                        drain_ns, snapshot_bytes, window_basis,
                        COALESCE(restore_bound_basis, restore_basis), snapshot_bytes_basis,
                        restore_bound_basis IS NOT NULL, snapshot_basis
                 FROM krphase_window_phase ORDER BY window_id",
            )
            .unwrap();
        let want: Vec<Derived> = view
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let mut st = conn.prepare(&windows_sql(true)).unwrap();
        let mut kernels = Kernels::default();
        let got: Vec<Derived> = st
            .query_map([1, 1, 3 * 64 * 4], |r| {
                let w = window_row(r, &mut kernels, true)?;
                let s = |c: Option<Code>| c.map(str::to_owned);
                Ok((
                    w.declined.map(|d| d.1),
                    w.snapshot_ns,
                    w.drain_ns,
                    w.snapshot_bytes,
                    s(w.window_basis),
                    s(w.restore_basis),
                    s(w.bytes_basis),
                    w.restore_is_bound,
                    s(w.snapshot_basis),
                ))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(got.len(), 3 * 64 * 4);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "window {}", i + 1);
        }
    }
}
