//! The C boundary: `rocprofiler_configure` (the only exported symbol) and the callbacks the SDK
//! calls. Every function catches panics ([`guard`]); raw payloads are read here and handed on as
//! values to the reactions in `events/` (`window.rs`, `dispatch.rs`, `alloc_events.rs`,
//! `code_object_events.rs` and `counter_records.rs`).

use super::boundary::guard;
use super::{configure, finalize, process_hooks};
use crate::events::routes::Route;
use crate::events::tool::{self, Tool};
use crate::{panic_hook, recorder, say_once};
use krphase_ffi::{
    CallbackPhase, CallbackTracingRecord, ClientFinalizeFn, ClientId, CounterConfigId,
    CounterRecord, DispatchCountingServiceData, KernelDispatchData, KernelDispatchInfo,
    KernelSymbolData, MemoryAllocationData, ReplayContinueFn, ReplayPassCountFn, ReplayPayload,
    ToolConfigureResult, UserData, code_object_op, hsa_pointer_type, kernel_dispatch_op,
};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::AtomicBool;

static CLIENT_NAME: &CStr = c"krphase";

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
    panic_hook::install();
    guard(std::ptr::null_mut(), || {
        let counting: configure::CountingFns = (Some(counting_dispatch), Some(counting_record));
        if configure::configure(Some(tracing_callback), counting).is_err() {
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
        t.start_counting();
        if let Err(s) = sdk.start_context(t.ctx) {
            crate::say(&format!(
                "start_context failed (status {}); not recording",
                s.0
            ));
            if let Some(r) = recorder::peek() {
                r.stop();
            }
            return -1;
        }
        process_hooks::register();
        0
    })
}

unsafe extern "C" fn tool_finalize(_data: *mut c_void) {
    guard((), || {
        finalize::finalize(krphase_format::trailer::flags::FINALIZE)
    });
}

/// The pass-count callback handed to the SDK at CONFIG ENTER.
pub(crate) unsafe extern "C" fn pass_count(info: KernelDispatchInfo, _user_data: UserData) -> u64 {
    guard(1, || tool::get().map_or(1, |t| t.on_pass_count(&info)))
}

/// The continue callback handed to the SDK at CONFIG ENTER. A panic stops the loop (0): an
/// indefinite loop must end.
pub(crate) unsafe extern "C" fn replay_continue(
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

/// The dispatch counting service's dispatch callback (before each dispatch; under replay,
/// before each pass's): the config of the running pass's group, and the pass index (+1) in the
/// dispatch's `user_data` for the record callback. Handle 0, the SDK's "count nothing", stays
/// outside a counted pass.
unsafe extern "C" fn counting_dispatch(
    data: DispatchCountingServiceData,
    config: *mut CounterConfigId,
    user_data: *mut UserData,
    _callback_data: *mut c_void,
) {
    guard((), || {
        let Some((cfg, pass)) = crate::events::window::pass_config(data.dispatch_info.dispatch_id)
        else {
            return;
        };
        if config.is_null() || user_data.is_null() {
            return;
        }
        // SAFETY: the SDK passes writable out-pointers for the config and the dispatch's
        // user data, live for this callback.
        unsafe {
            *config = cfg;
            (*user_data).value = u64::from(pass) + 1;
        }
    });
}

/// The dispatch counting service's record callback: the counted pass's values (any thread).
unsafe extern "C" fn counting_record(
    data: DispatchCountingServiceData,
    records: *mut CounterRecord,
    count: usize,
    user_data: UserData,
    _callback_data: *mut c_void,
) {
    guard((), || {
        // SAFETY: every bit pattern of the union is a valid u64; ours holds pass + 1 (0: none).
        let pass = unsafe { user_data.value };
        let Some(t) = tool::get() else { return };
        if pass == 0 || t.panicked() {
            return;
        }
        let recs: &[CounterRecord] = if records.is_null() || count == 0 {
            &[]
        } else {
            // SAFETY: the SDK hands `count` readable records for the duration of the callback.
            unsafe { std::slice::from_raw_parts(records, count) }
        };
        let pass = (pass - 1).min(u64::from(u32::MAX)) as u32;
        t.on_counter_records(data.dispatch_info.dispatch_id, pass, recs);
    });
}

/// One callback for every traced kind; dispatches on the record's kind (a table filled at
/// configure time from the numbers found by name). Kernel-dispatch records, the per-dispatch
/// hot path, are handled inline; every other kind is out of line.
pub(crate) unsafe extern "C" fn tracing_callback(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    _data: *mut c_void,
) {
    // The timestamp comes first: everything below is the tool's own cost. A completion's host
    // time is what observe mode bounds the restore with (COMPLETE_AT).
    let ts = crate::clock::now();
    guard((), || {
        let Some(t) = tool::get() else { return };
        match t.routes.get(record.kind) {
            Route::Dispatch => {
                recorder::with_thread(|th| on_dispatch(t, th, &record, ts));
            }
            Route::Ignore => {}
            route => on_other(t, route, &record, ts),
        }
    });
}

/// A payload too small for what the callback reads was skipped (said once).
static SMALL_PAYLOAD: AtomicBool = AtomicBool::new(false);

/// The record's payload as a `T`, when it is one: non-NULL, aligned, and its `size` field (the
/// first u64 of every SDK payload) covers all of `T`. Anything else is skipped and counted
/// (`bad_payloads` in the trailer), said once.
///
/// # Safety
/// `record.payload` must be NULL or point to a payload of the callback that starts with its
/// `size` (u64) and is live and readable for `size` bytes while `record` is borrowed.
#[inline(always)]
unsafe fn sized_payload<T>(record: &CallbackTracingRecord) -> Option<&T> {
    let p = record.payload as *const T;
    if p.is_null() || !p.is_aligned() {
        return None;
    }
    // SAFETY: non-NULL and aligned (checked); every payload starts with its u64 size.
    let size = unsafe { (p as *const u64).read() };
    if size < std::mem::size_of::<T>() as u64 {
        bad_payload(record);
        return None;
    }
    // SAFETY: the payload is live and readable for `size >= size_of::<T>()` bytes while the
    // record is borrowed (the caller's guarantee), aligned, and any bit pattern is a valid `T`
    // (integers and raw pointers).
    Some(unsafe { &*p })
}

#[cold]
#[inline(never)]
fn bad_payload(record: &CallbackTracingRecord) {
    recorder::count(|c| &c.bad_payloads);
    say_once(
        &SMALL_PAYLOAD,
        &format!(
            "a tracing payload (kind {}, operation {}) is smaller than its type or misaligned; such callbacks are skipped and counted in the trailer",
            record.kind.0, record.operation
        ),
    );
}

/// KERNEL_DISPATCH: enqueue ENTER/EXIT and completion.
#[inline(always)]
fn on_dispatch(t: &Tool, th: recorder::Thread, record: &CallbackTracingRecord, ts: u64) {
    // SAFETY: KERNEL_DISPATCH payloads are `KernelDispatchData`, live for this callback.
    let Some(data) = (unsafe { sized_payload::<KernelDispatchData>(record) }) else {
        return;
    };
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
            ts,
        ),
        _ => {}
    }
}

