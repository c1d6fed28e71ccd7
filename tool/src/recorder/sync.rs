//! The synchronisation types a thread's buffer (`slot.rs`) is written against: std's atomics and
//! an `UnsafeCell` with loom's closure API. The buffer's own file names nothing else, so its
//! model test (`tool/tests/slot_publication.rs`) compiles the same file against loom's types.

pub use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering, fence};

/// `std::cell::UnsafeCell` with loom's `with` and `with_mut`: the pointer is handed to a
/// closure, so loom can check every access of the model test.
pub struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

impl<T> UnsafeCell<T> {
    pub const fn new(v: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(v))
    }

    /// Runs `f` with a pointer for reading.
    #[inline(always)]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a pointer for writing.
    #[inline(always)]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
