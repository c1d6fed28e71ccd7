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
    fn new() -> Slot {
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
        out.extend(self.words[..n].iter().map(|w| {
            [
                w[0].load(Ordering::Relaxed),
                w[1].load(Ordering::Relaxed),
                w[2].load(Ordering::Relaxed),
                w[3].load(Ordering::Relaxed),
            ]
        }));
    }

    /// Empties the slot and opens it for appending.
    pub(super) fn reopen(&self) {
        self.len.store(0, Ordering::Release);
        self.state.store(OPEN, Ordering::Release);
    }
}

/// Empty slots (of exited threads, or recycled by a writer whose channel was full), reused
/// before a new one is made: the number of slots ever made is bounded by the most in use at
/// once. The lock is held for a push or pop only; a fork child gets its own (see `fork_local`).
static FREE_SLOTS: ForkLocal<Vec<&'static Slot>> = ForkLocal::new(Start::Inherit);

/// Slots made so far (the memory bound the tests check).
static MADE: AtomicUsize = AtomicUsize::new(0);

/// Slots made since the process started (32 KiB each).
pub fn slots_made() -> usize {
    MADE.load(Ordering::Relaxed)
}

/// An empty slot from the pool, or a new one.
pub(super) fn free_slot() -> &'static Slot {
    FREE_SLOTS.with(Vec::pop).flatten().unwrap_or_else(|| {
        MADE.fetch_add(1, Ordering::Relaxed);
        Box::leak(Box::new(Slot::new()))
    })
}

/// Gives an emptied slot back for reuse.
pub(super) fn give_back(slot: &'static Slot) {
    FREE_SLOTS.with(|v| v.push(slot));
}
