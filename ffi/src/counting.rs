//! The dispatch counting service and counter ABI: `#[repr(C)]` declarations of the counter ids,
//! counter configs, counter info, counter records and the two callbacks of
//! `rocprofiler_configure_callback_dispatch_counting_service`.
//!
//! Written by hand from the layouts of rocprofiler-sdk's public headers (`fwd.h`, `counters.h`,
//! `counter_config.h`, `dispatch_counting_service.h`) on x86-64, not copied from them. Names
//! changed between SDK versions (`profile_config` became `counter_config`, `record_counter`
//! became `counter_record`); the layouts did not, so one declaration serves both, with the older
//! name as an alias. Layout tests live in `tests/layout.rs`.

use crate::types::{AgentId, AsyncCorrelationId, KernelDispatchInfo, UserData};
use std::ffi::{c_char, c_void};

/// `rocprofiler_counter_id_t`: one counter an agent supports.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CounterId {
    pub handle: u64,
}

/// `rocprofiler_counter_config_id_t` (older SDKs: `rocprofiler_profile_config_id_t`): a set of
/// counters bound to one agent. Handle 0 means "collect nothing for this dispatch".
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CounterConfigId {
    pub handle: u64,
}

/// The older name of [`CounterConfigId`].
pub type ProfileConfigId = CounterConfigId;

/// `rocprofiler_counter_instance_id_t`: encodes the counter and its dimension positions. The
/// SDK decodes it with `rocprofiler_query_record_counter_id`; tools must not assume an encoding.
pub type CounterInstanceId = u64;

/// `rocprofiler_counter_info_version_id_t`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CounterInfoVersion(pub u32);

impl CounterInfoVersion {
    pub const NONE: Self = Self(0);
    /// `ROCPROFILER_COUNTER_INFO_VERSION_0`: the info is a [`CounterInfoV0`].
    pub const V0: Self = Self(1);
    /// `ROCPROFILER_COUNTER_INFO_VERSION_1` (`rocprofiler_counter_info_v1_t`, not declared here).
    pub const V1: Self = Self(2);
}

/// `rocprofiler_counter_info_v0_t` (48 B). The strings are the SDK's and live as long as it.
/// `flags` holds the header's two one-bit fields: bit 0 `is_constant`, bit 1 `is_derived`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CounterInfoV0 {
    pub id: CounterId,
    pub name: *const c_char,
    pub description: *const c_char,
    pub block: *const c_char,
    pub expression: *const c_char,
    pub flags: u8,
}

impl Default for CounterInfoV0 {
    fn default() -> Self {
        CounterInfoV0 {
            id: CounterId::default(),
            name: std::ptr::null(),
            description: std::ptr::null(),
            block: std::ptr::null(),
            expression: std::ptr::null(),
            flags: 0,
        }
    }
}

/// Bits of [`CounterInfoV0::flags`].
pub mod counter_info_flag {
    pub const IS_CONSTANT: u8 = 1;
    pub const IS_DERIVED: u8 = 2;
}

/// `rocprofiler_counter_record_t` (older SDKs: `rocprofiler_record_counter_t`; 40 B): one value
/// of one counter instance.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CounterRecord {
    pub id: CounterInstanceId,
    pub counter_value: f64,
    pub dispatch_id: u64,
    pub user_data: UserData,
    pub agent_id: AgentId,
}

/// The older name of [`CounterRecord`].
pub type RecordCounter = CounterRecord;

/// `rocprofiler_dispatch_counting_service_data_t` (168 B), passed by value to both counting
/// callbacks.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct DispatchCountingServiceData {
    pub size: u64,
    pub correlation_id: AsyncCorrelationId,
    pub start_timestamp: u64,
    pub end_timestamp: u64,
    pub dispatch_info: KernelDispatchInfo,
}

/// `rocprofiler_dispatch_counting_service_cb_t`: called before a dispatch (under replay, before
/// each pass) runs; the tool writes the config to collect (or leaves handle 0) and may set
/// `user_data`, which the record callback receives.
pub type DispatchCountingServiceFn = Option<
    unsafe extern "C" fn(
        dispatch_data: DispatchCountingServiceData,
        config: *mut CounterConfigId,
        user_data: *mut UserData,
        callback_data: *mut c_void,
    ),
>;

/// `rocprofiler_dispatch_counting_record_cb_t`: called once the dispatch (or pass) completed,
/// with `record_count` records of the config's counters.
pub type DispatchCountingRecordFn = Option<
    unsafe extern "C" fn(
        dispatch_data: DispatchCountingServiceData,
        records: *mut CounterRecord,
        record_count: usize,
        user_data: UserData,
        callback_data: *mut c_void,
    ),
>;

/// `rocprofiler_available_counters_cb_t`: the callback of
/// `rocprofiler_iterate_agent_supported_counters`; the counters array is the SDK's.
pub type AvailableCountersFn = Option<
    unsafe extern "C" fn(
        agent: AgentId,
        counters: *mut CounterId,
        count: usize,
        user_data: *mut c_void,
    ) -> u32,
>;
