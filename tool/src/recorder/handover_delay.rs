//! Test support (`test-support` feature only): hold every buffer hand-over for a while between
//! taking the slot and sending it, so a test can make finalize race a hand-over in progress on
//! purpose. The shipped library has no delay and pays nothing for it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

static DELAY_US: AtomicU64 = AtomicU64::new(0);

/// Every later hand-over waits `d` before it sends its slot.
pub fn delay_hand_overs(d: Duration) {
    DELAY_US.store(d.as_micros() as u64, Ordering::Relaxed);
}

/// Sleeps for the injected delay, if any.
#[inline]
pub(crate) fn wait_if_injected() {
    let us = DELAY_US.load(Ordering::Relaxed);
    if us > 0 {
        std::thread::sleep(Duration::from_micros(us));
    }
}
