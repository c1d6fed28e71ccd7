//! State behind a lock that a fork child never finds held: one lock per fork depth.
//!
//! `fork` copies only the forking thread; a lock another thread of the parent held at that
//! moment stays held in the child for good. The child handler ([`on_fork_child`]) raises the
//! process's fork depth, and every [`ForkLocal`] then hands the child a lock of its own, made in
//! the child, starting from a copy of the parent's value when the parent's lock is free (a
//! `try_lock`, never a wait) or from the default. `vfork` and `posix_spawn` run no fork handlers
//! and no tool code in the child, so they need nothing here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, TryLockError};

/// Fork depths with their own locks. A process nested deeper than this gets no lock at all
/// (its callers skip the work): such nesting is not seen in practice.
pub const MAX_DEPTH: usize = 16;

/// How many forks separate this process from the one that configured the tool.
static DEPTH: AtomicUsize = AtomicUsize::new(0);

/// This process's fork depth (0: the configured process).
#[inline]
pub fn depth() -> usize {
    DEPTH.load(Ordering::Relaxed)
}

/// Called by the fork child handler only (the child has one thread then).
pub fn on_fork_child() {
    DEPTH.fetch_add(1, Ordering::Relaxed);
}

/// How a fork child's lock starts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// From a copy of the parent's value (the default when the parent's lock was held).
    Inherit,
    /// From the default.
    Fresh,
}

/// A `Mutex<T>` per fork depth.
pub struct ForkLocal<T> {
    by_depth: [OnceLock<Mutex<T>>; MAX_DEPTH],
    start: Start,
}

impl<T: Clone + Default> ForkLocal<T> {
    pub const fn new(start: Start) -> ForkLocal<T> {
        ForkLocal {
            by_depth: [const { OnceLock::new() }; MAX_DEPTH],
            start,
        }
    }

    /// The lock of fork depth `d`, made on first use; `None` beyond [`MAX_DEPTH`].
    fn at(&self, d: usize) -> Option<&Mutex<T>> {
        let cell = self.by_depth.get(d)?;
        Some(cell.get_or_init(|| Mutex::new(self.initial(d))))
    }

    fn initial(&self, d: usize) -> T {
        if self.start == Start::Fresh || d == 0 {
            return T::default();
        }
        // The parent's lock may be held by a thread that does not exist here: never wait.
        match self.by_depth[d - 1].get().map(Mutex::try_lock) {
            Some(Ok(g)) => g.clone(),
            Some(Err(TryLockError::Poisoned(p))) => p.into_inner().clone(),
            _ => T::default(),
        }
    }

    /// Locks this process's value (waiting only for threads of this process).
    pub fn lock(&self) -> Option<MutexGuard<'_, T>> {
        self.lock_at(depth())
    }

    fn lock_at(&self, d: usize) -> Option<MutexGuard<'_, T>> {
        Some(self.at(d)?.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Runs `f` on this process's value; `None` beyond [`MAX_DEPTH`].
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.lock().map(|mut g| f(&mut g))
    }
}

impl<T: Clone + Default> Default for ForkLocal<T> {
    fn default() -> Self {
        ForkLocal::new(Start::Inherit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(l: &ForkLocal<Vec<u32>>, d: usize) -> Vec<u32> {
        l.lock_at(d).expect("depth").clone()
    }

    #[test]
    fn a_child_starts_from_the_parents_value_or_fresh_and_never_waits() {
        let kept: ForkLocal<Vec<u32>> = ForkLocal::new(Start::Inherit);
        let fresh: ForkLocal<Vec<u32>> = ForkLocal::new(Start::Fresh);
        kept.lock_at(0).expect("0").push(1);
        fresh.lock_at(0).expect("0").push(1);
        assert_eq!(get(&kept, 1), vec![1], "a free parent lock: copied");
        assert_eq!(get(&fresh, 1), Vec::<u32>::new());
        // A thread of the parent holds its lock across the fork: the child does not wait.
        let held = kept.lock_at(1).expect("1");
        assert_eq!(get(&kept, 2), Vec::<u32>::new(), "held: the default");
        drop(held);
        kept.lock_at(2).expect("2").push(2);
        assert_eq!((get(&kept, 0), get(&kept, 2)), (vec![1], vec![2]));
        assert!(kept.lock_at(MAX_DEPTH).is_none());
    }
}
