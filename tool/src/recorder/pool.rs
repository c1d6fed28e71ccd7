//! The recorder's pool of spare slots: made once when the recorder starts, never grown. A
//! thread handing its full (or old) slot to the writer continues in a spare one from here; the
//! writer puts each slot back once it has copied its records out. While the writer keeps up the
//! pool never empties; when it falls behind, the pool holds what the application records
//! meanwhile, so a writer away for as long as the wait budget (descheduled on a loaded machine,
//! a slow write) costs the application neither a wait nor a record.

use super::free_slots::{give_back, new_slot};
use super::slot::{SLOT_RECORDS, Slot};
use crossbeam_queue::ArrayQueue;
use std::time::{Duration, Instant};

/// The busiest demo workload's record rate, measured with the tool in drive mode on the
/// emulator (STREAM, 1 024 elements: 20 records a window, ~214 000 records/s with one thread),
/// rounded up.
pub const PEAK_RECORDS_PER_SEC: u64 = 250_000;
/// The pool holds this many budget spans at the peak rate.
const SPANS: u64 = 4;
/// Bounds of the pool, in slots of [`SLOT_RECORDS`] records (32 KiB each): 2 MiB to 32 MiB.
pub const MIN_SLOTS: usize = 64;
pub const MAX_SLOTS: usize = 1024;
/// A thread waiting for a spare slot looks again this often (the writer puts slots back without
/// waking anyone: no producer is ever parked on the pool).
const TAKE_POLL: Duration = Duration::from_micros(50);

/// Slots for a process wait cap of `budget`: [`SPANS`] spans of it at the peak rate, within
/// [`MIN_SLOTS`]..=[`MAX_SLOTS`] (the default 50 ms cap: 64 slots, 2 MiB, ~260 ms of records
/// at the peak rate).
pub fn slots_for(budget: Duration) -> usize {
    let records = u128::from(PEAK_RECORDS_PER_SEC * SPANS) * budget.as_nanos() / 1_000_000_000;
    let slots = usize::try_from(records.div_ceil(SLOT_RECORDS as u128)).unwrap_or(MAX_SLOTS);
    slots.clamp(MIN_SLOTS, MAX_SLOTS)
}

/// Spare slots, in a fixed lock-free ring that can hold them all: a take or a put is a
/// compare-exchange or two, never a lock, an allocation or a system call, so a thread handing
/// its slot over touches nothing a fork child could find held. Every spare slot is held (see
/// `slot.rs`): finalize leaves it alone.
pub struct Pool {
    spare: ArrayQueue<&'static Slot>,
    /// The slots it was made with.
    made: Vec<&'static Slot>,
}

impl Pool {
    /// A pool of `size` new slots (`size` ≥ 1).
    pub fn new(size: usize) -> Pool {
        let spare = ArrayQueue::new(size.max(1));
        let made: Vec<&'static Slot> = (0..size).map(|_| new_slot()).collect();
        for s in &made {
            let _ = spare.push(*s);
        }
        Pool { spare, made }
    }

    /// The slots it was made with (wherever they are now).
    pub fn slots(&self) -> Vec<&'static Slot> {
        self.made.clone()
    }

    /// The slots the pool was made with (what it can hold).
    pub fn size(&self) -> usize {
        self.spare.capacity()
    }

    /// Spare slots now.
    pub fn spare(&self) -> usize {
        self.spare.len()
    }

    /// A spare slot if one is free now.
    pub fn try_take(&self) -> Option<&'static Slot> {
        self.spare.pop()
    }

    /// A spare slot within `t`, looking every [`TAKE_POLL`].
    pub fn take_within(&self, t: Duration) -> Option<&'static Slot> {
        let end = Instant::now() + t;
        loop {
            if let Some(s) = self.spare.pop() {
                return Some(s);
            }
            let now = Instant::now();
            if now >= end {
                return None;
            }
            std::thread::sleep(TAKE_POLL.min(end - now));
        }
    }

    /// Puts an emptied slot back (into the process's list of free slots when the pool is
    /// full: a leaving thread's slot that the writer recycles may find it so).
    pub fn put(&self, slot: &'static Slot) {
        if let Err(s) = self.spare.push(slot) {
            give_back(s);
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
