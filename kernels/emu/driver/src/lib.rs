//! `libkrphase_emu_driver.so`: the counter tool of `krphase-emu rocprofv3`, a rocprofiler-sdk
//! client of its own, loaded as rocprofv3 loads `librocprofiler-sdk-tool.so` (appended to
//! `ROCP_TOOL_LIBRARIES` and `LD_PRELOAD`ed, so the SDK still finds it when its drop-last rule
//! drops that entry). It plays rocprofv3's tool under `--replay-mode kernel`:
//!
//! - in `initialize` it claims KERNEL_REPLAY (kind and operations found by name) and aborts the
//!   process when its claim is refused (rocprofv3's `ROCPROFILER_CALL` is fatal);
//! - at CONFIG ENTER it asks for `KRPHASE_EMU_DRIVER_PASSES` passes for every kernel its include
//!   regex matches (names from the SDK's kernel-symbol callbacks);
//! - it collects one counter group per pass through the callback dispatch counting service (the
//!   form rocprofv3's tool uses), the pass taken from PASS ENTER on the dispatching thread;
//! - at finalize it writes the records it received (`KRPHASE_EMU_DRIVER_RECORDS`, JSON Lines)
//!   and prints how many; with `KRPHASE_EMU_DRIVER_ROCPD` it also writes, there, what the
//!   launcher's rocpd writer needs (`rocpd_buffer.rs`).
//!
//! It depends only on `krphase-ffi` (the C ABI), like any tool built against the SDK's headers.

mod counters;
mod rocpd_buffer;
mod settings;

use krphase_ffi::{
    CallbackPhase, CallbackTracingRecord, ClientFinalizeFn, ClientId, ContextId, CounterConfigId,
    CounterRecord, DispatchCountingServiceData, KernelDispatchInfo, KernelSymbolData,
    ReplayPayload, Sdk, Status, ToolConfigureResult, UserData, code_object_op,
};
use settings::Settings;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Mutex, OnceLock};

const NAME: &CStr = c"rocprofiler-sdk-tool";

struct Driver {
    sdk: Sdk,
    settings: Settings,
    config_op: i32,
    pass_op: i32,
    /// The SDK's timestamp at initialize: the process's start as rocpd records it.
    start: u64,
    /// The wall clock at initialize, ns since the Unix epoch: the time in the run's uuid.
    start_unix_ns: u64,
}

static DRIVER: OnceLock<Driver> = OnceLock::new();
/// Whether the include regex selects each kernel id, decided once at its registration.
static KERNELS: Mutex<Option<HashMap<u64, bool>>> = Mutex::new(None);

thread_local! {
    /// The driven window on this thread: (dispatch id, the pass running or u64::MAX).
    static WINDOW: Cell<(u64, u64)> = const { Cell::new((u64::MAX, u64::MAX)) };
}

struct SyncResult(ToolConfigureResult);
// SAFETY: the result holds only function pointers and a NULL tool_data.
unsafe impl Sync for SyncResult {}

static RESULT: SyncResult = SyncResult(ToolConfigureResult {
    size: std::mem::size_of::<ToolConfigureResult>(),
    initialize: Some(driver_initialize),
    finalize: Some(driver_finalize),
    tool_data: std::ptr::null_mut(),
});

/// Lets a launcher tell whether this library is already in the process (preloaded).
#[unsafe(no_mangle)]
pub extern "C" fn krphase_emu_driver_loaded() -> c_int {
    1
}

/// The tool entry point.
///
/// # Safety
/// `client_id` is NULL or the SDK's valid client id.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocprofiler_configure(
    _version: u32,
    _runtime_version: *const c_char,
    _priority: u32,
    client_id: *mut ClientId,
) -> *mut ToolConfigureResult {
    if !client_id.is_null() {
        // SAFETY: the SDK passes a valid client id; the tool may write `name` (a static).
        unsafe { (*client_id).name = NAME.as_ptr() };
    }
    &RESULT.0 as *const ToolConfigureResult as *mut ToolConfigureResult
}

fn fatal(what: &str, status: Status) -> ! {
    eprintln!(
        "[rocprofiler-sdk-tool] {what} failed with error code {}: {status}",
        status.0
    );
    std::process::abort();
}

