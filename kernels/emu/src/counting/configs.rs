//! Counter configs (`rocprofiler_create_counter_config`): a set of one agent's counters behind
//! an opaque handle, usable from any context, until destroyed.

use super::catalogue;
use krphase_ffi::Status;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// One config: the agent it is bound to and its counters' catalogue indices, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub agent: u64,
    pub counters: Vec<usize>,
}

static CONFIGS: LazyLock<RwLock<HashMap<u64, Config>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));
static NEXT: AtomicU64 = AtomicU64::new(1);

/// `ROCPROFILER_STATUS_ERROR_EXCEEDS_HW_LIMIT`: the counters need more registers of some block
/// than it has, so they cannot be counted in one pass.
pub const EXCEEDS_HW_LIMIT: Status = Status(38);

/// Whether `counters` fit one pass: no block holds more of them than its registers.
fn fits(counters: &[usize]) -> bool {
    let mut per_block: HashMap<&str, usize> = HashMap::new();
    for &i in counters {
        *per_block.entry(catalogue::COUNTERS[i].block).or_default() += 1;
    }
    per_block
        .iter()
        .all(|(b, &n)| n <= catalogue::block_limit(b))
}

/// Creates a config of `ids` on `agent`. A non-zero `base` is an existing config whose counters
/// come first (the SDK's in/out parameter); the base itself stays usable.
pub fn create(agent: u64, ids: &[u64], base: u64) -> Result<u64, Status> {
    if !catalogue::is_gpu_agent(agent) {
        return Err(Status::AGENT_NOT_FOUND);
    }
    let mut counters = if base == 0 {
        Vec::new()
    } else {
        let b = get(base).ok_or(Status::CONFIG_NOT_FOUND)?;
        if b.agent != agent {
            return Err(Status(36)); // ERROR_AGENT_MISMATCH
        }
        b.counters
    };
    for &id in ids {
        let (owner, index) = catalogue::decode(id).ok_or(Status::COUNTER_NOT_FOUND)?;
        if owner != agent {
            return Err(Status(36)); // ERROR_AGENT_MISMATCH
        }
        if !counters.contains(&index) {
            counters.push(index);
        }
    }
    if counters.is_empty() {
        return Err(Status::INVALID_ARGUMENT);
    }
    if !fits(&counters) {
        return Err(EXCEEDS_HW_LIMIT);
    }
    let handle = NEXT.fetch_add(1, Ordering::SeqCst);
    CONFIGS.write().insert(handle, Config { agent, counters });
    Ok(handle)
}

/// Destroys a config; unknown handles are CONFIG_NOT_FOUND.
pub fn destroy(handle: u64) -> Result<(), Status> {
    CONFIGS
        .write()
        .remove(&handle)
        .map(|_| ())
        .ok_or(Status::CONFIG_NOT_FOUND)
}

pub fn get(handle: u64) -> Option<Config> {
    CONFIGS.read().get(&handle).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::GPU_AGENT;

    #[test]
    fn create_copy_and_destroy() {
        let waves = catalogue::counter_id(GPU_AGENT, 0);
        let grbm = catalogue::counter_id(GPU_AGENT, 4);
        let a = create(GPU_AGENT, &[waves], 0).unwrap();
        let b = create(GPU_AGENT, &[grbm, waves], a).unwrap();
        assert_eq!(
            get(b).unwrap().counters,
            vec![0, 4],
            "base first, no duplicates"
        );
        assert_eq!(get(a).unwrap().counters, vec![0], "the base is unchanged");
        assert_eq!(create(GPU_AGENT + 1, &[waves], 0), Err(Status(36)));
        assert_eq!(create(1, &[waves], 0), Err(Status::AGENT_NOT_FOUND));
        assert_eq!(create(GPU_AGENT, &[7], 0), Err(Status::COUNTER_NOT_FOUND));
        assert_eq!(create(GPU_AGENT, &[], 0), Err(Status::INVALID_ARGUMENT));
        let grbm3: Vec<u64> = ["GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_SPI_BUSY"]
            .iter()
            .map(|n| catalogue::counter_id(GPU_AGENT, catalogue::index_of(n).unwrap()))
            .collect();
        assert_eq!(
            create(GPU_AGENT, &grbm3, 0),
            Err(EXCEEDS_HW_LIMIT),
            "three GRBM counters need three of GRBM's two registers"
        );
        assert_eq!(
            create(GPU_AGENT, &grbm3[1..], b),
            Err(EXCEEDS_HW_LIMIT),
            "the base's counters count against the limit too"
        );
        assert!(create(GPU_AGENT, &grbm3[..2], 0).is_ok());
        destroy(a).unwrap();
        assert_eq!(destroy(a), Err(Status::CONFIG_NOT_FOUND));
        assert_eq!(create(GPU_AGENT, &[grbm], a), Err(Status::CONFIG_NOT_FOUND));
    }
}
