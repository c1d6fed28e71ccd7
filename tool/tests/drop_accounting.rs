//! Under `KRPHASE_ON_FULL=drop`, producers faster than the writer lose dispatch records only
//! counted: every completion sent is either in the file, exactly once, or in the trailer's
//! `dropped_dispatch`. Threads hand their buffers to the writer (and, when its pool of spare
//! buffers is empty, drop their buffers' dispatch records and go on in them), exit (their
//! buffers are reused), and new threads start.
//! One test function: the tool is a process-wide singleton.

mod common;

use krphase_format::{Event, FileReader};
use std::collections::HashSet;

const THREADS: u64 = 3;
const ROUNDS: u64 = 2;
const PER_THREAD: u64 = 200_000;

fn completions(first_id: u64, count: u64) {
    let start = krphase::boottime_ns();
    for id in first_id..first_id + count {
        common::complete(id, start, start + id);
    }
}

#[test]
fn dropped_dispatch_records_are_all_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("d.krp");
    krphase::test_support::install_synthetic(
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "drop")],
        &path,
    )
    .expect("install");
    let mut next = 1u64;
    for _ in 0..ROUNDS {
        let hs: Vec<_> = (0..THREADS)
            .map(|t| {
                let first = next + t * PER_THREAD;
                std::thread::spawn(move || completions(first, PER_THREAD))
            })
            .collect();
        for h in hs {
            h.join().expect("producer");
        }
        next += THREADS * PER_THREAD;
    }
    krphase::finalize(0);

    let sent = ROUNDS * THREADS * PER_THREAD;
    let mut r = FileReader::open(&path).expect("open");
    // Each completion is one record, COMPLETE_AT.
    let mut seen = HashSet::new();
    for e in r.by_ref() {
        let id = match e.expect("event") {
            Event::CompleteAt { dispatch_id, .. } => dispatch_id,
            Event::Complete { .. } | Event::CompleteHost { .. } => {
                panic!("a 56-bit dispatch id takes the one-record form")
            }
            _ => continue,
        };
        assert!((1..=sent).contains(&id), "unknown id {id}");
        assert!(seen.insert(id), "id {id} twice");
    }
    assert!(!r.truncated());
    let t = *r.trailer().expect("trailer");
    eprintln!("in file {}, dropped {}", seen.len(), t.dropped_dispatch);
    assert_eq!(t.dropped_window, 0);
    assert_eq!(t.dropped_allocation, 0);
    let in_file = seen.len() as u64;
    assert_eq!(
        in_file + t.dropped_dispatch,
        sent,
        "in file {in_file} + dropped {} != sent {sent}",
        t.dropped_dispatch
    );
}
