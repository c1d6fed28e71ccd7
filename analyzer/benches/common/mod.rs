//! What the analyzer's benchmarks share: running the built `krphase` and reading the peak RSS
//! it reports.

use std::process::Command;
use std::time::Instant;

/// Runs krphase with `args`; returns wall seconds and the peak RSS it reported (KiB).
pub fn krphase(args: &[&str]) -> (f64, u64) {
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_krphase"))
        .args(args)
        .env("KRPHASE_PEAK_RSS", "1")
        .output()
        .expect("run krphase");
    let wall = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "krphase {args:?}: {err}");
    let rss = err
        .lines()
        .find_map(|l| l.strip_prefix("krphase: peak RSS "))
        .and_then(|v| v.trim_end_matches(" KiB").parse().ok())
        .unwrap_or(0);
    (wall, rss)
}
