//! krphase-probe: a small rocprofiler-sdk tool for the emulator's conformance suite.
//!
//! Loaded through `ROCP_TOOL_LIBRARIES`, it claims KERNEL_REPLAY (kind found by name) and plays
//! one scenario chosen by `PROBE_SCENARIO`, recording everything it observes; at finalize it
//! writes a JSON object to `PROBE_OUT`. Settings:
//! - `PROBE_SCENARIO`: basic | opt-out | early-exit | user-data-ptr | user-data-value |
//!   count-null | count-1 | zero-no-continue | indefinite | toggles | claim-twice |
//!   late-configure | reentrant (launches a dispatch from PASS ENTER of pass 0 through the
//!   emulator's `krphase_emu_reentrant_launch` hook) | observe (no claim; tracing only)
//! - `PROBE_PASSES` (default 4), `PROBE_KERNEL` (only this kernel replays; others opt out),
//!   `PROBE_STOP_AFTER` (indefinite: passes to run, default 3), `PROBE_LAYOUT` a|b (default b),
//!   `PROBE_CLAIM_IN` configure|initialize (default initialize).

mod observe;

use krphase_ffi::{
    CallbackPhase, CallbackTracingFn, CallbackTracingKind, CallbackTracingRecord, ClientFinalizeFn,
    ClientId, ContextId, KernelDispatchData, KernelDispatchInfo, KernelSymbolData, PayloadLayout,
    ReplayContextFn, ReplayPayload, Sdk, ToolConfigureResult, UserData, code_object_op,
    kernel_dispatch_op,
};
use observe::obs;
use serde_json::json;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

struct Settings {
    scenario: String,
    passes: u64,
    kernel: Option<String>,
    stop_after: u64,
    layout: PayloadLayout,
    claim_in_configure: bool,
}

fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Settings {
            scenario: env("PROBE_SCENARIO").unwrap_or_else(|| "basic".into()),
            passes: env("PROBE_PASSES")
                .and_then(|v| v.parse().ok())
                .unwrap_or(4),
            kernel: env("PROBE_KERNEL"),
            stop_after: env("PROBE_STOP_AFTER")
                .and_then(|v| v.parse().ok())
                .unwrap_or(3),
            layout: env("PROBE_LAYOUT")
                .and_then(|v| PayloadLayout::parse(&v))
                .unwrap_or(PayloadLayout::B),
            claim_in_configure: env("PROBE_CLAIM_IN").as_deref() == Some("configure"),
        }
    })
}

struct Tool {
    sdk: Sdk,
    replay_kind: Option<CallbackTracingKind>,
    config_op: i32,
    pass_op: i32,
}

static TOOL: OnceLock<Tool> = OnceLock::new();
static CTX: OnceLock<ContextId> = OnceLock::new();

fn tool() -> &'static Tool {
    TOOL.get().expect("probe configured")
}

struct SyncResult(ToolConfigureResult);
// SAFETY: only function pointers and a NULL tool_data.
unsafe impl Sync for SyncResult {}

static RESULT: SyncResult = SyncResult(ToolConfigureResult {
    size: std::mem::size_of::<ToolConfigureResult>(),
    initialize: Some(probe_initialize),
    finalize: Some(probe_finalize),
    tool_data: std::ptr::null_mut(),
});

