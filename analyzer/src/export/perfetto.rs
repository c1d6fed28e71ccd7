//! `krphase export perfetto RUN -o trace.json`: Chrome trace-event JSON that opens in Perfetto.
//!
//! One track per host thread and one per queue. Each window is a slice on its thread with nested
//! config, pre-pass (split into drain and snapshot when an SDK log is joined), pass, continue
//! (PASS EXIT → replay_continue return, when recorded), restore and
//! tail slices; each pass's GPU execution is a slice on its queue's track; declines are instant
//! events (a stuck window, `pass_drain_stuck`, also keeps its slices, the stuck pass up to CONFIG
//! EXIT). Written as a stream, one event at a time. Every slice's args carry `basis`, where its
//! interval comes from (`db/basis.rs`): `in_process` for the tool's timestamps, `sdk_log` or
//! `sdk_phase_line` for the SDK's snapshot, `in_process_minus_sdk_log` for lock+drain,
//! `dispatch` for observe mode's `restore bound` (completion to the next enqueue, which holds
//! the SDK's restore).

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::Connection;
use serde_json::{Value, json};

/// Queue tracks get thread ids above this, so they never collide with host thread ids.
const QUEUE_TID_BASE: i64 = 1 << 40;

/// The trace being written: events streamed one at a time, and the tracks seen so far.
struct TraceWriter<W: Write> {
    w: W,
    first: bool,
    pid: i64,
    origin: i64,
    events: u64,
    /// Host thread ids seen, for their track names.
    threads: BTreeMap<i64, ()>,
    /// Queue handle → its track's index above [`QUEUE_TID_BASE`], in order of first use.
    queues: BTreeMap<i64, i64>,
}

impl<W: Write> TraceWriter<W> {
    fn emit(&mut self, v: Value) -> Result<()> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.w, &v)?;
        self.events += 1;
        Ok(())
    }

    fn us(&self, ns: i64) -> f64 {
        (ns - self.origin) as f64 / 1000.0
    }

    /// The track of queue `q`.
    fn queue_tid(&mut self, q: i64) -> i64 {
        let n = self.queues.len() as i64;
        QUEUE_TID_BASE + *self.queues.entry(q).or_insert(n)
    }

    /// A complete ("X") slice; skipped when either end is unknown or it runs backwards.
    fn slice(
        &mut self,
        tid: i64,
        name: &str,
        cat: &str,
        start: Option<i64>,
        end: Option<i64>,
        args: Value,
    ) -> Result<()> {
        let (Some(s), Some(e)) = (start, end) else {
            return Ok(());
        };
        if e < s {
            return Ok(());
        }
        let v = json!({"ph": "X", "pid": self.pid, "tid": tid, "name": name, "cat": cat,
                       "ts": self.us(s), "dur": (e - s) as f64 / 1000.0, "args": args});
        self.emit(v)
    }
}

