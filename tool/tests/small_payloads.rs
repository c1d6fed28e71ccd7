//! Payloads whose `size` is smaller than their type are skipped and counted, never read past:
//! a kernel-dispatch (152 B), an allocation (48 B) and a kernel-symbol (88 B) payload that say
//! they are 16 bytes, in 16-byte buffers. One test function: the tool is a process-wide
//! singleton.

use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, UserData, code_object_op,
    kernel_dispatch_op, memory_allocation_op,
};
use krphase_format::{Event, FileReader};

fn call(kind: CallbackTracingKind, op: i32, phase: CallbackPhase, payload: &mut [u64; 2]) {
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let rec = CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 3,
        correlation_id: Default::default(),
        kind,
        operation: op,
        phase,
        payload: payload.as_mut_ptr().cast(),
    };
    // SAFETY: the payload is live and 16 bytes, as its size field says.
    unsafe { cb.expect("callback")(rec, &mut UserData::default(), std::ptr::null_mut()) };
}

#[test]
fn payloads_smaller_than_their_type_are_skipped_and_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("small.krp");
    krphase::test_support::install_synthetic(&[("KRPHASE_MODE", "observe")], &path)
        .expect("install");
    let mut p = [16u64, u64::MAX];
    call(
        CallbackTracingKind::KERNEL_DISPATCH,
        kernel_dispatch_op::COMPLETE,
        CallbackPhase::NONE,
        &mut p,
    );
    call(
        CallbackTracingKind::KERNEL_DISPATCH,
        kernel_dispatch_op::ENQUEUE,
        CallbackPhase::ENTER,
        &mut p,
    );
    call(
        CallbackTracingKind::MEMORY_ALLOCATION,
        memory_allocation_op::ALLOCATE,
        CallbackPhase::EXIT,
        &mut p,
    );
    call(
        CallbackTracingKind::CODE_OBJECT,
        code_object_op::DEVICE_KERNEL_SYMBOL_REGISTER,
        CallbackPhase::LOAD,
        &mut p,
    );
    krphase::finalize(0);
    let mut r = FileReader::open(&path).expect("open");
    let recorded = r
        .by_ref()
        .filter(|e| {
            matches!(
                e,
                Ok(Event::CompleteAt { .. } | Event::EnqueueEnter { .. } | Event::Alloc { .. })
            )
        })
        .count();
    assert_eq!(recorded, 0, "nothing was read from the short payloads");
    let t = *r.trailer().expect("trailer");
    assert_eq!(t.bad_payloads, 4, "each skipped callback counted");
}