/// The tool's entry point.
///
/// # Safety
/// Called by the SDK with a valid client id.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocprofiler_configure(
    version: u32,
    runtime_version: *const c_char,
    priority: u32,
    client_id: *mut ClientId,
) -> *mut ToolConfigureResult {
    std::panic::catch_unwind(|| {
        let rv = if runtime_version.is_null() {
            String::new()
        } else {
            // SAFETY: the SDK passes a NUL-terminated version string.
            unsafe { CStr::from_ptr(runtime_version) }
                .to_string_lossy()
                .into_owned()
        };
        if !client_id.is_null() {
            // SAFETY: the SDK's client id; the tool may set `name`.
            unsafe { (*client_id).name = c"krphase-probe".as_ptr() };
        }
        obs().set(
            "configure",
            json!({"version": version, "runtime_version": rv, "priority": priority}),
        );
        let sdk = match Sdk::load() {
            Ok(s) => s,
            Err(e) => {
                obs().set("load_error", json!(e.to_string()));
                return std::ptr::null_mut();
            }
        };
        let replay_kind = sdk.find_kind("KERNEL_REPLAY").ok().flatten();
        let (mut config_op, mut pass_op) = (1, 2);
        if let Some(k) = replay_kind {
            config_op = sdk.find_operation(k, "CONFIG").ok().flatten().unwrap_or(1);
            pass_op = sdk.find_operation(k, "PASS").ok().flatten().unwrap_or(2);
            let ops: Vec<_> = sdk
                .operations(k)
                .unwrap_or_default()
                .into_iter()
                .map(|(o, n)| json!([o, n]))
                .collect();
            obs().set("replay_ops", json!(ops));
        }
        obs().set("replay_kind", json!(replay_kind.map(|k| k.0)));
        let _ = TOOL.set(Tool {
            sdk,
            replay_kind,
            config_op,
            pass_op,
        });
        if settings().claim_in_configure {
            setup();
        }
        &RESULT.0 as *const ToolConfigureResult as *mut ToolConfigureResult
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Creates the context, subscribes, claims replay per the scenario, starts the context.
fn setup() {
    let t = tool();
    let s = settings();
    let ctx = match t.sdk.create_context() {
        Ok(c) => c,
        Err(e) => {
            obs().set("create_context", json!(e.0));
            return;
        }
    };
    let _ = CTX.set(ctx);
    let st = |r: Result<(), krphase_ffi::Status>| r.err().map_or(0, |e| e.0);
    let tracing: [(&str, CallbackTracingKind, CallbackTracingFn); 3] = [
        (
            "configure_dispatch",
            CallbackTracingKind::KERNEL_DISPATCH,
            Some(dispatch_cb),
        ),
        (
            "configure_code_object",
            CallbackTracingKind::CODE_OBJECT,
            Some(code_object_cb),
        ),
        (
            "configure_memory",
            CallbackTracingKind::MEMORY_ALLOCATION,
            Some(memory_cb),
        ),
    ];
    for (key, kind, cb) in tracing {
        let r = t
            .sdk
            .configure_callback_tracing(ctx, kind, &[], cb, std::ptr::null_mut());
        obs().set(key, json!(st(r)));
    }
    if s.scenario != "observe"
        && let Some(k) = t.replay_kind
    {
        let r =
            t.sdk
                .configure_callback_tracing(ctx, k, &[], Some(replay_cb), std::ptr::null_mut());
        obs().set("claim", json!(st(r)));
        if s.scenario == "claim-twice" {
            let again = t.sdk.configure_callback_tracing(
                ctx,
                k,
                &[],
                Some(replay_cb),
                std::ptr::null_mut(),
            );
            obs().set("claim_same_context", json!(st(again)));
            match t.sdk.create_context() {
                Ok(c2) => {
                    let other = t.sdk.configure_callback_tracing(
                        c2,
                        k,
                        &[],
                        Some(replay_cb),
                        std::ptr::null_mut(),
                    );
                    obs().set("claim_other_context", json!(st(other)));
                    let disp = t.sdk.configure_callback_tracing(
                        c2,
                        CallbackTracingKind::KERNEL_DISPATCH,
                        &[],
                        Some(dispatch_cb),
                        std::ptr::null_mut(),
                    );
                    obs().set("other_context_dispatch", json!(st(disp)));
                }
                Err(e) => obs().set(
                    "claim_other_context",
                    json!(format!("create failed {}", e.0)),
                ),
            }
        }
    }
    obs().set("start_context", json!(st(t.sdk.start_context(ctx))));
}

unsafe extern "C" fn probe_initialize(_fini: ClientFinalizeFn, _data: *mut c_void) -> c_int {
    let _ = std::panic::catch_unwind(|| {
        if let Some(Ok(state)) = tool().sdk.is_initialized() {
            obs().set("init_state_in_initialize", json!(format!("{state:?}")));
        }
        if !settings().claim_in_configure {
            setup();
        }
    });
    0
}

unsafe extern "C" fn probe_finalize(_data: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        obs().push("finalize", json!({"pid": std::process::id()}));
        obs().write_out();
    });
}

fn target(info: &KernelDispatchInfo) -> bool {
    settings()
        .kernel
        .as_ref()
        .is_none_or(|k| obs().kernel_name(info.kernel_id).as_deref() == Some(k.as_str()))
}

unsafe extern "C" fn pass_count(info: KernelDispatchInfo, ud: UserData) -> u64 {
    std::panic::catch_unwind(|| {
        let s = settings();
        let n = match s.scenario.as_str() {
            "count-1" => 1,
            "zero-no-continue" | "indefinite" => 0,
            "user-data-ptr" => {
                // SAFETY: CONFIG ENTER stored a pointer to a leaked u64 max-pass value.
                unsafe { *(ud.as_u64() as *const u64) }
            }
            _ => s.passes,
        };
        obs().push(
            "pass_count",
            json!({"dispatch_id": info.dispatch_id, "user_data": ud.as_u64(), "returned": n}),
        );
        n
    })
    .unwrap_or(1)
}

/// State behind `user_data.ptr` in the user-data-ptr scenario: [max passes, stop flag].
fn ud_state(ud: UserData) -> &'static mut [u64; 2] {
    // SAFETY: CONFIG ENTER stored a leaked Box<[u64; 2]>; callbacks of one window run on one
    // thread, one at a time.
    unsafe { &mut *(ud.as_u64() as *mut [u64; 2]) }
}

