//! Phase arithmetic: the intervals of a window from the host and GPU times of its passes. Drive
//! mode measures the pre-pass, each gap between passes (split into the continue call and the
//! restore), the tail and a stuck pass's drain; observe mode bounds each restore from above by
//! the gap between a pass's completion and the next pass's enqueue.

use crate::model::{ContinueCall, Interval, Pass, Restore};

/// `start → end` when both were recorded.
fn interval(start: Option<u64>, end: Option<u64>) -> Option<Interval> {
    match (start, end) {
        (Some(start), Some(end)) => Some(Interval { start, end }),
        _ => None,
    }
}

/// Pass-count return → PASS 0 ENTER (drive mode).
pub(crate) fn pre_pass(pass_count_return: Option<u64>, passes: &[Pass]) -> Option<Interval> {
    interval(pass_count_return, passes.first().and_then(|p| p.enter))
}

/// Last PASS EXIT → CONFIG EXIT (drive mode; none when the last pass is incomplete).
pub(crate) fn tail(passes: &[Pass], config_exit: Option<u64>) -> Option<Interval> {
    interval(passes.last().and_then(|p| p.exit), config_exit)
}

/// The incomplete last pass's ENTER → CONFIG EXIT (drive mode, `pass_drain_stuck`).
pub(crate) fn stuck(passes: &[Pass], config_exit: Option<u64>) -> Option<Interval> {
    interval(
        passes.last().filter(|p| p.incomplete).and_then(|p| p.enter),
        config_exit,
    )
}

/// Drive mode: the gap after each pass, PASS EXIT → next PASS ENTER, split at the return of the
/// continue call made in it, when one was recorded.
pub(crate) fn drive_restores(passes: &[Pass], continues: &[ContinueCall]) -> Vec<Restore> {
    passes
        .windows(2)
        .filter_map(|w| {
            let (exit, next) = (w[0].exit?, w[1].enter?);
            // The SDK calls continue between this EXIT and the next ENTER; a record
            // outside that gap (clock trouble) is ignored.
            let ret = continues
                .iter()
                .rev()
                .find(|c| c.after_pass == w[0].index)
                .map(|c| c.call.end.clamp(exit, next.max(exit)))
                .filter(|_| next >= exit);
            Some(Restore {
                after_pass: w[0].index,
                start: ret.unwrap_or(exit),
                end: next,
                continue_phase: ret.map(|end| Interval { start: exit, end }),
            })
        })
        .collect()
}

/// Observe mode: the gap from each pass's completion to the next pass's enqueue, an upper bound
/// on the SDK's restore.
pub(crate) fn observe_restores(passes: &[Pass]) -> Vec<Restore> {
    passes
        .windows(2)
        .filter_map(|w| {
            Some(Restore {
                after_pass: w[0].index,
                // The last host time of the pass the process sees (files without
                // COMPLETE_HOST: the GPU end, which the completion's hop follows).
                start: w[0].complete_host.or(w[0].gpu_end)?,
                // Without a per-pass enqueue (an SDK that enqueues once per window), the
                // next pass's GPU start bounds the gap from above.
                end: w[1].enqueue_enter.or(w[1].gpu_start)?,
                continue_phase: None,
            })
        })
        .collect()
}

/// How far apart the two placements' evidence must be before a restore says where it ran, ns:
/// above scheduling noise on a loaded host, below any restore worth splitting out.
pub const RESTORE_PLACEMENT_MARGIN_NS: u64 = 50_000;

/// Bytes per ns no host-to-device copy reaches (100 GB/s: PCIe 5.0 x16 peaks near 64 GB/s, the
/// fastest pinned copy measured 55 GB/s, `docs/emulator.md`).
pub const HOST_COPY_BYTES_PER_NS: u64 = 100;

/// PASS ENTER → the pass's kernel start on the GPU (or, without GPU times, its first enqueue):
/// what a restore queued after PASS ENTER, ahead of the kernel, lengthens.
fn lead(p: &Pass, gpu: bool) -> Option<u64> {
    let to = if gpu { p.gpu_start } else { p.enqueue_enter };
    to?.checked_sub(p.enter?)
}

/// Drive mode: whether the window's restores ran inside the next pass (after its PASS ENTER, as
/// a device-side snapshot's restores do) rather than between PASS EXIT and the next PASS ENTER,
/// read from the order of the callbacks. Each restore's gap (continue return → next PASS ENTER)
/// is set against how much longer the next pass took from PASS ENTER to its kernel than pass 0
/// did (which no restore precedes): the restore lies in whichever is longer, and inside the pass
/// only when the gap itself is under [`RESTORE_PLACEMENT_MARGIN_NS`]; with the snapshot's
/// estimated `bytes`, a gap shorter than their copy at [`HOST_COPY_BYTES_PER_NS`] by that margin
/// also says inside (the restore cannot have fit in it). A restore whose two
/// figures are within that margin says nothing; `Some` when at least one restore says where and
/// none says otherwise; `None` without restores, without the times, or when they disagree.
pub fn restore_in_pass(passes: &[Pass], restores: &[Restore], bytes: Option<u64>) -> Option<bool> {
    let first = passes.first()?;
    let gpu = lead(first, true).is_some();
    let base = lead(first, gpu);
    // The least time a host copy of the snapshot's bytes takes (estimated bytes, at a rate above
    // any host link's), ns: a gap shorter than that cannot have held the restore.
    let least_copy = bytes.map_or(0, |b| b / HOST_COPY_BYTES_PER_NS);
    let mut verdict = None;
    for r in restores {
        let next = passes.iter().find(|p| p.index == r.after_pass + 1)?;
        let extra = base
            .zip(lead(next, gpu))
            .map_or(0, |(base, l)| l.saturating_sub(base));
        let gap = r.end.saturating_sub(r.start);
        // Inside the pass only when the gap holds next to nothing: a scheduling delay on a
        // loaded host can lengthen a pass's lead, never shorten a restore in the gap.
        let longer = extra.max(least_copy);
        let this =
            if gap < RESTORE_PLACEMENT_MARGIN_NS && longer > gap + RESTORE_PLACEMENT_MARGIN_NS {
                true
            } else if gap > extra + RESTORE_PLACEMENT_MARGIN_NS {
                false
            } else {
                // Too close to call (or pass 0 itself was delayed): this restore says nothing.
                continue;
            };
        if verdict.is_some_and(|v| v != this) {
            return None;
        }
        verdict = Some(this);
    }
    verdict
}
