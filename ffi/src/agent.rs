//! `rocprofiler_agent_v0_t` as far as its layout is fixed by plain C types, and the agent query's
//! callback type.
//!
//! The full struct continues past `runtime_visibility` with a UUID and, in the newest headers,
//! firmware versions; their sizes differ between SDK versions. The SDK sets `size` to the size it
//! filled, and a tool compiled against a longer struct reads its tail as zero.

use crate::types::{AgentId, Dim3};
use std::ffi::{c_char, c_void};

/// `rocprofiler_agent_type_t`.
pub mod agent_type {
    pub const CPU: u32 = 1;
    pub const GPU: u32 = 2;
}

/// `ROCPROFILER_AGENT_INFO_VERSION_0`.
pub const AGENT_INFO_VERSION_0: u32 = 1;

/// The fields of `rocprofiler_agent_v0_t` up to and including `runtime_visibility` (296 B). The
/// HSA thunk unions in the middle (`HSA_ENGINE_VERSION`, `HSA_ENGINE_ID`, `HSA_CAPABILITY`) are
/// each one 32-bit word.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct AgentV0 {
    pub size: u64,
    pub id: AgentId,
    pub kind: u32,
    pub cpu_cores_count: u32,
    pub simd_count: u32,
    pub mem_banks_count: u32,
    pub caches_count: u32,
    pub io_links_count: u32,
    pub cpu_core_id_base: u32,
    pub simd_id_base: u32,
    pub max_waves_per_simd: u32,
    pub lds_size_in_kb: u32,
    pub gds_size_in_kb: u32,
    pub num_gws: u32,
    pub wave_front_size: u32,
    pub num_xcc: u32,
    pub cu_count: u32,
    pub array_count: u32,
    pub num_shader_banks: u32,
    pub simd_arrays_per_engine: u32,
    pub cu_per_simd_array: u32,
    pub simd_per_cu: u32,
    pub max_slots_scratch_cu: u32,
    pub gfx_target_version: u32,
    pub vendor_id: u16,
    pub device_id: u16,
    pub location_id: u32,
    pub domain: u32,
    pub drm_render_minor: u32,
    pub num_sdma_engines: u32,
    pub num_sdma_xgmi_engines: u32,
    pub num_sdma_queues_per_engine: u32,
    pub num_cp_queues: u32,
    pub max_engine_clk_ccompute: u32,
    pub max_engine_clk_fcompute: u32,
    pub sdma_fw_version: u32,
    pub fw_version: u32,
    pub capability: u32,
    pub cu_per_engine: u32,
    pub max_waves_per_cu: u32,
    pub family_id: u32,
    pub workgroup_max_size: u32,
    pub grid_max_size: u32,
    pub local_mem_size: u64,
    pub hive_id: u64,
    pub gpu_id: u64,
    pub workgroup_max_dim: Dim3,
    pub grid_max_dim: Dim3,
    pub mem_banks: *const c_void,
    pub caches: *const c_void,
    pub io_links: *const c_void,
    pub name: *const c_char,
    pub vendor_name: *const c_char,
    pub product_name: *const c_char,
    pub model_name: *const c_char,
    pub node_id: u32,
    pub logical_node_id: i32,
    pub logical_node_type_id: i32,
    pub runtime_visibility: u32,
}

const _: () = assert!(std::mem::size_of::<AgentV0>() == 296);
const _: () = assert!(std::mem::offset_of!(AgentV0, name) == 248);
const _: () = assert!(std::mem::offset_of!(AgentV0, local_mem_size) == 176);

/// `rocprofiler_query_available_agents_cb_t`: version, array of agent pointers, count, user data.
pub type AvailableAgentsFn =
    Option<unsafe extern "C" fn(u32, *mut *const c_void, usize, *mut c_void) -> u32>;

/// What a tool keeps of an agent record once the query's callback returned: its handle, type,
/// KFD node ids and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSummary {
    pub id: AgentId,
    /// [`agent_type`] value.
    pub kind: u32,
    pub node_id: u32,
    pub logical_node_id: i32,
    pub logical_node_type_id: i32,
    pub name: String,
}
