//! KERNEL_DISPATCH callbacks, the per-dispatch hot path: enqueue ENTER/EXIT and completion. In
//! observe mode an enqueue's ENTER and EXIT are one record, written at the EXIT.
//! Each records through the thread handle the callback layer reached once.

use super::tool::Tool;
use crate::panic_hook;
use crate::recorder::{Flush, Thread};
use krphase_format::event::HEAD56_LIMIT;
use krphase_format::{Record, enqueue_pair};

impl Tool {
    /// ENQUEUE ENTER: the enqueue record, and the placement (agent, queue) when it changed for
    /// this thread (the reader applies it to the thread's later enqueues).
    #[inline(always)]
    pub fn on_enqueue_enter(
        &self,
        th: Thread,
        d: u64,
        kernel: u64,
        place: (u64, u64),
        tid: u32,
        ts: u64,
    ) {
        if self.modvars.is_dirty() {
            return self.on_enqueue_enter_walking(th, d, kernel, place, tid, ts);
        }
        if !th.record_if_placed(Record::enqueue_enter(tid, ts, d, kernel), place, ts) {
            enqueue_enter_placing(th, d, kernel, place, tid, ts);
        }
    }

    /// ENQUEUE ENTER when module variables are to be walked first (observe mode has no CONFIG
    /// ENTER: the walk runs before a dispatch's first record). Out of line: the hot path keeps
    /// nothing alive across a call.
    #[cold]
    #[inline(never)]
    fn on_enqueue_enter_walking(
        &self,
        th: Thread,
        d: u64,
        kernel: u64,
        place: (u64, u64),
        tid: u32,
        ts: u64,
    ) {
        self.refresh_modvars(place.0);
        enqueue_enter_placing(th, d, kernel, place, tid, ts);
    }

    /// Observe mode's ENQUEUE ENTER kept pending in the thread's slot for its EXIT, which
    /// writes both as one ENQUEUE_PAIR record: true when module variables need no walk, the
    /// kernel id fits the pair and the thread is attached with its placement unchanged.
    /// Otherwise nothing is done, and the caller writes the ENTER as a record of its own (as
    /// [`Tool::on_enqueue_enter`] does, after an ENTER still pending). The dispatch id,
    /// kernel id and placement are read (`d`, `kernel`, `place`) only when needed
    /// ([`Thread::hold_enter`]).
    #[inline(always)]
    pub fn hold_enqueue_enter(
        &self,
        th: Thread,
        ts: u64,
        tid: u32,
        kernel: impl FnOnce() -> u64,
        place: impl FnOnce() -> (u64, u64),
        d: impl FnOnce() -> u64,
    ) -> bool {
        !self.modvars.is_dirty()
            && th.hold_enter(ts, place, || enqueue_pair::head(tid, kernel()), d)
    }

    /// Observe mode's ENQUEUE EXIT: one ENQUEUE_PAIR record with its pending ENTER; otherwise
    /// (no ENTER of this dispatch pending, or values the pair cannot hold) the pending ENTER, if
    /// any, and this EXIT as records of their own.
    /// `tid` gives the thread id, read only off the pair's path (nothing is kept alive for it).
    #[inline(always)]
    pub fn on_enqueue_exit_observe(
        th: Thread,
        d: u64,
        corr: u64,
        ts: u64,
        tid: impl FnOnce() -> u32,
    ) {
        if !th.record_exit_pair(d, corr, ts) {
            enqueue_exit_plain(th, d, tid(), corr, ts);
        }
    }

    #[inline(always)]
    pub fn on_enqueue_exit(th: Thread, d: u64, tid: u32, corr: u64, ts: u64) {
        // The SDK's thread id is the recording thread's: nothing to fill in.
        th.record_exact(Record::enqueue_exit(tid, ts, d, corr), ts);
    }

    /// COMPLETE: one COMPLETE_AT record (host time, GPU interval, dispatch id in 56 bits); a
    /// dispatch id beyond 56 bits (no SDK numbers them so) takes the two-record form, the only
    /// one that reads `tid` (the thread id).
    #[inline(always)]
    pub fn on_complete(
        th: Thread,
        d: u64,
        start: u64,
        end: u64,
        tid: impl FnOnce() -> u32,
        ts: u64,
    ) {
        if d < HEAD56_LIMIT {
            th.record_exact(Record::complete_at(ts, d, start, end), ts);
        } else {
            complete_in_two(th, d, start, end, tid(), ts);
        }
    }
}

/// ENQUEUE ENTER with its placement, when the thread's placement changed (or it attaches, or
/// module variables were walked first). Out of line, its records built here: the hot path
/// keeps nothing alive across a call and builds nothing it does not store.
#[cold]
#[inline(never)]
fn enqueue_enter_placing(th: Thread, d: u64, kernel: u64, place: (u64, u64), tid: u32, ts: u64) {
    let (agent, queue) = place;
    th.record_placing(
        Record::enqueue_enter(tid, ts, d, kernel),
        place,
        Record::dispatch_info(tid, d, agent, queue, true),
        ts,
    );
}

/// [`Tool::on_enqueue_exit_observe`] without its pair: out of line.
/// `extern "C"` with its own panic boundary (`panic_hook::catch`): it cannot unwind, so the
/// hot path calls it with no landing pad, as a tail call.
#[cold]
#[inline(never)]
extern "C" fn enqueue_exit_plain(th: Thread, d: u64, tid: u32, corr: u64, ts: u64) {
    panic_hook::catch(|| {
        th.write_pending(ts);
        th.record_exact(Record::enqueue_exit(tid, ts, d, corr), ts);
    });
}

/// A completion whose dispatch id is beyond 56 bits: the host time first (COMPLETE_HOST, naming
/// the completion by its GPU end), then COMPLETE. Cannot unwind, as [`enqueue_exit_plain`].
#[cold]
#[inline(never)]
extern "C" fn complete_in_two(th: Thread, d: u64, start: u64, end: u64, tid: u32, ts: u64) {
    panic_hook::catch(|| {
        th.record(Record::complete_host(tid, ts, d, end), ts, Flush::Lazy);
        th.record(Record::complete(tid, d, start, end), ts, Flush::Lazy);
    });
}
