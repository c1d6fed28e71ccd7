//! The tracing callbacks, one per kind, each registered with the tool as its `callback_args`
//! (so none looks the tool up), and the replay loop's pass-count and continue callbacks. Raw
//! payloads are read here and handed on as values to the reactions in `events/`. Every function
//! runs inside [`guard`]: no panic unwinds into C.
//!
//! The dispatch callback, the per-dispatch hot path, is instantiated once per clock and mode,
//! and configure registers the one for the clock and mode it chose: nothing on that path loads
//! what configure fixed.

use super::boundary::guard;
use crate::clock::{self, Boottime, Source, Tsc};
use crate::events::tool::{self, Tool};
use crate::{panic_hook, recorder, say_once};
use krphase_ffi::{
    CallbackPhase, CallbackTracingFn, CallbackTracingRecord, KernelDispatchData,
    KernelDispatchInfo, KernelSymbolData, MemoryAllocationData, ReplayContinueFn,
    ReplayPassCountFn, ReplayPayload, UserData, code_object_op, hsa_pointer_type,
    kernel_dispatch_op,
};
use krphase_format::Mode;
use krphase_format::header::Clock;
use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::AtomicBool;

/// The callbacks configure registers, one per kind.
#[derive(Clone, Copy)]
pub struct Callbacks {
    pub dispatch: CallbackTracingFn,
    pub replay: CallbackTracingFn,
    pub alloc: CallbackTracingFn,
    pub code_object: CallbackTracingFn,
}

/// The callbacks for a tool whose clock is `clock`, in `mode` (observe mode's dispatch callback
/// writes an enqueue's ENTER and EXIT as one record; drive mode's writes each as it comes).
pub fn callbacks(clock: Clock, mode: Mode) -> Callbacks {
    Callbacks {
        dispatch: Some(dispatch_callback_for(clock, mode)),
        replay: Some(replay_callback),
        alloc: Some(alloc_callback),
        code_object: Some(code_object_callback),
    }
}

type Callback = unsafe extern "C" fn(CallbackTracingRecord, *mut UserData, *mut c_void);

fn dispatch_callback_for(clock: Clock, mode: Mode) -> Callback {
    match (clock, mode == Mode::Observe) {
        (Clock::Tsc, false) => dispatch_callback::<Tsc, false>,
        (_, false) => dispatch_callback::<Boottime, false>,
        (Clock::Tsc, true) => dispatch_callback::<Tsc, true>,
        (_, true) => dispatch_callback::<Boottime, true>,
    }
}

/// What every tracing callback gets as `callback_args`: the tool.
pub fn args(t: &'static Tool) -> *mut c_void {
    (t as *const Tool).cast_mut().cast()
}

/// The tool a callback was registered with.
///
/// # Safety
/// `args` is NULL or what [`args`] made of a tool (which lives for the process).
#[inline(always)]
unsafe fn tool_of(args: *mut c_void) -> Option<&'static Tool> {
    // SAFETY: the caller's guarantee.
    unsafe { args.cast_const().cast::<Tool>().as_ref() }
}

/// KERNEL_DISPATCH, the per-dispatch hot path: enqueue ENTER/EXIT and completion, stamped
/// with clock `C`. In observe mode (`OBSERVE`, a callback of its own chosen at configure) an
/// enqueue's ENTER is kept pending in the thread's slot and written with its EXIT as one
/// ENQUEUE_PAIR record.
///
/// # Safety
/// Called by the SDK with the `callback_args` configure registered ([`args`]) and a record
/// whose payload is live for the call.
pub(crate) unsafe extern "C" fn dispatch_callback<C: Source, const OBSERVE: bool>(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    args: *mut c_void,
) {
    // The timestamp comes first: everything below is the tool's own cost. A completion's host
    // time is what observe mode bounds the restore with (COMPLETE_AT).
    let ts = C::now();
    // SAFETY: the SDK passes what configure registered.
    let t = unsafe { tool_of(args) };
    guard((), || dispatch::<OBSERVE>(t, &record, ts));
}

/// [`dispatch_callback`] without the panic boundary: only for measuring what the boundary
/// costs (the benches compare the two).
///
/// # Safety
/// As [`dispatch_callback`]; a panic inside aborts the process.
#[cfg(feature = "test-support")]
pub(crate) unsafe extern "C" fn dispatch_callback_unguarded<C: Source, const OBSERVE: bool>(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    args: *mut c_void,
) {
    let ts = C::now();
    // SAFETY: the SDK passes what configure registered.
    let t = unsafe { tool_of(args) };
    dispatch::<OBSERVE>(t, &record, ts);
}