unsafe extern "C" fn replay_continue(
    info: KernelDispatchInfo,
    current: u64,
    total: u64,
    ud: UserData,
) -> c_int {
    std::panic::catch_unwind(|| {
        let s = settings();
        let more = match s.scenario.as_str() {
            "early-exit" => current < 1,
            "indefinite" => current + 1 < s.stop_after,
            "user-data-ptr" => ud_state(ud)[1] == 0,
            _ => true,
        };
        obs().push("continue", json!({"dispatch_id": info.dispatch_id, "current_pass": current, "total_passes": total, "user_data": ud.as_u64(), "returned": more}));
        c_int::from(more)
    })
    .unwrap_or(0)
}

fn toggle_status(p: &ReplayPayload, stop: bool) -> Option<u32> {
    let l = settings().layout;
    let f = if stop {
        p.stop_context(l)
    } else {
        p.start_context(l)
    }?;
    let ctx = *CTX.get()?;
    // SAFETY: the SDK's toggle with the header's signature.
    Some(unsafe { f(ctx) })
}

/// The start toggle saved at PASS ENTER, called later to check it is refused outside it.
static SAVED_START: std::sync::Mutex<ReplayContextFn> = std::sync::Mutex::new(None);

fn call_saved(when: &str) {
    let saved = *SAVED_START.lock().unwrap_or_else(|e| e.into_inner());
    if let (Some(f), Some(ctx)) = (saved, CTX.get()) {
        // SAFETY: the SDK's toggle, given at PASS ENTER, with the header's signature.
        let st = unsafe { f(*ctx) };
        obs().push(
            "toggle",
            json!({"where": when, "fn": "start", "status": st}),
        );
    }
}

