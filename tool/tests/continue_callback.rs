//! The continue callback through the C ABI with synthetic SDK records (no emulator): an
//! indefinite loop (`KRPHASE_PASSES=0`) bounded by `KRPHASE_MAX_PASSES`, the callback written
//! in both candidate slots until the layout is confirmed at the second PASS, and one CONTINUE
//! record per call. One test function: the tool is a process-wide singleton.

mod common;

use common::{Cb, Payload, call, call_pass_count, dispatch_info};
use krphase_ffi::{CallbackPhase, KernelDispatchInfo, UserData};
use krphase_format::event::{Decision, Notice};
use krphase_format::{Event, FileReader};
use krphase_windows::{Output, Reconstructor};

type Continue = unsafe extern "C" fn(KernelDispatchInfo, u64, u64, UserData) -> i32;

/// One Layout B window run as the SDK runs an indefinite loop; returns the passes run and the
/// (pass-count, continue) slots written at CONFIG ENTER (136, 144, 152, 160).
fn indefinite_window(cb: Cb, d: u64) -> (u64, [u64; 4]) {
    let mut p = Payload::new(184, d);
    call(cb, 1, CallbackPhase::ENTER, &mut p);
    let slots = [p.slot(136), p.slot(144), p.slot(152), p.slot(160)];
    // SAFETY: Layout B's continue slot holds the tool's callback of this signature.
    let cont: Continue = unsafe { std::mem::transmute::<usize, Continue>(p.slot(160) as usize) };
    assert_eq!(call_pass_count(p.slot(152), d), 0, "indefinite");
    let mut i = 0;
    loop {
        let mut pp = Payload::new(184, d);
        pp.set(136, i); // current_pass (B)
        pp.set(144, 0); // total_passes: indefinite
        call(cb, 2, CallbackPhase::ENTER, &mut pp);
        pp.set(160, p.slot(160));
        call(cb, 2, CallbackPhase::EXIT, &mut pp);
        i += 1;
        // SAFETY: calling the tool's continue callback as the SDK does.
        if unsafe { cont(dispatch_info(d), i - 1, 0, UserData::default()) } == 0 || i > 100 {
            break;
        }
    }
    call(cb, 1, CallbackPhase::EXIT, &mut Payload::new(184, d));
    (i, slots)
}

#[test]
fn indefinite_loop_stops_at_max_passes_and_records_each_decision() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cont.krp");
    krphase::test_support::install_synthetic(
        &[
            ("KRPHASE_MODE", "drive"),
            ("KRPHASE_PASSES", "0"),
            ("KRPHASE_MAX_PASSES", "3"),
        ],
        &path,
    )
    .expect("install");
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    let cont = krphase::test_support::synthetic_continue().expect("continue") as usize as u64;

    let (n, slots) = indefinite_window(cb, 1);
    assert_eq!(n, 3, "KRPHASE_MAX_PASSES passes");
    // Layout unknown at the first window: both candidate slots of both callbacks.
    assert_eq!(slots[1], cont, "continue at 144 (Layout A's slot)");
    assert_eq!(slots[3], cont, "continue at 160 (Layout B's slot)");
    assert!(
        slots[0] != 0 && slots[0] == slots[2],
        "pass count at 136 and 152"
    );
    // Confirmed B at the second PASS: only B's slots from now on.
    let (n, slots) = indefinite_window(cb, 2);
    assert_eq!(n, 3);
    assert_eq!((slots[0], slots[1]), (0, 0), "{slots:?}");
    assert_eq!(slots[3], cont);
    krphase::finalize(0);

    let mut r = FileReader::open(&path).expect("open");
    let mut rc = Reconstructor::new();
    let mut conts = Vec::new();
    let mut notices = Vec::new();
    let mut decisions = Vec::new();
    for e in r.by_ref() {
        let e = e.expect("event");
        match e {
            Event::Continue {
                dispatch_id,
                pass,
                total,
                result,
                ..
            } => conts.push((dispatch_id, pass, total, result)),
            Event::Notice { notice, a, .. } => notices.push((notice, a)),
            Event::ConfigEnter { decision, .. } => decisions.push(decision),
            _ => {}
        }
        rc.push(&e).expect("within the reconstruction limits");
    }
    rc.finish();
    assert_eq!(decisions, [Decision::Indefinite, Decision::Indefinite]);
    assert!(
        notices.contains(&(Notice::LayoutConfirmed, 2)),
        "{notices:?}"
    );
    let want: Vec<(u64, u64, u32, bool)> = [1, 2]
        .into_iter()
        .flat_map(|d| [(d, 0, 0, true), (d, 1, 0, true), (d, 2, 0, false)])
        .collect();
    assert_eq!(conts, want);
    let mut windows = 0;
    while let Some(o) = rc.pop() {
        let Output::Window(w) = o else {
            panic!("only windows expected: {o:?}")
        };
        windows += 1;
        assert_eq!((w.requested_passes, w.executed_passes), (Some(0), 3));
        assert_eq!(w.continues.len(), 3);
        assert_eq!(w.restores.len(), 2);
        assert!(w.restores.iter().all(|x| x.continue_phase.is_some()));
    }
    assert_eq!(windows, 2);
}
