//! The hot path's clock, live: for 10 s (`KRPHASE_CLOCK_CHECK_SECS` to change it, e.g. 600 for
//! `scripts/clock-check.sh`'s ten-minute run) a thread makes a COMPLETE callback every 5 ms,
//! reading CLOCK_BOOTTIME just before and just after it. The tool stamps the callback with its
//! own clock (raw TSC ticks where the TSC is usable; see `docs/tool.md`); the reader converts the
//! ticks through the file's calibration pairs. Every converted stamp must lie between its two
//! BOOTTIME readings, give or take 1 µs (the conversion's stated bound), however long the
//! callback was preempted (the readings then simply lie further apart).
//! One test function: the tool is a process-wide singleton.

mod common;

use krphase_format::header::Clock;
use krphase_format::{Event, FileReader};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The conversion's bound against BOOTTIME.
const TOLERANCE_NS: i64 = 1_000;
const EVERY: Duration = Duration::from_millis(5);

fn seconds() -> u64 {
    std::env::var("KRPHASE_CLOCK_CHECK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

#[test]
fn converted_stamps_lie_between_boottime_readings_taken_beside_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("clock.krp");
    krphase::test_support::install_synthetic(
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "block")],
        &path,
    )
    .expect("install");
    let run = Duration::from_secs(seconds());
    let start = Instant::now();
    let mut beside: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut id = 0u64;
    while start.elapsed() < run {
        id += 1;
        let before = krphase::boottime_ns();
        common::complete(id, before, before + 1);
        let after = krphase::boottime_ns();
        beside.insert(id, (before, after));
        std::thread::sleep(EVERY);
    }
    krphase::finalize(0);

    let mut r = FileReader::open(&path).expect("open");
    let clock = r.header().clock;
    let (mut seen, mut pairs) = (0usize, 0usize);
    let mut offsets: Vec<i64> = Vec::new();
    let mut outside: Vec<(u64, i64)> = Vec::new();
    for e in r.by_ref() {
        match e.expect("event") {
            Event::CompleteAt {
                dispatch_id, ts, ..
            } => {
                let (before, after) = beside[&dispatch_id];
                seen += 1;
                // How far outside [before, after] the converted stamp lies (0 inside).
                let out = (before as i64 - ts as i64)
                    .max(ts as i64 - after as i64)
                    .max(0);
                if out > TOLERANCE_NS {
                    outside.push((dispatch_id, out));
                }
                offsets.push(ts as i64 - before as i64);
            }
            Event::ClockPair { .. } => pairs += 1,
            _ => {}
        }
    }
    offsets.sort_unstable();
    eprintln!(
        "clock {clock:?}: {seen} stamps over {} s, {pairs} calibration pairs; stamp − BOOTTIME before: median {} ns, min {} ns, max {} ns; {} outside ±{TOLERANCE_NS} ns",
        run.as_secs(),
        offsets[offsets.len() / 2],
        offsets[0],
        offsets[offsets.len() - 1],
        outside.len()
    );
    assert_eq!(seen, beside.len(), "every callback's record is in the file");
    if clock == Clock::Tsc {
        // One pair at start, one every 100 ms, one at finish; a pair preempted on every try is
        // skipped, and a starved writer takes its pairs late: at least 80 % of them.
        let expected = run.as_millis() as usize / 100;
        assert!(
            pairs * 5 >= expected * 4,
            "{pairs} pairs, about {expected} expected"
        );
    }
    assert!(
        outside.is_empty(),
        "converted stamps outside their BOOTTIME readings by more than {TOLERANCE_NS} ns: {:?}",
        &outside[..outside.len().min(10)]
    );
}
