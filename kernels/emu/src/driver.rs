//! The internal client that plays rocprofv3's own tool under `--replay-mode kernel`: it claims
//! KERNEL_REPLAY in its `initialize`, asks for N passes for every kernel its include regex
//! matches, and aborts the process when its claim is refused (rocprofv3's `ROCPROFILER_CALL` is
//! fatal on any non-success status).

use crate::kinds::{self, replay_op};
use crate::opts::DriverSettings;
use crate::sdk::sdk;
use krphase_ffi::{
    CallbackPhase, CallbackTracingRecord, ClientFinalizeFn, ClientId, ContextId,
    KernelDispatchInfo, ReplayPayload, ToolConfigureResult, UserData,
};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

static SETTINGS: OnceLock<DriverSettings> = OnceLock::new();

pub fn set(settings: DriverSettings) {
    let _ = SETTINGS.set(settings);
}

const NAME: &CStr = c"rocprofiler-sdk-tool";

struct SyncResult(ToolConfigureResult);
// SAFETY: the result holds only function pointers and a NULL tool_data.
unsafe impl Sync for SyncResult {}

static RESULT: SyncResult = SyncResult(ToolConfigureResult {
    size: std::mem::size_of::<ToolConfigureResult>(),
    initialize: Some(driver_initialize),
    finalize: Some(driver_finalize),
    tool_data: std::ptr::null_mut(),
});

/// The driver's `rocprofiler_configure`.
///
/// # Safety
/// `client_id` is NULL or the SDK's valid client id.
pub unsafe extern "C" fn driver_configure(
    _version: u32,
    _runtime_version: *const c_char,
    _priority: u32,
    client_id: *mut ClientId,
) -> *mut ToolConfigureResult {
    if !client_id.is_null() {
        // SAFETY: the SDK passes a valid client id; the tool may write `name`.
        unsafe { (*client_id).name = NAME.as_ptr() };
    }
    &RESULT.0 as *const ToolConfigureResult as *mut ToolConfigureResult
}

fn fatal(what: &str, status: krphase_ffi::Status) -> ! {
    eprintln!(
        "[rocprofiler-sdk-tool] {what} failed with error code {}: {status}",
        status.0
    );
    std::process::abort();
}

unsafe extern "C" fn driver_initialize(_fini: ClientFinalizeFn, _data: *mut c_void) -> c_int {
    let s = sdk();
    let mut ctx = ContextId::default();
    if let Err(e) = s.create_context(&mut ctx) {
        fatal("rocprofiler_create_context", e);
    }
    if let Err(e) = s.configure_callback_tracing(
        ctx,
        kinds::table().kernel_replay,
        &[],
        Some(driver_replay_cb),
        std::ptr::null_mut(),
    ) {
        fatal(
            "rocprofiler_configure_callback_tracing_service(KERNEL_REPLAY)",
            e,
        );
    }
    if let Err(e) = s.start_context(ctx) {
        fatal("rocprofiler_start_context", e);
    }
    0
}

unsafe extern "C" fn driver_finalize(_data: *mut c_void) {}

unsafe extern "C" fn driver_pass_count(_info: KernelDispatchInfo, _ud: UserData) -> u64 {
    SETTINGS.get().map_or(1, |s| s.passes)
}

unsafe extern "C" fn driver_replay_cb(
    record: CallbackTracingRecord,
    _ud: *mut UserData,
    _data: *mut c_void,
) {
    let _ = std::panic::catch_unwind(|| {
        if record.operation != replay_op::CONFIG || record.phase != CallbackPhase::ENTER {
            return;
        }
        let Some(settings) = SETTINGS.get() else {
            return;
        };
        // The driver is built into the emulated SDK, so it reads the payload in the SDK's layout.
        let layout = crate::replay::config().layout.ffi();
        // SAFETY: the SDK hands a live replay payload for the duration of the callback.
        let Some(mut p) = (unsafe { ReplayPayload::from_record(&record) }) else {
            return;
        };
        let name = krphase_kernels::kernel_name(p.dispatch_info().kernel_id).unwrap_or("");
        if settings.filter.as_ref().is_none_or(|re| re.is_match(name)) {
            p.set_pass_count(layout, Some(driver_pass_count));
        }
    });
}
