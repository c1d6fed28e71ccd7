//! The per-event hot path allocates nothing: after a thread's first events (which attach it and
//! build its buffer), kernel-dispatch callbacks through the C ABI make no heap allocation on the
//! recording thread. Counted between buffer hand-offs (a hand-off may grow the buffer pool or
//! wait on the channel while the writer is behind; that is per 1024 records, not per event).
//! One test function: the tool is a process-wide singleton.

use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, KernelDispatchData, UserData,
    kernel_dispatch_op,
};
use krphase_format::Event;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made by the thread that has counting switched on.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    if COUNTING.with(Cell::get) {
        ALLOCS.with(|a| a.set(a.get() + 1));
    }
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

type Cb = unsafe extern "C" fn(CallbackTracingRecord, *mut UserData, *mut std::ffi::c_void);

fn call(cb: Cb, data: &mut KernelDispatchData, op: i32, phase: CallbackPhase) {
    let rec = CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 3,
        correlation_id: Default::default(),
        kind: CallbackTracingKind::KERNEL_DISPATCH,
        operation: op,
        phase,
        payload: (data as *mut KernelDispatchData).cast(),
    };
    // SAFETY: the payload is a live KernelDispatchData for the call, as the SDK guarantees.
    unsafe { cb(rec, &mut UserData::default(), std::ptr::null_mut()) };
}

/// One observed dispatch: ENQUEUE ENTER, ENQUEUE EXIT, COMPLETE.
fn dispatch(cb: Cb, data: &mut KernelDispatchData) {
    data.dispatch_info.dispatch_id += 1;
    data.end_timestamp = krphase::boottime_ns();
    call(cb, data, kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER);
    call(cb, data, kernel_dispatch_op::ENQUEUE, CallbackPhase::EXIT);
    call(cb, data, kernel_dispatch_op::COMPLETE, CallbackPhase::NONE);
}

#[test]
fn kernel_dispatch_callbacks_do_not_allocate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("a.krp");
    krphase::test_support::install_synthetic(
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "block")],
        &path,
    )
    .expect("install");
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    let mut data = KernelDispatchData {
        size: 152,
        ..Default::default()
    };
    data.dispatch_info.agent_id.handle = 1;
    data.dispatch_info.queue_id.handle = 2;
    // Warm up: attach, buffers, a few hand-offs.
    for _ in 0..10_000 {
        dispatch(cb, &mut data);
    }
    for _ in 0..100 {
        // Start from an empty buffer: 250 dispatches = 750 records (ENQUEUE ENTER, EXIT,
        // COMPLETE_AT), no hand-off in between.
        krphase::recorder::flush_current_thread();
        COUNTING.with(|c| c.set(true));
        for _ in 0..250 {
            dispatch(cb, &mut data);
        }
        COUNTING.with(|c| c.set(false));
    }
    let allocs = ALLOCS.with(Cell::get);
    krphase::finalize(0);
    assert_eq!(allocs, 0, "allocations on the recording thread");
    // Everything recorded reached the file (3 records per dispatch, plus one placement record;
    // the writer's calibration pairs aside).
    let mut r = krphase_format::FileReader::open(&path).expect("open");
    let n = r
        .by_ref()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| !matches!(e, Event::ClockPair { .. }))
        })
        .count();
    assert_eq!(n, 3 * (10_000 + 100 * 250) + 1, "events in the file");
}
