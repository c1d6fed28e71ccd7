//! The wait budget: the most the application's threads wait on the tool's output, with two caps
//! — per application thread and for the whole process, the first reached wins.
//!
//! Every wait an application thread makes on the writer (a free slot when the pool is empty, a
//! window batch or kernel names when the channel is full, configure's wait for the file to open,
//! finalize's waits) is charged in full, whatever the writer is doing: in I/O, starved of CPU,
//! blocked on its own stderr line. Waits are taken in short slices reserved from the process's
//! pool before they start, so concurrent waiters never overdraw it; the unused part of a slice
//! goes back. Once a cap is reached nothing waits any more: a record that does not fit is
//! dropped and counted. The last part of the process cap ([`Caps::reserve_ns`]) is kept for
//! finalize, so a run that spent its part still gets its trailer written when the output is
//! merely slow; finalize is bounded by the process cap alone (the thread that finalizes may
//! have spent its own). A fork child starts with a full budget.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use crate::config::{Caps, DEFAULT_PROCESS, DEFAULT_THREAD};

/// The share of the process cap only finalize may spend (half: the trailer must get out even
/// after the run spent its part on a writer that fell behind).
const RESERVE_DIVISOR: u64 = 2;
/// One wait's share: short, so concurrent waiters cannot together overshoot the pool.
const SLICE_NS: u64 = 1_000_000;

/// The caps in effect (set once at configure, before any wait).
static PROCESS_NS: AtomicU64 = AtomicU64::new(DEFAULT_PROCESS.as_nanos() as u64);
static THREAD_NS: AtomicU64 = AtomicU64::new(DEFAULT_THREAD.as_nanos() as u64);

/// What is left of the process cap, and what was charged so far.
static LEFT_NS: AtomicU64 = AtomicU64::new(DEFAULT_PROCESS.as_nanos() as u64);
static SPENT_NS: AtomicU64 = AtomicU64::new(0);
/// Bumped by [`reset`]: a thread's own account from before it is void.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// (epoch, ns) this thread has waited in the run: `Copy` cells, no destructor.
    static THREAD_SPENT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

impl Caps {
    fn process_ns() -> u64 {
        PROCESS_NS.load(Ordering::Relaxed)
    }

    /// The part of the process cap kept for finalize.
    pub fn reserve_ns() -> u64 {
        Self::process_ns() / RESERVE_DIVISOR
    }

    /// The caps in effect now.
    pub fn current() -> Caps {
        Caps {
            process: Duration::from_nanos(Self::process_ns()),
            thread: Duration::from_nanos(THREAD_NS.load(Ordering::Relaxed)),
        }
    }
}

/// Sets the caps (configure, before the first wait) and starts a full budget.
pub fn set_caps(c: Caps) {
    PROCESS_NS.store(dur_ns(c.process), Ordering::Relaxed);
    THREAD_NS.store(dur_ns(c.thread), Ordering::Relaxed);
    reset();
}

fn dur_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Who waits: the run may not touch finalize's reserve, nor a thread exceed its own cap.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Use {
    Run,
    Finalize,
}

/// A fork child: a new process, a new budget (the forking thread's account included).
pub fn reset() {
    LEFT_NS.store(Caps::process_ns(), Ordering::Relaxed);
    SPENT_NS.store(0, Ordering::Relaxed);
    EPOCH.fetch_add(1, Ordering::Relaxed);
}

/// Nanoseconds application threads have waited on the output so far (all threads).
pub fn spent_ns() -> u64 {
    SPENT_NS.load(Ordering::Relaxed)
}

/// What the calling thread has waited in this process's run so far.
fn thread_spent() -> u64 {
    let epoch = EPOCH.load(Ordering::Relaxed);
    THREAD_SPENT
        .try_with(|c| match c.get() {
            (e, ns) if e == epoch => ns,
            _ => 0,
        })
        .unwrap_or(0)
}

fn add_thread_spent(ns: u64) {
    let epoch = EPOCH.load(Ordering::Relaxed);
    let _ = THREAD_SPENT.try_with(|c| {
        let before = match c.get() {
            (e, v) if e == epoch => v,
            _ => 0,
        };
        c.set((epoch, before.saturating_add(ns)));
    });
}

/// What `u` may still take on this thread: the run is held to the thread's own cap.
fn thread_left(u: Use) -> u64 {
    match u {
        Use::Run => THREAD_NS
            .load(Ordering::Relaxed)
            .saturating_sub(thread_spent()),
        Use::Finalize => u64::MAX,
    }
}

