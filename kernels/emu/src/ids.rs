//! Process-wide id counters: dispatch ids (`++sequence_counter`) and correlation ids.

use std::sync::atomic::{AtomicU64, Ordering};

static DISPATCH: AtomicU64 = AtomicU64::new(0);
static CORRELATION: AtomicU64 = AtomicU64::new(0);

pub fn next_dispatch() -> u64 {
    DISPATCH.fetch_add(1, Ordering::SeqCst) + 1
}

pub fn next_correlation() -> u64 {
    CORRELATION.fetch_add(1, Ordering::SeqCst) + 1
}
