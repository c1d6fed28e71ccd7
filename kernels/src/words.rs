//! Reading and writing `f64`/`u64` values in emulated device words.

use std::sync::atomic::{AtomicU64, Ordering};

/// Device memory as seen by a kernel: one `AtomicU64` per 8 bytes.
pub type Words = [AtomicU64];

pub fn get_f64(w: &Words, i: usize) -> f64 {
    f64::from_bits(w[i].load(Ordering::Relaxed))
}

pub fn set_f64(w: &Words, i: usize, v: f64) {
    w[i].store(v.to_bits(), Ordering::Relaxed);
}

pub fn get_u64(w: &Words, i: usize) -> u64 {
    w[i].load(Ordering::Relaxed)
}

pub fn set_u64(w: &Words, i: usize, v: u64) {
    w[i].store(v, Ordering::Relaxed);
}

/// Fills the first `n` words with `v` (a host-to-device copy).
pub fn fill_f64(w: &Words, n: usize, v: f64) {
    for x in &w[..n] {
        x.store(v.to_bits(), Ordering::Relaxed);
    }
}

/// Allocates host-side words (used by tests and by the emulator's allocator).
pub fn alloc_words(n: usize) -> Box<Words> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}
