//! The C boundary: `rocprofiler_configure` (the only exported symbol) and the callbacks the SDK
//! calls. Every function catches panics; raw payloads are read here and handed on as values.

use crate::tool;
use krphase_ffi::{
    CallbackPhase, CallbackTracingRecord, ClientFinalizeFn, ClientId, KernelDispatchData,
    KernelDispatchInfo, KernelSymbolData, MemoryAllocationData, ReplayPayload, ToolConfigureResult,
    UserData, code_object_op, hsa_pointer_type, kernel_dispatch_op,
};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

static CLIENT_NAME: &CStr = c"krphase";

/// Runs `f`, turning a panic into "recording stops" and `fallback`.
fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            match tool::get() {
                Some(t) => t.on_panic(),
                None => crate::say("internal error (panic caught) during set-up; not recording"),
            }
            fallback
        }
    }
}

/// The SDK's tool entry point.
///
/// # Safety
/// Called by rocprofiler-sdk with a valid (or NULL) `client_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocprofiler_configure(
    _version: u32,
    _runtime_version: *const c_char,
    _priority: u32,
    client_id: *mut ClientId,
) -> *mut ToolConfigureResult {
    tool::quiet_panics();
    guard(std::ptr::null_mut(), || {
        if tool::configure(Some(tracing_callback)).is_err() {
            return std::ptr::null_mut();
        }
        if !client_id.is_null() {
            // SAFETY: the SDK passes a valid client id whose `name` the tool may set; the name
            // is a static string.
            unsafe { (*client_id).name = CLIENT_NAME.as_ptr() };
        }
        // The SDK copies the result; a leaked allocation outlives every use (once per process).
        Box::into_raw(Box::new(ToolConfigureResult {
            size: std::mem::size_of::<ToolConfigureResult>(),
            initialize: Some(tool_initialize),
            finalize: Some(tool_finalize),
            tool_data: std::ptr::null_mut(),
        }))
    })
}

unsafe extern "C" fn tool_initialize(_fini: ClientFinalizeFn, _data: *mut c_void) -> c_int {
    guard(-1, || {
        let Some(t) = tool::get() else { return -1 };
        t.claim_replay(Some(tracing_callback));
        let Some(sdk) = t.sdk.as_ref() else { return -1 };
        if let Err(s) = sdk.start_context(t.ctx) {
            crate::say(&format!(
                "start_context failed (status {}); not recording",
                s.0
            ));
            if let Some(r) = crate::recorder::peek() {
                r.stop();
            }
            return -1;
        }
        register_process_hooks();
        0
    })
}

unsafe extern "C" fn tool_finalize(_data: *mut c_void) {
    guard((), || {
        tool::finalize(krphase_format::trailer::flags::FINALIZE)
    });
}

/// atexit safety net and the fork-child hook (once per process).
pub(crate) fn register_process_hooks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        crate::sys::at_exit(at_exit);
        crate::sys::at_fork_child(at_fork_child);
    });
}

extern "C" fn at_exit() {
    guard((), || {
        tool::finalize(krphase_format::trailer::flags::ATEXIT)
    });
}

unsafe extern "C" fn at_fork_child() {
    // Only an atomic increment here: the child builds its own recorder at its first event.
    let _ = catch_unwind(crate::recorder::forked);
}

/// The pass-count callback handed to the SDK at CONFIG ENTER.
unsafe extern "C" fn pass_count(info: KernelDispatchInfo, _user_data: UserData) -> u64 {
    guard(1, || tool::get().map_or(1, |t| t.on_pass_count(&info)))
}

/// The continue callback handed to the SDK at CONFIG ENTER. A panic stops the loop (0): an
/// indefinite loop must end.
unsafe extern "C" fn replay_continue(
    info: KernelDispatchInfo,
    current_pass: u64,
    total_passes: u64,
    _user_data: UserData,
) -> c_int {
    guard(0, || {
        tool::get().map_or(0, |t| {
            c_int::from(t.on_continue(&info, current_pass, total_passes))
        })
    })
}

/// The continue callback, for driving the tool with synthetic records.
#[doc(hidden)]
pub fn synthetic_continue() -> krphase_ffi::ReplayContinueFn {
    Some(replay_continue)
}

/// The callbacks the SDK would call, for driving the tool with synthetic records
/// (see `tool::install_synthetic`).
#[doc(hidden)]
pub fn synthetic_entry_points() -> (
    krphase_ffi::CallbackTracingFn,
    krphase_ffi::ReplayPassCountFn,
) {
    (Some(tracing_callback), Some(pass_count))
}

/// One callback for every traced kind; dispatches on the record's kind (a table filled at
/// configure time from the numbers found by name). Kernel-dispatch records, the per-dispatch
/// hot path, are handled inline; every other kind is out of line.
unsafe extern "C" fn tracing_callback(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    _data: *mut c_void,
) {
    // The timestamp comes first: everything below is the tool's own cost. A completion carries
    // its GPU timestamps and needs no host clock.
    let is_complete = record.kind == krphase_ffi::CallbackTracingKind::KERNEL_DISPATCH
        && record.operation == kernel_dispatch_op::COMPLETE;
    let ts = if is_complete {
        0
    } else {
        crate::sys::boottime_ns()
    };
    guard((), || {
        let Some(t) = tool::get() else { return };
        match t.routes.get(record.kind) {
            tool::Route::Dispatch => {
                crate::recorder::with_thread(|th| on_dispatch(t, th, &record, ts));
            }
            tool::Route::Ignore => {}
            route => on_other(t, route, &record, ts),
        }
    });
}

