//! A buffer hand-over inside `replay_continue` counts in the continue call's own time: a call
//! that took a hand-over's time has a CONTINUE record whose own time holds it (not ending a
//! whole hand-over before the return, which would hand that time to the restore after it), and
//! a call longer than 65.5 µs keeps its length. Every hand-over is held 2 ms (test support), and
//! enough windows of three records a pass run for several continue calls to meet one. One test
//! function: the tool is a process-wide singleton.

mod common;

use common::{Cb, Payload, call, call_pass_count, dispatch_info};
use krphase_ffi::{KernelDispatchInfo, UserData};
use krphase_format::event::own_time;
use krphase_format::{Event, FileReader};
use std::collections::BTreeMap;
use std::time::Duration;

type Continue = unsafe extern "C" fn(KernelDispatchInfo, u64, u64, UserData) -> i32;

const HAND_OVER: Duration = Duration::from_millis(2);
/// Passes per window (an indefinite loop stopped by `KRPHASE_MAX_PASSES`): three records a
/// pass, so a window fills a buffer (1024 records) before its CONFIG EXIT hands it over.
const PASSES: u64 = 400;
/// Continue calls that must have met a hand-over for the test to say anything.
const WANT_SLOW: usize = 3;
/// Windows, each with a full buffer inside it: with the alignment varied, the record that fills
/// it is a CONTINUE about every fourth time. A buffer flushed by age (a loaded machine's slow
/// window) moves the alignment, so there are enough windows for a few to remain.
const WINDOWS: u64 = 96;

/// One Layout B window of an indefinite loop; returns each continue call's (pass, return time).
fn window(cb: Cb, d: u64) -> Vec<(u64, u64)> {
    let mut p = Payload::new(184, d);
    call(cb, 1, krphase_ffi::CallbackPhase::ENTER, &mut p);
    // SAFETY: Layout B's continue slot holds the tool's callback of this signature.
    let cont: Continue = unsafe { std::mem::transmute::<usize, Continue>(p.slot(160) as usize) };
    assert_eq!(call_pass_count(p.slot(152), d), 0, "indefinite");
    let mut returns = Vec::new();
    for i in 0.. {
        let mut pp = Payload::new(184, d);
        pp.set(136, i);
        pp.set(144, 0);
        call(cb, 2, krphase_ffi::CallbackPhase::ENTER, &mut pp);
        call(cb, 2, krphase_ffi::CallbackPhase::EXIT, &mut pp);
        // SAFETY: calling the tool's continue callback as the SDK does.
        let more = unsafe { cont(dispatch_info(d), i, 0, UserData::default()) } != 0;
        returns.push((i, krphase::boottime_ns()));
        if !more {
            break;
        }
    }
    call(
        cb,
        1,
        krphase_ffi::CallbackPhase::EXIT,
        &mut Payload::new(184, d),
    );
    returns
}

/// Each CONTINUE record's end (ts + own time), by (dispatch, pass).
fn continue_ends(path: &std::path::Path) -> BTreeMap<(u64, u64), (u64, u64)> {
    let r = FileReader::open(path).expect("open");
    let mut ends = BTreeMap::new();
    for e in r {
        if let Event::Continue {
            ts,
            dispatch_id,
            pass,
            own_time: raw,
            ..
        } = e.expect("event")
        {
            ends.insert((dispatch_id, pass), (ts, ts + own_time::decode(raw)));
        }
    }
    ends
}

#[test]
fn a_hand_over_inside_continue_counts_in_its_own_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.krp");
    krphase::test_support::install_synthetic(
        &[
            ("KRPHASE_MODE", "drive"),
            ("KRPHASE_PASSES", "0"),
            ("KRPHASE_MAX_PASSES", &PASSES.to_string()),
            ("KRPHASE_ON_FULL", "block"),
        ],
        &path,
    )
    .expect("install");
    krphase::test_support::delay_hand_overs(HAND_OVER);
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    let mut returns = BTreeMap::new();
    for d in 1..=WINDOWS {
        // A pass writes a whole number of records that divides the buffer, so without these
        // the buffer would fill at the same record of a pass every time.
        for _ in 0..d % 4 {
            common::complete(1 << 40, 1, 2);
        }
        for (pass, ret) in window(cb, d) {
            returns.insert((d, pass), ret);
        }
    }
    krphase::finalize(0);
    let ends = continue_ends(&path);
    let hand_over = HAND_OVER.as_nanos() as u64;
    // Calls that took a hand-over's time, and those whose own time does not hold it.
    let (mut slow, mut outside) = (0, Vec::new());
    for (key, ret) in &returns {
        let (ts, end) = ends[key];
        if ret - ts >= hand_over {
            slow += 1;
            if end - ts < hand_over {
                outside.push((*key, end - ts, ret - ts));
            }
        }
    }
    let longest = returns.iter().map(|(k, r)| r - ends[k].0).max();
    assert!(
        slow >= WANT_SLOW,
        "only {slow} of {} continue calls met a hand-over (longest {longest:?} ns)",
        returns.len()
    );
    // A call preempted after its own time was read is slow too; that is rare, a hand-over
    // left outside is every slow call.
    assert!(
        outside.len() * 4 <= slow,
        "{} of {slow} slow continue calls have the hand-over outside their own time \
         ((dispatch, pass), own ns, call ns): {outside:?}",
        outside.len()
    );
}
