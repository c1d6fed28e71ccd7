//! Records taken after a thread's thread-local recorder was destroyed still reach the file.
//! On the main thread `exit()` destroys thread-locals before the atexit handlers run, and the
//! SDK still calls back then (its own exit handlers, completions delivered at its finalize).
//! Here a thread-local registered before the tool's is destroyed after it, and records from
//! its destructor. One test function: the tool is a process-wide singleton.

mod common;

use krphase_format::{Event, FileReader};
use std::collections::BTreeSet;

const EARLY: u64 = 11;
const LATE: u64 = 22;

fn complete(id: u64) {
    let start = krphase::boottime_ns();
    common::complete(id, start, start + 1);
}

/// Records a completion when the thread's thread-locals are destroyed.
struct RecordAtExit;
impl Drop for RecordAtExit {
    fn drop(&mut self) {
        complete(LATE);
    }
}

thread_local! {
    static AT_EXIT: RecordAtExit = const { RecordAtExit };
}

#[test]
fn a_record_after_the_thread_local_destructor_reaches_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("late.krp");
    krphase::test_support::install_synthetic(&[("KRPHASE_MODE", "observe")], &path)
        .expect("install");
    std::thread::spawn(|| {
        // Registered first, so destroyed after the tool's thread-locals.
        AT_EXIT.with(|_| ());
        complete(EARLY);
    })
    .join()
    .expect("thread");
    krphase::finalize(0);

    let mut r = FileReader::open(&path).expect("open");
    let ids: BTreeSet<u64> = r
        .by_ref()
        .filter_map(|e| match e.expect("event") {
            Event::CompleteAt { dispatch_id, .. } => Some(dispatch_id),
            _ => None,
        })
        .collect();
    let t = *r.trailer().expect("trailer");
    assert_eq!(
        (ids, t.dropped_dispatch + t.dropped_window),
        ([EARLY, LATE].into(), 0),
        "both completions in the file, nothing dropped"
    );
}
