//! Live device allocations per agent, for the snapshot byte estimate at window start.
//!
//! The SDK's snapshot copies coarse-grained, non-kernarg allocations owned by the replaying agent
//! that were made after the replay service was configured, plus writable module variables, which
//! no tracing service reports (see [`super::modvars`]). The tracker keeps two sums per
//! agent: that classified figure and an upper bound over every live allocation on the agent.

use crate::fork_local::ForkLocal;
use krphase_ffi::{hsa_global_flag, hsa_pointer_type};
use krphase_format::event::alloc_class;
use std::collections::HashMap;

/// What `hsa_amd_pointer_info` said about an address.
#[derive(Debug, Clone, Copy)]
pub struct PointerClass {
    pub type_: u32,
    pub global_flags: u32,
    /// `agentOwner` (`hsa_agent_t` handle; 0 when the runtime did not fill it).
    pub agent_owner: u64,
}

/// Class bits (see `krphase_format::event::alloc_class`) for one allocation.
pub fn classify(info: Option<PointerClass>, after_configure: bool, vmem: bool) -> u8 {
    let mut c = 0u8;
    if after_configure {
        c |= alloc_class::AFTER_CONFIGURE;
    }
    if vmem {
        c |= alloc_class::VMEM;
    }
    if let Some(i) = info
        && i.type_ != hsa_pointer_type::UNKNOWN
    {
        c |= alloc_class::CLASSIFIED;
        if i.global_flags & hsa_global_flag::COARSE_GRAINED != 0 {
            c |= alloc_class::COARSE;
        }
        if i.global_flags
            & (hsa_global_flag::FINE_GRAINED | hsa_global_flag::EXTENDED_SCOPE_FINE_GRAINED)
            != 0
        {
            c |= alloc_class::FINE;
        }
        if i.global_flags & hsa_global_flag::KERNARG != 0 {
            c |= alloc_class::KERNARG;
        }
        if i.type_ == hsa_pointer_type::HSA_VMEM {
            c |= alloc_class::VMEM;
        }
    }
    let wanted = alloc_class::CLASSIFIED | alloc_class::COARSE | alloc_class::AFTER_CONFIGURE;
    let excluded = alloc_class::KERNARG | alloc_class::VMEM | alloc_class::FINE;
    if c & wanted == wanted && c & excluded == 0 {
        c |= alloc_class::SNAPSHOT;
    }
    c
}

#[derive(Debug, Clone, Copy)]
pub struct Live {
    pub agent: u64,
    pub size: u64,
    pub class: u8,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub classified: u64,
    pub classified_regions: u64,
    pub upper_bound: u64,
}

#[derive(Default, Clone)]
struct Inner {
    live: HashMap<u64, Live>,
    agents: HashMap<u64, Estimate>,
}

/// Allocation events are rare next to dispatches; a mutex keeps the two sums exact (one per
/// fork depth: a fork child starts from a copy and never waits on the parent's lock).
#[derive(Default)]
pub struct AllocTracker {
    inner: ForkLocal<Inner>,
}

impl AllocTracker {
    pub fn on_alloc(&self, address: u64, live: Live) {
        let Some(mut g) = self.inner.lock() else {
            return;
        };
        if let Some(old) = g.live.insert(address, live) {
            sub(&mut g.agents, address, old);
        }
        let e = g.agents.entry(live.agent).or_default();
        e.upper_bound += live.size;
        if live.class & alloc_class::SNAPSHOT != 0 {
            e.classified += live.size;
            e.classified_regions += 1;
        }
    }

    /// Forgets a freed allocation; returns what was tracked.
    pub fn on_free(&self, address: u64) -> Option<Live> {
        let mut g = self.inner.lock()?;
        let old = g.live.remove(&address)?;
        sub(&mut g.agents, address, old);
        Some(old)
    }

    pub fn estimate(&self, agent: u64) -> Estimate {
        self.inner
            .with(|g| g.agents.get(&agent).copied())
            .flatten()
            .unwrap_or_default()
    }
}

fn sub(agents: &mut HashMap<u64, Estimate>, _address: u64, old: Live) {
    if let Some(e) = agents.get_mut(&old.agent) {
        e.upper_bound = e.upper_bound.saturating_sub(old.size);
        if old.class & alloc_class::SNAPSHOT != 0 {
            e.classified = e.classified.saturating_sub(old.size);
            e.classified_regions = e.classified_regions.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pc(flags: u32) -> Option<PointerClass> {
        Some(PointerClass {
            type_: hsa_pointer_type::HSA,
            global_flags: flags,
            agent_owner: 0,
        })
    }

    #[test]
    fn classification_follows_the_snapshot_rules() {
        let snap = |c: u8| c & alloc_class::SNAPSHOT != 0;
        assert!(snap(classify(
            pc(hsa_global_flag::COARSE_GRAINED),
            true,
            false
        )));
        assert!(!snap(classify(
            pc(hsa_global_flag::COARSE_GRAINED),
            false,
            false
        )));
        assert!(!snap(classify(
            pc(hsa_global_flag::FINE_GRAINED),
            true,
            false
        )));
        assert!(!snap(classify(
            pc(hsa_global_flag::KERNARG | hsa_global_flag::FINE_GRAINED),
            true,
            false
        )));
        assert!(!snap(classify(
            pc(hsa_global_flag::COARSE_GRAINED),
            true,
            true
        )));
        assert!(!snap(classify(None, true, false)));
    }

    #[test]
    fn sums_track_alloc_and_free() {
        let t = AllocTracker::default();
        let coarse = classify(pc(hsa_global_flag::COARSE_GRAINED), true, false);
        let fine = classify(pc(hsa_global_flag::FINE_GRAINED), true, false);
        t.on_alloc(
            0x1000,
            Live {
                agent: 1,
                size: 100,
                class: coarse,
            },
        );
        t.on_alloc(
            0x2000,
            Live {
                agent: 1,
                size: 50,
                class: fine,
            },
        );
        t.on_alloc(
            0x3000,
            Live {
                agent: 2,
                size: 7,
                class: coarse,
            },
        );
        assert_eq!(
            t.estimate(1),
            Estimate {
                classified: 100,
                classified_regions: 1,
                upper_bound: 150
            }
        );
        assert_eq!(t.on_free(0x1000).map(|l| l.size), Some(100));
        assert!(t.on_free(0x1000).is_none());
        assert_eq!(
            t.estimate(1),
            Estimate {
                classified: 0,
                classified_regions: 0,
                upper_bound: 50
            }
        );
        assert_eq!(t.estimate(2).classified, 7);
    }
}