/// Every kind but KERNEL_DISPATCH: replay CONFIG/PASS, allocations, kernel symbols.
#[inline(never)]
fn on_other(t: &Tool, route: Route, record: &CallbackTracingRecord, ts: u64) {
    match route {
        Route::Replay => on_replay(t, record, ts),
        Route::Alloc => on_allocation(t, record, ts),
        Route::CodeObject => on_code_object(t, record),
        Route::Dispatch | Route::Ignore => {}
    }
}

/// KERNEL_REPLAY CONFIG and PASS, ENTER and EXIT.
fn on_replay(t: &Tool, record: &CallbackTracingRecord, ts: u64) {
    // SAFETY: a KERNEL_REPLAY record's payload is the replay data, live and writable for the
    // duration of this callback (the record's borrow); from_record checks its size field.
    let Some(mut p) = (unsafe { ReplayPayload::from_record(record) }) else {
        if !record.payload.is_null() {
            bad_payload(record);
        }
        return;
    };
    let tid = record.thread_id as u32;
    let enter = record.phase == CallbackPhase::ENTER;
    if Some(record.operation) == t.ops.config {
        if enter {
            let corr = (
                record.correlation_id.internal,
                record.correlation_id.ancestor,
            );
            let callbacks: (ReplayPassCountFn, ReplayContinueFn) =
                (Some(pass_count), Some(replay_continue));
            t.on_config_enter(&mut p, tid, corr, callbacks, ts);
        } else {
            t.on_config_exit(p.dispatch_info().dispatch_id, tid, ts);
        }
    } else if Some(record.operation) == t.ops.pass {
        t.on_pass(&p, enter, tid, ts);
    }
}

/// MEMORY_ALLOCATION EXIT (the address is known only then).
fn on_allocation(t: &Tool, record: &CallbackTracingRecord, ts: u64) {
    if record.phase == CallbackPhase::ENTER {
        return;
    }
    // SAFETY: MEMORY_ALLOCATION payloads are `MemoryAllocationData` (48 B), live for this
    // callback.
    let Some(&m) = (unsafe { sized_payload::<MemoryAllocationData>(record) }) else {
        return;
    };
    let info = pointer_class(t, m.address);
    t.on_alloc(record.operation, &m, info, record.thread_id as u32, ts);
}

/// CODE_OBJECT LOAD (module variables change) and kernel-symbol registration.
fn on_code_object(t: &Tool, record: &CallbackTracingRecord) {
    if record.operation == code_object_op::LOAD {
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
    } else if record.operation == code_object_op::DEVICE_KERNEL_SYMBOL_REGISTER
        && record.phase == CallbackPhase::LOAD
    {
        // SAFETY: kernel-symbol payloads are `KernelSymbolData` (88 B), live for this callback.
        let Some(&k) = (unsafe { sized_payload::<KernelSymbolData>(record) }) else {
            return;
        };
        if k.kernel_name.is_null() {
            return;
        }
        // SAFETY: the SDK's kernel name is a NUL-terminated string live for this callback.
        let name = unsafe { CStr::from_ptr(k.kernel_name) }.to_string_lossy();
        t.on_kernel_symbol(k.kernel_id, &name);
    }
}

/// Classifies an address with `hsa_amd_pointer_info` when the process has it.
fn pointer_class(t: &Tool, address: u64) -> Option<crate::events::alloc::PointerClass> {
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
    Some(crate::events::alloc::PointerClass {
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
