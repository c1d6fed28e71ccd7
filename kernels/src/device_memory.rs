//! Emulated device memory as a kernel sees it (a slice of `AtomicU64` words, one per 8 bytes),
//! and reading and writing `f64`/`u64` values in it.

use std::sync::atomic::{AtomicU64, Ordering};

/// Device memory as seen by a kernel: one `AtomicU64` per 8 bytes.
pub type DeviceMemory = [AtomicU64];

pub fn get_f64(w: &DeviceMemory, i: usize) -> f64 {
    f64::from_bits(w[i].load(Ordering::Relaxed))
}

pub fn set_f64(w: &DeviceMemory, i: usize, v: f64) {
    w[i].store(v.to_bits(), Ordering::Relaxed);
}

pub fn get_u64(w: &DeviceMemory, i: usize) -> u64 {
    w[i].load(Ordering::Relaxed)
}

pub fn set_u64(w: &DeviceMemory, i: usize, v: u64) {
    w[i].store(v, Ordering::Relaxed);
}

/// Fills the first `n` words with `v` (a host-to-device copy).
pub fn fill_f64(w: &DeviceMemory, n: usize, v: f64) {
    for x in &w[..n] {
        x.store(v.to_bits(), Ordering::Relaxed);
    }
}

/// Allocates `words` zeroed words of device memory in host memory (used by tests and by the
/// emulator's allocator).
pub fn alloc_device_memory(words: usize) -> Box<DeviceMemory> {
    (0..words).map(|_| AtomicU64::new(0)).collect()
}
