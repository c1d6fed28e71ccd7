//! Emulated device memory: `hsa_amd_memory_pool_allocate`-style regions (coarse, fine, kernarg,
//! vmem), module-scope variables, MEMORY_ALLOCATION tracing, `hsa_amd_pointer_info`, and the
//! replay tracker's inventory (what the snapshot copies).
//!
//! Every region is host memory: a boxed slice of `AtomicU64` words, so kernels running on queue
//! workers need no `unsafe`. The region's device address is the address of that slice.

use crate::agents::hsa_agent;
use crate::clock::{now_ns, thread_id};
use crate::sdk::{CallbackEvent, sdk};
use krphase_ffi::{
    AgentId, CallbackPhase, CallbackTracingKind, HsaAmdPointerInfo, MemoryAllocationData, UserData,
    hsa_global_flag, hsa_pointer_type, memory_allocation_op,
};
use krphase_kernels::device_memory::{DeviceMemory, alloc_device_memory};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    /// Coarse-grained device memory owned by an agent (`hipMalloc`).
    Coarse,
    /// Fine-grained memory (`hipHostMalloc`), owned by the CPU agent.
    Fine,
    /// Kernarg pool memory (fine-grained with the KERNARG flag).
    Kernarg,
    /// A virtual-memory mapping (`hipMallocAsync`-style); counted, never snapshotted.
    Vmem,
    /// A module-scope `__device__` variable of a loaded code object.
    ModuleVar,
}

#[derive(Debug)]
pub struct Region {
    pub words: Box<DeviceMemory>,
    pub bytes: u64,
    pub kind: MemKind,
    pub agent: u64,
    /// Allocated after KERNEL_REPLAY was configured (the SDK's tracker records only then).
    pub tracked: bool,
    /// Module variables: symbol name, and whether the snapshot includes it.
    pub symbol: Option<&'static str>,
    pub writable: bool,
}

impl Region {
    pub fn base(&self) -> u64 {
        self.words.as_ptr() as u64
    }
}

static REGIONS: LazyLock<RwLock<BTreeMap<u64, Arc<Region>>>> =
    LazyLock::new(|| RwLock::new(BTreeMap::new()));

fn deliver_alloc(op: i32, agent: u64, address: u64, size: u64, start: u64) {
    let kind = CallbackTracingKind::MEMORY_ALLOCATION.0;
    let subs = sdk().subscribers(kind, op);
    if subs.is_empty() {
        return;
    }
    let tid = thread_id();
    let corr = crate::ids::next_correlation();
    for s in subs {
        let mut ud = UserData::default();
        let mut enter = MemoryAllocationData {
            size: std::mem::size_of::<MemoryAllocationData>() as u64,
            start_timestamp: start,
            end_timestamp: 0,
            agent_id: AgentId { handle: agent },
            address: if op == memory_allocation_op::FREE || op == memory_allocation_op::VMEM_FREE {
                address
            } else {
                0
            },
            allocation_size: size,
        };
        s.invoke(
            CallbackEvent {
                thread_id: tid,
                corr,
                kind,
                op,
                phase: CallbackPhase::ENTER,
            },
            (&mut enter as *mut MemoryAllocationData).cast(),
            &mut ud,
        );
        let mut exit = MemoryAllocationData {
            end_timestamp: now_ns(),
            address,
            ..enter
        };
        s.invoke(
            CallbackEvent {
                thread_id: tid,
                corr,
                kind,
                op,
                phase: CallbackPhase::EXIT,
            },
            (&mut exit as *mut MemoryAllocationData).cast(),
            &mut ud,
        );
    }
}

