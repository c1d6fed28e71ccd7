//! Drawing a run's windows, passes and plain dispatches ([`super::model`]) from the rows
//! [`super::rows`] reads: a window is a slice on its thread with its phases and passes, each
//! pass's GPU execution a slice on its queue; a declined window is an instant.

use std::borrow::Cow;
use std::sync::Arc;

use anyhow::Result;
use rustc_hash::FxHashMap as HashMap;

use super::model::{Arg, Counter, Flow, RunWriter, Sink, Track, Val};
use super::rows::{Pass, PlainDispatch, WindowBatch, WindowSlices};

const IN_PROCESS: &str = "in_process";

/// The slice names of one kernel, made once per kernel and run rather than once per window (a
/// million windows would be three million small strings).
struct KernelNames {
    /// Holds the kernel's name alive, so its address keys it in [`Names`] and cannot be reused.
    kernel: Arc<str>,
    window: String,
    /// `KERNEL pass i`, by pass index, made as they are first needed.
    gpu: Vec<String>,
}

impl KernelNames {
    /// Pass indices past this are named on the spot.
    const CACHED: usize = 64;

    fn gpu(&mut self, idx: i64) -> Cow<'_, str> {
        let kernel = &self.kernel;
        match usize::try_from(idx) {
            Ok(i) if i < Self::CACHED => {
                while self.gpu.len() <= i {
                    let n = self.gpu.len();
                    self.gpu.push(format!("{kernel} pass {n}"));
                }
                Cow::Borrowed(&self.gpu[i])
            }
            _ => Cow::Owned(format!("{kernel} pass {idx}")),
        }
    }
}

/// Every kernel's slice names in a run, by the address of its shared name (the reader hands out
/// one `Arc` per distinct name): windows of several kernels interleave, so a cache of the last
/// kernel alone would name nearly every window afresh.
#[derive(Default)]
pub struct Names {
    by_kernel: HashMap<usize, KernelNames>,
    /// The name of a decline instant, written over for each one.
    decline: String,
}

impl Names {
    fn of(&mut self, kernel: &Arc<str>) -> &mut KernelNames {
        let at = Arc::as_ptr(kernel).cast::<u8>() as usize;
        self.by_kernel.entry(at).or_insert_with(|| KernelNames {
            kernel: Arc::clone(kernel),
            window: format!("window {kernel}"),
            gpu: Vec::new(),
        })
    }
}

/// `pass i`, without allocating for the usual few passes.
fn pass_name(idx: i64, stuck: bool) -> Cow<'static, str> {
    const NAMES: [&str; 8] = [
        "pass 0", "pass 1", "pass 2", "pass 3", "pass 4", "pass 5", "pass 6", "pass 7",
    ];
    match usize::try_from(idx) {
        _ if stuck => Cow::Owned(format!("pass {idx} (stuck)")),
        Ok(i) if i < NAMES.len() => Cow::Borrowed(NAMES[i]),
        _ => Cow::Owned(format!("pass {idx}")),
    }
}

/// Each window of a batch: a decline instant for a declined one; the slices of a replayed (or
/// stuck) one.
/// `names` holds the run's slice names from one batch to the next.
pub fn draw_windows<S: Sink>(
    batch: &WindowBatch,
    names: &mut Names,
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    for w in &batch.windows {
        if let Some((outcome, reason)) = &w.declined {
            write_decline(w, outcome, reason, &mut names.decline, out)?;
            // A stuck window (`pass_drain_stuck`) still ran passes: draw them, the stuck one
            // up to CONFIG EXIT.
            if !w.stuck {
                continue;
            }
        }
        let names = names.of(&w.kernel);
        write_window(w, &batch.passes[w.pass_rows.clone()], names, out)?;
    }
    Ok(())
}

fn write_decline<S: Sink>(
    w: &WindowSlices,
    outcome: &str,
    reason: &str,
    name: &mut String,
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
    name.clear();
    name.push_str("declined: ");
    name.push_str(reason);
    out.sink
        .instant(Track::Thread(w.tid), name, "decline", ts, &args)
}

