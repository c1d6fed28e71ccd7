//! The dispatch counting service and counter queries at the C ABI, under the newest SDK names
//! and the older `profile_config` ones. Thin wrappers over `krphase_emu::counting`; each
//! catches panics and maps them to an error.

use krphase_emu::counting::{catalogue, configs};
use krphase_emu::sdk::{CountingService, sdk};
use krphase_ffi::{
    AgentId, AvailableCountersFn, ContextId, CounterConfigId, CounterId, CounterInfoV0,
    CounterInfoVersion, DispatchCountingRecordFn, DispatchCountingServiceFn, Status,
};
use std::ffi::c_void;

use crate::boundary::{OK, code, guard};

/// Referenced from `main` so the linker keeps this module's symbols.
pub fn keep() {
    std::hint::black_box(
        rocprofiler_create_counter_config
            as extern "C" fn(AgentId, *mut CounterId, usize, *mut CounterConfigId) -> u32,
    );
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_configure_callback_dispatch_counting_service(
    context_id: ContextId,
    dispatch_callback: DispatchCountingServiceFn,
    dispatch_callback_args: *mut c_void,
    record_callback: DispatchCountingRecordFn,
    record_callback_args: *mut c_void,
) -> u32 {
    let (dd, rd) = (
        dispatch_callback_args as usize,
        record_callback_args as usize,
    );
    guard(move || {
        let (Some(dispatch), Some(record)) = (dispatch_callback, record_callback) else {
            return Status::INVALID_ARGUMENT.0;
        };
        code(sdk().configure_dispatch_counting(
            context_id,
            CountingService {
                dispatch,
                dispatch_data: dd,
                record,
                record_data: rd,
            },
        ))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_iterate_agent_supported_counters(
    agent_id: AgentId,
    cb: AvailableCountersFn,
    user_data: *mut c_void,
) -> u32 {
    let ud = user_data as usize;
    guard(move || {
        let Some(cb) = cb else {
            return Status::INVALID_ARGUMENT.0;
        };
        if !catalogue::is_gpu_agent(agent_id.handle)
            && agent_id.handle != krphase_emu::agents::CPU_AGENT
        {
            return Status::AGENT_NOT_FOUND.0;
        }
        let mut ids: Vec<CounterId> = catalogue::agent_counters(agent_id.handle)
            .into_iter()
            .map(|handle| CounterId { handle })
            .collect();
        if ids.is_empty() {
            return Status::ERROR.0; // the header: no counters found for the agent
        }
        // SAFETY: the tool's callback with the header's signature; `ids` outlives the call.
        unsafe { cb(agent_id, ids.as_mut_ptr(), ids.len(), ud as *mut c_void) };
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_query_counter_info(
    counter_id: CounterId,
    version: CounterInfoVersion,
    info: *mut c_void,
) -> u32 {
    let info = info as usize;
    guard(move || {
        if info == 0 {
            return Status::INVALID_ARGUMENT.0;
        }
        if version != CounterInfoVersion::V0 {
            return Status::INCOMPATIBLE_ABI.0;
        }
        let Some((_, index)) = catalogue::decode(counter_id.handle) else {
            return Status::COUNTER_NOT_FOUND.0;
        };
        let s = catalogue::c_strings(index);
        let v0 = CounterInfoV0 {
            id: counter_id,
            name: s.name.as_ptr(),
            description: s.description.as_ptr(),
            block: s.block.as_ptr(),
            expression: s.expression.as_ptr(),
            flags: 0,
        };
        // SAFETY: for version 0 the caller passes a writable `rocprofiler_counter_info_v0_t`.
        unsafe { (info as *mut CounterInfoV0).write_unaligned(v0) };
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_query_record_counter_id(id: u64, counter_id: *mut CounterId) -> u32 {
    let out = counter_id as usize;
    guard(move || {
        if out == 0 {
            return Status::INVALID_ARGUMENT.0;
        }
        let Some(handle) = catalogue::counter_of_instance(id) else {
            return Status::COUNTER_NOT_FOUND.0;
        };
        // SAFETY: a non-NULL out-pointer to a counter id, the caller's.
        unsafe { (out as *mut CounterId).write(CounterId { handle }) };
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_create_counter_config(
    agent_id: AgentId,
    counters_list: *mut CounterId,
    counters_count: usize,
    config_id: *mut CounterConfigId,
) -> u32 {
    let (list, out) = (counters_list as usize, config_id as usize);
    guard(move || {
        if out == 0 || (list == 0 && counters_count > 0) {
            return Status::INVALID_ARGUMENT.0;
        }
        let ids: Vec<u64> = if counters_count == 0 {
            Vec::new()
        } else {
            // SAFETY: the caller passes `counters_count` readable counter ids.
            unsafe { std::slice::from_raw_parts(list as *const CounterId, counters_count) }
                .iter()
                .map(|c| c.handle)
                .collect()
        };
        // SAFETY: non-NULL in/out pointer to a config id (a non-zero one names the base).
        let base = unsafe { (out as *const CounterConfigId).read() }.handle;
        match configs::create(agent_id.handle, &ids, base) {
            Ok(handle) => {
                // SAFETY: as above.
                unsafe { (out as *mut CounterConfigId).write(CounterConfigId { handle }) };
                OK
            }
            Err(s) => s.0,
        }
    })
}

/// The older name of `rocprofiler_create_counter_config`.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_create_profile_config(
    agent_id: AgentId,
    counters_list: *mut CounterId,
    counters_count: usize,
    config_id: *mut CounterConfigId,
) -> u32 {
    rocprofiler_create_counter_config(agent_id, counters_list, counters_count, config_id)
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_destroy_counter_config(config_id: CounterConfigId) -> u32 {
    guard(move || code(configs::destroy(config_id.handle)))
}

/// The older name of `rocprofiler_destroy_counter_config`.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_destroy_profile_config(config_id: CounterConfigId) -> u32 {
    rocprofiler_destroy_counter_config(config_id)
}
