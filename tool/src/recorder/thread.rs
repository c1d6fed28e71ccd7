//! The thread-local side of recording: each thread's buffer state, attaching it to the current
//! recorder, appending records (the hot path) and handing full buffers over.

use super::current::{RECORDER_STATE, RECORDING_BIT, current_with_state, peek};
use super::free_slots::{free_slot, give_back};
use super::slot::{SLOT_RECORDS, Slot};
use super::{Counters, Recorder};
use crate::{clock, panic_hook, sys};
use krphase_format::event::Notice;
use krphase_format::{Record, enqueue_pair};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// A partly filled slot older than this (ms) is sent at its thread's next event.
const FLUSH_AGE_MS: u64 = 50;

/// A thread's attached state before it attached (never a value of [`RECORDER_STATE`]'s form
/// with a generation that can be reached).
const DETACHED: u64 = u64::MAX;

/// The per-thread buffer state the hot path touches: `Copy` cells and no destructor, so
/// reaching it is one TLS offset with no lazy-registration check and no borrow flag.
pub struct ThreadBuffer {
    /// The [`RECORDER_STATE`] value this thread attached under; any other value sends it to
    /// the slow path.
    attached_state: Cell<u64>,
    /// The slot this thread owns (it appends to it; see `slot.rs` for who may touch it).
    slot: Cell<Option<&'static Slot>>,
    /// A partly filled slot is handed over at the first event after this time; 0 while the
    /// slot is empty (the first record, past it, sets it: one check on the hot path serves
    /// both).
    flush_at: Cell<u64>,
    /// The OS thread id, shifted to where a record's head holds it.
    tid_head: Cell<u64>,
    /// Placement (agent, queue) last recorded by [`Thread::record_placing`] in this attachment.
    place: Cell<(u64, u64)>,
}

const NO_PLACE: (u64, u64) = (u64::MAX, u64::MAX);

thread_local! {
    static THREAD_BUFFER: ThreadBuffer = const {
        ThreadBuffer {
            attached_state: Cell::new(DETACHED),
            slot: Cell::new(None),
            flush_at: Cell::new(0),
            tid_head: Cell::new(0),
            place: Cell::new(NO_PLACE),
        }
    };
    /// The recorder this thread's slot belongs to; its destructor delivers the slot at thread
    /// exit. Touched only off the hot path.
    static THREAD_RECORDER: ThreadRecorder = const { ThreadRecorder { rec: Cell::new(None) } };
}

/// The recorder a thread is attached to (the part of the thread's state with a destructor).
struct ThreadRecorder {
    rec: Cell<Option<&'static Recorder>>,
}

impl Drop for ThreadRecorder {
    fn drop(&mut self) {
        // Thread exit: deliver what is left, give the slot back for the next thread.
        let rec = self.rec.take();
        let _ = THREAD_BUFFER.try_with(|h| {
            h.attached_state.set(DETACHED);
            if let Some(rec) = rec {
                leave(h, rec);
            }
            // A slot finalize closed is finalize's: it is never reused.
            if let Some(slot) = h.slot.take()
                && slot.hold()
            {
                give_back(slot);
            }
        });
    }
}

/// Adds one to a counter of the current recorder: through the calling thread's attachment when
/// it is current (no lock), else through [`peek`].
pub fn count(counter: fn(&Counters) -> &AtomicU64) {
    let add = |r: &Recorder| {
        counter(&r.counters).fetch_add(1, Ordering::Relaxed);
    };
    let attached = THREAD_BUFFER
        .try_with(|h| h.attached_state.get() == RECORDER_STATE.load(Ordering::Relaxed))
        .unwrap_or(false)
        && THREAD_RECORDER
            .try_with(|c| c.rec.get().map(add))
            .ok()
            .flatten()
            .is_some();
    if !attached && let Some(r) = peek() {
        add(r);
    }
}

/// Detaches the thread's slot from `rec`: delivers its records (in a fork child they are the
/// parent's, which the parent writes: dropped here, and the slot emptied when the thread attaches
/// again). A slot with records goes to the writer as it is (no spare is taken: the thread is
/// leaving), or stays with finalize when it has begun; either way the thread lets it go.
fn leave(h: &ThreadBuffer, rec: &'static Recorder) {
    h.flush_at.set(0);
    if !rec.is_ours() {
        // Fork child: the parent's recorder is not touched (its locks may be held by threads
        // that do not exist here).
        return;
    }
    let Some(slot) = h.slot.get() else { return };
    let n = slot.count() + usize::from(write_pending(slot, rec));
    if n > 0 {
        rec.retire_slot(slot, n);
        h.slot.set(None);
    }
}