/// Allocates `bytes` (rounded up to words) of `kind` owned by `agent`, with MEMORY_ALLOCATION
/// callbacks, as the intercepted `hsa_amd_memory_pool_allocate` / vmem handle create would.
pub fn allocate(bytes: u64, kind: MemKind, agent: u64) -> Arc<Region> {
    let start = now_ns();
    let words = alloc_device_memory(bytes.div_ceil(8) as usize);
    let region = Arc::new(Region {
        words,
        bytes,
        kind,
        agent,
        tracked: sdk().tracking(),
        symbol: None,
        writable: true,
    });
    REGIONS.write().insert(region.base(), region.clone());
    let op = if kind == MemKind::Vmem {
        memory_allocation_op::VMEM_ALLOCATE
    } else {
        memory_allocation_op::ALLOCATE
    };
    deliver_alloc(op, agent, region.base(), bytes, start);
    region
}

/// A coarse-grained pool allocation of `agent` the SDK's tracker never saw (as one made before
/// tracking started): no MEMORY_ALLOCATION callbacks, not in any snapshot, counted as untracked
/// pool memory at admission. The incomplete-restore pass model's worklist lives in one.
pub fn allocate_untracked(bytes: u64, agent: u64) -> Arc<Region> {
    let region = Arc::new(Region {
        words: alloc_device_memory(bytes.div_ceil(8) as usize),
        bytes,
        kind: MemKind::Coarse,
        agent,
        tracked: false,
        symbol: None,
        writable: true,
    });
    REGIONS.write().insert(region.base(), region.clone());
    region
}

/// An allocation the runtime refuses, as every HSA call fails in a fork child (HSA does not
/// follow a fork): the intercept still reports ALLOCATE ENTER and EXIT, with address 0, and no
/// region is made. Takes no emulator lock a parent thread could have held at the fork.
pub fn failed_allocate(bytes: u64, agent: u64) {
    deliver_alloc(memory_allocation_op::ALLOCATE, agent, 0, bytes, now_ns());
}

/// Frees a region (`hsa_amd_memory_pool_free`): the FREE record carries the owning agent, the
/// address and the size of the allocation being freed.
pub fn free(region: &Arc<Region>) {
    let start = now_ns();
    if REGIONS.write().remove(&region.base()).is_none() {
        return;
    }
    let op = if region.kind == MemKind::Vmem {
        memory_allocation_op::VMEM_FREE
    } else {
        memory_allocation_op::FREE
    };
    deliver_alloc(op, region.agent, region.base(), region.bytes, start);
}

/// Registers a module-scope variable of the loaded code object (no allocation callbacks: the
/// loader places it, as with real code objects).
pub fn module_variable(
    symbol: &'static str,
    bytes: u64,
    agent: u64,
    writable: bool,
) -> Arc<Region> {
    let region = Arc::new(Region {
        words: alloc_device_memory(bytes.div_ceil(8) as usize),
        bytes,
        kind: MemKind::ModuleVar,
        agent,
        tracked: true,
        symbol: Some(symbol),
        writable,
    });
    REGIONS.write().insert(region.base(), region.clone());
    region
}

/// Whether the snapshot includes a module variable: writable, non-empty, at most 1 GiB, and,
/// when `skip_markers` (builds since #12609), not a `__hip_cuid_` compilation-unit marker.
fn snapshot_module_var(r: &Region, skip_markers: bool) -> bool {
    r.writable
        && r.bytes > 0
        && r.bytes <= 1 << 30
        && !(skip_markers && r.symbol.is_some_and(is_cu_marker))
}

/// HIP's compilation-unit marker variables: `__hip_cuid_<hash>`, 1 byte, one per compilation
/// unit of a loaded code object.
pub fn is_cu_marker(symbol: &str) -> bool {
    symbol.starts_with("__hip_cuid_")
}

/// What `snap(agent)` copies: tracked coarse-grained regions owned by `agent`, then writable
/// module variables (the `__hip_cuid_` markers only when `skip_markers` is false).
pub fn inventory(agent: u64, skip_markers: bool) -> Vec<Arc<Region>> {
    REGIONS
        .read()
        .values()
        .filter(|r| match r.kind {
            MemKind::Coarse => r.tracked && r.agent == agent,
            MemKind::ModuleVar => r.agent == agent && snapshot_module_var(r, skip_markers),
            _ => false,
        })
        .cloned()
        .collect()
}

