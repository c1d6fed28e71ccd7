//! The public API functions whose services the emulator does not model. Each is exported under
//! its real name so a tool that calls one gets the status a real SDK without that service
//! returns, instead of dying at the call with "undefined symbol". Which status: the one the
//! function's own header documentation gives for an absent service (PC sampling and the trace
//! decoder library: ERROR_NOT_AVAILABLE; SPM without its beta switch: ERROR_NOT_IMPLEMENTED; the
//! decoder's functions on a handle that cannot exist: ERROR_INVALID_ARGUMENT); otherwise
//! ERROR_NOT_IMPLEMENTED, whose SDK message is "API function is defined but not implemented".
//! Every such call writes a ground-truth line (`{"type":"unavailable",...}`).
//!
//! The functions are declared without parameters: under the x86-64 System V ABI the caller sets
//! up and removes its arguments, so a callee that ignores them may take none, and the status
//! comes back in `eax` whatever the argument list was.

use krphase_ffi::Status;
use std::ffi::c_char;
use std::panic::catch_unwind;

/// Records the call in the ground truth and returns `status`.
fn refuse(function: &'static str, status: Status) -> u32 {
    catch_unwind(|| {
        krphase_emu::truth::write(&serde_json::json!({
            "type": "unavailable", "function": function, "status": status.0,
        }));
    })
    .ok();
    status.0
}

macro_rules! refusing {
    ($status:expr => $($name:ident),+ $(,)?) => {$(
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> u32 {
            refuse(stringify!($name), $status)
        }
    )+};
}

macro_rules! no_name {
    ($($name:ident),+ $(,)?) => {$(
        /// A name lookup of a service the emulator does not model: NULL, the SDK's answer for a
        /// value it does not support.
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> *const c_char {
            refuse(stringify!($name), Status::NOT_AVAILABLE);
            std::ptr::null()
        }
    )+};
}

/// Referenced from `main` so the linker keeps this module's symbols.
pub fn keep() {
    std::hint::black_box(rocprofiler_configure_pc_sampling_service as extern "C" fn() -> u32);
}

// PC sampling: "HSA runtime does not support PC sampling".
refusing!(Status::NOT_AVAILABLE =>
    rocprofiler_configure_pc_sampling_service,
    rocprofiler_query_pc_sampling_agent_configurations,
);
no_name!(
    rocprofiler_get_pc_sampling_instruction_type_name,
    rocprofiler_get_pc_sampling_instruction_not_issued_reason_name,
    rocprofiler_get_pc_sampling_arbiter_state_field_name,
);

// The thread-trace decoder library is not present, so no decoder handle exists.
refusing!(Status::NOT_AVAILABLE => rocprofiler_thread_trace_decoder_create);
refusing!(Status::INVALID_ARGUMENT =>
    rocprofiler_thread_trace_decoder_codeobj_load,
    rocprofiler_thread_trace_decoder_codeobj_unload,
    rocprofiler_thread_trace_decoder_set_analysis,
    rocprofiler_trace_decode,
);
no_name!(rocprofiler_thread_trace_decoder_info_string);

/// `rocprofiler_thread_trace_decoder_destroy` returns nothing; no handle can exist to destroy.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_thread_trace_decoder_destroy() {
    refuse(
        "rocprofiler_thread_trace_decoder_destroy",
        Status::INVALID_ARGUMENT,
    );
}

// SPM, in both header generations: as with ROCPROFILER_SPM_BETA_ENABLED unset.
refusing!(Status::NOT_IMPLEMENTED =>
    rocprofiler_spm_query_agent_configurations,
    rocprofiler_spm_create_counter_config,
    rocprofiler_spm_destroy_counter_config,
    rocprofiler_spm_iterate_agent_supported_counters,
    rocprofiler_spm_configure_callback_dispatch_service,
    rocprofiler_spm_configure_buffer_dispatch_service,
    rocprofiler_configure_spm_device_counting_service,
    rocprofiler_iterate_spm_supported_counters,
    rocprofiler_configure_spm_agent_service,
    rocprofiler_configure_spm_dispatch_service,
    rocprofiler_spm_decode,
);

// Thread trace, buffer tracing, the buffered and device counting services, counter definitions
// and dimensions, external correlation ids, intercept tables, attach/detach, runtime
// registration info and range replay are not modelled.
refusing!(Status::NOT_IMPLEMENTED =>
    rocprofiler_configure_device_thread_trace_service,
    rocprofiler_configure_dispatch_thread_trace_service,
    rocprofiler_configure_buffer_tracing_service,
    rocprofiler_query_buffer_tracing_kind_name,
    rocprofiler_query_buffer_tracing_kind_operation_name,
    rocprofiler_iterate_buffer_tracing_kinds,
    rocprofiler_iterate_buffer_tracing_kind_operations,
    rocprofiler_iterate_buffer_tracing_record_args,
    rocprofiler_iterate_callback_tracing_kind_operation_args,
    rocprofiler_configure_buffer_dispatch_counting_service,
    rocprofiler_configure_device_counting_service,
    rocprofiler_sample_device_counting_service,
    rocprofiler_query_record_dimension_position,
    rocprofiler_create_counter,
    rocprofiler_iterate_counter_dimensions,
    rocprofiler_query_counter_instance_count,
    rocprofiler_load_counter_definition,
    rocprofiler_configure_external_correlation_id_request_service,
    rocprofiler_query_external_correlation_id_request_kind_name,
    rocprofiler_push_external_correlation_id,
    rocprofiler_pop_external_correlation_id,
    rocprofiler_query_intercept_table_name,
    rocprofiler_at_intercept_table_registration,
    rocprofiler_detach,
    rocprofiler_iterate_runtime_registration_info,
    rocprofiler_range_replay_begin,
    rocprofiler_range_replay_end,
);
