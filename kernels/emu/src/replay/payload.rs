//! The kernel-replay payload as the emulated SDK build lays it out (`--payload-layout`), the
//! callbacks a tool writes into it, and the localized start/stop toggles valid only in PASS ENTER.

use crate::opts::LayoutOpt;
use crate::sdk::sdk;
use krphase_ffi::{
    ContextId, KernelDispatchInfo, KernelReplayDataA, KernelReplayDataB, REPLAY_PAYLOAD_FULL_SIZE,
    REPLAY_PAYLOAD_NO_TOGGLES_SIZE, ReplayContinueFn, ReplayPassCountFn, ReplayPayload, Status,
    UserData,
};
use std::cell::{Cell, RefCell};

thread_local! {
    /// True only while this thread runs a PASS ENTER callback.
    static IN_PASS_ENTER: Cell<bool> = const { Cell::new(false) };
    /// Contexts locally stopped in this thread's replay loop (sticky until the loop ends).
    static LOCAL_STOPPED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (the PASS ENTER callback) with the context toggles legal.
pub(super) fn in_pass_enter(f: impl FnOnce()) {
    IN_PASS_ENTER.with(|c| c.set(true));
    f();
    IN_PASS_ENTER.with(|c| c.set(false));
}

/// Forgets the local stops: a replay loop starts or ends.
pub(super) fn clear_local_stops() {
    LOCAL_STOPPED.with(|s| s.borrow_mut().clear());
}

/// The contexts locally stopped so far in this thread's replay loop.
pub(super) fn local_stops() -> Vec<u64> {
    LOCAL_STOPPED.with(|s| s.borrow().clone())
}

fn toggle(ctx: ContextId, stop: bool) -> u32 {
    if !IN_PASS_ENTER.with(|c| c.get()) {
        return Status::CONTEXT_ERROR.0;
    }
    if !sdk().context_exists(ctx) {
        return Status::CONTEXT_NOT_FOUND.0;
    }
    LOCAL_STOPPED.with(|s| {
        let mut s = s.borrow_mut();
        s.retain(|c| *c != ctx.handle);
        if stop {
            s.push(ctx.handle);
        }
    });
    Status::SUCCESS
}

/// `replay_start_context`: legal only inside PASS ENTER; sticky for the rest of the loop.
extern "C" fn replay_start_context(ctx: ContextId) -> u32 {
    std::panic::catch_unwind(|| toggle(ctx, false)).unwrap_or(Status::ERROR.0)
}

/// `replay_stop_context`: legal only inside PASS ENTER; sticky for the rest of the loop.
extern "C" fn replay_stop_context(ctx: ContextId) -> u32 {
    std::panic::catch_unwind(|| toggle(ctx, true)).unwrap_or(Status::ERROR.0)
}

#[repr(C)]
pub(super) union PayloadStore {
    a: KernelReplayDataA,
    b: KernelReplayDataB,
    raw: [u64; 31],
}

/// What a payload carries besides the dispatch info.
pub(super) struct PayloadFields {
    pub(super) current: u64,
    pub(super) total: u64,
    pub(super) pass_count: ReplayPassCountFn,
    pub(super) cont: ReplayContinueFn,
    pub(super) toggles: bool,
}

impl PayloadFields {
    /// Outside a pass (CONFIG ENTER and EXIT): no pass index, callbacks or toggles.
    pub(super) fn config() -> PayloadFields {
        PayloadFields {
            current: 0,
            total: 0,
            pass_count: None,
            cont: None,
            toggles: false,
        }
    }

    /// PASS ENTER of pass `current` of `total`: the toggles, no callbacks.
    pub(super) fn pass_enter(current: u64, total: u64) -> PayloadFields {
        PayloadFields {
            current,
            total,
            pass_count: None,
            cont: None,
            toggles: true,
        }
    }

    /// PASS EXIT of pass `current` of `total`: `replay_continue` filled with the CONFIG value.
    pub(super) fn pass_exit(current: u64, total: u64, cont: ReplayContinueFn) -> PayloadFields {
        PayloadFields {
            current,
            total,
            pass_count: None,
            cont,
            toggles: false,
        }
    }
}

pub(super) fn build_payload(
    layout: LayoutOpt,
    info: KernelDispatchInfo,
    f: PayloadFields,
) -> Box<PayloadStore> {
    let mut p = Box::new(PayloadStore { raw: [0; 31] });
    let (start, stop): (krphase_ffi::ReplayContextFn, krphase_ffi::ReplayContextFn) =
        if f.toggles && layout != LayoutOpt::C168 {
            (Some(replay_start_context), Some(replay_stop_context))
        } else {
            (None, None)
        };
    match layout {
        LayoutOpt::A => {
            p.a = KernelReplayDataA {
                size: REPLAY_PAYLOAD_FULL_SIZE,
                dispatch_info: info,
                pass_count_cb: f.pass_count,
                replay_continue_cb: f.cont,
                current_pass: f.current,
                total_passes: f.total,
                replay_local_enable_context_cb: start,
                replay_local_disable_context_cb: stop,
            }
        }
        LayoutOpt::B | LayoutOpt::C168 => {
            p.b = KernelReplayDataB {
                size: if layout == LayoutOpt::C168 {
                    REPLAY_PAYLOAD_NO_TOGGLES_SIZE
                } else {
                    REPLAY_PAYLOAD_FULL_SIZE
                },
                dispatch_info: info,
                current_pass: f.current,
                total_passes: f.total,
                replay_pass_count: f.pass_count,
                replay_continue: f.cont,
                replay_start_context: start,
                replay_stop_context: stop,
            }
        }
    }
    p
}

pub(super) fn payload_ptr(p: &mut PayloadStore) -> *mut std::ffi::c_void {
    (p as *mut PayloadStore).cast()
}

/// Reads back the callbacks the tool wrote into the payload.
pub(super) fn read_callbacks(
    layout: LayoutOpt,
    p: &mut PayloadStore,
) -> (ReplayPassCountFn, ReplayContinueFn) {
    // SAFETY: the store is a live, 8-aligned 248-byte buffer whose first word is its size.
    let Some(view) = (unsafe { ReplayPayload::from_raw(payload_ptr(p)) }) else {
        return (None, None);
    };
    let l = layout.ffi();
    let pc = view.pass_count_raw(l).unwrap_or(0);
    let cc = view.continue_raw(l).unwrap_or(0);
    // SAFETY: a non-zero value in these slots is a function pointer the tool stored with the
    // header's signature (the SDK's header declares these slots as those function pointers).
    let pc: ReplayPassCountFn = if pc == 0 {
        None
    } else {
        Some(unsafe {
            std::mem::transmute::<usize, unsafe extern "C" fn(KernelDispatchInfo, UserData) -> u64>(
                pc as usize,
            )
        })
    };
    // SAFETY: as above, for the continue callback's signature.
    let cc: ReplayContinueFn = if cc == 0 {
        None
    } else {
        Some(unsafe {
            std::mem::transmute::<
                usize,
                unsafe extern "C" fn(KernelDispatchInfo, u64, u64, UserData) -> i32,
            >(cc as usize)
        })
    };
    (pc, cc)
}