/// The slot's pending ENQUEUE ENTER (its EXIT never came: the thread is leaving) as an ENQUEUE
/// ENTER record at the slot's end; true when one was written. In a full slot it is counted as
/// dropped.
fn write_pending(slot: &Slot, rec: &Recorder) -> bool {
    let [head, ts, d] = slot.pending();
    if ts == 0 {
        return false;
    }
    slot.clear_pending();
    let w = enqueue_pair::enter(head, ts, d).to_words();
    let i = slot.count();
    if i >= SLOT_RECORDS {
        rec.count_dropped(&w);
        return false;
    }
    // SAFETY: the calling thread owns the slot (it is leaving it); `i` is its count.
    unsafe { slot.push_at(i, w) };
    true
}

/// Attaches the calling thread to the current recorder; false when there is none, recording
/// is off, finalize is collecting the buffers, or the thread is exiting.
fn attach(h: &ThreadBuffer) -> bool {
    THREAD_RECORDER
        .try_with(|c| {
            h.attached_state.set(DETACHED);
            if let Some(old) = c.rec.take() {
                leave(h, old);
            }
            let (rec, state) = current_with_state();
            let Some(rec) = rec else { return false };
            // The thread's own slot when it can still hold it (finalize never closed it).
            // Attached under a state without recording, the thread would push on the fast path
            // after finalize's last look at its slot.
            if state & RECORDING_BIT == 0 {
                return false;
            }
            let slot = match h.slot.get() {
                Some(s) if s.hold() => s,
                _ => free_slot(),
            };
            slot.reopen();
            if !rec.adopt_slot(slot) {
                // Finalize is collecting: the slot (empty, unregistered, so never closed) goes
                // back, and the thread stays detached.
                if slot.hold() {
                    give_back(slot);
                }
                h.slot.set(None);
                return false;
            }
            h.slot.set(Some(slot));
            h.flush_at.set(0);
            h.tid_head.set(u64::from(sys::gettid()) << 32);
            h.place.set(NO_PLACE);
            c.rec.set(Some(rec));
            h.attached_state.set(state);
            true
        })
        .unwrap_or(false)
}

/// Hands the thread's records to its recorder's writer.
#[cold]
#[inline(never)]
extern "C" fn flush_thread_buffer(h: &ThreadBuffer) {
    panic_hook::catch(|| {
        let rec = THREAD_RECORDER.try_with(|c| c.rec.get()).ok().flatten();
        flush_to(h, rec);
    });
}

fn flush_to(h: &ThreadBuffer, rec: Option<&'static Recorder>) {
    h.flush_at.set(0);
    let Some(slot) = h.slot.get() else { return };
    let n = slot.count();
    if n == 0 {
        return;
    }
    let Some(rec) = rec else {
        // No recorder to deliver to: the records go, the slot stays the thread's when it can
        // still hold it.
        if slot.hold() {
            slot.reopen();
        } else {
            h.slot.set(None);
        }
        return;
    };
    // The slot itself goes to the writer; the thread continues in another, or in the same one
    // with what it kept when the writer is a whole pool behind. When finalize has begun it
    // takes the slot's records itself, and the thread lets the slot go.
    // A pending ENTER stays the thread's: read before the slot goes, set in the next one (in a
    // slot finalize took, it stays for finalize).
    let [head, ts, d] = slot.pending();
    match rec.flush_slot(slot, n) {
        Some(next) => {
            if ts != 0 {
                next.set_pending(head, ts, d);
            }
            h.slot.set(Some(next));
            if next.count() > 0 {
                h.flush_at
                    .set(clock::now().saturating_add(clock::units(FLUSH_AGE_MS)));
            }
        }
        None => h.slot.set(None),
    }
}

/// The end of a window (or a notice): hands the thread's records over now if the writer has
/// nothing queued; else they go with the slot when it is full or old.
#[cold]
#[inline(never)]
fn flush_if_writer_idle(h: &ThreadBuffer) {
    let rec = THREAD_RECORDER.try_with(|c| c.rec.get()).ok().flatten();
    if rec.is_some_and(Recorder::writer_idle) {
        flush_to(h, rec);
    }
}