/// Bytes of every live region placed on `agent` (allocations of any kind and module
/// variables): what the device's own memory holds before any snapshot backing.
pub fn device_bytes(agent: u64) -> u64 {
    REGIONS
        .read()
        .values()
        .filter(|r| r.agent == agent)
        .map(|r| r.bytes)
        .sum()
}

/// Bytes and count of a region list.
pub fn total(regions: &[Arc<Region>]) -> (u64, u64) {
    (regions.iter().map(|r| r.bytes).sum(), regions.len() as u64)
}

/// Live vmem mappings of `agent` (bytes, regions): the `untracked_memory` trigger.
pub fn untracked_vmem(agent: u64) -> (u64, u64) {
    let g = REGIONS.read();
    let v: Vec<_> = g
        .values()
        .filter(|r| r.kind == MemKind::Vmem && r.agent == agent)
        .collect();
    (v.iter().map(|r| r.bytes).sum(), v.len() as u64)
}

/// Coarse regions of `agent` allocated before the tracker started (bytes, regions).
pub fn untracked_pool(agent: u64) -> (u64, u64) {
    let g = REGIONS.read();
    let v: Vec<_> = g
        .values()
        .filter(|r| r.kind == MemKind::Coarse && !r.tracked && r.agent == agent)
        .collect();
    (v.iter().map(|r| r.bytes).sum(), v.len() as u64)
}

/// A full copy of some regions' words.
pub struct Snapshot {
    pub regions: Vec<(Arc<Region>, Vec<u64>)>,
    pub bytes: u64,
}

/// Copies a region's words out: the emulator's one copy loop, whose speed on this machine is
/// the device-local copy rate every other cost is scaled from.
pub fn copy_words(words: &DeviceMemory, out: &mut Vec<u64>) {
    out.clear();
    out.extend(words.iter().map(|w| w.load(Ordering::Relaxed)));
}

/// Copies every region out (unpaced: the caller paces the copy to its modelled duration).
pub fn snap(regions: Vec<Arc<Region>>) -> Snapshot {
    let mut bytes = 0;
    let copies = regions
        .into_iter()
        .map(|r| {
            bytes += r.bytes;
            let mut data = Vec::with_capacity(r.words.len());
            copy_words(&r.words, &mut data);
            (r, data)
        })
        .collect();
    Snapshot {
        regions: copies,
        bytes,
    }
}

/// Copies the snapshot back, skipping regions freed since (unpaced); returns the bytes.
pub fn restore(s: &Snapshot) -> u64 {
    let live = REGIONS.read();
    let mut bytes = 0;
    for (r, data) in &s.regions {
        if !live.contains_key(&r.base()) {
            continue;
        }
        for (w, v) in r.words.iter().zip(data) {
            w.store(*v, Ordering::Relaxed);
        }
        bytes += r.bytes;
    }
    bytes
}