unsafe extern "C" fn replay_cb(
    record: CallbackTracingRecord,
    user_data: *mut UserData,
    _data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let t = tool();
        let s = settings();
        // SAFETY: the SDK's replay payload, live for this callback.
        let Some(mut p) = (unsafe { ReplayPayload::from_record(&record) }) else {
            return;
        };
        // SAFETY: the SDK passes non-NULL per-event storage.
        let ud = unsafe { &mut *user_data };
        let info = p.dispatch_info();
        let l = s.layout;
        let phase = if record.phase == CallbackPhase::ENTER {
            "enter"
        } else {
            "exit"
        };
        let op = if record.operation == t.config_op {
            "config"
        } else if record.operation == t.pass_op {
            "pass"
        } else {
            "other"
        };
        obs().push("replay", json!({
            "op": op, "phase": phase, "dispatch_id": info.dispatch_id, "kernel_id": info.kernel_id,
            "correlation_id": record.correlation_id.internal, "thread_id": record.thread_id,
            "current_pass": p.current_pass(l), "total_passes": p.total_passes(l),
            "user_data": ud.as_u64(), "size": p.size(),
            "pass_count_slot": p.pass_count_raw(l), "continue_slot": p.continue_raw(l),
            "has_toggles": p.start_context(l).is_some(),
        }));
        match (op, phase) {
            ("config", "enter") => {
                if !target(&info) {
                    return; // opt out: leave replay_pass_count NULL
                }
                if s.scenario == "count-null" {
                    return; // claim the window but leave replay_pass_count NULL
                }
                p.set_pass_count(l, Some(pass_count));
                match s.scenario.as_str() {
                    "user-data-ptr" => {
                        let state: &'static mut [u64; 2] = Box::leak(Box::new([s.passes, 0]));
                        ud.ptr = (state as *mut [u64; 2]).cast();
                    }
                    "user-data-value" => ud.value = 7,
                    "early-exit" | "indefinite" => {}
                    _ => return, // fixed pass count, no continue callback
                }
                p.set_continue(l, Some(replay_continue));
            }
            ("pass", "enter") => {
                if s.scenario == "reentrant"
                    && p.current_pass(l) == Some(0)
                    && obs().count("reentrant") == 0
                {
                    obs().push(
                        "reentrant",
                        json!({"dispatch_id": info.dispatch_id, "status": reentrant_launch()}),
                    );
                }
                if s.scenario == "user-data-value" {
                    ud.value = 1000 + p.current_pass(l).unwrap_or(0);
                }
                if s.scenario == "toggles" {
                    let pass = p.current_pass(l).unwrap_or(0);
                    // Pass 1 stops our context locally, pass 2 starts it again.
                    if pass == 1 {
                        obs().push("toggle", json!({"where": "pass_enter", "fn": "stop", "status": toggle_status(&p, true)}));
                    } else if pass == 2 {
                        obs().push("toggle", json!({"where": "pass_enter", "fn": "start", "status": toggle_status(&p, false)}));
                    }
                    *SAVED_START.lock().unwrap_or_else(|e| e.into_inner()) = p.start_context(l);
                }
            }
            ("pass", "exit") => {
                if s.scenario == "user-data-ptr" && p.current_pass(l).unwrap_or(0) >= 1 {
                    ud_state(*ud)[1] = 1;
                }
                if s.scenario == "toggles" {
                    call_saved("pass_exit");
                }
            }
            ("config", "exit") if s.scenario == "toggles" => call_saved("config_exit"),
            _ => {}
        }
    });
}

/// Calls the emulator's test hook that submits GPU work from the current thread.
fn reentrant_launch() -> Option<u32> {
    let this = libloading::os::unix::Library::this();
    // SAFETY: the emulator exports this hook as `extern "C" fn() -> u32`.
    let f = unsafe { this.get::<unsafe extern "C" fn() -> u32>(b"krphase_emu_reentrant_launch\0") }
        .ok()?;
    // SAFETY: calling the hook with its signature.
    Some(unsafe { f() })
}