/// When to hand the thread's buffer over right after this record.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// Only when full or old.
    Lazy,
    /// Now when the writer has nothing queued (end of a replay window: keeps windows in the
    /// file promptly); while it is behind, as `Lazy` (each hand-over takes a spare slot from
    /// the fixed pool, so the pool is spent on full slots, not on one per window).
    Now,
}

/// The calling thread's recording state, reached once per callback ([`with_thread`]).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Thread<'a>(&'a ThreadBuffer);

/// Runs `f` with the calling thread's recording handle: one thread-local access for a whole
/// callback (in a dlopen'ed library each access is a `__tls_get_addr` call). `None` only while
/// the thread is being torn down.
#[inline(always)]
pub fn with_thread<R>(f: impl FnOnce(Thread<'_>) -> R) -> Option<R> {
    this_thread().map(f)
}

/// The calling thread's recording handle (see [`with_thread`]). Only the buffer's address is
/// taken inside the thread-local access, so the access is inlined into any caller (a large
/// closure inside it made the compiler call it out of line, with a frame of its own, on every
/// event).
#[inline(always)]
pub fn this_thread() -> Option<Thread<'static>> {
    let h: *const ThreadBuffer = THREAD_BUFFER.try_with(|h| h as *const ThreadBuffer).ok()?;
    // SAFETY: the buffer has no destructor (asserted below): its storage lives as long as this
    // thread. The handle cannot leave the thread (`&ThreadBuffer` is neither Send nor Sync:
    // its cells are not Sync), so it is never used after the thread ends.
    Some(Thread(unsafe { &*h }))
}

// The thread's buffer is never destroyed before its thread ends (see `with_thread`).
const _: () = assert!(!std::mem::needs_drop::<ThreadBuffer>());

/// Records one event from the calling thread. `now` is a recent [`clock::now`] reading used
/// only for the buffer-age check (the caller already has one).
pub fn record(r: Record, now: u64, flush: Flush) {
    with_thread(|t| t.record(r, now, flush));
}

/// Records a tool notice now, flushed at once (notices are rare and explain what follows).
pub fn notice(n: Notice, a: u64, b: u64) {
    let ts = clock::now();
    record(Record::notice(0, ts, n, a, b), ts, Flush::Now);
}