fn fatal_msg(msg: &str) -> ! {
    eprintln!("[rocprofiler-sdk-tool] {msg}");
    std::process::abort();
}

unsafe extern "C" fn driver_initialize(_fini: ClientFinalizeFn, _data: *mut c_void) -> c_int {
    let r = std::panic::catch_unwind(|| {
        let settings = Settings::from_env().unwrap_or_else(|e| fatal_msg(&e));
        let sdk = Sdk::load().unwrap_or_else(|e| fatal_msg(&format!("rocprofiler-sdk: {e}")));
        let kind = match sdk.find_kind("KERNEL_REPLAY") {
            Ok(Some(k)) => k,
            Ok(None) => fatal_msg("the SDK has no KERNEL_REPLAY tracing kind"),
            Err(s) => fatal("rocprofiler_iterate_callback_tracing_kinds", s),
        };
        let op = |name: &str| match sdk.find_operation(kind, name) {
            Ok(Some(o)) => o,
            Ok(None) => fatal_msg(&format!("KERNEL_REPLAY has no {name} operation")),
            Err(s) => fatal("rocprofiler_iterate_callback_tracing_kind_operations", s),
        };
        let (config_op, pass_op) = (op("CONFIG"), op("PASS"));
        let ctx = sdk
            .create_context()
            .unwrap_or_else(|s| fatal("rocprofiler_create_context", s));
        if let Err(e) =
            sdk.configure_callback_tracing(ctx, kind, &[], Some(replay_cb), std::ptr::null_mut())
        {
            fatal(
                "rocprofiler_configure_callback_tracing_service(KERNEL_REPLAY)",
                e,
            );
        }
        // Kernel names serve the include regex, and the rocpd writer's kernel symbols.
        if (settings.filter.is_some() || settings.rocpd.is_some())
            && let Ok(Some(co)) = sdk.find_kind("CODE_OBJECT")
        {
            let _ = sdk.configure_callback_tracing(
                ctx,
                co,
                &[],
                Some(code_object_cb),
                std::ptr::null_mut(),
            );
        }
        let counting = (!settings.groups.is_empty()).then(|| counting_context(&sdk));
        let start = sdk.timestamp().unwrap_or(0);
        let start_unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let _ = DRIVER.set(Driver {
            sdk,
            settings,
            config_op,
            pass_op,
            start,
            start_unix_ns,
        });
        let d = DRIVER.get().expect("just set");
        for c in [Some(ctx), counting].into_iter().flatten() {
            if let Err(e) = d.sdk.start_context(c) {
                fatal("rocprofiler_start_context", e);
            }
        }
    });
    if r.is_err() {
        std::process::abort();
    }
    0
}

/// The counting service's own context (rocprofv3 keeps counter collection in one).
fn counting_context(sdk: &Sdk) -> ContextId {
    let ctx = sdk
        .create_context()
        .unwrap_or_else(|s| fatal("rocprofiler_create_context", s));
    match sdk.configure_callback_dispatch_counting(
        ctx,
        Some(counting_dispatch),
        std::ptr::null_mut(),
        Some(counting_record),
        std::ptr::null_mut(),
    ) {
        Some(Ok(())) => ctx,
        Some(Err(s)) => fatal(
            "rocprofiler_configure_callback_dispatch_counting_service",
            s,
        ),
        None => fatal_msg("rocprofiler_configure_callback_dispatch_counting_service is missing"),
    }
}

unsafe extern "C" fn driver_finalize(_data: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        let Some(d) = DRIVER.get() else { return };
        let (n, text) = counters::json_lines();
        if let Some(path) = &d.settings.records
            && let Err(e) = std::fs::write(path, text)
        {
            eprintln!("[rocprofiler-sdk-tool] cannot write {path}: {e}");
        }
        if !d.settings.groups.is_empty() {
            eprintln!("[rocprofiler-sdk-tool] {n} counter records");
        }
        if let Some(path) = &d.settings.rocpd {
            let doc = rocpd_buffer::document(&d.sdk, d.start, d.start_unix_ns);
            if let Err(e) = std::fs::write(path, doc.to_string()) {
                eprintln!("[rocprofiler-sdk-tool] cannot write {path}: {e}");
            }
        }
    });
}

