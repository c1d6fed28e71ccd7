//! The output is a FIFO nobody reads: the open, and later every write, would block forever.
//! The application's threads must get through thousands of replay windows and finalize within
//! the wait budget: records that do not fit are dropped and counted, those the writer never
//! wrote are counted at finalize, and the total the threads waited stays within the budget. One test function: the tool is a process-wide singleton.

mod common;

use common::{Payload, call, call_pass_count};
use krphase_ffi::CallbackPhase;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// One declined-by-the-SDK window (CONFIG ENTER, pass count, CONFIG EXIT): window records only,
/// flushed at CONFIG EXIT.
fn window(cb: common::Cb, d: u64) {
    let mut p = Payload::new(184, d);
    call(cb, 1, CallbackPhase::ENTER, &mut p);
    let f = p.slot(152).max(p.slot(136));
    call_pass_count(f, d);
    call(cb, 1, CallbackPhase::EXIT, &mut Payload::new(184, d));
}

#[test]
fn a_fifo_nobody_reads_costs_the_application_at_most_the_wait_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("out.fifo");
    let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");

    let t0 = Instant::now();
    krphase::test_support::install_synthetic(
        &[("KRPHASE_MODE", "drive"), ("KRPHASE_PASSES", "3")],
        &fifo,
    )
    .expect("install: opening a FIFO without a reader must not fail or block");
    let installed = t0.elapsed();
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    const WINDOWS: u64 = 3000;
    let threads: Vec<_> = (0..3u64)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..WINDOWS {
                    window(cb, t * WINDOWS + i + 1);
                }
            })
        })
        .collect();
    for h in threads {
        h.join().expect("producer");
    }
    krphase::finalize(0);
    let total = t0.elapsed();

    let rec = krphase::recorder::peek().expect("recorder");
    let dropped = rec.counters.dropped_window.load(Ordering::Relaxed);
    let unwritten = rec.unwritten();
    let stall = krphase::recorder::stall_ns();
    eprintln!(
        "install {installed:?}, whole run {total:?}, waited {:.1} ms, window records dropped {dropped}, not written {unwritten}",
        stall as f64 / 1e6
    );
    let cap = krphase::recorder::DEFAULT_PROCESS.as_nanos() as u64;
    assert!(stall <= cap, "waited {stall} ns");
    assert!(
        stall > 0,
        "finalize did wait for the trailer, within the budget"
    );
    // Nothing reached the file (the FIFO was never opened): every record is either dropped and
    // counted or among those the writer never wrote, which finalize counts and says.
    assert!(
        dropped + unwritten >= 4 * 3 * WINDOWS,
        "{dropped} + {unwritten}"
    );
    // A hang guard: the run takes the 50 ms budget and tens of ms of work, 20 s is hundreds of
    // times that; without the budget the first open alone never returns. What the threads
    // waited is asserted above, in the tool's own account.
    assert!(total < Duration::from_secs(20), "whole run {total:?}");
}