impl Thread<'_> {
    /// [`record`] on this thread's handle.
    #[inline(always)]
    pub fn record(self, r: Record, now: u64, flush: Flush) {
        let [head, w0, w1, w2] = r.to_words();
        push(self.0, [head, w0, w1, w2], now, flush == Flush::Now, true);
    }

    /// Records `r` as it is: no thread id is filled in (a kind whose head bits hold a value,
    /// COMPLETE_AT's dispatch id; or a record carrying the thread id the SDK passed, which is
    /// the recording thread's).
    #[inline(always)]
    pub fn record_exact(self, r: Record, now: u64) {
        push(self.0, r.to_words(), now, false, false);
    }

    /// Hands the buffer over now if the next record would (its slot one short of full, or past
    /// its age at `now`), so a caller that times its own work takes the hand-over inside that
    /// time rather than after it, where it would fall into the next phase.
    #[inline(always)]
    pub fn make_room(self, now: u64) {
        let h = self.0;
        if h.attached_state.get() != RECORDER_STATE.load(Ordering::Relaxed) {
            return; // not attached: the next record attaches (cold) and starts an empty slot
        }
        let Some(slot) = h.slot.get() else { return };
        let len = slot.count();
        if len + 1 >= SLOT_RECORDS || (len > 0 && now > h.flush_at.get()) {
            flush_thread_buffer(h);
        }
    }

    /// Records `r` when the thread is attached and `place` is the placement it last recorded
    /// since it attached: true. Otherwise records nothing and returns false, and the caller
    /// goes to [`Thread::record_placing`] out of line (building its records there: built here,
    /// they would be stored to the stack on every call). `r` is taken as it is (it carries the
    /// SDK's thread id, see [`Thread::record_exact`]).
    #[inline(always)]
    pub fn record_if_placed(self, r: Record, place: (u64, u64), now: u64) -> bool {
        let h = self.0;
        if h.place.get() == place
            && h.attached_state.get() == RECORDER_STATE.load(Ordering::Relaxed)
        {
            push_attached(h, r.to_words(), now, false, false);
            return true;
        }
        false
    }

    /// Observe mode's ENQUEUE ENTER: kept pending in the thread's slot (its head, time and
    /// dispatch id; see `slot.rs`) for its EXIT to write with it as one ENQUEUE_PAIR record;
    /// true when kept. False (nothing done) when the thread is not attached, an ENTER is
    /// pending already, `place()` is not the placement it last recorded or `head()` is None:
    /// the caller takes the plain path ([`Thread::write_pending`], then the ENTER as a record).
    /// The values come as functions, each called only once the checks before it passed: the
    /// payload's fields are read as they are needed, so few are alive at once.
    #[inline(always)]
    pub fn hold_enter(
        self,
        ts: u64,
        place: impl FnOnce() -> (u64, u64),
        head: impl FnOnce() -> Option<u64>,
        d: impl FnOnce() -> u64,
    ) -> bool {
        let h = self.0;
        if h.attached_state.get() != RECORDER_STATE.load(Ordering::Relaxed) {
            return false;
        }
        let Some(slot) = h.slot.get() else {
            return false;
        };
        if slot.pending_ts() != 0 || h.place.get() != place() {
            return false;
        }
        let Some(head) = head() else {
            return false;
        };
        slot.set_pending(head, ts, d());
        true
    }

    /// Observe mode's ENQUEUE EXIT of dispatch `d` at `ts`: one ENQUEUE_PAIR record with the
    /// pending ENTER; true when written. False (nothing done) when the thread is not attached,
    /// no ENTER of `d` is pending, or the pair's fields do not fit (`enqueue_pair`): the caller
    /// takes the plain path.
    #[inline(always)]
    pub fn record_exit_pair(self, d: u64, corr: u64, ts: u64) -> bool {
        let h = self.0;
        if h.attached_state.get() != RECORDER_STATE.load(Ordering::Relaxed) {
            return false;
        }
        let Some(slot) = h.slot.get() else {
            return false;
        };
        let [head, enter, pending_d] = slot.pending();
        if enter == 0 || pending_d != d {
            return false;
        }
        let Some(w) = enqueue_pair::words(head, enter, d, ts, corr) else {
            return false;
        };
        // Cleared before the pair is published: finalize never finds the ENTER twice.
        slot.clear_pending();
        push_into(h, slot, w, ts, false);
        true
    }

    /// Writes the pending ENQUEUE ENTER, if any, as an ENQUEUE ENTER record (the plain path of
    /// [`Thread::hold_enter`] and [`Thread::record_exit_pair`]).
    #[cold]
    #[inline(never)]
    pub fn write_pending(self, now: u64) {
        let Some(slot) = self.0.slot.get() else {
            return;
        };
        let [head, ts, d] = slot.pending();
        if ts != 0 {
            slot.clear_pending();
            self.record_exact(enqueue_pair::enter(head, ts, d), now);
        }
    }

    /// Records `r`, then `place_rec` when `place` differs from the placement this thread last
    /// recorded since it attached (so once per file and whenever it changes).
    #[cold]
    #[inline(never)]
    pub fn record_placing(self, r: Record, place: (u64, u64), place_rec: Record, now: u64) {
        self.record(r, now, Flush::Lazy);
        if self.0.place.get() != place && self.0.attached_state.get() != DETACHED {
            self.0.place.set(place);
            self.record(place_rec, now, Flush::Lazy);
        }
    }
}

/// Appends one record to the thread's slot.
///
/// Fast path: one relaxed load of [`RECORDER_STATE`], the record's plain stores into the slot
/// and one Release store of the slot's count (`Slot::push_at`), and the age check; no lock,
/// allocation, system call or read-modify-write. Everything else is a cold call.
#[inline(always)]
fn push(h: &ThreadBuffer, words: [u64; 4], now: u64, flush_now: bool, fill_tid: bool) {
    if h.attached_state.get() != RECORDER_STATE.load(Ordering::Relaxed) {
        // The words go in registers (an array would be stored to the stack first, on every
        // event, for a call that is rare).
        let [head, w0, w1, w2] = words;
        let how = u8::from(flush_now) | u8::from(fill_tid) << 1;
        return attach_and_record(head, w0, w1, w2, now, how);
    }
    push_attached(h, words, now, flush_now, fill_tid);
}

/// [`push`] on a thread attached to the current recorder.
#[inline(always)]
fn push_attached(h: &ThreadBuffer, words: [u64; 4], now: u64, flush_now: bool, fill_tid: bool) {
    let Some(slot) = h.slot.get() else { return };
    let [head, w0, w1, w2] = words;
    // A record without a thread id gets the recording thread's.
    let head = if fill_tid && head >> 32 == 0 {
        head | h.tid_head.get()
    } else {
        head
    };
    push_into(h, slot, [head, w0, w1, w2], now, flush_now);
}

