//! The per-window phases, read from the `krphase_window_phase` view (the one place their
//! arithmetic is defined), streamed so memory does not grow with the run.

use anyhow::Result;
use rusqlite::Connection;

/// A phase: display name, view column, what it holds.
pub struct Phase {
    pub name: &'static str,
    pub column: &'static str,
    pub what: &'static str,
}

/// Every phase, in timeline order. `window` is last; shares are relative to it.
pub const PHASES: &[Phase] = &[
    Phase {
        name: "config",
        column: "config_ns",
        what: "CONFIG ENTER to replay_pass_count return",
    },
    Phase {
        name: "pre-pass",
        column: "prepass_ns",
        what: "lock + admission + drain + snapshot (pass-count return to PASS 0 ENTER)",
    },
    Phase {
        name: "drain",
        column: "drain_ns",
        what: "pre-pass minus the SDK's snapshot time (needs a joined log)",
    },
    Phase {
        name: "snapshot",
        column: "snapshot_ns",
        what: "the SDK's snapshot time (needs a joined log)",
    },
    Phase {
        name: "pass exec",
        column: "pass_ns",
        what: "sum of PASS ENTER to PASS EXIT",
    },
    Phase {
        name: "gpu",
        column: "gpu_ns",
        what: "sum of the passes' GPU execution",
    },
    Phase {
        name: "continue",
        column: "continue_ns",
        what: "sum of PASS EXIT to the replay_continue return (the SDK's loop decision)",
    },
    Phase {
        name: "restore",
        column: "restore_ns",
        what: "sum of the continue return (PASS EXIT without one) to the next PASS ENTER",
    },
    Phase {
        name: "tail",
        column: "tail_ns",
        what: "last PASS EXIT to CONFIG EXIT",
    },
    Phase {
        name: "window",
        column: "window_ns",
        what: "CONFIG ENTER to CONFIG EXIT",
    },
];

/// Index of the `window` phase in [`PHASES`].
pub const WINDOW: usize = PHASES.len() - 1;

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
    let sql = format!(
        "SELECT window_id, dispatch_id, COALESCE(kernel, ''), queue, thread, outcome, reason,
                executed_passes, \"start\", \"end\", restores, snapshot_bytes, stuck_ns, {}
         FROM krphase_window_phase WHERE window_id BETWEEN ?2 AND ?3 AND +run_id = ?1
         ORDER BY window_id",
        cols.join(", ")
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
        for i in 0..PHASES.len() {
            w.phase_ns[i] = r.get(13 + i)?;
        }
        f(&w)?;
    }
    Ok(())
}
