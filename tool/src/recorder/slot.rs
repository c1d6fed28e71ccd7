//! One thread's buffer of records (a slot), its hand-over states, and the process-wide pool of
//! empty slots.

use crate::fork_local::{ForkLocal, Start};
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// Records per slot (32 KiB of records).
pub const SLOT_RECORDS: usize = 1024;

/// A record as its four words ([`krphase_format::Record::to_words`]): what slots and batches
/// hold.
pub type RecordWords = [u64; 4];

/// Slot states. OPEN: its thread appends. FLUSHING: its thread is handing it over (finalize
/// waits). SENT: on its way to the writer, which copies it out and recycles it (finalize skips
/// it: the writer writes it before the trailer). CLOSED: finalize took its records.
pub const OPEN: u8 = 0;
pub const FLUSHING: u8 = 1;
pub const CLOSED: u8 = 2;
pub const SENT: u8 = 3;

/// One thread's buffer. Only its owner appends; finalize reads it after closing it. A slot lives
/// for the process (an exiting thread returns it for reuse), so the owner holds `&'static Slot`.
pub struct Slot {
    pub(super) words: Box<[[AtomicU64; 4]; SLOT_RECORDS]>,
    pub(super) len: AtomicUsize,
    pub(super) state: AtomicU8,
}

impl Slot {
    pub(super) fn new() -> Slot {
        Slot {
            // Built on the heap (a 32 KiB array on an application thread's stack is avoided).
            words: (0..SLOT_RECORDS)
                .map(|_| Default::default())
                .collect::<Box<[[AtomicU64; 4]]>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("SLOT_RECORDS elements")),
            len: AtomicUsize::new(0),
            state: AtomicU8::new(OPEN),
        }
    }

    /// Appends the first `n` records to `out`.
    pub(super) fn read(&self, n: usize, out: &mut Vec<RecordWords>) {
        out.extend((0..n.min(SLOT_RECORDS)).map(|i| self.load(i)));
    }

    /// Keeps the first `n` records for which `keep` holds, in order, at the front of the slot
    /// (its published length set to their number) and passes the others to `dropped`; returns
    /// the number kept. Only the slot's owner calls it, while the slot is not shared.
    pub(super) fn retain(
        &self,
        n: usize,
        keep: impl Fn(&RecordWords) -> bool,
        mut dropped: impl FnMut(&RecordWords),
    ) -> usize {
        let mut kept = 0;
        for i in 0..n.min(SLOT_RECORDS) {
            let w = self.load(i);
            if keep(&w) {
                if kept != i {
                    for (dst, v) in self.words[kept].iter().zip(w) {
                        dst.store(v, Ordering::Relaxed);
                    }
                }
                kept += 1;
            } else {
                dropped(&w);
            }
        }
        self.len.store(kept, Ordering::Release);
        kept
    }

    fn load(&self, i: usize) -> RecordWords {
        let w = &self.words[i];
        [
            w[0].load(Ordering::Relaxed),
            w[1].load(Ordering::Relaxed),
            w[2].load(Ordering::Relaxed),
            w[3].load(Ordering::Relaxed),
        ]
    }

    /// Empties the slot and opens it for appending.
    pub(super) fn reopen(&self) {
        self.len.store(0, Ordering::Release);
        self.state.store(OPEN, Ordering::Release);
    }
}

/// Empty slots of exited threads, reused by attaching threads before a new one is made: the
/// number of thread slots ever made is bounded by the most threads recording at once (the
/// recorder's own pool of spare slots is separate and fixed, see `pool.rs`). The lock is held for a push or pop only; a fork child gets its own (see `fork_local`).
static FREE_SLOTS: ForkLocal<Vec<&'static Slot>> = ForkLocal::new(Start::Inherit);

/// Slots made so far (the memory bound the tests check).
static MADE: AtomicUsize = AtomicUsize::new(0);

/// Slots made since the process started (32 KiB each).
pub fn slots_made() -> usize {
    MADE.load(Ordering::Relaxed)
}

/// An empty slot for a thread that attaches: one an exited thread left, or a new one (a
/// thread's first event, never the hot path).
pub(super) fn free_slot() -> &'static Slot {
    FREE_SLOTS.with(Vec::pop).flatten().unwrap_or_else(new_slot)
}

/// A new slot for the process's life.
pub(super) fn new_slot() -> &'static Slot {
    MADE.fetch_add(1, Ordering::Relaxed);
    Box::leak(Box::new(Slot::new()))
}

/// Gives an emptied slot back for reuse.
pub(super) fn give_back(slot: &'static Slot) {
    FREE_SLOTS.with(|v| v.push(slot));
}
