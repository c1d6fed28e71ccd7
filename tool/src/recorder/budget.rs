//! The stall budget: the most the application's threads, all of them together, wait on the
//! output over a whole run.
//!
//! Every wait on the writer (a window batch or a `KRPHASE_ON_FULL=block` batch when the channel
//! is full, kernel names, configure's wait for the file to open, finalize's waits) is taken from
//! one process-wide pool in short slices. A slice is charged when the writer was inside a system
//! call on the output (open, write) at its end: the application waited on I/O. A slice that
//! ends with the writer out of I/O (merely busy, or waiting for a core on a machine with more
//! busy threads than cores) is given back: the output is healthy and keeps up as fast as the
//! CPU lets it, and waiting for it is what never dropping window records (and `block`) means.
//! Once the run's part is spent, nothing waits any more: a send that does not fit drops and
//! counts. The last [`FINALIZE_RESERVE`] is kept for finalize, so a run that spent its part
//! still gets its trailer written when the output is merely slow. A fork child starts with a
//! full budget.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The whole budget, every application thread of one process together, for the whole run.
pub const STALL_BUDGET: Duration = Duration::from_millis(100);
/// The part of [`STALL_BUDGET`] only finalize may spend.
pub const FINALIZE_RESERVE: Duration = Duration::from_millis(25);
/// One wait's share: short, so concurrent waiters cannot together overshoot the pool.
const SLICE_NS: u64 = 2_000_000;

const BUDGET_NS: u64 = STALL_BUDGET.as_nanos() as u64;
const RESERVE_NS: u64 = FINALIZE_RESERVE.as_nanos() as u64;

static LEFT_NS: AtomicU64 = AtomicU64::new(BUDGET_NS);
static SPENT_NS: AtomicU64 = AtomicU64::new(0);

/// Who waits: the run may not touch finalize's reserve.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Use {
    Run,
    Finalize,
}

impl Use {
    fn floor(self) -> u64 {
        match self {
            Use::Run => RESERVE_NS,
            Use::Finalize => 0,
        }
    }
}

/// A fork child: a new process, a new budget.
pub fn reset() {
    LEFT_NS.store(BUDGET_NS, Ordering::Relaxed);
    SPENT_NS.store(0, Ordering::Relaxed);
}

/// Nanoseconds application threads have waited on the output so far.
pub fn spent_ns() -> u64 {
    SPENT_NS.load(Ordering::Relaxed)
}

/// Whether the run's part of the budget is gone (only finalize's reserve is left).
#[cfg(test)]
fn run_part_spent() -> bool {
    LEFT_NS.load(Ordering::Relaxed) <= RESERVE_NS
}

/// Up to `want` ns of the budget, leaving `floor` ns untouched; 0 when nothing is left.
fn take_ns(want: u64, floor: u64) -> u64 {
    let mut left = LEFT_NS.load(Ordering::Relaxed);
    loop {
        let n = want.min(left.saturating_sub(floor));
        if n == 0 {
            return 0;
        }
        match LEFT_NS.compare_exchange_weak(left, left - n, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return n,
            Err(now) => left = now,
        }
    }
}

/// One slice of the budget; on drop, the unused part goes back and the used part is counted
/// (all of it goes back when the wait was not on I/O).
struct Slice {
    ns: u64,
    start: Instant,
    charged: bool,
}

impl Slice {
    fn take(u: Use, cap_ns: u64) -> Option<Slice> {
        let ns = take_ns(SLICE_NS.min(cap_ns), u.floor());
        (ns > 0).then(|| Slice {
            ns,
            start: Instant::now(),
            charged: true,
        })
    }
}

impl Drop for Slice {
    fn drop(&mut self) {
        let used = if self.charged {
            (self.start.elapsed().as_nanos() as u64).min(self.ns)
        } else {
            0
        };
        LEFT_NS.fetch_add(self.ns - used, Ordering::AcqRel);
        SPENT_NS.fetch_add(used, Ordering::Relaxed);
    }
}

