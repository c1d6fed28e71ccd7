//! Writable module-scope (`__device__`) variables per agent: the part of the SDK's snapshot no
//! tracing service reports. Which symbols the snapshot copies is decided by the SDK's own filter,
//! mirrored in `krphase_ffi::executables::snapshot_includes`.
//!
//! The tool walks ROCr's loaded executables and their symbols with the SDK's own filter, once
//! at the first window and again after any code-object event or newly learnt agent pair. Symbols
//! name an `hsa_agent_t`; windows name a rocprofiler agent id. The pairs come from CODE_OBJECT
//! LOAD records (they carry both) and from coarse-grained allocations (the record's agent and
//! `hsa_amd_pointer_info`'s `agentOwner`). Without a pair, the bytes go to the only GPU agent
//! seen, else they are unattributed and count only in upper bounds.
//!
//! Locking: the walk calls into ROCr (foreign data, whose loader may be running a code-object
//! callback into this tool), so no lock is held across it: one thread at a time claims the walk
//! with an atomic flag (another thread finding it claimed uses the result as it stands rather
//! than wait), and the pair map and the result are locked only to copy or replace them.

use crate::fork_local::{ForkLocal, Start};
use krphase_ffi::executables::{HsaError, HsaSymbolFns, snapshot_includes};
use krphase_ffi::{HsaAgent, HsaExecutableSymbol};
use krphase_format::event::{UNATTRIBUTED, attribution};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// A variable the snapshot copies: its `hsa_agent_t` handle (`None`: a program symbol) and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub hsa_agent: Option<u64>,
    pub size: u64,
}

/// Writable-variable bytes and count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bytes {
    pub bytes: u64,
    pub variables: u64,
}

impl Bytes {
    fn add(&mut self, size: u64) {
        self.bytes += size;
        self.variables += 1;
    }
}

/// The walk's result, attributed to agent ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    /// agent id → (bytes, how attributed).
    pub agents: BTreeMap<u64, (Bytes, u8)>,
    pub unattributed: Bytes,
}

impl Resolved {
    pub fn for_agent(&self, agent: u64) -> Bytes {
        self.agents.get(&agent).map(|a| a.0).unwrap_or_default()
    }
}

/// hsa_agent_t handle → agent id pairs, and every GPU agent id seen.
#[derive(Debug, Clone, Default)]
pub struct Pairs {
    pub hsa: HashMap<u64, (u64, u8)>,
    pub agents: BTreeSet<u64>,
}

/// Attributes the variables found to agent ids.
pub fn resolve(found: &[Found], pairs: &Pairs) -> Resolved {
    let single = (pairs.agents.len() == 1)
        .then(|| pairs.agents.first().copied())
        .flatten();
    let mut r = Resolved::default();
    for f in found {
        let to = match f.hsa_agent.and_then(|h| pairs.hsa.get(&h)) {
            Some(&(agent, how)) => Some((agent, how)),
            None => single.map(|a| (a, attribution::SINGLE_AGENT)),
        };
        match to {
            Some((agent, how)) => {
                let e = r.agents.entry(agent).or_insert((Bytes::default(), how));
                e.0.add(f.size);
                e.1 = e.1.min(how).max(1); // the most direct way any of its bytes were mapped
            }
            None => r.unattributed.add(f.size),
        }
    }
    r
}

/// Walks every executable's symbols and keeps the ones the snapshot copies. Uses the
/// all-symbol iterator when present, else the per-agent one over the `known` HSA agents.
pub fn walk(fns: &HsaSymbolFns, known: &[u64]) -> Result<Vec<Found>, HsaError> {
    let mut out = Vec::new();
    for e in fns.executables()? {
        let syms: Vec<HsaExecutableSymbol> = match fns.symbols(e) {
            Some(v) => v?,
            None => {
                let mut v = Vec::new();
                for &h in known {
                    if let Some(s) = fns.agent_symbols(e, HsaAgent { handle: h }) {
                        v.extend(s?);
                    }
                }
                v
            }
        };
        for s in syms {
            let info = fns.info(s)?;
            if snapshot_includes(&info) {
                out.push(Found {
                    hsa_agent: info.agent.map(|a| a.handle),
                    size: u64::from(info.size),
                });
            }
        }
    }
    Ok(out)
}

/// One MODULE_VARS record to write: agent id (or [`UNATTRIBUTED`]), bytes, attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub agent: u64,
    pub bytes: Bytes,
    pub attribution: u8,
}

