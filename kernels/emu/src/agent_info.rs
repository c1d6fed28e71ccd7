//! What `rocprofiler_query_available_agents` reports: one `rocprofiler_agent_v0_t` per emulated
//! agent. The names say the agents are emulated; counts a tool might size work by (compute units,
//! wavefront size, workgroup limits) are those of an MI300X-class part, as the device model's
//! timings are.

use crate::agents;
use krphase_ffi::{AgentId, AgentV0, Dim3, agent_type};
use std::ffi::CString;
use std::sync::LazyLock;

/// The emulated GPU agents' name (an MI300X-class part), which the SDK's register decoding goes by.
pub const GPU_NAME: &str = "gfx942";

struct Names {
    cpu: CString,
    gpu: CString,
    vendor: CString,
    product: CString,
    model: CString,
}

static NAMES: LazyLock<Names> = LazyLock::new(|| Names {
    cpu: CString::new("krphase-emu CPU").expect("no NUL"),
    gpu: CString::new(GPU_NAME).expect("no NUL"),
    vendor: CString::new("krphase-emu").expect("no NUL"),
    product: CString::new("krphase-emu emulated GPU").expect("no NUL"),
    model: CString::new("emulated").expect("no NUL"),
});

/// The agent record of `handle`; `index` is its position among all agents, `type_index` among
/// agents of its type.
fn record(handle: u64, index: usize, type_index: usize) -> AgentV0 {
    let gpu = handle != agents::CPU_AGENT;
    let n = &*NAMES;
    let dim = |v| {
        if gpu {
            Dim3 { x: v, y: v, z: v }
        } else {
            Dim3::default()
        }
    };
    AgentV0 {
        size: std::mem::size_of::<AgentV0>() as u64,
        id: AgentId { handle },
        kind: if gpu {
            agent_type::GPU
        } else {
            agent_type::CPU
        },
        cpu_cores_count: if gpu { 0 } else { 1 },
        simd_count: if gpu { 1216 } else { 0 },
        mem_banks_count: 0,
        caches_count: 0,
        io_links_count: 0,
        cpu_core_id_base: 0,
        simd_id_base: 0,
        max_waves_per_simd: if gpu { 8 } else { 0 },
        lds_size_in_kb: if gpu { 64 } else { 0 },
        gds_size_in_kb: 0,
        num_gws: 0,
        wave_front_size: if gpu { 64 } else { 0 },
        num_xcc: u32::from(gpu) * 8,
        cu_count: u32::from(gpu) * 304,
        array_count: 0,
        num_shader_banks: 0,
        simd_arrays_per_engine: 0,
        cu_per_simd_array: 0,
        simd_per_cu: u32::from(gpu) * 4,
        max_slots_scratch_cu: 0,
        gfx_target_version: if gpu { 90402 } else { 0 },
        vendor_id: 0,
        device_id: 0,
        location_id: 0,
        domain: 0,
        drm_render_minor: 0,
        num_sdma_engines: 0,
        num_sdma_xgmi_engines: 0,
        num_sdma_queues_per_engine: 0,
        num_cp_queues: 0,
        max_engine_clk_ccompute: 0,
        max_engine_clk_fcompute: 0,
        sdma_fw_version: 0,
        fw_version: 0,
        capability: 0,
        cu_per_engine: 0,
        max_waves_per_cu: 0,
        family_id: 0,
        workgroup_max_size: u32::from(gpu) * 1024,
        grid_max_size: if gpu { u32::MAX } else { 0 },
        local_mem_size: 0,
        hive_id: 0,
        gpu_id: 0,
        workgroup_max_dim: dim(1024),
        grid_max_dim: dim(u32::MAX),
        mem_banks: std::ptr::null(),
        caches: std::ptr::null(),
        io_links: std::ptr::null(),
        name: if gpu { n.gpu.as_ptr() } else { n.cpu.as_ptr() },
        vendor_name: n.vendor.as_ptr(),
        product_name: if gpu {
            n.product.as_ptr()
        } else {
            n.cpu.as_ptr()
        },
        model_name: n.model.as_ptr(),
        node_id: index as u32,
        logical_node_id: index as i32,
        logical_node_type_id: type_index as i32,
        // hsa | hip | rccl | rocdecode: visible to every runtime built on HSA.
        runtime_visibility: if gpu { 0xf } else { 0x1 },
    }
}

/// The records of every agent of this run, CPU first.
pub fn records() -> Vec<AgentV0> {
    agents::all()
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            let type_index = if h == agents::CPU_AGENT { 0 } else { i - 1 };
            record(h, i, type_index)
        })
        .collect()
}
