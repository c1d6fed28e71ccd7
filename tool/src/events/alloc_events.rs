//! MEMORY_ALLOCATION callbacks: each allocation and free is classified, tracked for the
//! snapshot byte estimate (`alloc.rs`) and recorded.

use super::alloc::{Live, PointerClass, classify};
use super::tool::Tool;
use crate::recorder::{self, Flush};
use krphase_ffi::MemoryAllocationData;
use krphase_ffi::memory_allocation_op as op;
use krphase_format::event::{alloc_class, attribution};
use krphase_format::{Mode, Record};

impl Tool {
    /// MEMORY_ALLOCATION EXIT (`ts`: the callback's clock reading).
    pub fn on_alloc(
        &self,
        operation: i32,
        data: &MemoryAllocationData,
        info: Option<PointerClass>,
        tid: u32,
        ts: u64,
    ) {
        match operation {
            op::ALLOCATE | op::VMEM_ALLOCATE => self.on_allocate(operation, data, info, tid, ts),
            op::FREE | op::VMEM_FREE => self.on_free(operation, data, tid, ts),
            _ => {}
        }
    }

    fn on_allocate(
        &self,
        operation: i32,
        data: &MemoryAllocationData,
        info: Option<PointerClass>,
        tid: u32,
        ts: u64,
    ) {
        let (agent, address, size) = (data.agent_id.handle, data.address, data.allocation_size);
        // Observe mode: the replay owner configured its service before the application
        // allocated (tools configure first), so every allocation seen is tracked.
        let after = self.replay_configured() || self.mode() == Mode::Observe;
        let class = classify(info, after, operation == op::VMEM_ALLOCATE);
        self.allocs.on_alloc(address, Live { agent, size, class });
        if let Some(owner) = info.map(|i| i.agent_owner).filter(|&o| o != 0)
            && class & alloc_class::COARSE != 0
        {
            self.modvars
                .learn_pair(owner, agent, attribution::ALLOCATION);
        }
        // Flushed at once: the reader's live-allocation state must precede the dispatches of
        // other threads that use it (allocations are rare).
        recorder::record(
            Record::alloc(tid, operation as u16, class, address, size, agent),
            ts,
            Flush::Now,
        );
    }

    fn on_free(&self, operation: i32, data: &MemoryAllocationData, tid: u32, ts: u64) {
        let (agent, address) = (data.agent_id.handle, data.address);
        let old = self.allocs.on_free(address);
        let (class, size, agent) = old.map_or((0, 0, agent), |l| (l.class, l.size, l.agent));
        let class = if operation == op::VMEM_FREE {
            class | alloc_class::VMEM
        } else {
            class
        };
        recorder::record(
            Record::free(tid, operation as u16, class, address, size, agent),
            ts,
            Flush::Now,
        );
    }
}
