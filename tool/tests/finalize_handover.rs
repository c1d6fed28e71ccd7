//! Finalize while threads are handing their buffers to the writer: every record a thread took
//! before finalize began is in the file, before the trailer. A hand-over that finalize raced
//! (slot taken, send not yet done) must finish or be counted before the trailer is written;
//! otherwise its records land after the trailer (lost) and the thread's sequence in the file
//! has a gap. One test function: the tool is a process-wide singleton.

mod common;

use krphase_format::{Event, FileReader};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const THREADS: u64 = 3;
/// Ids of thread `t` start at `(t + 1) * STRIDE`, so a thread is known by its id.
const STRIDE: u64 = 1 << 40;

/// Records between the producers' 1 ms pauses: at most 128 k records (4 MiB) a second per
/// thread, a buffer handed over every 8 ms or so, each hand-over held 6 ms. Unpaced, three
/// threads outran a writer that a loaded machine gave little CPU, spent the wait budget and
/// dropped records, as the budget is meant to; this test is about finalize's race with
/// hand-overs in progress, not about a writer that cannot keep up.
const BURST: u64 = 128;

/// Sends completions with increasing ids until `stop`; returns how many it sent and how many
/// of them returned before `finalizing` was set (so before finalize began).
fn complete_until(first_id: u64, finalizing: &AtomicBool, stop: &AtomicBool) -> (u64, u64) {
    let start = krphase::boottime_ns();
    let (mut id, mut before) = (first_id, 0);
    while !stop.load(Ordering::SeqCst) {
        common::complete(id, start, start + 1);
        id += 1;
        if !finalizing.load(Ordering::SeqCst) {
            before = id - first_id;
        }
        if id % BURST == 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    (id - first_id, before)
}

#[test]
fn finalize_racing_hand_overs_loses_nothing_before_the_trailer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("h.krp");
    krphase::test_support::install_synthetic(
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "block")],
        &path,
    )
    .expect("install");
    // Hand-overs take long enough that finalize surely meets some in progress: each thread is
    // inside one about 70 % of the time (finalize waits for them out of its reserve; 6 ms is
    // well inside it).
    krphase::test_support::delay_hand_overs(std::time::Duration::from_millis(6));
    let finalizing = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (f, s) = (Arc::clone(&finalizing), Arc::clone(&stop));
            std::thread::spawn(move || complete_until((t + 1) * STRIDE, &f, &s))
        })
        .collect();
    // Let every thread hand over many buffers, then finalize while they still record.
    std::thread::sleep(std::time::Duration::from_millis(300));
    finalizing.store(true, Ordering::SeqCst);
    krphase::finalize(0);
    stop.store(true, Ordering::SeqCst);
    let sent: Vec<(u64, u64)> = producers
        .into_iter()
        .map(|h| h.join().expect("producer"))
        .collect();

    let mut r = FileReader::open(&path).expect("open");
    let mut per_thread: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for e in r.by_ref() {
        if let Event::CompleteAt { dispatch_id, .. } = e.expect("event") {
            per_thread
                .entry(dispatch_id / STRIDE)
                .or_default()
                .push(dispatch_id % STRIDE);
        }
    }
    assert!(!r.truncated(), "the trailer was written");
    let t = *r.trailer().expect("trailer");
    // Healthy output drops nothing taken before finalize began; records the threads took after
    // it began reach no slot finalize collects and are counted as dropped.
    let after: u64 = sent.iter().map(|(all, before)| all - before).sum();
    assert!(
        t.dropped_dispatch + t.dropped_window <= after,
        "{} dropped, only {after} taken after finalize began",
        t.dropped_dispatch + t.dropped_window
    );
    for (thread, mut ids) in per_thread {
        ids.sort_unstable();
        let n = ids.len() as u64;
        assert!(
            n > 2048,
            "thread {thread}: only {n} records: too few hand-overs"
        );
        // A prefix 0..n that holds every record taken before finalize began; records taken
        // while it ran may or may not be in.
        let gaps: Vec<u64> = ids
            .windows(2)
            .filter(|w| w[1] != w[0] + 1)
            .map(|w| w[0])
            .collect();
        let (all, before) = sent[(thread - 1) as usize];
        assert!(
            ids[0] == 0 && gaps.is_empty() && n >= before,
            "thread {thread}: {n} in the file of {all} sent, {before} of them before finalize; first {}, gaps after {gaps:?}",
            ids[0]
        );
    }
}
