//! Reading a run's windows, passes and plain dispatches for the trace ([`super::model`]): one
//! query per table for the run, passes merged into their windows by id (a query per window
//! would cost more than all the writing at a million windows).

use anyhow::Result;
use rusqlite::Connection;

use super::model::{Arg, Counter, Flow, RunWriter, Sink, Track, Val};

const IN_PROCESS: &str = "in_process";

/// One window as the trace needs it.
struct WindowSlices {
    id: i64,
    dispatch: i64,
    kernel: String,
    tid: i64,
    queue: Option<i64>,
    start: Option<i64>,
    end: Option<i64>,
    passes: Option<i64>,
    pass_count_return: Option<i64>,
    first_enter: Option<i64>,
    last_exit: Option<i64>,
    snapshot_ns: Option<i64>,
    drain_ns: Option<i64>,
    snapshot_bytes: Option<i64>,
    stuck: bool,
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

/// One pass row.
struct Pass {
    window: i64,
    idx: i64,
    start: Option<i64>,
    exit: Option<i64>,
    gpu: (Option<i64>, Option<i64>),
    restore: (Option<i64>, Option<i64>),
    continue_ns: Option<i64>,
    incomplete: bool,
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

fn window_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(WindowSlices, String, String)> {
    let w = WindowSlices {
        id: r.get(0)?,
        dispatch: r.get(1)?,
        kernel: r.get(2)?,
        tid: r.get(3)?,
        queue: r.get(4)?,
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
        window_basis: r.get(17)?,
        restore_basis: r.get(18)?,
        bytes_basis: r.get(19)?,
        restore_is_bound: r.get(20)?,
        snapshot_basis: r.get(21)?,
    };
    Ok((w, r.get(5)?, r.get(6)?))
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

/// Each window of `run_id`: a decline instant for a declined one; the slices of a replayed (or
/// stuck) one.
pub fn write_windows<S: Sink>(
    conn: &Connection,
    run_id: i64,
    out: &mut RunWriter<'_, S>,
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
    let mut mine: Vec<Pass> = Vec::new();
    while let Some(r) = rows.next()? {
        let (w, outcome, reason) = window_row(r)?;
        mine.clear();
        while let Some(p) = passes.next_if(|p| p.as_ref().map_or(true, |p| p.window <= w.id)) {
            let p = p?;
            if p.window == w.id {
                mine.push(p);
            }
        }
        if outcome != "replayed" {
            write_decline(&w, &outcome, &reason, out)?;
            // A stuck window (`pass_drain_stuck`) still ran passes: draw them, the stuck one
            // up to CONFIG EXIT.
            if !w.stuck {
                continue;
            }
        }
        let counters = if has_counters {
            crate::db::counters::window_counters(conn, w.id)?
        } else {
            Vec::new()
        };
        write_window(&w, &mine, &counters, out)?;
    }
    Ok(())
}

fn write_decline<S: Sink>(
    w: &WindowSlices,
    outcome: &str,
    reason: &str,
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    let Some(ts) = w.start else {
        return Ok(());
    };
    let args = [
        ("reason", Val::Str(reason)),
        ("dispatch_id", Val::Int(w.dispatch)),
        ("kernel", Val::Str(&w.kernel)),
        ("outcome", Val::Str(outcome)),
        ("basis", Val::Str(IN_PROCESS)),
    ];
    let name = format!("declined: {reason}");
    out.sink
        .instant(Track::Thread(w.tid), &name, "decline", ts, &args)
}

/// A replayed (or stuck) window: its slice, its phases, its passes, its tail.
fn write_window<S: Sink>(
    w: &WindowSlices,
    passes: &[Pass],
    counters: &[(i64, String, f64)],
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    let mut args: Vec<Arg<'_>> = vec![("dispatch_id", Val::Int(w.dispatch))];
    if let Some(n) = w.passes {
        args.push(("passes", Val::Int(n)));
    }
    if let Some(b) = w.snapshot_bytes {
        args.push(("snapshot_bytes", Val::Int(b)));
    }
    if let Some(b) = &w.bytes_basis {
        args.push(("snapshot_bytes_basis", Val::Str(b)));
    }
    // The slice is drawn from the window's own records: the SDK log's window length (observe
    // mode) is not a position on the timeline.
    let basis = if w.pass_count_return.is_some() {
        IN_PROCESS
    } else {
        "dispatch"
    };
    args.push(("basis", Val::Str(basis)));
    if let Some(b) = &w.window_basis {
        args.push(("window_ns_basis", Val::Str(b)));
    }
    let name = format!("window {}", w.kernel);
    let t = Track::Thread(w.tid);
    if out.slice(t, &name, "window", (w.start, w.end), &args, Flow::None)?
        && let (Some(s), Some(e)) = (w.start, w.end)
    {
        out.window_span(s, e);
    }
    write_prepass(w, out)?;
    for p in passes {
        write_pass(w, p, counters, out)?;
    }
    let b = [("basis", Val::Str(IN_PROCESS))];
    out.slice(t, "tail", "phase", (w.last_exit, w.end), &b, Flow::None)?;
    Ok(())
}

/// The phases before the first pass: config, pre-pass, and its split when the SDK log gives it.
fn write_prepass<S: Sink>(w: &WindowSlices, out: &mut RunWriter<'_, S>) -> Result<()> {
    let (t, pcr) = (Track::Thread(w.tid), w.pass_count_return);
    let m = [("basis", Val::Str(IN_PROCESS))];
    out.slice(t, "config", "phase", (w.start, pcr), &m, Flow::None)?;
    out.slice(t, "pre-pass", "phase", (pcr, w.first_enter), &m, Flow::None)?;
    let (Some(p), Some(d), Some(s)) = (pcr, w.drain_ns, w.snapshot_ns) else {
        // No split: the snapshot's bytes are on the counter over the whole pre-pass.
        return bytes_counter(w, (pcr, w.first_enter), out);
    };
    // The split of the pre-pass: the SDK's snapshot time placed at its end, the rest before it
    // (the SDK log gives durations, not timestamps).
    let snap = (p + d.max(0), p + d.max(0) + s);
    let drain = [("basis", Val::Str("in_process_minus_sdk_log"))];
    out.slice(
        t,
        "lock+drain",
        "phase",
        (Some(p), Some(snap.0)),
        &drain,
        Flow::None,
    )?;
    let mut args = vec![(
        "basis",
        Val::Str(w.snapshot_basis.as_deref().unwrap_or("sdk_log")),
    )];
    if let Some(b) = w.snapshot_bytes {
        args.push(("bytes", Val::Int(b)));
    }
    if let Some(b) = &w.bytes_basis {
        args.push(("bytes_basis", Val::Str(b)));
    }
    let span = (Some(snap.0), Some(snap.1));
    out.slice(t, "snapshot", "phase", span, &args, Flow::None)?;
    bytes_counter(w, span, out)
}

/// The snapshot-bytes counter: the window's bytes over `span`, back to 0 at its end.
fn bytes_counter<S: Sink>(
    w: &WindowSlices,
    span: (Option<i64>, Option<i64>),
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    if let (Some(b), (Some(s), Some(e))) = (w.snapshot_bytes, span)
        && s <= e
    {
        out.sink.counter(Counter::SnapshotBytes, s, b)?;
        out.sink.counter(Counter::SnapshotBytes, e, 0)?;
    }
    Ok(())
}

/// A pass: its slice (with a flow to its GPU slice), its continue decision and restore on the
/// thread, its GPU execution on the queue.
fn write_pass<S: Sink>(
    w: &WindowSlices,
    p: &Pass,
    counters: &[(i64, String, f64)],
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    let t = Track::Thread(w.tid);
    let mut args: Vec<Arg<'_>> = vec![("basis", Val::Str(IN_PROCESS))];
    if p.incomplete {
        args.push(("incomplete", Val::Bool(true)));
    }
    let mine = counters.iter().filter(|c| c.0 == p.idx);
    let before = args.len();
    args.extend(mine.map(|(_, name, v)| (name.as_str(), Val::Pmc(*v))));
    if args.len() > before {
        let code = crate::db::basis::Basis::SdkCounting.code();
        args.push(("counters_basis", Val::Str(code)));
    }
    let name = if p.incomplete {
        format!("pass {} (stuck)", p.idx)
    } else {
        format!("pass {}", p.idx)
    };
    // A stuck pass never exited: it lasts until CONFIG EXIT.
    let end = if p.incomplete {
        p.exit.or(w.end)
    } else {
        p.exit
    };
    let drawn = |span: (Option<i64>, Option<i64>)| matches!(span, (Some(s), Some(e)) if e >= s);
    let flow = if w.queue.is_some() && drawn(p.gpu) && drawn((p.start, end)) {
        Flow::Out(out.flow())
    } else {
        Flow::None
    };
    out.slice(t, &name, "pass", (p.start, end), &args, flow)?;
    // The continue decision: PASS EXIT → replay_continue return, before the restore.
    if let (Some(x), Some(c)) = (p.exit, p.continue_ns) {
        let a = [
            ("basis", Val::Str(IN_PROCESS)),
            ("after_pass", Val::Int(p.idx)),
        ];
        let span = (Some(x), Some(x + c.max(0)));
        out.slice(t, "continue", "continue", span, &a, Flow::None)?;
    }
    let restore_basis = w.restore_basis.as_deref().unwrap_or(IN_PROCESS);
    let restore = if w.restore_is_bound {
        "restore bound"
    } else {
        "restore"
    };
    let a = [
        ("basis", Val::Str(restore_basis)),
        ("after_pass", Val::Int(p.idx)),
    ];
    out.slice(t, restore, "restore", p.restore, &a, Flow::None)?;
    if let Some(q) = w.queue {
        let a = [
            ("basis", Val::Str(IN_PROCESS)),
            ("dispatch_id", Val::Int(w.dispatch)),
        ];
        let flow = match flow {
            Flow::Out(id) => Flow::In(id),
            _ => Flow::None,
        };
        let name = format!("{} pass {}", w.kernel, p.idx);
        out.slice(Track::Queue(q), &name, "gpu", p.gpu, &a, flow)?;
    }
    Ok(())
}

/// Plain dispatches: enqueue on the thread, GPU on the queue.
pub fn write_plain_dispatches<S: Sink>(
    conn: &Connection,
    run_id: i64,
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    let mut plain = conn.prepare(
        "SELECT dispatch_id, COALESCE(kernel, '?'), COALESCE(thread, 0), queue, \"start\", \"end\",
                gpu_start, gpu_end FROM krphase_dispatch WHERE run_id = ?1 ORDER BY id",
    )?;
    let mut rows = plain.query([run_id])?;
    let mut name = String::new();
    while let Some(r) = rows.next()? {
        let (d, k, tid, q): (i64, String, i64, Option<i64>) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        let a = [
            ("basis", Val::Str(IN_PROCESS)),
            ("dispatch_id", Val::Int(d)),
        ];
        name.clear();
        name.push_str("enqueue ");
        name.push_str(&k);
        let span = (r.get(4)?, r.get(5)?);
        out.slice(Track::Thread(tid), &name, "dispatch", span, &a, Flow::None)?;
        if let Some(q) = q {
            out.slice(
                Track::Queue(q),
                &k,
                "gpu",
                (r.get(6)?, r.get(7)?),
                &a,
                Flow::None,
            )?;
        }
    }
    Ok(())
}