unsafe extern "C" fn pass_count(_info: KernelDispatchInfo, _ud: UserData) -> u64 {
    DRIVER.get().map_or(1, |d| d.settings.passes)
}

fn kernel_matches(d: &Driver, kernel_id: u64) -> bool {
    if d.settings.filter.is_none() {
        return true;
    }
    let selected = KERNELS.lock().unwrap_or_else(|p| p.into_inner());
    selected
        .as_ref()
        .and_then(|m| m.get(&kernel_id))
        .is_some_and(|s| *s)
}

unsafe extern "C" fn replay_cb(
    record: CallbackTracingRecord,
    _ud: *mut UserData,
    _data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(d) = DRIVER.get() else { return };
        // SAFETY: the SDK hands a live replay payload for the duration of the callback.
        let Some(mut p) = (unsafe { ReplayPayload::from_record(&record) }) else {
            return;
        };
        let info = p.dispatch_info();
        let enter = record.phase == CallbackPhase::ENTER;
        if record.operation == d.config_op && enter {
            if kernel_matches(d, info.kernel_id) {
                p.set_pass_count(d.settings.layout, Some(pass_count));
                WINDOW.with(|w| w.set((info.dispatch_id, u64::MAX)));
            }
        } else if record.operation == d.config_op {
            WINDOW.with(|w| w.set((u64::MAX, u64::MAX)));
        } else if record.operation == d.pass_op {
            WINDOW.with(|w| {
                let (win, _) = w.get();
                if win == info.dispatch_id {
                    let pass = if enter {
                        p.current_pass(d.settings.layout).unwrap_or(0)
                    } else {
                        u64::MAX
                    };
                    w.set((win, pass));
                }
            });
        }
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
            || record.payload.is_null()
        {
            return;
        }
        // SAFETY: kernel-symbol payloads are `KernelSymbolData`, live for this callback.
        let k = unsafe { &*(record.payload as *const KernelSymbolData) };
        let Some(name) = rocpd_buffer::symbol_name(k) else {
            return;
        };
        let Some(d) = DRIVER.get() else { return };
        // Formatted once per kernel symbol, as rocprofv3's tool formats it at registration.
        let display = krphase_names::format(&name, d.settings.form);
        rocpd_buffer::keep_symbol(k, &name, &display);
        let selected = d.settings.filter.as_ref().is_none_or(|f| f.selects(&name));
        let mut kernels = KERNELS.lock().unwrap_or_else(|p| p.into_inner());
        kernels
            .get_or_insert_with(HashMap::new)
            .insert(k.kernel_id, selected);
    });
}

/// Before a dispatch (under replay, before each pass's): the running pass's group's config.
unsafe extern "C" fn counting_dispatch(
    data: DispatchCountingServiceData,
    config: *mut CounterConfigId,
    user_data: *mut UserData,
    _callback_data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(d) = DRIVER.get() else { return };
        let (win, pass) = WINDOW.with(Cell::get);
        let info = data.dispatch_info;
        if win != info.dispatch_id || pass == u64::MAX || config.is_null() {
            return;
        }
        let groups = &d.settings.groups;
        let group = (pass % groups.len() as u64) as usize;
        let cfg = counters::config_for(&d.sdk, info.agent_id.handle, groups, group)
            .unwrap_or_else(|e| fatal_msg(&e));
        // SAFETY: the SDK passes writable out-pointers live for this callback.
        unsafe {
            *config = cfg;
            if !user_data.is_null() {
                (*user_data).value = pass + 1;
            }
        }
    });
}

/// After a counted dispatch or pass: keep its values.
unsafe extern "C" fn counting_record(
    data: DispatchCountingServiceData,
    records: *mut CounterRecord,
    count: usize,
    user_data: UserData,
    _callback_data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        let Some(d) = DRIVER.get() else { return };
        // SAFETY: every bit pattern of the union is a valid u64; ours holds pass + 1.
        let pass = unsafe { user_data.value }.saturating_sub(1);
        let recs: &[CounterRecord] = if records.is_null() {
            &[]
        } else {
            // SAFETY: the SDK hands `count` readable records for the duration of the callback.
            unsafe { std::slice::from_raw_parts(records, count) }
        };
        counters::keep(&d.sdk, &data, pass, recs);
    });
}
