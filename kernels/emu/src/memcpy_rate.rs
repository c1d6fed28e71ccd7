//! This machine's memcpy rate through the emulator's own copy loop: the rate that stands for
//! the GPU's device-local copies, from which the emulated device's slow-down factor follows.

use crate::memory::copy_words;
use krphase_kernels::device_memory::alloc_device_memory;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Bytes copied per trial: larger than the private caches, so the rate is the memory's.
const TRIAL_BYTES: usize = 32 << 20;
/// Trials; the fastest counts (slower ones were disturbed by other work on the machine).
const TRIALS: usize = 5;

/// How the rate was measured, for the stderr line and the truth file.
pub const METHOD: &str =
    "best of 5 copies of 32 MiB into a kept buffer through the snapshot's copy loop";

/// Measures the copy rate in GB/s (about 0.1 s).
pub fn measure_gbps() -> f64 {
    let words = TRIAL_BYTES / 8;
    let src = alloc_device_memory(words);
    for (i, w) in src.iter().enumerate() {
        w.store(i as u64, Ordering::Relaxed);
    }
    // One kept destination, touched once, so the trials time the copy and not page faults.
    let mut out = Vec::with_capacity(words);
    copy_words(&src, &mut out);
    let mut best = Duration::MAX;
    for _ in 0..TRIALS {
        let t = Instant::now();
        copy_words(&src, &mut out);
        best = best.min(t.elapsed());
        std::hint::black_box(&out);
    }
    TRIAL_BYTES as f64 / best.as_secs_f64().max(1e-9) / 1e9
}