/// A replayed (or stuck) window: its slice, its phases, its passes, its tail.
fn write_window<S: Sink>(
    w: &WindowSlices,
    passes: &[Pass],
    names: &mut KernelNames,
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    // Sized for every argument a window can have: grown push by push, it was reallocated twice
    // per window.
    let mut args: Vec<Arg<'_>> = Vec::with_capacity(6);
    args.push(("dispatch_id", Val::Int(w.dispatch)));
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
    let t = Track::Thread(w.tid);
    if out.slice(
        t,
        &names.window,
        "window",
        (w.start, w.end),
        &args,
        Flow::None,
    )? && let (Some(s), Some(e)) = (w.start, w.end)
    {
        out.window_span(s, e);
    }
    write_prepass(w, out)?;
    for p in passes {
        write_pass(w, p, names, out)?;
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
    let (Some(p), Some(f), Some(s)) = (pcr, w.first_enter, w.snapshot_ns) else {
        // No split: the snapshot's bytes are on the counter over the whole pre-pass.
        return bytes_counter(w, (pcr, w.first_enter), out);
    };
    let Some(split) = split_prepass(p, f, w.drain_ns, s) else {
        return bytes_counter(w, (pcr, w.first_enter), out);
    };
    let drain = [("basis", Val::Str("in_process_minus_sdk_log"))];
    let lock = (Some(split.drain.0), Some(split.drain.1));
    out.slice(t, "lock+drain", "phase", lock, &drain, Flow::None)?;
    let mut args = Vec::with_capacity(4);
    args.push(("basis", Val::Str(w.snapshot_basis.unwrap_or("sdk_log"))));
    if split.clamped {
        // The log prints the snapshot's seconds at a coarse resolution, so its figure can exceed
        // the pre-pass measured around it by up to that resolution: the slice is drawn to the
        // pre-pass's end, and the log's own figure is kept beside it.
        args.push(("snapshot_ns_logged", Val::Int(s)));
    }
    if let Some(b) = w.snapshot_bytes {
        args.push(("bytes", Val::Int(b)));
    }
    if let Some(b) = &w.bytes_basis {
        args.push(("bytes_basis", Val::Str(b)));
    }
    let span = (Some(split.snapshot.0), Some(split.snapshot.1));
    out.slice(t, "snapshot", "phase", span, &args, Flow::None)?;
    bytes_counter(w, span, out)
}

/// The pre-pass `[start, end]` split into lock+drain then snapshot.
#[derive(Debug, PartialEq, Eq)]
struct PrepassSplit {
    drain: (i64, i64),
    snapshot: (i64, i64),
    /// The log's snapshot was longer than the pre-pass and was cut to it.
    clamped: bool,
}

/// Places the SDK's snapshot time at the pre-pass's end and the rest (lock+drain) before it: the
/// log gives durations, not timestamps. Both stay inside the pre-pass, so the slices nest; a
/// snapshot longer than the pre-pass (the log's rounding) fills it. None for a pre-pass that
/// runs backwards or a negative snapshot.
fn split_prepass(
    start: i64,
    end: i64,
    drain_ns: Option<i64>,
    snap_ns: i64,
) -> Option<PrepassSplit> {
    if end < start || snap_ns < 0 {
        return None;
    }
    let len = end - start;
    let snap = snap_ns.min(len);
    let drain = drain_ns.unwrap_or(len - snap).clamp(0, len - snap);
    let at = start + drain;
    Some(PrepassSplit {
        drain: (start, at),
        snapshot: (at, at + snap),
        clamped: snap < snap_ns,
    })
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
    names: &mut KernelNames,
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    let t = Track::Thread(w.tid);
    // Sized for the pass's arguments and its counters, so it is allocated once.
    let mut args: Vec<Arg<'_>> = Vec::with_capacity(3 + w.counters.len());
    args.push(("basis", Val::Str(IN_PROCESS)));
    if p.incomplete {
        args.push(("incomplete", Val::Bool(true)));
    }
    let mine = w.counters.iter().filter(|c| c.0 == p.idx);
    let before = args.len();
    args.extend(mine.map(|(_, name, v)| (name.as_str(), Val::Pmc(*v))));
    if args.len() > before {
        let code = crate::db::basis::Basis::SdkCounting.code();
        args.push(("counters_basis", Val::Str(code)));
    }
    let name = pass_name(p.idx, p.incomplete);
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
    let restore_basis = w.restore_basis.unwrap_or(IN_PROCESS);
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
        let name = names.gpu(p.idx);
        out.slice(Track::Queue(q), &name, "gpu", p.gpu, &a, flow)?;
    }
    Ok(())
}

/// Plain dispatches: enqueue on the thread, GPU on the queue.
pub fn draw_plain_dispatches<S: Sink>(
    batch: &[PlainDispatch],
    out: &mut RunWriter<'_, S>,
) -> Result<()> {
    let mut name = String::new();
    for d in batch {
        let a = [
            ("basis", Val::Str(IN_PROCESS)),
            ("dispatch_id", Val::Int(d.dispatch)),
        ];
        name.clear();
        name.push_str("enqueue ");
        name.push_str(&d.kernel);
        let t = Track::Thread(d.tid);
        out.slice(t, &name, "dispatch", d.span, &a, Flow::None)?;
        if let Some(q) = d.queue {
            out.slice(Track::Queue(q), &d.kernel, "gpu", d.gpu, &a, Flow::None)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_stays_inside_the_prepass() {
        let s = split_prepass(100, 200, Some(30), 70).unwrap();
        assert_eq!(
            (s.drain, s.snapshot, s.clamped),
            ((100, 130), (130, 200), false)
        );
        // The log's rounding made the snapshot 40 ns longer than the pre-pass.
        let s = split_prepass(100, 200, Some(-40), 140).unwrap();
        assert_eq!(
            (s.drain, s.snapshot, s.clamped),
            ((100, 100), (100, 200), true)
        );
        // A phase line's lock+drain plus snapshot longer than the pre-pass.
        let s = split_prepass(100, 200, Some(50), 80).unwrap();
        assert_eq!(
            (s.drain, s.snapshot, s.clamped),
            ((100, 120), (120, 200), false)
        );
        assert_eq!(split_prepass(200, 100, None, 10), None);
        assert_eq!(split_prepass(100, 200, None, -1), None);
    }
}