unsafe extern "C" fn dispatch_cb(
    record: CallbackTracingRecord,
    _ud: *mut UserData,
    _data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: KERNEL_DISPATCH payloads are KernelDispatchData, live for this callback.
        let d = unsafe { &*(record.payload as *const KernelDispatchData) };
        let op = match record.operation {
            kernel_dispatch_op::ENQUEUE => "enqueue",
            kernel_dispatch_op::COMPLETE => "complete",
            _ => "other",
        };
        if settings().scenario == "late-configure" && op == "enqueue" && obs().count("late") == 0 {
            let t = tool();
            let created = t.sdk.create_context().err().map_or(0, |e| e.0);
            let ctx = *CTX.get().expect("context");
            let conf = t
                .sdk
                .configure_callback_tracing(
                    ctx,
                    CallbackTracingKind::MEMORY_ALLOCATION,
                    &[],
                    Some(memory_cb),
                    std::ptr::null_mut(),
                )
                .err()
                .map_or(0, |e| e.0);
            obs().push(
                "late",
                json!({"create_context": created, "configure": conf}),
            );
        }
        obs().push("dispatch", json!({
            "op": op, "phase": record.phase.0, "dispatch_id": d.dispatch_info.dispatch_id,
            "kernel_id": d.dispatch_info.kernel_id, "correlation_id": record.correlation_id.internal,
            "thread_id": record.thread_id, "start": d.start_timestamp, "end": d.end_timestamp,
        }));
    });
}

unsafe extern "C" fn code_object_cb(
    record: CallbackTracingRecord,
    _ud: *mut UserData,
    _data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        if record.operation != code_object_op::DEVICE_KERNEL_SYMBOL_REGISTER
            || record.phase != CallbackPhase::LOAD
        {
            return;
        }
        // SAFETY: kernel-symbol payloads are KernelSymbolData with a NUL-terminated name.
        let d = unsafe { &*(record.payload as *const KernelSymbolData) };
        // SAFETY: as above.
        let name = unsafe { CStr::from_ptr(d.kernel_name) }
            .to_string_lossy()
            .into_owned();
        obs().push(
            "kernel_symbols",
            json!({
                "kernel_id": d.kernel_id, "name": name, "kernel_object": d.kernel_object,
                "kernarg_segment_size": d.kernarg_segment_size,
                "kernarg_segment_alignment": d.kernarg_segment_alignment,
                "group_segment_size": d.group_segment_size,
                "private_segment_size": d.private_segment_size, "sgpr_count": d.sgpr_count,
                "arch_vgpr_count": d.arch_vgpr_count, "accum_vgpr_count": d.accum_vgpr_count,
                "kernel_code_entry_byte_offset": d.kernel_code_entry_byte_offset,
                "kernel_address": d.kernel_address,
            }),
        );
        obs().add_kernel(d.kernel_id, name);
    });
}

unsafe extern "C" fn memory_cb(
    record: CallbackTracingRecord,
    _ud: *mut UserData,
    _data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        if record.phase != CallbackPhase::EXIT {
            return;
        }
        // SAFETY: MEMORY_ALLOCATION payloads are MemoryAllocationData.
        let d = unsafe { &*(record.payload as *const krphase_ffi::MemoryAllocationData) };
        let mut info = krphase_ffi::HsaAmdPointerInfo::default();
        let flags = tool().sdk.hsa_pointer_info().map(|f| {
            // SAFETY: hsa_amd_pointer_info with a sized struct and no agent list.
            let st = unsafe {
                f(
                    d.address as *const c_void,
                    &mut info,
                    None,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            (
                st,
                info.global_flags,
                info.agent_owner.handle,
                info.size_in_bytes,
            )
        });
        obs().push(
            "memory",
            json!({"op": record.operation, "agent": d.agent_id.handle,
            "address": d.address, "size": d.allocation_size, "pointer_info": flags}),
        );
    });
}
