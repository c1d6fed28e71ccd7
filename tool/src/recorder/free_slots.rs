//! Where slots come from and go back to: the process's count of slots made, and the list of
//! empty slots exited threads left for reuse.

use super::slot::Slot;
use crate::fork_local::{ForkLocal, Start};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Empty slots of exited threads, reused by attaching threads before a new one is made: the
/// number of thread slots ever made is bounded by the most threads recording at once (the
/// recorder's own pool of spare slots is separate and fixed, see `pool.rs`). Every slot here is
/// held (finalize leaves it alone). The lock is held for a push or pop only; a fork child gets
/// its own (see `fork_local`).
static FREE_SLOTS: ForkLocal<Vec<&'static Slot>> = ForkLocal::new(Start::Inherit);

/// Slots made so far (the memory bound the tests check).
static MADE: AtomicUsize = AtomicUsize::new(0);

/// Slots made since the process started (32 KiB each).
pub fn slots_made() -> usize {
    MADE.load(Ordering::Relaxed)
}

/// An empty held slot for a thread that attaches: one an exited thread left, or a new one (a
/// thread's first event, never the hot path).
pub(super) fn free_slot() -> &'static Slot {
    FREE_SLOTS.with(Vec::pop).flatten().unwrap_or_else(new_slot)
}

/// A new slot for the process's life, held by the caller.
pub(super) fn new_slot() -> &'static Slot {
    MADE.fetch_add(1, Ordering::Relaxed);
    Box::leak(Box::new(Slot::new()))
}

/// Gives a held slot back for reuse, emptied.
pub(super) fn give_back(slot: &'static Slot) {
    slot.clear();
    FREE_SLOTS.with(|v| v.push(slot));
}
