//! The SDK side of the synthetic C-ABI tests: replay payloads and calls into the tool's
//! callbacks as the SDK makes them.
#![allow(dead_code)]

use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, KernelDispatchInfo, UserData,
};
use std::ffi::c_void;

pub type Cb = unsafe extern "C" fn(CallbackTracingRecord, *mut UserData, *mut c_void);
pub type PassCount = unsafe extern "C" fn(KernelDispatchInfo, UserData) -> u64;

/// A replay payload of `size` bytes (184 for Layout B; plus room), 8-aligned.
pub struct Payload(pub [u64; 32]);

impl Payload {
    pub fn new(size: u64, dispatch_id: u64) -> Payload {
        let mut p = Payload([0; 32]);
        p.0[0] = size;
        p.0[1] = 72; // dispatch_info.size
        p.0[2] = 1; // agent
        p.0[3] = 4096; // queue
        p.0[4] = 9; // kernel id
        p.0[5] = dispatch_id;
        p
    }
    pub fn slot(&self, off: usize) -> u64 {
        self.0[off / 8]
    }
    pub fn set(&mut self, off: usize, v: u64) {
        self.0[off / 8] = v;
    }
}

/// Calls the tool's tracing callback for kind 25, operation `op`, with payload `p`.
pub fn call(cb: Cb, op: i32, phase: CallbackPhase, p: &mut Payload) {
    let rec = CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 77,
        correlation_id: Default::default(),
        kind: CallbackTracingKind(25),
        operation: op,
        phase,
        payload: p.0.as_mut_ptr().cast(),
    };
    let mut ud = UserData::default();
    // SAFETY: the payload is live, 8-aligned and at least `size` bytes, as the SDK guarantees.
    unsafe { cb(rec, &mut ud, std::ptr::null_mut()) };
}

/// The dispatch info the SDK passes the replay callbacks for dispatch `d`.
pub fn dispatch_info(d: u64) -> KernelDispatchInfo {
    KernelDispatchInfo {
        dispatch_id: d,
        ..Default::default()
    }
}

/// Calls the tool's pass-count callback written into a payload slot (non-zero), as the SDK does.
pub fn call_pass_count(slot: u64, d: u64) -> u64 {
    assert_ne!(slot, 0, "no pass-count callback in the slot");
    // SAFETY: a non-zero pass-count slot holds the tool's callback of this signature.
    let pc: PassCount = unsafe { std::mem::transmute::<usize, PassCount>(slot as usize) };
    // SAFETY: calling the tool's callback as the SDK does.
    unsafe { pc(dispatch_info(d), UserData::default()) }
}

/// One KERNEL_DISPATCH COMPLETE callback, as the SDK delivers it at a dispatch's completion
/// (152-byte callback data), into the synthetically installed tool.
pub fn complete(dispatch_id: u64, start: u64, end: u64) {
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    let mut data = krphase_ffi::KernelDispatchData {
        size: 152,
        ..Default::default()
    };
    data.dispatch_info.dispatch_id = dispatch_id;
    data.start_timestamp = start;
    data.end_timestamp = end;
    let rec = CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 9,
        correlation_id: Default::default(),
        kind: CallbackTracingKind::KERNEL_DISPATCH,
        operation: krphase_ffi::kernel_dispatch_op::COMPLETE,
        phase: CallbackPhase::NONE,
        payload: (&mut data as *mut krphase_ffi::KernelDispatchData).cast(),
    };
    // SAFETY: the payload is a live KernelDispatchData for the call, as the SDK guarantees.
    unsafe { cb(rec, &mut UserData::default(), std::ptr::null_mut()) };
}
