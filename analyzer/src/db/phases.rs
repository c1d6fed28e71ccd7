//! The per-window phases, read from the `krphase_window_phase` view (the one place their
//! arithmetic is defined), streamed so memory does not grow with the run.

use anyhow::Result;
use rusqlite::Connection;

use super::basis::Basis;

/// A phase: display name, view columns of its value and basis, what it holds, the phase it is a
/// part of (`None`: a top-level phase, a part of the window), the phase it bounds from above
/// (a bound is no part of the window's tiling and has no share), and why it can be absent.
pub struct Phase {
    pub name: &'static str,
    pub column: &'static str,
    pub basis_column: &'static str,
    pub what: &'static str,
    pub parent: Option<&'static str>,
    pub bound_of: Option<&'static str>,
    pub missing: &'static str,
}

/// Every phase, in timeline order. `window` is last; shares are relative to it.
pub const PHASES: &[Phase] = &[
    Phase {
        name: "config",
        column: "config_ns",
        basis_column: "config_basis",
        what: "CONFIG ENTER to replay_pass_count return",
        parent: None,
        bound_of: None,
        missing: "observe mode: no CONFIG callback",
    },
    Phase {
        name: "pre-pass",
        column: "prepass_ns",
        basis_column: "prepass_basis",
        what: "lock + admission + drain + snapshot (pass-count return to PASS 0 ENTER)",
        parent: None,
        bound_of: None,
        missing: "observe mode without a joined SDK phase line",
    },
    Phase {
        name: "drain",
        column: "drain_ns",
        basis_column: "drain_basis",
        what: "pre-pass minus the SDK's snapshot time (needs a joined log)",
        parent: Some("pre-pass"),
        bound_of: None,
        missing: "needs a joined SDK log (krphase import-log)",
    },
    Phase {
        name: "snapshot",
        column: "snapshot_ns",
        basis_column: "snapshot_basis",
        what: "the SDK's snapshot time (needs a joined log)",
        parent: Some("pre-pass"),
        bound_of: None,
        missing: "needs a joined SDK log (krphase import-log)",
    },
    Phase {
        name: "pass exec",
        column: "pass_ns",
        basis_column: "pass_basis",
        what: "sum of PASS ENTER to PASS EXIT; when the restores ran inside the passes \
               (device-side snapshot), minus the SDK's restore_seconds",
        parent: None,
        bound_of: None,
        missing: "observe mode: no PASS callbacks",
    },
    Phase {
        name: "gpu",
        column: "gpu_ns",
        basis_column: "gpu_basis",
        what: "sum of the passes' GPU execution",
        parent: Some("pass exec"),
        bound_of: None,
        missing: "no dispatch completion records",
    },
    Phase {
        name: "continue",
        column: "continue_ns",
        basis_column: "continue_basis",
        what: "sum of PASS EXIT to the replay_continue return (the SDK's loop decision)",
        parent: None,
        bound_of: None,
        missing: "no CONTINUE records (older file or observe mode)",
    },
    Phase {
        name: "restore",
        column: "restore_ns",
        basis_column: "restore_basis",
        what: "sum of the continue return (PASS EXIT without one) to the next PASS ENTER; \
               observe mode, and restores inside the passes (device-side snapshot): the SDK's \
               restore_seconds (outcome line, 100 us resolution)",
        parent: None,
        bound_of: None,
        missing: "single-pass windows have none; observe mode needs a joined SDK log \
                  (restore bound has the dispatch-record gap); restores that ran inside the \
                  passes (device-side snapshot) stay in pass exec until a joined SDK log \
                  splits them out",
    },
    Phase {
        name: "restore bound",
        column: "restore_bound_ns",
        basis_column: "restore_bound_basis",
        what: "observe mode: sum of each pass's completion (host time at its COMPLETE callback) \
               to the next pass's enqueue; an upper bound on the restore (it also holds the \
               completion's hop and the owning tool's PASS callbacks)",
        parent: None,
        bound_of: Some("restore"),
        missing: "drive mode measures the restore itself",
    },
    Phase {
        name: "tail",
        column: "tail_ns",
        basis_column: "tail_basis",
        what: "last PASS EXIT to CONFIG EXIT",
        parent: None,
        bound_of: None,
        missing: "observe mode: no CONFIG EXIT",
    },
    Phase {
        name: "window",
        column: "window_ns",
        basis_column: "window_basis",
        what: "CONFIG ENTER to CONFIG EXIT",
        parent: None,
        bound_of: None,
        missing: "no window boundaries recorded",
    },
];

