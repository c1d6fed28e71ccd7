//! The device's own memory as the device-side snapshot build sees it (#10916): a capacity, what
//! the application's regions hold, and the GPU-local snapshot backing the SDK keeps per agent
//! and size for the life of the process. A region whose backing does not fit in the free memory
//! is copied through host staging instead (or the snapshot fails, in the device-only build).

use crate::memory::{self, Region};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

/// The default device memory: an MI300X's 192 GiB of HBM.
pub const DEFAULT_DEVICE_MEMORY: u64 = 192 << 30;

/// Kept backings per agent: their sizes (bytes). Windows of one agent run under its writer
/// lock, so every kept backing is free when a window starts.
static KEPT: LazyLock<Mutex<BTreeMap<u64, Vec<u64>>>> =
    LazyLock::new(|| Mutex::new(BTreeMap::new()));

/// Which of `regions` get GPU-local backing on `agent` for this snapshot: a kept backing of the
/// same size first, else a new one while `capacity` minus the agent's regions and kept backing
/// leaves room. `false` means no backing could be had.
pub fn reserve(agent: u64, regions: &[Arc<Region>], capacity: u64) -> Vec<bool> {
    let mut kept = KEPT.lock();
    let sizes = kept.entry(agent).or_default();
    let mut used_kept = vec![false; sizes.len()];
    let mut held: u64 = memory::device_bytes(agent).saturating_add(sizes.iter().sum());
    regions
        .iter()
        .map(|r| {
            if let Some(i) = (0..sizes.len()).find(|&i| !used_kept[i] && sizes[i] == r.bytes) {
                used_kept[i] = true;
                return true;
            }
            if held.saturating_add(r.bytes) > capacity {
                return false;
            }
            held += r.bytes;
            sizes.push(r.bytes);
            used_kept.push(true);
            true
        })
        .collect()
}

/// Bytes of GPU-local backing kept on `agent` (never freed while the process lives).
pub fn kept_bytes(agent: u64) -> u64 {
    KEPT.lock().get(&agent).map_or(0, |v| v.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemKind, allocate, free};

    #[test]
    fn backing_is_kept_reused_and_limited_by_free_memory() {
        let agent = 77;
        let a = allocate(1000, MemKind::Coarse, agent);
        let b = allocate(1000, MemKind::Coarse, agent);
        let regions = vec![a.clone(), b.clone()];
        // 2000 held by the regions; room for one 1000-byte backing only.
        assert_eq!(reserve(agent, &regions, 3500), vec![true, false]);
        assert_eq!(kept_bytes(agent), 1000);
        // The kept backing is reused; nothing new fits.
        assert_eq!(reserve(agent, &regions, 3500), vec![true, false]);
        assert_eq!(kept_bytes(agent), 1000);
        assert_eq!(reserve(agent, &regions, 1 << 20), vec![true, true]);
        assert_eq!(kept_bytes(agent), 2000);
        free(&a);
        free(&b);
    }
}