/// The dispatch callback configure registers for the clock and mode in effect, and the same
/// without its panic boundary (test support).
#[cfg(feature = "test-support")]
pub(crate) fn dispatch_callbacks(mode: Mode) -> (Callback, Callback) {
    let cb = dispatch_callback_for(clock::kind(), mode);
    let unguarded = match (clock::kind(), mode == Mode::Observe) {
        (Clock::Tsc, false) => dispatch_callback_unguarded::<Tsc, false>,
        (_, false) => dispatch_callback_unguarded::<Boottime, false>,
        (Clock::Tsc, true) => dispatch_callback_unguarded::<Tsc, true>,
        (_, true) => dispatch_callback_unguarded::<Boottime, true>,
    };
    (cb, unguarded)
}

/// The tool is looked at only by the operations that use it (an ENQUEUE ENTER).
#[inline(always)]
fn dispatch<const OBSERVE: bool>(
    t: Option<&'static Tool>,
    record: &CallbackTracingRecord,
    ts: u64,
) {
    if let Some(th) = recorder::this_thread() {
        on_dispatch::<OBSERVE>(t, th, record, ts);
    }
}

/// KERNEL_REPLAY CONFIG and PASS, ENTER and EXIT.
///
/// # Safety
/// As [`dispatch_callback`].
pub(crate) unsafe extern "C" fn replay_callback(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    args: *mut c_void,
) {
    let ts = clock::now();
    // SAFETY: the SDK passes what configure registered.
    let t = unsafe { tool_of(args) };
    guard((), || {
        if let Some(t) = t {
            on_replay(t, &record, ts);
        }
    });
}

/// MEMORY_ALLOCATION.
///
/// # Safety
/// As [`dispatch_callback`].
pub(crate) unsafe extern "C" fn alloc_callback(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    args: *mut c_void,
) {
    let ts = clock::now();
    // SAFETY: the SDK passes what configure registered.
    let t = unsafe { tool_of(args) };
    guard((), || {
        if let Some(t) = t {
            on_allocation(t, &record, ts);
        }
    });
}

/// CODE_OBJECT.
///
/// # Safety
/// As [`dispatch_callback`].
pub(crate) unsafe extern "C" fn code_object_callback(
    record: CallbackTracingRecord,
    _user_data: *mut UserData,
    args: *mut c_void,
) {
    // SAFETY: the SDK passes what configure registered.
    let t = unsafe { tool_of(args) };
    guard((), || {
        if let Some(t) = t {
            on_code_object(t, &record);
        }
    });
}

