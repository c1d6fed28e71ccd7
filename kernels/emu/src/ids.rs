//! Process-wide id counters: dispatch ids (`++sequence_counter`) and correlation ids.

use krphase_ffi::CorrelationId;
use std::sync::atomic::{AtomicU64, Ordering};

static DISPATCH: AtomicU64 = AtomicU64::new(0);
static CORRELATION: AtomicU64 = AtomicU64::new(0);

pub fn next_dispatch() -> u64 {
    DISPATCH.fetch_add(1, Ordering::SeqCst) + 1
}

/// A fresh correlation id.
pub fn next_correlation() -> CorrelationId {
    correlation(CORRELATION.fetch_add(1, Ordering::SeqCst) + 1)
}

/// The correlation id with this internal value (the external one is always 0 in the emulator).
pub fn correlation(internal: u64) -> CorrelationId {
    CorrelationId {
        internal,
        ..Default::default()
    }
}
