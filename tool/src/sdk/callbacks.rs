//! The C boundary's entry points besides tracing: `rocprofiler_configure` (the only exported
//! symbol), the SDK's initialize and finalize, and the dispatch counting service's callbacks.
//! Every function catches panics ([`guard`]). The tracing callbacks, one per kind, are in
//! `tracing.rs`.

use super::boundary::guard;
use super::{configure, finalize, process_hooks};
use crate::events::tool;
use crate::{panic_hook, recorder};
use krphase_ffi::{
    ClientFinalizeFn, ClientId, CounterConfigId, CounterRecord, DispatchCountingServiceData,
    ToolConfigureResult, UserData,
};
use std::ffi::{CStr, c_char, c_int, c_void};

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
        if configure::configure(counting).is_err() {
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
        t.claim_replay();
        let Some(sdk) = t.sdk.as_ref() else { return -1 };
        t.start_counting();
        t.note_pass_plan();
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