/// Calls `attempt(timeout)` in slices until it returns `Some`, for at most `cap` in all; `None`
/// when the budget (or the cap) ran out first. `io_since()` is the BOOTTIME ns at which the
/// writer entered the system call it is in, `None` when it is in none. While the writer is in
/// I/O each slice is reserved from the budget first (so concurrent waiters never overdraw it)
/// and charged unless the writer left I/O by its end; while it is not, a short slice is waited
/// unreserved, and charged only for the part after the writer entered I/O.
pub fn wait<T>(
    u: Use,
    cap: Duration,
    io_since: &dyn Fn() -> Option<u64>,
    mut attempt: impl FnMut(Duration) -> Option<T>,
) -> Option<T> {
    let mut cap_ns = u64::try_from(cap.as_nanos()).unwrap_or(u64::MAX);
    loop {
        let start = Instant::now();
        let r = if io_since().is_some() {
            let mut s = Slice::take(u, cap_ns)?;
            let r = attempt(Duration::from_nanos(s.ns));
            s.charged = r.is_none() && io_since().is_some();
            r
        } else {
            let r = attempt(Duration::from_nanos(IDLE_SLICE_NS.min(cap_ns)));
            if r.is_none()
                && let Some(since) = io_since()
            {
                let waited = start.elapsed().as_nanos() as u64;
                charge_unreserved(waited.min(crate::sys::boottime_ns().saturating_sub(since)));
            }
            r
        };
        cap_ns = cap_ns.saturating_sub(start.elapsed().as_nanos() as u64);
        if r.is_some() {
            return r;
        }
        if cap_ns == 0 {
            return None;
        }
    }
}

/// A wait on a writer that is not in I/O: short, so a writer that gets stuck meanwhile is
/// noticed (and reserved for) soon.
const IDLE_SLICE_NS: u64 = 200_000;

/// Charges `ns` waited without a reservation (the writer entered I/O during the wait).
fn charge_unreserved(ns: u64) {
    let mut left = LEFT_NS.load(Ordering::Relaxed);
    loop {
        let n = ns.min(left);
        match LEFT_NS.compare_exchange_weak(left, left - n, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => break,
            Err(now) => left = now,
        }
    }
    SPENT_NS.fetch_add(ns, Ordering::Relaxed);
}

/// Polls `done` (short sleeps) out of the budget for at most `cap`; every slice is charged
/// (what it waits for is on an application thread, not on the writer).
pub fn wait_until(u: Use, cap: Duration, done: impl Fn() -> bool) -> bool {
    if done() {
        return true;
    }
    wait(u, cap, &|| Some(0), |t| {
        let end = Instant::now() + t;
        while Instant::now() < end {
            if done() {
                return Some(());
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        done().then_some(())
    })
    .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The budget is process-wide: the only test that spends it (others only read it).
    #[test]
    fn waits_add_up_to_the_budget_and_finalize_keeps_its_reserve() {
        reset();
        // A wait on a writer that is not stuck in I/O is not charged (bounded here by the cap).
        let healthy = Instant::now();
        let idle = wait(Use::Run, Duration::from_millis(150), &|| None, |t| {
            std::thread::sleep(t);
            None::<()>
        });
        assert!(idle.is_none() && healthy.elapsed() >= Duration::from_millis(150));
        assert_eq!(spent_ns(), 0);
        let stuck = wait(Use::Run, Duration::MAX, &|| Some(0), |t| {
            std::thread::sleep(t);
            None::<()>
        });
        assert!(stuck.is_none());
        assert!(run_part_spent());
        let spent = spent_ns();
        assert!(spent <= BUDGET_NS - RESERVE_NS, "{spent}");
        assert!(spent >= BUDGET_NS - RESERVE_NS - SLICE_NS, "{spent}");
        // Nothing left for the run: it does not wait at all.
        assert!(wait(Use::Run, Duration::MAX, &|| Some(0), |_| Some(())).is_none());
        // Finalize still has its reserve, and a quick success gives the rest back.
        assert_eq!(
            wait(Use::Finalize, Duration::MAX, &|| Some(0), |_| Some(7)),
            Some(7)
        );
        assert!(!wait_until(Use::Finalize, Duration::MAX, || false));
        assert!(spent_ns() <= BUDGET_NS);
        reset();
        assert!(!run_part_spent());
    }
}