/// `hsa_amd_pointer_info` over the emulated regions. Unknown pointers give type UNKNOWN.
pub fn pointer_info(ptr: u64, info: &mut HsaAmdPointerInfo) {
    let cap = info.size as usize;
    let mut out = HsaAmdPointerInfo::default();
    let g = REGIONS.read();
    if let Some((_, r)) = g.range(..=ptr).next_back()
        && ptr < r.base() + r.bytes.max(1)
    {
        out.type_ = if r.kind == MemKind::Vmem {
            hsa_pointer_type::HSA_VMEM
        } else {
            hsa_pointer_type::HSA
        };
        out.agent_base_address = r.base() as *mut _;
        out.host_base_address = r.base() as *mut _;
        out.size_in_bytes = r.bytes as usize;
        out.agent_owner = hsa_agent(r.agent);
        out.global_flags = match r.kind {
            MemKind::Coarse | MemKind::Vmem | MemKind::ModuleVar => hsa_global_flag::COARSE_GRAINED,
            MemKind::Fine => hsa_global_flag::FINE_GRAINED,
            MemKind::Kernarg => hsa_global_flag::KERNARG | hsa_global_flag::FINE_GRAINED,
        };
        out.registered = false;
    }
    // Honour the caller's struct version: fill only what fits in the size it declared.
    let full = std::mem::size_of::<HsaAmdPointerInfo>();
    let n = cap.min(full);
    out.size = n as u32;
    let src = &out as *const HsaAmdPointerInfo as *const u8;
    let dst = info as *mut HsaAmdPointerInfo as *mut u8;
    // SAFETY: both point to HsaAmdPointerInfo values; n <= size_of::<HsaAmdPointerInfo>().
    unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use krphase_kernels::device_memory::{get_u64, set_u64};

    const AGENT: u64 = 99;

    fn info(r: &Region) -> HsaAmdPointerInfo {
        let mut i = HsaAmdPointerInfo::default();
        pointer_info(r.base() + 8, &mut i);
        i
    }

    #[test]
    fn pointer_info_classifies_each_kind() {
        let coarse = allocate(64, MemKind::Coarse, AGENT);
        let fine = allocate(64, MemKind::Fine, 1);
        let karg = allocate(64, MemKind::Kernarg, 1);
        let vmem = allocate(64, MemKind::Vmem, AGENT);
        assert_eq!(info(&coarse).global_flags, hsa_global_flag::COARSE_GRAINED);
        assert_eq!(info(&coarse).agent_owner, hsa_agent(AGENT));
        assert_eq!(info(&coarse).size_in_bytes, 64);
        assert_eq!(info(&coarse).agent_base_address as u64, coarse.base());
        assert_eq!(info(&fine).global_flags, hsa_global_flag::FINE_GRAINED);
        assert_ne!(info(&karg).global_flags & hsa_global_flag::KERNARG, 0);
        assert_eq!(info(&vmem).type_, hsa_pointer_type::HSA_VMEM);
        let mut unknown = HsaAmdPointerInfo::default();
        pointer_info(8, &mut unknown);
        assert_eq!(unknown.type_, hsa_pointer_type::UNKNOWN);
        // A caller with an older, smaller struct gets only what fits.
        let mut small = HsaAmdPointerInfo {
            size: 24,
            ..Default::default()
        };
        pointer_info(coarse.base(), &mut small);
        assert_eq!(small.size, 24);
        assert_eq!(small.size_in_bytes, 0, "sizeInBytes lies past 24 bytes");
        for r in [&coarse, &fine, &karg, &vmem] {
            free(r);
        }
        assert_eq!(info(&coarse).type_, hsa_pointer_type::UNKNOWN, "freed");
    }

    #[test]
    fn inventory_takes_tracked_coarse_and_writable_module_variables() {
        let agent = AGENT + 1;
        let untracked = allocate(80, MemKind::Coarse, agent); // the tracker is off in unit tests
        let var = module_variable("counter", 8, agent, true);
        let _cuid = module_variable("__hip_cuid_abc", 1, agent, true);
        let _konst = module_variable("table", 64, agent, false);
        let v = allocate(16, MemKind::Vmem, agent);
        let inv = inventory(agent, true);
        assert_eq!(inv.len(), 1);
        assert_eq!(inv[0].base(), var.base());
        assert_eq!(total(&inv), (8, 1));
        // Before #12609 the 1-byte marker is copied too.
        assert_eq!(total(&inventory(agent, false)), (9, 2));
        assert_eq!(untracked_pool(agent), (80, 1));
        assert_eq!(untracked_vmem(agent), (16, 1));
        free(&v);
        assert_eq!(untracked_vmem(agent), (0, 0));
        free(&untracked);
    }

    #[test]
    fn restore_puts_back_the_snapshot() {
        let var = module_variable("restore_me", 16, AGENT + 2, true);
        set_u64(&var.words, 0, 5);
        let s = snap(vec![var.clone()]);
        assert_eq!(s.bytes, 16);
        set_u64(&var.words, 0, 6);
        set_u64(&var.words, 1, 7);
        assert_eq!(restore(&s), 16);
        assert_eq!((get_u64(&var.words, 0), get_u64(&var.words, 1)), (5, 0));
    }
}