fn floor(u: Use) -> u64 {
    match u {
        Use::Run => Caps::reserve_ns(),
        Use::Finalize => 0,
    }
}

/// Whether the run's part of the process cap is gone, or this thread's own cap.
#[cfg(test)]
fn run_spent() -> bool {
    LEFT_NS.load(Ordering::Relaxed) <= floor(Use::Run) || thread_left(Use::Run) == 0
}

/// Up to `want` ns of the process pool, leaving `floor` ns untouched; 0 when nothing is left.
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

/// One reserved slice; on drop, the time it lasted, up to its length, is charged to the process
/// and to the calling thread (the unused part goes back). A wakeup that comes later than asked
/// because the machine is busy is the machine's time, not the tool's: the thread would have
/// waited for a core as any runnable thread does.
struct Slice {
    ns: u64,
    start: Instant,
}

impl Slice {
    fn take(u: Use, cap_ns: u64) -> Option<Slice> {
        let want = SLICE_NS.min(cap_ns).min(thread_left(u));
        let ns = take_ns(want, floor(u));
        (ns > 0).then(|| Slice {
            ns,
            start: Instant::now(),
        })
    }
}

impl Drop for Slice {
    fn drop(&mut self) {
        let used = (self.start.elapsed().as_nanos() as u64).min(self.ns);
        LEFT_NS.fetch_add(self.ns - used, Ordering::AcqRel);
        SPENT_NS.fetch_add(used, Ordering::Relaxed);
        add_thread_spent(used);
    }
}

/// Calls `attempt(timeout)` in slices until it returns `Some`, for at most `cap` in all;
/// `None` when a cap of the budget (or `cap`) ran out first. Every slice is charged for the
/// time it lasted (up to its length).
pub fn wait<T>(u: Use, cap: Duration, mut attempt: impl FnMut(Duration) -> Option<T>) -> Option<T> {
    let mut cap_ns = dur_ns(cap);
    loop {
        let s = Slice::take(u, cap_ns)?;
        let r = attempt(Duration::from_nanos(s.ns));
        cap_ns = cap_ns.saturating_sub(s.start.elapsed().as_nanos() as u64);
        drop(s);
        if r.is_some() {
            return r;
        }
        if cap_ns == 0 {
            return None;
        }
    }
}

/// Polls `done` (short sleeps) out of the budget for at most `cap`.
pub fn wait_until(u: Use, cap: Duration, done: impl Fn() -> bool) -> bool {
    if done() {
        return true;
    }
    wait(u, cap, |t| {
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

    fn sleep_fail(t: Duration) -> Option<()> {
        std::thread::sleep(t);
        None
    }

    /// The budget is process-wide: the only test that spends it (others only read it).
    #[test]
    fn waits_stop_at_the_first_cap_and_finalize_keeps_its_reserve() {
        set_caps(Caps {
            process: Duration::from_millis(100),
            thread: Duration::from_millis(30),
        });
        // One thread: its own cap (30 ms) comes first, whatever the writer does.
        let t0 = Instant::now();
        assert!(wait(Use::Run, Duration::MAX, sleep_fail).is_none());
        let waited = t0.elapsed();
        // Wall time only from below: a loaded machine may oversleep any slice, but the
        // budget's own account (next) must stop at the cap whatever the scheduler did.
        assert!(waited >= Duration::from_millis(29), "{waited:?}");
        assert!(run_spent());
        let one = spent_ns();
        assert!((29_000_000..=30_000_000).contains(&one), "{one}");
        // Other threads spend the rest of the run's part (50 ms), not more.
        let hs: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| wait(Use::Run, Duration::MAX, sleep_fail)))
            .collect();
        for h in hs {
            assert!(h.join().expect("waiter").is_none());
        }
        let run = spent_ns();
        assert!(run >= 50_000_000 - 4 * SLICE_NS, "{run}");
        assert!(run <= 50_000_000, "{run}");
        // Nothing left for the run: it does not wait at all.
        assert!(wait(Use::Run, Duration::MAX, |_| Some(())).is_none());
        // Finalize still has its reserve (50 ms), and a quick success gives the rest back.
        assert_eq!(wait(Use::Finalize, Duration::MAX, |_| Some(7)), Some(7));
        assert!(!wait_until(Use::Finalize, Duration::MAX, || false));
        let all = spent_ns();
        assert!((96_000_000..=100_000_000).contains(&all), "{all}");
        reset();
        assert!(!run_spent(), "a fork child starts afresh, its threads too");
        set_caps(Caps::default());
    }
}
