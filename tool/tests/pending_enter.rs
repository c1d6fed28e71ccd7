//! Observe mode writes an enqueue's ENTER and EXIT as one record at the EXIT, keeping the ENTER
//! pending until then. An ENTER whose EXIT never comes is not lost: it is written as an ENQUEUE
//! ENTER of its own when the thread's next ENTER comes, when the thread exits, and by finalize
//! for a thread still inside its enqueue (the finalizing thread's own, and another live
//! thread's). Read back, every ENTER is in the file once, and every EXIT that came.
//!
//! One test function: the tool is a process-wide singleton.

use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, KernelDispatchData, UserData,
    kernel_dispatch_op,
};
use krphase_format::{Event, FileReader};
use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};

/// One KERNEL_DISPATCH ENQUEUE callback (ENTER or EXIT) of dispatch `d`, as the SDK makes it.
fn enqueue(phase: CallbackPhase, d: u64) {
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    let mut data = KernelDispatchData {
        size: 152,
        ..Default::default()
    };
    data.dispatch_info.dispatch_id = d;
    data.dispatch_info.kernel_id = 5;
    data.dispatch_info.agent_id.handle = 1;
    data.dispatch_info.queue_id.handle = 2;
    let mut rec = CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 7,
        correlation_id: Default::default(),
        kind: CallbackTracingKind::KERNEL_DISPATCH,
        operation: kernel_dispatch_op::ENQUEUE,
        phase,
        payload: (&mut data as *mut KernelDispatchData).cast(),
    };
    rec.correlation_id.internal = 1000 + d;
    // SAFETY: the payload is a live KernelDispatchData for the call, as the SDK guarantees.
    unsafe { cb(rec, &mut UserData::default(), std::ptr::null_mut()) };
}

fn enter(d: u64) {
    enqueue(CallbackPhase::ENTER, d);
}

fn exit(d: u64) {
    enqueue(CallbackPhase::EXIT, d);
}

#[test]
fn an_enter_without_its_exit_is_written_not_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("pending.krp");
    krphase::test_support::install_synthetic(
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "block")],
        &path,
    )
    .expect("install");

    // The first enqueue records the thread's placement (written apart), the second is a pair;
    // 3's EXIT never comes before 4's ENTER.
    for d in [1, 2] {
        enter(d);
        exit(d);
    }
    enter(3);
    enter(4);
    exit(4);
    // A thread that exits inside an enqueue.
    std::thread::spawn(|| {
        enter(10);
        exit(10);
        enter(11);
    })
    .join()
    .expect("exiting thread");
    // A thread inside an enqueue while finalize runs (it exits after the trailer).
    let (inside, finalized) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let live = {
        let (inside, finalized) = (Arc::clone(&inside), Arc::clone(&finalized));
        std::thread::spawn(move || {
            enter(20);
            exit(20);
            enter(21);
            inside.wait();
            finalized.wait();
        })
    };
    inside.wait();
    // The finalizing thread inside an enqueue too.
    enter(30);
    krphase::finalize(0);
    finalized.wait();
    live.join().expect("live thread");

    let mut r = FileReader::open(&path).expect("read back");
    let (mut enters, mut exits) = (BTreeMap::new(), BTreeMap::new());
    for e in r.by_ref() {
        match e.expect("event") {
            Event::EnqueueEnter {
                dispatch_id, ts, ..
            } => *enters.entry(dispatch_id).or_insert(0) += usize::from(ts > 0),
            Event::EnqueueExit {
                dispatch_id,
                correlation,
                ..
            } => {
                assert_eq!(correlation, 1000 + dispatch_id, "the EXIT's correlation id");
                *exits.entry(dispatch_id).or_insert(0) += 1;
            }
            _ => {}
        }
    }
    let once = |ds: &[u64]| ds.iter().map(|&d| (d, 1)).collect::<BTreeMap<u64, usize>>();
    assert_eq!(
        enters,
        once(&[1, 2, 3, 4, 10, 11, 20, 21, 30]),
        "every ENTER once"
    );
    assert_eq!(
        exits,
        once(&[1, 2, 4, 10, 20]),
        "every EXIT that came, once"
    );
    let t = r.trailer().expect("trailer");
    assert_eq!(t.dropped_dispatch, 0);
}
