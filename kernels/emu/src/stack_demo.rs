//! The demo's "stack" step on this emulator: the builds it compares and the STREAM size and
//! repeats that keep all of them within about two minutes on a loaded 2-core machine.
//! `krphase-emu stack-plan` prints these (with this machine's memcpy rate, measured once, to
//! pass to every run as `KRPHASE_EMU_DEVICE_GBPS` so all builds run at one slow-down factor).
//!
//! Measured wall time per run of `krphase-emu run stream` with the tool loaded and the driver
//! at 3 passes (device rate 20.0 GB/s, slow-down 104, a quiet 2-core machine): baseline 0.435 s,
//! signal-pool 0.332 s, skip-cu-markers 0.354 s, keep-staging 0.272 s, device-side 0.041 s, all
//! four 0.041 s: 10 s for 6 runs of each; 16 s with two busy loops competing for the cores.

use crate::replay::sdk_build::SWITCHES;

/// Elements per STREAM array (128 KiB arrays; 393 KiB snapshotted with the counter and markers).
pub const ELEMENTS: u64 = 16_384;
/// STREAM iterations: one window per kernel (copy, mul, add, triad, dot).
pub const ITERATIONS: u64 = 1;
/// Counter groups, so passes per window.
pub const PASSES: u64 = 3;
/// Timed runs per build (enough for a bootstrap interval over runs) and untimed warm-ups.
pub const REPEATS: u64 = 5;
pub const WARMUP: u64 = 1;

/// The builds: the baseline, each switch alone, all of them together.
pub fn builds() -> Vec<String> {
    let mut b = vec!["baseline".to_string()];
    b.extend(SWITCHES.iter().map(|s| s.to_string()));
    b.push(SWITCHES.join(","));
    b
}

/// The plan as one JSON line, with the memcpy rate measured now.
pub fn plan_json(device_gbps: f64) -> serde_json::Value {
    serde_json::json!({
        "builds": builds(), "elements": ELEMENTS, "iterations": ITERATIONS, "passes": PASSES,
        "repeats": REPEATS, "warmup": WARMUP, "device_gbps": device_gbps,
        "slowdown": crate::replay::cost_model::DEVICE_LOCAL_GBPS / device_gbps,
    })
}
