//! Live allocations and module-variable bytes per agent: the reader's replay of the tool's
//! snapshot estimate.

use crate::limits::{Limit, Limits};
use crate::model::ByteEstimate;
use foldhash::HashMap;
use krphase_format::event::{UNATTRIBUTED, alloc_class};

/// Live allocations and module-variable bytes per agent, replayed from ALLOC/FREE and
/// MODULE_VARS records: the snapshot estimate for windows the tool did not see open (observe
/// mode). Holds only live allocations.
#[derive(Debug, Default)]
pub(crate) struct Footprint {
    /// address → (agent, size, counted in the classified estimate).
    live: HashMap<u64, (u64, u64, bool)>,
    /// agent → (classified bytes, classified regions, all live bytes).
    agents: HashMap<u64, (u64, u64, u64)>,
    /// agent → (bytes, variables) of writable module variables.
    module_vars: HashMap<u64, (u64, u64)>,
    /// Module-variable bytes no agent could be named for (upper bounds only).
    unattributed: u64,
}

impl Footprint {
    /// A live allocation (replacing one at the same address); a new address or agent beyond
    /// the limits is refused.
    pub fn alloc(
        &mut self,
        (address, agent, size, class): (u64, u64, u64, u8),
        limits: &Limits,
    ) -> Result<(), Limit> {
        self.free(address);
        if self.live.len() >= limits.live_allocations {
            return Err(Limit::LiveAllocations);
        }
        if !self.agents.contains_key(&agent) && self.agents.len() >= limits.agents {
            return Err(Limit::Agents);
        }
        let snap = class & alloc_class::SNAPSHOT != 0;
        self.live.insert(address, (agent, size, snap));
        let e = self.agents.entry(agent).or_default();
        // Sizes come from the file: a crafted one must saturate, not overflow.
        e.2 = e.2.saturating_add(size);
        if snap {
            e.0 = e.0.saturating_add(size);
            e.1 = e.1.saturating_add(1);
        }
        Ok(())
    }

    /// Writable module-variable bytes for an agent (replacing its earlier value).
    pub fn module_vars(
        &mut self,
        agent: u64,
        bytes: u64,
        variables: u16,
        limits: &Limits,
    ) -> Result<(), Limit> {
        if agent == UNATTRIBUTED {
            self.unattributed = bytes;
            return Ok(());
        }
        if !self.module_vars.contains_key(&agent) && self.module_vars.len() >= limits.agents {
            return Err(Limit::Agents);
        }
        self.module_vars
            .insert(agent, (bytes, u64::from(variables)));
        Ok(())
    }

    pub fn free(&mut self, address: u64) {
        let Some((agent, size, snap)) = self.live.remove(&address) else {
            return;
        };
        if let Some(e) = self.agents.get_mut(&agent) {
            e.2 = e.2.saturating_sub(size);
            if snap {
                e.0 = e.0.saturating_sub(size);
                e.1 = e.1.saturating_sub(1);
            }
        }
    }

    pub fn estimate(&self, agent: u64) -> ByteEstimate {
        let (c, r, u) = self.agents.get(&agent).copied().unwrap_or_default();
        let (mb, mn) = self.module_vars.get(&agent).copied().unwrap_or_default();
        ByteEstimate {
            classified: c.saturating_add(mb),
            classified_regions: r.saturating_add(mn).min(u64::from(u16::MAX)) as u16,
            upper_bound: u.saturating_add(mb).saturating_add(self.unattributed),
        }
    }
}
