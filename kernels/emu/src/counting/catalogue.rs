//! The counters every emulated GPU agent supports: names, descriptions, blocks, and their
//! `rocprofiler_counter_id_t` handles (unique per agent and counter). The CPU agent has none.

use crate::agents::{GPU_AGENT, MAX_GPU_AGENTS};
use std::ffi::CString;
use std::sync::LazyLock;

/// One hardware counter: its name, description and block, as `rocprofiler_query_counter_info`
/// reports them (all hardware counters, none derived or constant).
pub struct Counter {
    pub name: &'static str,
    pub description: &'static str,
    pub block: &'static str,
}

/// The supported counters, in the order `rocprofiler_iterate_agent_supported_counters` lists
/// them. The index is part of the id, so this order is fixed.
pub const COUNTERS: [Counter; 11] = [
    Counter {
        name: "SQ_WAVES",
        description: "Count number of waves sent to SQs",
        block: "SQ",
    },
    Counter {
        name: "SQ_INSTS_VALU",
        description: "Number of VALU instructions issued",
        block: "SQ",
    },
    Counter {
        name: "SQ_INSTS_SALU",
        description: "Number of SALU instructions issued",
        block: "SQ",
    },
    Counter {
        name: "SQ_BUSY_CYCLES",
        description: "Clock cycles while SQ is reporting that it is busy",
        block: "SQ",
    },
    Counter {
        name: "GRBM_COUNT",
        description: "Tie High - Count Number of Clocks",
        block: "GRBM",
    },
    Counter {
        name: "GRBM_GUI_ACTIVE",
        description: "The GUI is Active",
        block: "GRBM",
    },
    // The two further counters `krphase bench` names in its groups (G = 4, 5).
    Counter {
        name: "SQ_INSTS_SMEM",
        description: "Number of SMEM instructions issued",
        block: "SQ",
    },
    Counter {
        name: "SQ_INSTS_LDS",
        description: "Number of LDS instructions issued",
        block: "SQ",
    },
    // The pass-fidelity counters (#32): the L2's hits and misses under rocprofiler's names, and
    // a further GRBM cycle counter, so a cache-warmth change (hits and cycles move together)
    // can be told from a clock change (time moves, cycles do not).
    Counter {
        name: "TCC_HIT",
        description: "Number of cache hits",
        block: "TCC",
    },
    Counter {
        name: "TCC_MISS",
        description: "Number of cache misses",
        block: "TCC",
    },
    Counter {
        name: "GRBM_SPI_BUSY",
        description: "Any of the Shader Pipe Interpolators (SPI) are busy in the shader engine(s)",
        block: "GRBM",
    },
];

/// How many counters of one block a single config (one pass) may hold: the block's counter
/// registers, which the SDK checks when it creates a config. SQ 8 on gfx942 (MI300X): aqlprofile's
/// `SqCounterBlockNumCounters`, and rocprofiler-compute's `perfmon_config` for the arch; GRBM 2
/// and TCC 4 (per instance) from aqlprofile's gfx9 block table (`AI_COUNTER_NUM_PER_GRBM`,
/// `_TCC`), assumed unchanged on gfx942.
pub fn block_limit(block: &str) -> usize {
    match block {
        "SQ" => 8,
        "GRBM" => 2,
        "TCC" => 4,
        _ => usize::MAX,
    }
}

/// The C strings behind the info pointers, alive for the process (as the SDK's are).
pub struct CStrings {
    pub name: CString,
    pub description: CString,
    pub block: CString,
    pub expression: CString,
}

static C_STRINGS: LazyLock<Vec<CStrings>> = LazyLock::new(|| {
    COUNTERS
        .iter()
        .map(|c| CStrings {
            name: CString::new(c.name).expect("no NUL"),
            description: CString::new(c.description).expect("no NUL"),
            block: CString::new(c.block).expect("no NUL"),
            expression: CString::new("").expect("no NUL"),
        })
        .collect()
});

pub fn c_strings(index: usize) -> &'static CStrings {
    &C_STRINGS[index]
}

/// Whether `agent` is an emulated GPU agent (only those have counters).
pub fn is_gpu_agent(agent: u64) -> bool {
    (GPU_AGENT..GPU_AGENT + MAX_GPU_AGENTS).contains(&agent)
}

/// The id of counter `index` on `agent`: the agent in the high bits, the 1-based index low.
pub fn counter_id(agent: u64, index: usize) -> u64 {
    (agent << 16) | (index as u64 + 1)
}

/// The agent and counter index an id names, if it names one.
pub fn decode(id: u64) -> Option<(u64, usize)> {
    let agent = id >> 16;
    let index = (id & 0xffff).checked_sub(1)? as usize;
    (is_gpu_agent(agent) && index < COUNTERS.len()).then_some((agent, index))
}

/// The ids of every counter `agent` supports, in catalogue order (empty for a non-GPU agent).
pub fn agent_counters(agent: u64) -> Vec<u64> {
    if !is_gpu_agent(agent) {
        return Vec::new();
    }
    (0..COUNTERS.len()).map(|i| counter_id(agent, i)).collect()
}

/// The index of the counter called `name`.
pub fn index_of(name: &str) -> Option<usize> {
    COUNTERS.iter().position(|c| c.name == name)
}

/// A record's instance id: the counter id in the high 32 bits, the instance (always 0: the
/// model has no dimensions) low. Tools decode it with `rocprofiler_query_record_counter_id`.
pub fn instance_id(counter: u64) -> u64 {
    counter << 32
}

/// The counter id of an instance id.
pub fn counter_of_instance(instance: u64) -> Option<u64> {
    let id = instance >> 32;
    decode(id).map(|_| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_per_agent() {
        for agent in GPU_AGENT..GPU_AGENT + MAX_GPU_AGENTS {
            for (i, id) in agent_counters(agent).into_iter().enumerate() {
                assert_eq!(decode(id), Some((agent, i)));
                assert_eq!(counter_of_instance(instance_id(id)), Some(id));
            }
        }
        assert!(agent_counters(crate::agents::CPU_AGENT).is_empty());
        assert_eq!(decode(0), None);
        assert_eq!(decode(counter_id(GPU_AGENT, COUNTERS.len())), None);
        assert_eq!(index_of("GRBM_GUI_ACTIVE"), Some(5));
    }
}
