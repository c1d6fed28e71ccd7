//! The recorder's pool of spare slots: made once when the recorder starts, never grown. A
//! thread handing its full (or old) slot to the writer continues in a spare one from here; the
//! writer puts each slot back once it has copied its records out. While the writer keeps up the
//! pool never empties; when it falls behind, the pool holds what the application records
//! meanwhile, so a writer away for as long as the wait budget (descheduled on a loaded machine,
//! a slow write) costs the application neither a wait nor a record.

use super::slot::{SLOT_RECORDS, Slot, give_back, new_slot};
use crossbeam_channel::{Receiver, Sender, bounded};
use std::time::Duration;

/// The busiest demo workload's record rate, measured with the tool in drive mode on the
/// emulator (STREAM, 1 024 elements: 20 records a window, ~214 000 records/s with one thread),
/// rounded up.
pub const PEAK_RECORDS_PER_SEC: u64 = 250_000;
/// The pool holds this many budget spans at the peak rate.
const SPANS: u64 = 4;
/// Bounds of the pool, in slots of [`SLOT_RECORDS`] records (32 KiB each): 2 MiB to 32 MiB.
pub const MIN_SLOTS: usize = 64;
pub const MAX_SLOTS: usize = 1024;

/// Slots for a process wait cap of `budget`: [`SPANS`] spans of it at the peak rate, within
/// [`MIN_SLOTS`]..=[`MAX_SLOTS`] (the default 50 ms cap: 64 slots, 2 MiB, ~260 ms of records
/// at the peak rate).
pub fn slots_for(budget: Duration) -> usize {
    let records = u128::from(PEAK_RECORDS_PER_SEC * SPANS) * budget.as_nanos() / 1_000_000_000;
    let slots = usize::try_from(records.div_ceil(SLOT_RECORDS as u128)).unwrap_or(MAX_SLOTS);
    slots.clamp(MIN_SLOTS, MAX_SLOTS)
}

/// Spare slots, as a bounded channel that can hold them all (a put never waits).
pub struct Pool {
    tx: Sender<&'static Slot>,
    rx: Receiver<&'static Slot>,
    size: usize,
}

impl Pool {
    /// A pool of `size` new slots.
    pub fn new(size: usize) -> Pool {
        let (tx, rx) = bounded(size);
        for _ in 0..size {
            let _ = tx.try_send(new_slot());
        }
        Pool { tx, rx, size }
    }

    /// Slots the pool was made with.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Spare slots now.
    pub fn spare(&self) -> usize {
        self.rx.len()
    }

    /// A spare slot if one is free now.
    pub fn try_take(&self) -> Option<&'static Slot> {
        self.rx.try_recv().ok()
    }

    /// A spare slot within `t`.
    pub fn take_within(&self, t: Duration) -> Option<&'static Slot> {
        self.rx.recv_timeout(t).ok()
    }

    /// Puts an emptied slot back (into the process's list should the pool be full, which the
    /// slot count rules out).
    pub fn put(&self, slot: &'static Slot) {
        if let Err(e) = self.tx.try_send(slot) {
            give_back(e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_scales_with_the_budget_within_its_bounds() {
        assert_eq!(slots_for(Duration::from_millis(50)), MIN_SLOTS);
        assert_eq!(slots_for(Duration::from_millis(200)), 196);
        assert_eq!(slots_for(Duration::from_secs(60)), MAX_SLOTS);
        // The default pool holds more than four default budget spans at the peak rate.
        let held = (MIN_SLOTS * SLOT_RECORDS) as u64;
        assert!(held >= PEAK_RECORDS_PER_SEC * 4 * 50 / 1000);
    }
}
