//! Test support (`test-support` feature only): make the next CONFIG ENTER panic, to prove that
//! panics stop at the C boundary. The shipped library has no injector and pays nothing for it.

use std::sync::atomic::{AtomicBool, Ordering};

static INJECT_PANIC: AtomicBool = AtomicBool::new(false);

/// The next CONFIG ENTER panics.
pub fn inject_panic_at_next_config() {
    INJECT_PANIC.store(true, Ordering::Relaxed);
}

/// Panics when a panic was injected (once per injection).
#[inline]
pub(crate) fn panic_if_injected() {
    if INJECT_PANIC.swap(false, Ordering::Relaxed) {
        panic!("injected panic (test hook)");
    }
}
