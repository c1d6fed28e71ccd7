//! What a run's phase file says that a log join can be checked against: its clock anchor
//! (CLOCK_BOOTTIME and CLOCK_REALTIME read back to back at tool start, and the local UTC
//! offset), the time it spans, and per dispatch id the window's outcome, passes, pre-pass and
//! the slot of time its SDK log line must fall in.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, Row};

use super::glog_prefix::{LocalStamp, year_of_days};

/// Fixed part of the clock tolerance: glog prints microseconds (truncated), the anchor pair is
/// read back to back; 1 ms covers both many times over.
pub const TOL_BASE_NS: i64 = 1_000_000;
/// REALTIME may be slewed by NTP against BOOTTIME by at most 500 ppm (the kernel's adjtime
/// limit), so the conversion error grows by that much with the time since the anchor.
pub const SLEW_PPM: i64 = 500;

/// A run's clock anchor and time span (BOOTTIME ns), from `krphase_run` alone.
#[derive(Debug, Clone)]
pub struct RunSpan {
    pub run_id: i64,
    pub anchor_boot: i64,
    pub anchor_real: i64,
    /// Seconds east of UTC; `None` when the phase file did not record it.
    pub utc_offset_s: Option<i32>,
    /// Tool start (the anchor) or the first record, whichever is earlier.
    pub start: i64,
    /// Finalize (trailer), else the last record.
    pub end: i64,
    /// Whether the file has a trailer: without one, the process may have run (and logged)
    /// past the file's last complete block.
    pub finalized: bool,
}

impl RunSpan {
    /// The CLOCK_REALTIME (UTC) instant of BOOTTIME `boot`.
    pub fn utc_ns(&self, boot: i64) -> i64 {
        self.anchor_real + (boot - self.anchor_boot)
    }
    /// How far a converted instant may be off at BOOTTIME `boot`.
    pub fn tolerance_ns(&self, boot: i64) -> i64 {
        TOL_BASE_NS + (boot - self.anchor_boot).abs() / 1_000_000 * SLEW_PPM
    }
    /// The offset stamps are read with (UTC when the file recorded none).
    pub fn offset_s(&self) -> i64 {
        self.utc_offset_s.map_or(0, i64::from)
    }
    /// A log stamp as UTC ns: its own year, else the run's local year at start or at end,
    /// whichever puts it inside the run (a run across New Year has two).
    pub fn stamp_utc_ns(&self, s: &LocalStamp) -> i64 {
        let off = self.offset_s();
        let local_year = |boot: i64| {
            let local_s = self.utc_ns(boot).div_euclid(1_000_000_000) + off;
            year_of_days(local_s.div_euclid(86_400))
        };
        let (y0, y1) = (local_year(self.start), local_year(self.end));
        let a = s.utc_ns(y0, off);
        if y1 == y0 || self.utc_ns(self.start) <= a {
            a
        } else {
            s.utc_ns(y1, off)
        }
    }
}

/// One dispatch id of the run as the phase file has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `replayed`, `declined`, `opt_out` (windows) or `plain` (a dispatch without a window).
    pub outcome: String,
    pub requested: Option<i64>,
    pub executed: Option<i64>,
    /// BOOTTIME: CONFIG ENTER (observe mode: pass 0's enqueue), plain: enqueue.
    pub start: Option<i64>,
    /// Pass count returned → PASS 0 ENTER (drive mode only).
    pub prepass_ns: Option<i64>,
    /// The next other dispatch the same thread started after this one ended: the SDK logs a
    /// dispatch's outcome before the application's thread gets to submit another.
    pub slot_end: Option<i64>,
}

/// A run's span and its dispatch ids.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub span: RunSpan,
    pub entries: HashMap<u64, Entry>,
    pub max_dispatch: u64,
}

const SPAN_SQL: &str = "SELECT id, clock_boottime_ns, clock_realtime_ns, utc_offset_s,
       MIN(COALESCE(\"start\", clock_boottime_ns), clock_boottime_ns),
       MAX(COALESCE(\"end\", clock_boottime_ns), COALESCE(finalize_ns, 0)), finalize_ns IS NOT NULL
     FROM krphase_run WHERE clock_boottime_ns > 0 AND clock_realtime_ns > 0";

fn span_row(r: &Row<'_>) -> rusqlite::Result<RunSpan> {
    Ok(RunSpan {
        run_id: r.get(0)?,
        anchor_boot: r.get(1)?,
        anchor_real: r.get(2)?,
        utc_offset_s: r.get(3)?,
        start: r.get(4)?,
        end: r.get(5)?,
        finalized: r.get(6)?,
    })
}

/// Every run with a clock anchor, by id.
pub fn spans(conn: &Connection) -> Result<Vec<RunSpan>> {
    let mut stmt = conn.prepare(&format!("{SPAN_SQL} ORDER BY id"))?;
    let v = stmt
        .query_map([], span_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(v)
}

/// One run's span; `None` when it has no clock anchor.
pub fn span(conn: &Connection, run_id: i64) -> Result<Option<RunSpan>> {
    Ok(conn
        .query_row(&format!("{SPAN_SQL} AND id = ?1"), [run_id], span_row)
        .optional()?)
}

/// An activity on a submitting thread: (start, end, dispatch id).
type Activity = (i64, i64, u64);

/// Loads the run's dispatch ids: its windows, and its plain dispatches where no window has the id.
pub fn load(conn: &Connection, span: RunSpan) -> Result<RunFacts> {
    let mut entries: HashMap<u64, Entry> = HashMap::new();
    let mut threads: BTreeMap<i64, Vec<Activity>> = BTreeMap::new();
    let mut ends: HashMap<u64, (i64, i64)> = HashMap::new();
    let mut stmt = conn.prepare(
        "SELECT dispatch_id, outcome, requested_passes, executed_passes, \"start\", \"end\",
                first_pass_enter - pass_count_return, thread
         FROM krphase_window WHERE run_id = ?1
         UNION ALL
         SELECT dispatch_id, 'plain', NULL, NULL, \"start\", \"end\", NULL, thread
         FROM krphase_dispatch WHERE run_id = ?1 AND dispatch_id IS NOT NULL",
    )?;
    let mut rows = stmt.query([span.run_id])?;
    let mut max_dispatch = 0;
    while let Some(r) = rows.next()? {
        let id = r.get::<_, i64>(0)? as u64;
        let e = Entry {
            outcome: r.get(1)?,
            requested: r.get(2)?,
            executed: r.get(3)?,
            start: r.get(4)?,
            prepass_ns: r.get(6)?,
            slot_end: None,
        };
        let end: Option<i64> = r.get(5)?;
        let thread: Option<i64> = r.get(7)?;
        max_dispatch = max_dispatch.max(id);
        if let (Some(s), Some(t)) = (e.start, thread) {
            let end = end.unwrap_or(s).max(s);
            threads.entry(t).or_default().push((s, end, id));
            ends.insert(id, (t, end));
        }
        // A window wins over the plain dispatch of the same id (an SDK decline runs once).
        if e.outcome != "plain" || !entries.contains_key(&id) {
            entries.insert(id, e);
        }
    }
    for acts in threads.values_mut() {
        acts.sort_unstable();
    }
    for (id, e) in &mut entries {
        let Some(&(t, end)) = ends.get(id) else {
            continue;
        };
        let acts = &threads[&t];
        let from = acts.partition_point(|a| a.0 < end);
        e.slot_end = acts[from..].iter().find(|a| a.2 != *id).map(|a| a.0);
    }
    Ok(RunFacts {
        span,
        entries,
        max_dispatch,
    })
}