/// Test support: one callback for every kind, as the synthetic tests call the tool (with NULL
/// `callback_args`): finds the installed tool and hands the record to its kind's callback.
///
/// # Safety
/// As [`dispatch_callback`].
#[cfg(feature = "test-support")]
pub(crate) unsafe extern "C" fn routed_callback(
    record: CallbackTracingRecord,
    user_data: *mut UserData,
    _args: *mut c_void,
) {
    let Some(t) = tool::get() else { return };
    let ops = &t.ops;
    let cbs = callbacks(clock::kind(), t.mode());
    let cb = if record.kind == ops.dispatch_kind {
        cbs.dispatch
    } else if Some(record.kind) == ops.replay_kind {
        cbs.replay
    } else if record.kind == ops.alloc_kind {
        cbs.alloc
    } else if record.kind == ops.code_object_kind {
        cbs.code_object
    } else {
        None
    };
    if let Some(cb) = cb {
        // SAFETY: the caller's guarantees, and the tool as the callback's args.
        unsafe { cb(record, user_data, args(t)) };
    }
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

fn bad_payload(record: &CallbackTracingRecord) {
    bad_payload_of(record.kind, record.operation);
}

/// [`bad_payload`] of a payload of `kind` and `operation`: `extern "C"` with its own panic
/// boundary, so the dispatch callbacks reach it with no landing pad, as a tail call.
#[cold]
#[inline(never)]
extern "C" fn bad_payload_of(kind: krphase_ffi::CallbackTracingKind, operation: i32) {
    panic_hook::catch(|| {
        recorder::count(|c| &c.bad_payloads);
        say_once(
            &SMALL_PAYLOAD,
            &format!(
                "a tracing payload (kind {}, operation {}) is smaller than its type or misaligned; such callbacks are skipped and counted in the trailer",
                kind.0, operation
            ),
        );
    });
}

/// The record's KERNEL_DISPATCH payload, when it is one: non-NULL, and its `size` field (the
/// first u64 of every SDK payload) covers all of `KernelDispatchData`. A short payload is
/// skipped and counted (`bad_payloads` in the trailer), said once. Its fields are read one by
/// one, unaligned ([`field`]), so no alignment check is needed.
///
/// # Safety
/// `record.payload` must be NULL or point to a payload that starts with its `size` (u64) and
/// is live and readable for `size` bytes while `record` is borrowed.
#[inline(always)]
unsafe fn dispatch_payload(record: &CallbackTracingRecord) -> Option<*const KernelDispatchData> {
    let p = record.payload.cast_const().cast::<KernelDispatchData>();
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL; every payload starts with its u64 size.
    let size = unsafe { p.cast::<u64>().read_unaligned() };
    if size < std::mem::size_of::<KernelDispatchData>() as u64 {
        bad_payload_of(record.kind, record.operation);
        return None;
    }
    Some(p)
}

/// Reads one field of a payload [`dispatch_payload`] returned: `field!(p, a.b)`.
macro_rules! field {
    ($p:expr, $($f:ident).+) => {
        // SAFETY: `$p` points to a live `KernelDispatchData` (its size checked): the field lies
        // inside it; any bit pattern is a valid integer.
        unsafe { (&raw const (*$p).$($f).+).read_unaligned() }
    };
}

/// KERNEL_DISPATCH: enqueue ENTER/EXIT and completion (`OBSERVE`: an enqueue's ENTER and EXIT
/// as one record).
#[inline(always)]
fn on_dispatch<const OBSERVE: bool>(
    t: Option<&Tool>,
    th: recorder::Thread,
    record: &CallbackTracingRecord,
    ts: u64,
) {
    // SAFETY: KERNEL_DISPATCH payloads are `KernelDispatchData`, live for this callback.
    let Some(p) = (unsafe { dispatch_payload(record) }) else {
        return;
    };
    // The thread id is read where it is used: EXIT and COMPLETE need it only off their fast
    // paths, where it is read then (nothing is kept alive for it).
    let tid = || record.thread_id as u32;
    let d = field!(p, dispatch_info.dispatch_id);
    match (record.operation, record.phase) {
        (kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER) if OBSERVE => {
            let tid = tid();
            let Some(t) = t else { return };
            let kernel = || field!(p, dispatch_info.kernel_id);
            let place = || {
                (
                    field!(p, dispatch_info.agent_id.handle),
                    field!(p, dispatch_info.queue_id.handle),
                )
            };
            if !t.hold_enqueue_enter(th, ts, tid, kernel, place, || d) {
                enqueue_enter_observe_plain(t, th, p, d, tid, ts);
            }
        }
        (kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER) => {
            if let Some(t) = t {
                enqueue_enter(t, th, p, d, tid(), ts);
            }
        }
        (kernel_dispatch_op::ENQUEUE, _) if OBSERVE => {
            Tool::on_enqueue_exit_observe(th, d, record.correlation_id.internal, ts, tid)
        }
        (kernel_dispatch_op::ENQUEUE, _) => {
            Tool::on_enqueue_exit(th, d, tid(), record.correlation_id.internal, ts)
        }
        (kernel_dispatch_op::COMPLETE, _) => {
            let (start, end) = (field!(p, start_timestamp), field!(p, end_timestamp));
            Tool::on_complete(th, d, start, end, tid, ts)
        }
        _ => {}
    }
}

/// ENQUEUE ENTER, out of line: it needs more registers than the other operations, and inline
/// it would make every dispatch callback save them.
#[inline(never)]
fn enqueue_enter(
    t: &Tool,
    th: recorder::Thread,
    p: *const KernelDispatchData,
    d: u64,
    tid: u32,
    ts: u64,
) {
    let kernel = field!(p, dispatch_info.kernel_id);
    let place = (
        field!(p, dispatch_info.agent_id.handle),
        field!(p, dispatch_info.queue_id.handle),
    );
    t.on_enqueue_enter(th, d, kernel, place, tid, ts);
}

/// Observe mode's ENQUEUE ENTER that is not kept pending: written as a record of its own, after
/// an ENTER still pending. Out of line and `extern "C"` with its own panic boundary: the
/// callback reaches it with no landing pad, as a tail call.
#[cold]
#[inline(never)]
extern "C" fn enqueue_enter_observe_plain(
    t: &Tool,
    th: recorder::Thread,
    p: *const KernelDispatchData,
    d: u64,
    tid: u32,
    ts: u64,
) {
    panic_hook::catch(|| {
        th.write_pending(ts);
        enqueue_enter(t, th, p, d, tid, ts);
    });
}

/// KERNEL_REPLAY CONFIG and PASS, ENTER and EXIT.
#[inline(never)]
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