/// Index of the `window` phase in [`PHASES`].
pub const WINDOW: usize = PHASES.len() - 1;

/// Why observe mode has no value for the phases only the SDK could time, and how to get one.
const OBSERVE_MISSING: &[(&str, &str)] = &[
    (
        "pre-pass",
        "unavailable in observe mode (lock, drain and snapshot before pass 0): the SDK prints \
         no such time: its only kernel-replay timings are snap_seconds and restore_seconds in \
         the per-dispatch outcome line; drive mode measures it, as would an SDK phase line if \
         an SDK prints one",
    ),
    (
        "drain",
        "unavailable in observe mode: the SDK prints no such time: its only kernel-replay \
         timings are snap_seconds and restore_seconds in the per-dispatch outcome line; drive \
         mode measures it (pre-pass minus snap_seconds), as would an SDK phase line if an SDK \
         prints one",
    ),
];

/// Why phase `p` has no value in a run of this mode (`observe`: another tool owns replay).
pub fn missing_reason(p: &Phase, observe: bool) -> &'static str {
    let special = OBSERVE_MISSING.iter().find(|(n, _)| *n == p.name);
    match special {
        Some((_, why)) if observe => why,
        _ => p.missing,
    }
}

/// The note on an observe-mode window that is the passes' span (no SDK phase line): what it
/// leaves out, and how to get the whole window.
pub const SPAN_WINDOW_NOTE: &str = "observe mode: the passes' span (pass 0's enqueue to the \
    last pass's completion), not CONFIG ENTER to EXIT; the pre-pass (lock, drain, snapshot), \
    CONFIG and the tail lie outside it, since the SDK prints no window time; drive mode measures \
    the whole window, as would an SDK phase line if an SDK prints one";

/// Whether a phase lies before the passes (outside an observe-mode span window).
pub fn before_the_passes(p: &Phase) -> bool {
    p.name == "pre-pass" || p.parent == Some("pre-pass")
}

/// Whether every window behind a set of per-window bases is the passes' span (observe mode
/// without an SDK phase line): window values exist and all have the dispatch-record basis.
pub fn window_is_span<'a>(mut bases: impl Iterator<Item = &'a Basis>) -> bool {
    let mut any = false;
    let all = bases.all(|b| {
        any = true;
        *b == Basis::Dispatch
    });
    any && all
}

/// Index of a phase by name.
pub fn index(name: &str) -> Option<usize> {
    PHASES.iter().position(|p| p.name == name)
}

/// One window (replayed, or an SDK/tool decline) with its phases.
#[derive(Debug, Clone, Default)]
pub struct WindowRow {
    pub window_id: i64,
    pub dispatch_id: i64,
    pub kernel: String,
    pub queue: Option<i64>,
    pub thread: Option<i64>,
    pub outcome: String,
    pub reason: String,
    pub executed_passes: Option<i64>,
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub restores: Option<i64>,
    pub snapshot_bytes: Option<i64>,
    /// Stuck pass ENTER to CONFIG EXIT (`pass_drain_stuck`); `None` for other windows.
    pub stuck_ns: Option<i64>,
    /// Values in the order of [`PHASES`], ns; `None` when not measured.
    pub phase_ns: [Option<i64>; PHASES.len()],
    /// The basis of each value, in the order of [`PHASES`].
    pub phase_basis: [Option<Basis>; PHASES.len()],
    /// The basis of `snapshot_bytes`.
    pub bytes_basis: Option<Basis>,
}

impl WindowRow {
    pub fn replayed(&self) -> bool {
        self.outcome == "replayed"
    }
}

