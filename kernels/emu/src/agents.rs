//! The emulated agents: their rocprofiler agent ids (one CPU agent, up to four GPU agents) and
//! the pointer-like `hsa_agent_t` handles the HSA-facing functions use for the same agents.

use krphase_ffi::HsaAgent;
use std::sync::atomic::{AtomicU64, Ordering};

/// The CPU agent (owner of fine-grained host memory) and the GPU agent.
pub const CPU_AGENT: u64 = 1;
pub const GPU_AGENT: u64 = 2;
/// At most this many GPU agents (handles GPU_AGENT ..), for `--agents`.
pub const MAX_GPU_AGENTS: u64 = 4;

static GPU_COUNT: AtomicU64 = AtomicU64::new(1);

/// Sets how many GPU agents this run has (`--agents`, clamped to 1..=MAX_GPU_AGENTS).
pub fn set_gpu_count(n: u64) {
    GPU_COUNT.store(n.clamp(1, MAX_GPU_AGENTS), Ordering::Relaxed);
}

/// Every agent of this run: the CPU agent, then the GPU agents in order.
pub fn all() -> Vec<u64> {
    let gpus = GPU_COUNT.load(Ordering::Relaxed);
    std::iter::once(CPU_AGENT)
        .chain((0..gpus).map(gpu_agent))
        .collect()
}

/// The handle of GPU agent `i` (0-based).
pub fn gpu_agent(i: u64) -> u64 {
    GPU_AGENT + i.min(MAX_GPU_AGENTS - 1)
}

/// Where the emulated `hsa_agent_t` handles start: unlike rocprofiler agent ids they are
/// pointer-like, so a tool that mixes the two namespaces gets wrong answers here too.
const HSA_AGENT_BASE: u64 = 0x7e00_4a00_0000;

/// The `hsa_agent_t` of rocprofiler agent `agent`.
pub fn hsa_agent(agent: u64) -> HsaAgent {
    HsaAgent {
        handle: HSA_AGENT_BASE + agent * 0x100,
    }
}

/// The rocprofiler agent id of an `hsa_agent_t`, if it names an emulated agent.
pub fn agent_of_hsa(a: HsaAgent) -> Option<u64> {
    let off = a.handle.checked_sub(HSA_AGENT_BASE)?;
    let id = off / 0x100;
    let agents = CPU_AGENT..GPU_AGENT + MAX_GPU_AGENTS;
    (off % 0x100 == 0 && agents.contains(&id)).then_some(id)
}