/// Writes the trace of `run_id` to `path`; returns the number of trace events.
pub fn export_perfetto(conn: &Connection, run_id: i64, path: &Path) -> Result<u64> {
    let (pid, origin): (Option<i64>, Option<i64>) = conn
        .query_row(
            "SELECT pid, \"start\" FROM krphase_run WHERE id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|_| anyhow::anyhow!("unknown run id {run_id}"))?;
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = TraceWriter {
        w: BufWriter::new(file),
        first: true,
        pid: pid.unwrap_or(run_id),
        origin: origin.unwrap_or(0),
        events: 0,
        threads: BTreeMap::new(),
        queues: BTreeMap::new(),
    };
    out.w
        .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    out.emit(
        json!({"ph": "M", "pid": out.pid, "tid": 0, "name": "process_name",
                    "args": {"name": format!("krphase run {run_id} (pid {})", out.pid)}}),
    )?;
    write_windows(conn, run_id, &mut out)?;
    write_plain_dispatches(conn, run_id, &mut out)?;
    write_track_names(&mut out)?;
    out.w.write_all(b"\n]}\n")?;
    out.w.flush()?;
    Ok(out.events)
}

/// One window as the trace needs it.
struct WindowSlices {
    id: i64,
    dispatch: i64,
    kernel: String,
    tid: i64,
    queue: Option<i64>,
    start: Option<i64>,
    end: Option<i64>,
    pass_count_return: Option<i64>,
    first_enter: Option<i64>,
    last_exit: Option<i64>,
    snapshot_ns: Option<i64>,
    drain_ns: Option<i64>,
    snapshot_bytes: Option<i64>,
    /// The view's basis of the window, restore and snapshot bytes.
    window_basis: Option<String>,
    restore_basis: Option<String>,
    bytes_basis: Option<String>,
    /// Observe mode: the slice between a completion and the next enqueue is the restore's
    /// upper bound (the SDK's restore lies inside it), named so.
    restore_is_bound: bool,
    /// `sdk_phase_line` or `sdk_log`: where the snapshot time came from.
    snapshot_basis: Option<String>,
}

/// `{"basis": code}`, plus `extra`'s fields.
fn with_basis(basis: &str, extra: Value) -> Value {
    let mut v = extra;
    v["basis"] = Value::from(basis);
    v
}

const IN_PROCESS: &str = "in_process";

/// Each window: a decline instant for a declined one; the slices of a replayed (or stuck) one.
fn write_windows<W: Write>(conn: &Connection, run_id: i64, out: &mut TraceWriter<W>) -> Result<()> {
    let mut passes = conn.prepare_cached(
        "SELECT pass_index, \"start\", \"end\", gpu_start, gpu_end, restore_start, restore_end,
                continue_ns, incomplete
         FROM krphase_pass WHERE window_id = ?1 ORDER BY pass_index",
    )?;
    let mut windows = conn.prepare(
        "SELECT w.id, w.dispatch_id, COALESCE(w.kernel, '?'), COALESCE(w.thread, 0), w.queue,
                w.outcome, v.reason, w.executed_passes, w.\"start\", w.\"end\", w.pass_count_return,
                w.first_pass_enter, w.last_pass_exit, v.snapshot_ns, v.drain_ns, v.snapshot_bytes,
                w.stuck_ns, v.window_basis, COALESCE(v.restore_bound_basis, v.restore_basis),
                v.snapshot_bytes_basis, v.restore_bound_basis IS NOT NULL,
                v.snapshot_basis
         FROM krphase_window w JOIN krphase_window_phase v ON v.window_id = w.id
         WHERE w.run_id = ?1 ORDER BY w.id",
    )?;
    let mut rows = windows.query([run_id])?;
    while let Some(r) = rows.next()? {
        let w = WindowSlices {
            id: r.get(0)?,
            dispatch: r.get(1)?,
            kernel: r.get(2)?,
            tid: r.get(3)?,
            queue: r.get(4)?,
            start: r.get(8)?,
            end: r.get(9)?,
            pass_count_return: r.get(10)?,
            first_enter: r.get(11)?,
            last_exit: r.get(12)?,
            snapshot_ns: r.get(13)?,
            drain_ns: r.get(14)?,
            snapshot_bytes: r.get(15)?,
            window_basis: r.get(17)?,
            restore_basis: r.get(18)?,
            bytes_basis: r.get(19)?,
            restore_is_bound: r.get(20)?,
            snapshot_basis: r.get(21)?,
        };
        let outcome: String = r.get(5)?;
        let reason: String = r.get(6)?;
        out.threads.insert(w.tid, ());
        if outcome != "replayed" {
            if let Some(ts) = w.start {
                let v = json!({"ph": "i", "s": "t", "pid": out.pid, "tid": w.tid, "ts": out.us(ts),
                               "name": format!("declined: {reason}"), "cat": "decline",
                               "args": {"dispatch_id": w.dispatch, "kernel": w.kernel, "outcome": outcome,
                                        "basis": IN_PROCESS}});
                out.emit(v)?;
            }
            // A stuck window (`pass_drain_stuck`) still ran passes: draw them, the stuck one
            // up to CONFIG EXIT.
            if r.get::<_, Option<i64>>(16)?.is_none() {
                continue;
            }
        }
        let args = json!({"dispatch_id": w.dispatch, "passes": r.get::<_, Option<i64>>(7)?,
                          "snapshot_bytes": w.snapshot_bytes,
                          "snapshot_bytes_basis": w.bytes_basis,
                          // The slice is drawn from the window's own records: the SDK log's
                          // window length (observe mode) is not a position on the timeline.
                          "basis": if w.pass_count_return.is_some() { IN_PROCESS } else { "dispatch" },
                          "window_ns_basis": w.window_basis});
        write_window_phases(&w, args, out)?;
        let counters = crate::db::counters::window_counters(conn, w.id)?;
        write_passes(&mut passes, &w, &counters, out)?;
        let b = with_basis(IN_PROCESS, json!({}));
        out.slice(w.tid, "tail", "phase", w.last_exit, w.end, b)?;
    }
    Ok(())
}

/// The window slice and its phases before the first pass.
fn write_window_phases<W: Write>(
    w: &WindowSlices,
    args: Value,
    out: &mut TraceWriter<W>,
) -> Result<()> {
    let (tid, pcr) = (w.tid, w.pass_count_return);
    out.slice(
        tid,
        &format!("window {}", w.kernel),
        "window",
        w.start,
        w.end,
        args,
    )?;
    let m = || with_basis(IN_PROCESS, json!({}));
    out.slice(tid, "config", "phase", w.start, pcr, m())?;
    out.slice(tid, "pre-pass", "phase", pcr, w.first_enter, m())?;
    if let (Some(p), Some(d), Some(s)) = (pcr, w.drain_ns, w.snapshot_ns) {
        // The split of the pre-pass: the SDK's snapshot time placed at its end, the rest
        // before it (the SDK log gives durations, not timestamps).
        out.slice(
            tid,
            "lock+drain",
            "phase",
            Some(p),
            Some(p + d.max(0)),
            with_basis("in_process_minus_sdk_log", json!({})),
        )?;
        out.slice(
            tid,
            "snapshot",
            "phase",
            Some(p + d.max(0)),
            Some(p + d.max(0) + s),
            with_basis(
                w.snapshot_basis.as_deref().unwrap_or("sdk_log"),
                json!({"bytes": w.snapshot_bytes, "bytes_basis": w.bytes_basis}),
            ),
        )?;
    }
    Ok(())
}

/// Each pass of a window: the pass, its continue decision and restore on the thread, its GPU
/// execution on the queue.
/// A pass slice's args: `incomplete` for a stuck pass; the values of the pass's counter group
/// (`counters`, name → value) with their own basis, the SDK's counting service.
fn pass_args(incomplete: bool, idx: i64, counters: &[(i64, String, f64)]) -> Value {
    let mut extra = if incomplete {
        json!({"incomplete": true})
    } else {
        json!({})
    };
    let mine: serde_json::Map<String, Value> = counters
        .iter()
        .filter(|c| c.0 == idx)
        .map(|(_, name, v)| (name.clone(), json!(v)))
        .collect();
    if !mine.is_empty() {
        extra["counters"] = Value::Object(mine);
        extra["counters_basis"] = Value::from(crate::db::basis::Basis::SdkCounting.code());
    }
    with_basis(IN_PROCESS, extra)
}

fn write_passes<W: Write>(
    passes: &mut rusqlite::CachedStatement<'_>,
    w: &WindowSlices,
    counters: &[(i64, String, f64)],
    out: &mut TraceWriter<W>,
) -> Result<()> {
    let tid = w.tid;
    let mut prow = passes.query([w.id])?;
    while let Some(p) = prow.next()? {
        let idx: i64 = p.get(0)?;
        let exit: Option<i64> = p.get(2)?;
        let incomplete = p.get::<_, i64>(8)? != 0;
        out.slice(
            tid,
            &if incomplete {
                format!("pass {idx} (stuck)")
            } else {
                format!("pass {idx}")
            },
            "pass",
            p.get(1)?,
            // A stuck pass never exited: it lasts until CONFIG EXIT.
            if incomplete { exit.or(w.end) } else { exit },
            pass_args(incomplete, idx, counters),
        )?;
        // The continue decision: PASS EXIT → replay_continue return, before the restore.
        if let (Some(x), Some(c)) = (exit, p.get::<_, Option<i64>>(7)?) {
            out.slice(
                tid,
                "continue",
                "continue",
                Some(x),
                Some(x + c.max(0)),
                with_basis(IN_PROCESS, json!({"after_pass": idx})),
            )?;
        }
        let restore_basis = w.restore_basis.as_deref().unwrap_or(IN_PROCESS);
        out.slice(
            tid,
            if w.restore_is_bound {
                "restore bound"
            } else {
                "restore"
            },
            "restore",
            p.get(5)?,
            p.get(6)?,
            with_basis(restore_basis, json!({"after_pass": idx})),
        )?;
        if let Some(q) = w.queue {
            let qt = out.queue_tid(q);
            out.slice(
                qt,
                &format!("{} pass {idx}", w.kernel),
                "gpu",
                p.get(3)?,
                p.get(4)?,
                with_basis(IN_PROCESS, json!({"dispatch_id": w.dispatch})),
            )?;
        }
    }
    Ok(())
}

/// Plain dispatches: enqueue on the thread, GPU on the queue.
fn write_plain_dispatches<W: Write>(
    conn: &Connection,
    run_id: i64,
    out: &mut TraceWriter<W>,
) -> Result<()> {
    let mut plain = conn.prepare(
        "SELECT dispatch_id, COALESCE(kernel, '?'), COALESCE(thread, 0), queue, \"start\", \"end\",
                gpu_start, gpu_end FROM krphase_dispatch WHERE run_id = ?1 ORDER BY id",
    )?;
    let mut rows = plain.query([run_id])?;
    while let Some(r) = rows.next()? {
        let (d, k, tid, q): (i64, String, i64, Option<i64>) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        out.threads.insert(tid, ());
        out.slice(
            tid,
            &format!("enqueue {k}"),
            "dispatch",
            r.get(4)?,
            r.get(5)?,
            with_basis(IN_PROCESS, json!({"dispatch_id": d})),
        )?;
        if let Some(q) = q {
            let qt = out.queue_tid(q);
            out.slice(
                qt,
                &k,
                "gpu",
                r.get(6)?,
                r.get(7)?,
                with_basis(IN_PROCESS, json!({"dispatch_id": d})),
            )?;
        }
    }
    Ok(())
}

/// A name for every thread and queue track.
fn write_track_names<W: Write>(out: &mut TraceWriter<W>) -> Result<()> {
    let threads: Vec<i64> = out.threads.keys().copied().collect();
    for t in threads {
        out.emit(
            json!({"ph": "M", "pid": out.pid, "tid": t, "name": "thread_name",
                        "args": {"name": format!("thread {t}")}}),
        )?;
    }
    let queues: Vec<(i64, i64)> = out.queues.iter().map(|(q, i)| (*q, *i)).collect();
    for (q, i) in queues {
        out.emit(
            json!({"ph": "M", "pid": out.pid, "tid": QUEUE_TID_BASE + i, "name": "thread_name",
                        "args": {"name": format!("queue {q:#x}")}}),
        )?;
    }
    Ok(())
}