/// The records that turn `old` into `new` (agents whose value changed).
pub fn changes(old: &Resolved, new: &Resolved) -> Vec<Change> {
    let mut v = Vec::new();
    let keys: BTreeSet<u64> = old
        .agents
        .keys()
        .chain(new.agents.keys())
        .copied()
        .collect();
    for a in keys {
        let n = new.agents.get(&a).copied();
        if old.agents.get(&a).copied() != n {
            let (bytes, how) = n.unwrap_or_default();
            v.push(Change {
                agent: a,
                bytes,
                attribution: how,
            });
        }
    }
    if old.unattributed != new.unattributed {
        v.push(Change {
            agent: UNATTRIBUTED,
            bytes: new.unattributed,
            attribution: attribution::NONE,
        });
    }
    v
}

/// The claim on the walk, released when dropped.
struct WalkClaim<'a>(&'a AtomicU32);

impl<'a> WalkClaim<'a> {
    /// Claims the walk for this process unless one of its threads holds it (a claim left by a
    /// fork parent's thread, which does not exist here, is taken over).
    fn take(flag: &'a AtomicU32) -> Option<WalkClaim<'a>> {
        let me = std::process::id();
        let held = flag.load(Ordering::Acquire);
        if held == me {
            return None;
        }
        flag.compare_exchange(held, me, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| WalkClaim(flag))
    }
}

impl Drop for WalkClaim<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

/// The cache the tool keeps.
pub struct ModVars {
    dirty: AtomicBool,
    /// The pid of the process whose thread is walking (0: none). A fork child finds its
    /// parent's pid here when a parent thread was walking at the fork, and takes the claim over.
    walking: AtomicU32,
    pairs: ForkLocal<Pairs>,
    result: ForkLocal<Resolved>,
}

impl Default for ModVars {
    fn default() -> Self {
        ModVars {
            dirty: AtomicBool::new(true),
            walking: AtomicU32::new(0),
            pairs: ForkLocal::new(Start::Inherit),
            result: ForkLocal::new(Start::Inherit),
        }
    }
}

impl ModVars {
    /// A code object was loaded or unloaded, or a kernel symbol registered: walk again.
    pub fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Release);
    }

    #[inline]
    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::Acquire)
    }

    /// An `hsa_agent_t` ↔ agent id pair; a new one triggers a fresh attribution.
    pub fn learn_pair(&self, hsa: u64, agent: u64, how: u8) {
        if hsa == 0 {
            return;
        }
        let Some(mut p) = self.pairs.lock() else {
            return;
        };
        let fresh = p.agents.insert(agent);
        let better = p.hsa.get(&hsa).is_none_or(|&(_, h)| how < h);
        if better {
            p.hsa.insert(hsa, (agent, how));
        }
        if fresh || better {
            self.mark_dirty();
        }
    }

    /// Walks again if something changed; returns the records to write (and the walk's error,
    /// in which case no variable is counted). `agent` (the window's or dispatch's) joins the GPU
    /// agents seen. `fns` is `None` without ROCr's functions.
    pub fn refresh_if_dirty(
        &self,
        fns: Option<&HsaSymbolFns>,
        agent: Option<u64>,
    ) -> (Vec<Change>, Option<HsaError>) {
        if !self.is_dirty() {
            return (Vec::new(), None);
        }
        let Some(_walk) = WalkClaim::take(&self.walking) else {
            return (Vec::new(), None); // another thread is walking: no wait
        };
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return (Vec::new(), None); // another thread walked just before
        }
        let known: Vec<u64> = {
            let Some(mut p) = self.pairs.lock() else {
                return (Vec::new(), None);
            };
            if let Some(a) = agent {
                p.agents.insert(a);
            }
            p.hsa.keys().copied().collect()
        };
        let (found, err) = match fns.map(|f| walk(f, &known)) {
            Some(Ok(v)) => (v, None),
            Some(Err(e)) => (Vec::new(), Some(e)),
            None => (Vec::new(), None),
        };
        let pairs = self.pairs.with(|p| p.clone()).unwrap_or_default();
        let new = resolve(&found, &pairs);
        let Some(mut cur) = self.result.lock() else {
            return (Vec::new(), err);
        };
        let ch = changes(&cur, &new);
        *cur = new;
        (ch, err)
    }

    /// Writable-variable bytes attributed to `agent`, and the unattributed bytes.
    pub fn for_agent(&self, agent: u64) -> (Bytes, Bytes) {
        self.result
            .with(|r| (r.for_agent(agent), r.unattributed))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(u64, u64, u8)], agents: &[u64]) -> Pairs {
        Pairs {
            hsa: v.iter().map(|&(h, a, how)| (h, (a, how))).collect(),
            agents: agents.iter().copied().collect(),
        }
    }

    const H1: u64 = 0x7000;
    const H2: u64 = 0x7100;

    #[test]
    fn variables_go_to_their_paired_agent() {
        let found = [
            Found {
                hsa_agent: Some(H1),
                size: 8,
            },
            Found {
                hsa_agent: Some(H2),
                size: 32,
            },
            Found {
                hsa_agent: Some(H1),
                size: 4,
            },
        ];
        let p = pairs(
            &[
                (H1, 2, attribution::CODE_OBJECT),
                (H2, 3, attribution::ALLOCATION),
            ],
            &[2, 3],
        );
        let r = resolve(&found, &p);
        assert_eq!(
            r.for_agent(2),
            Bytes {
                bytes: 12,
                variables: 2
            }
        );
        assert_eq!(r.agents[&3].1, attribution::ALLOCATION);
        assert_eq!(r.unattributed, Bytes::default());
    }

    #[test]
    fn without_a_pair_single_agent_or_unattributed() {
        let found = [Found {
            hsa_agent: Some(H1),
            size: 8,
        }];
        let one = resolve(&found, &pairs(&[], &[5]));
        assert_eq!(
            one.agents[&5],
            (
                Bytes {
                    bytes: 8,
                    variables: 1
                },
                attribution::SINGLE_AGENT
            )
        );
        let two = resolve(&found, &pairs(&[], &[5, 6]));
        assert!(two.agents.is_empty());
        assert_eq!(two.unattributed.bytes, 8);
        let program = resolve(
            &[Found {
                hsa_agent: None,
                size: 8,
            }],
            &pairs(&[(H1, 2, attribution::CODE_OBJECT)], &[2, 3]),
        );
        assert_eq!(program.unattributed.bytes, 8);
    }

    #[test]
    fn changes_name_only_what_moved() {
        let a = resolve(
            &[Found {
                hsa_agent: Some(H1),
                size: 8,
            }],
            &pairs(&[], &[2, 3]),
        );
        let b = resolve(
            &[Found {
                hsa_agent: Some(H1),
                size: 8,
            }],
            &pairs(&[(H1, 2, attribution::CODE_OBJECT)], &[2, 3]),
        );
        let ch = changes(&a, &b);
        assert_eq!(ch.len(), 2, "{ch:?}");
        assert_eq!((ch[0].agent, ch[0].bytes.bytes), (2, 8));
        assert_eq!((ch[1].agent, ch[1].bytes.bytes), (UNATTRIBUTED, 0));
        assert!(changes(&b, &b).is_empty());
        let gone = changes(&b, &Resolved::default());
        assert_eq!((gone[0].agent, gone[0].bytes.bytes), (2, 0));
    }

    #[test]
    fn a_walk_in_progress_is_never_waited_for_and_a_fork_parents_claim_is_taken_over() {
        let m = ModVars::default();
        // A thread of this process is walking: another returns at once, the cache stays dirty.
        m.walking.store(std::process::id(), Ordering::Release);
        assert_eq!(m.refresh_if_dirty(None, Some(2)), (Vec::new(), None));
        assert!(m.is_dirty());
        // A claim left by a fork parent's thread (another pid) does not stop this process.
        m.walking.store(std::process::id() + 1, Ordering::Release);
        m.refresh_if_dirty(None, Some(2));
        assert!(!m.is_dirty());
        assert_eq!(m.walking.load(Ordering::Acquire), 0, "released");
    }

    #[test]
    fn a_new_pair_makes_the_cache_dirty_once() {
        let m = ModVars::default();
        assert_eq!(m.refresh_if_dirty(None, Some(2)), (Vec::new(), None));
        assert!(!m.is_dirty());
        m.learn_pair(H1, 2, attribution::ALLOCATION);
        assert!(m.is_dirty());
        m.refresh_if_dirty(None, None);
        m.learn_pair(H1, 2, attribution::ALLOCATION);
        assert!(!m.is_dirty(), "a known pair changes nothing");
        m.learn_pair(H1, 2, attribution::CODE_OBJECT);
        assert!(m.is_dirty(), "a more direct source replaces it");
    }
}
