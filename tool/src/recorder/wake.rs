//! How the writer thread waits for work and how producers wake it, without a system call on the
//! recording thread in steady state.
//!
//! The writer never blocks on its channel (a blocked receiver makes every send take the
//! channel's waker lock and make a futex wake). It polls instead: while there is work it drains
//! the channel; when there is none it parks for a while that doubles from [`MIN_NAP`] to
//! [`MAX_NAP`] and drops back to [`MIN_NAP`] as soon as it finds work. A producer wakes a
//! parked writer (`unpark`: one futex wake) only when the pool of spare slots is under its
//! low-water mark, or for finalize; otherwise the writer's next look finds the slot. At the
//! peak record rate a [`MAX_NAP`] uses a few slots of the pool, far from its low-water mark.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::Thread;
use std::time::Duration;

/// The writer's first nap after it ran out of work.
pub const MIN_NAP: Duration = Duration::from_micros(100);
/// The writer's longest nap: how late an idle writer sees a record at worst (a partly filled
/// buffer is handed over at the end of a window; it reaches the file within this).
pub const MAX_NAP: Duration = Duration::from_millis(5);

/// The writer's parking place.
#[derive(Default)]
pub struct WriterWake {
    writer: OnceLock<Thread>,
    /// The writer is parked (or about to park): a wake would take a system call.
    parked: AtomicBool,
}

impl WriterWake {
    /// Called by the writer thread once, before its first nap.
    pub fn register(&self) {
        let _ = self.writer.set(std::thread::current());
    }

    /// The writer naps for `nap` unless `has_work` (checked after it said it is parked, so a
    /// producer that saw it awake has already made its work visible) or until woken.
    pub fn nap(&self, nap: Duration, has_work: impl Fn() -> bool) {
        self.parked.store(true, Ordering::SeqCst);
        if !has_work() {
            std::thread::park_timeout(nap);
        }
        self.parked.store(false, Ordering::SeqCst);
    }

    /// Wakes the writer if it is parked (a producer whose pool runs low; finalize). Free when
    /// it is awake.
    pub fn wake(&self) {
        if self.parked.load(Ordering::SeqCst)
            && let Some(t) = self.writer.get()
        {
            t.unpark();
        }
    }
}

/// The next nap after one of `nap` found no work.
pub fn longer(nap: Duration) -> Duration {
    (nap * 2).min(MAX_NAP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_parked_writer_is_woken_and_naps_grow_to_their_cap() {
        let w = Arc::new(WriterWake::default());
        let w2 = Arc::clone(&w);
        let h = std::thread::spawn(move || {
            w2.register();
            let t = Instant::now();
            w2.nap(Duration::from_secs(10), || false);
            t.elapsed()
        });
        while !w.parked.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        w.wake();
        let slept = h.join().expect("writer");
        assert!(slept < Duration::from_secs(5), "{slept:?}");
        // Work already there: no nap at all.
        let t = Instant::now();
        w.nap(Duration::from_secs(10), || true);
        assert!(t.elapsed() < Duration::from_secs(5));
        assert_eq!(longer(MIN_NAP), MIN_NAP * 2);
        assert_eq!(longer(MAX_NAP), MAX_NAP);
    }
}
