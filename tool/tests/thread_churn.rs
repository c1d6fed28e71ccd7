//! 10 000 short-lived threads, each dispatching and exiting: every record reaches the file
//! exactly once or is counted as dropped (only once the wait budget is spent), and the buffers
//! made stay bounded by the pool and the threads alive at once (an exited thread's buffer is
//! reused, never leaked). One test function: the tool is a process-wide
//! singleton.

mod common;

use krphase_format::{Event, FileReader};
use std::collections::HashSet;

const THREADS: u64 = 10_000;
/// Threads alive at once.
const WAVE: u64 = 16;
const PER_THREAD: u64 = 5;

fn completions(first_id: u64) {
    for id in first_id..first_id + PER_THREAD {
        common::complete(id, id, id + 1);
    }
}

#[test]
fn ten_thousand_short_lived_threads_counts_exact_memory_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("churn.krp");
    krphase::test_support::install_synthetic(
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "block")],
        &path,
    )
    .expect("install");
    let mut next = 1u64;
    for _ in 0..THREADS / WAVE {
        let hs: Vec<_> = (0..WAVE)
            .map(|t| {
                let first = next + t * PER_THREAD;
                std::thread::spawn(move || completions(first))
            })
            .collect();
        for h in hs {
            h.join().expect("thread");
        }
        next += WAVE * PER_THREAD;
    }
    krphase::finalize(0);
    let made = krphase::test_support::slots_made();

    let sent = THREADS * PER_THREAD;
    let mut r = FileReader::open(&path).expect("open");
    let mut seen = HashSet::new();
    for e in r.by_ref() {
        if let Event::CompleteAt { dispatch_id, .. } = e.expect("event") {
            assert!(
                (1..=sent).contains(&dispatch_id),
                "unknown id {dispatch_id}"
            );
            assert!(seen.insert(dispatch_id), "id {dispatch_id} twice");
        }
    }
    assert!(!r.truncated());
    let t = *r.trailer().expect("trailer");
    // Every record (one COMPLETE_AT per completion) is in the file once, or counted: a writer
    // slower than 16 threads starting and exiting (a loaded machine) costs the application at
    // most the wait budget, then records are dropped.
    assert_eq!(
        seen.len() as u64 + t.dropped_dispatch,
        sent,
        "in file {}, dropped {}",
        seen.len(),
        t.dropped_dispatch
    );
    if t.dropped_dispatch > 0 {
        assert_ne!(
            t.flags & krphase_format::trailer::flags::STALLED,
            0,
            "{t:?}"
        );
    }
    // Buffers made: the recorder's fixed pool of spares, one per thread alive at once, and
    // those of exited threads still queued for the writer (its channel holds the pool's and
    // `CHANNEL_BATCHES` more).
    let pool = krphase::recorder::pool_slots(krphase::recorder::DEFAULT_PROCESS);
    let bound = WAVE as usize + 2 * pool + krphase::recorder::CHANNEL_BATCHES + 8;
    eprintln!("{THREADS} threads: {made} buffers of 32 KiB made (bound {bound})");
    assert!(made <= bound, "{made} buffers made for {THREADS} threads");
}