/// [`push_attached`] into `slot`, the thread's, the words as they are.
#[inline(always)]
fn push_into(h: &ThreadBuffer, slot: &Slot, words: [u64; 4], now: u64, flush_now: bool) {
    let [head, w0, w1, w2] = words;
    let i = slot.count();
    // `i` below the last index: the push below needs no bound check of its own.
    if i >= SLOT_RECORDS - 1 {
        return push_last(h, head, w0, w1, w2);
    }
    // SAFETY: an attached thread's slot is its own: attach and hand-overs open it for this
    // thread, and the thread lets it go as soon as a hold fails (finalize closed it); `i` is
    // its count.
    unsafe { slot.push_at(i, [head, w0, w1, w2]) };
    if now > h.flush_at.get() {
        if i > 0 {
            return flush_thread_buffer(h);
        }
        start_age(h, now);
    }
    if flush_now {
        flush_if_writer_idle(h);
    }
}

/// The record that fills the slot (or finds it full: it takes nothing, see [`Slot::push_at`]),
/// then the hand-over.
/// The words come in registers (an array would be stored to the stack on every event).
#[cold]
#[inline(never)]
extern "C" fn push_last(h: &ThreadBuffer, head: u64, w0: u64, w1: u64, w2: u64) {
    panic_hook::catch(|| {
        if let Some(slot) = h.slot.get() {
            // SAFETY: as in `push_attached`; the count is read by the slot's owner.
            unsafe { slot.push_at(slot.count(), [head, w0, w1, w2]) };
        }
    });
    flush_thread_buffer(h);
}

/// The slot's first record: its age counts from now.
#[cold]
#[inline(never)]
extern "C" fn start_age(h: &ThreadBuffer, now: u64) {
    panic_hook::catch(|| {
        h.flush_at
            .set(now.saturating_add(clock::units(FLUSH_AGE_MS)));
    });
}

/// First event of a thread, the recorder changed (fork), or recording is off. `how`: bit 0
/// flush now, bit 1 fill in the thread id.
#[cold]
#[inline(never)]
extern "C" fn attach_and_record(head: u64, w0: u64, w1: u64, w2: u64, now: u64, how: u8) {
    panic_hook::catch(|| {
        let (words, flush_now, fill_tid) = ([head, w0, w1, w2], how & 1 != 0, how & 2 != 0);
        let _ = THREAD_BUFFER.try_with(|h| {
            if RECORDER_STATE.load(Ordering::Relaxed) & RECORDING_BIT == 0 {
                count_if_finalizing(&words);
                return;
            }
            if attach(h) {
                push(h, words, now, flush_now, fill_tid);
            } else if THREAD_RECORDER.try_with(|_| ()).is_err() {
                orphan(h, words, fill_tid);
            } else {
                count_if_finalizing(&words);
            }
        });
    });
}

/// A record that found recording off, or could not attach: counted as dropped when finalize has
/// begun (it took the record's place in time but no slot it collects holds it); dropped
/// silently when recording was stopped otherwise (a panic or a write error, said when it
/// happened) or there is no recorder.
fn count_if_finalizing(words: &[u64; 4]) {
    if let Some(rec) = peek() {
        rec.count_after_finalize(words);
    }
}

/// A record taken after this thread's thread-locals were destroyed: on the main thread,
/// `exit()` runs them before the atexit handlers, and callbacks still come (the SDK's own exit
/// handlers, completions delivered at its finalize). Sent on its own to the writer (rare).
#[cold]
fn orphan(h: &ThreadBuffer, words: [u64; 4], fill_tid: bool) {
    let Some(rec) = peek() else { return };
    let tid = match (h.tid_head.get() >> 32) as u32 {
        0 => sys::gettid(),
        t => t,
    };
    let [head, w0, w1, w2] = words;
    let head = if fill_tid && head >> 32 == 0 {
        head | (u64::from(tid) << 32)
    } else {
        head
    };
    rec.send_words(vec![[head, w0, w1, w2]]);
}

/// Flushes the calling thread's buffer (finalize on the finalizing thread).
pub fn flush_current_thread() {
    let _ = THREAD_BUFFER.try_with(|h| {
        if h.attached_state.get() != DETACHED {
            flush_thread_buffer(h);
        }
    });
}