/// KERNEL_DISPATCH: enqueue ENTER/EXIT and completion.
#[inline(always)]
fn on_dispatch(
    t: &tool::Tool,
    th: crate::recorder::Thread,
    record: &CallbackTracingRecord,
    ts: u64,
) {
    if record.payload.is_null() {
        return;
    }
    // SAFETY: KERNEL_DISPATCH payloads are `KernelDispatchData` (152 B or more, 8-aligned),
    // live for this callback; only the fields used are read.
    let data = unsafe { &*(record.payload as *const KernelDispatchData) };
    let tid = record.thread_id as u32;
    match (record.operation, record.phase) {
        (kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER) => {
            t.on_enqueue_enter(th, &data.dispatch_info, tid, ts)
        }
        (kernel_dispatch_op::ENQUEUE, _) => t.on_enqueue_exit(
            th,
            data.dispatch_info.dispatch_id,
            tid,
            record.correlation_id.internal,
            ts,
        ),
        (kernel_dispatch_op::COMPLETE, _) => t.on_complete(
            th,
            data.dispatch_info.dispatch_id,
            data.start_timestamp,
            data.end_timestamp,
            tid,
        ),
        _ => {}
    }
}

/// Every kind but KERNEL_DISPATCH: replay CONFIG/PASS, allocations, kernel symbols.
#[inline(never)]
fn on_other(t: &tool::Tool, route: tool::Route, record: &CallbackTracingRecord, ts: u64) {
    let tid = record.thread_id as u32;
    let ops = &t.ops;
    if route == tool::Route::Replay {
        // SAFETY: a KERNEL_REPLAY record's payload is the replay data, live and writable
        // for the duration of this callback; from_raw checks its size field.
        let Some(mut p) = (unsafe { ReplayPayload::from_raw(record.payload) }) else {
            return;
        };
        let enter = record.phase == CallbackPhase::ENTER;
        if Some(record.operation) == ops.config {
            if enter {
                let corr = (
                    record.correlation_id.internal,
                    record.correlation_id.ancestor,
                );
                t.on_config_enter(
                    &mut p,
                    tid,
                    corr,
                    (Some(pass_count), Some(replay_continue)),
                    ts,
                );
            } else {
                t.on_config_exit(p.dispatch_info().dispatch_id, tid, ts);
            }
        } else if Some(record.operation) == ops.pass {
            t.on_pass(&p, enter, tid, ts);
        }
    } else if route == tool::Route::Alloc {
        if record.payload.is_null() || record.phase == CallbackPhase::ENTER {
            return; // the address is known at EXIT
        }
        // SAFETY: MEMORY_ALLOCATION payloads are `MemoryAllocationData` (48 B), live for
        // this callback.
        let m = unsafe { (record.payload as *const MemoryAllocationData).read_unaligned() };
        let info = pointer_class(t, m.address);
        t.on_alloc(record.operation, &m, info, tid, ts);
    } else if route == tool::Route::CodeObject && record.operation == code_object_op::LOAD {
        // Loaded executables changed: module variables are walked again at the next window.
        t.modvars.mark_dirty();
        // SAFETY: CODE_OBJECT LOAD payloads are `CodeObjectLoadData`, live for this callback;
        // `size` is read first and `hsa_agent` (bytes 24..32) only when it lies inside.
        let pair = (!record.payload.is_null()).then(|| unsafe {
            let d = record.payload as *const krphase_ffi::CodeObjectLoadData;
            ((*d).size >= 32).then(|| ((*d).agent_id.handle, (*d).hsa_agent.handle))
        });
        if let Some(Some((agent, hsa))) = pair {
            t.modvars
                .learn_pair(hsa, agent, krphase_format::event::attribution::CODE_OBJECT);
        }
    } else if route == tool::Route::CodeObject
        && record.operation == code_object_op::DEVICE_KERNEL_SYMBOL_REGISTER
        && record.phase == CallbackPhase::LOAD
        && !record.payload.is_null()
    {
        // SAFETY: kernel-symbol payloads are `KernelSymbolData` (88 B), live for this
        // callback.
        let k = unsafe { (record.payload as *const KernelSymbolData).read_unaligned() };
        if k.kernel_name.is_null() {
            return;
        }
        // SAFETY: the SDK's kernel name is a NUL-terminated string live for this callback.
        let name = unsafe { CStr::from_ptr(k.kernel_name) }.to_string_lossy();
        t.on_kernel_symbol(k.kernel_id, &name);
    }
}

/// Classifies an address with `hsa_amd_pointer_info` when the process has it.
fn pointer_class(t: &tool::Tool, address: u64) -> Option<crate::alloc::PointerClass> {
    let f = t.sdk.as_ref()?.hsa_pointer_info()?;
    if address == 0 {
        return None;
    }
    let mut info = krphase_ffi::HsaAmdPointerInfo::default();
    let full = info.size;
    // SAFETY: `info` is a valid, size-stamped out struct; no accessible-agent list is asked for.
    let rc = unsafe {
        f(
            address as *const c_void,
            &mut info,
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if rc != krphase_ffi::HSA_STATUS_SUCCESS {
        return None;
    }
    // Read only what the runtime filled in (its `size`); global_flags sits at offset 48.
    let flags_fit = info.size.min(full) as usize >= 52;
    Some(crate::alloc::PointerClass {
        type_: info.type_,
        global_flags: if flags_fit { info.global_flags } else { 0 },
        // agentOwner sits at offset 40.
        agent_owner: if info.size.min(full) >= 48 {
            info.agent_owner.handle
        } else {
            0
        },
    })
    .filter(|c| c.type_ != hsa_pointer_type::UNKNOWN)
}