/// The first and last window id of a run. A run is imported in one transaction, so its
/// windows are one contiguous id range: scanning it reads the table in order, with no index seeks.
pub fn window_range(conn: &Connection, run_id: i64) -> Result<Option<(i64, i64)>> {
    let r: (Option<i64>, Option<i64>) = conn.query_row(
        "SELECT window_lo, window_hi FROM krphase_run WHERE id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if r.0.is_some() {
        return Ok(r.0.zip(r.1));
    }
    // Rows written by something other than `import`: find the range the slow way.
    let r: (Option<i64>, Option<i64>) = conn.query_row(
        "SELECT MIN(id), MAX(id) FROM krphase_window WHERE run_id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(r.0.zip(r.1))
}

fn set(dst: &mut String, v: rusqlite::types::ValueRef<'_>) -> Result<()> {
    dst.clear();
    if let rusqlite::types::ValueRef::Text(t) = v {
        dst.push_str(std::str::from_utf8(t)?);
    }
    Ok(())
}

/// Streams the windows of `run_id` in id order.
pub fn for_each_window(
    conn: &Connection,
    run_id: i64,
    mut f: impl FnMut(&WindowRow) -> Result<()>,
) -> Result<()> {
    let cols: Vec<&str> = PHASES.iter().map(|p| p.column).collect();
    let bases: Vec<&str> = PHASES.iter().map(|p| p.basis_column).collect();
    let sql = format!(
        "SELECT window_id, dispatch_id, COALESCE(kernel, ''), queue, thread, outcome, reason,
                executed_passes, \"start\", \"end\", restores, snapshot_bytes, stuck_ns,
                snapshot_bytes_basis, {}, {}
         FROM krphase_window_phase WHERE window_id BETWEEN ?2 AND ?3 AND +run_id = ?1
         ORDER BY window_id",
        cols.join(", "),
        bases.join(", ")
    );
    let Some((lo, hi)) = window_range(conn, run_id)? else {
        return Ok(());
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([run_id, lo, hi])?;
    let mut w = WindowRow::default();
    while let Some(r) = rows.next()? {
        w.window_id = r.get(0)?;
        w.dispatch_id = r.get(1)?;
        // Strings are copied into the reused row: no allocation per window.
        set(&mut w.kernel, r.get_ref(2)?)?;
        w.queue = r.get(3)?;
        w.thread = r.get(4)?;
        set(&mut w.outcome, r.get_ref(5)?)?;
        set(&mut w.reason, r.get_ref(6)?)?;
        w.executed_passes = r.get(7)?;
        w.start = r.get(8)?;
        w.end = r.get(9)?;
        w.restores = r.get(10)?;
        w.snapshot_bytes = r.get(11)?;
        w.stuck_ns = r.get(12)?;
        w.bytes_basis = Basis::from_sql(r.get_ref(13)?);
        for i in 0..PHASES.len() {
            w.phase_ns[i] = r.get(14 + i)?;
            w.phase_basis[i] = Basis::from_sql(r.get_ref(14 + PHASES.len() + i)?);
        }
        f(&w)?;
    }
    Ok(())
}

/// One replayed window's phase values (in the order of [`PHASES`]), restores and executed passes.
pub struct ReplayedRow {
    pub phase_ns: [Option<i64>; PHASES.len()],
    pub restores: Option<i64>,
    pub executed_passes: Option<i64>,
    /// Where the window's own figure comes from (observe mode: not in process).
    pub window_basis: Option<Basis>,
}

/// Streams the replayed windows of `run_id` with their phase values only: what `compare` reads,
/// without the strings and bases [`for_each_window`] carries (half the cost a window).
pub fn for_each_replayed(
    conn: &Connection,
    run_id: i64,
    mut f: impl FnMut(&ReplayedRow),
) -> Result<()> {
    let cols: Vec<&str> = PHASES.iter().map(|p| p.column).collect();
    let sql = format!(
        "SELECT restores, executed_passes, {}, {}
         FROM krphase_window_phase WHERE window_id BETWEEN ?2 AND ?3 AND +run_id = ?1
           AND outcome = 'replayed'
         ORDER BY window_id",
        cols.join(", "),
        PHASES[WINDOW].basis_column
    );
    let Some((lo, hi)) = window_range(conn, run_id)? else {
        return Ok(());
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query([run_id, lo, hi])?;
    let mut w = ReplayedRow {
        phase_ns: [None; PHASES.len()],
        restores: None,
        executed_passes: None,
        window_basis: None,
    };
    while let Some(r) = rows.next()? {
        w.restores = r.get(0)?;
        w.executed_passes = r.get(1)?;
        for i in 0..PHASES.len() {
            w.phase_ns[i] = r.get(2 + i)?;
        }
        w.window_basis = Basis::from_sql(r.get_ref(2 + PHASES.len())?);
        f(&w);
    }
    Ok(())
}
