//! Counter collection in drive mode (`KRPHASE_PMC`): the SDK's dispatch counting service, one
//! counter group per pass.
//!
//! Counters are per agent in the SDK, and a tool learns agents from their dispatches (as the
//! SDK's own kernel-replay samples do), so each agent's names are resolved — supported counters
//! walked, each name found through its version-0 info, one counter config created per group — at
//! the first replay window on that agent, at CONFIG ENTER, once. The configs are leaked into a
//! `'static` slice that the window's thread-local state carries, so the SDK's dispatch callback
//! (before each pass's dispatch) reads its pass's config with no lock. An unknown name is one
//! line naming the closest supported counter; counting then stops for the run, the phases go on.
//!
//! The record callback's reaction is in `counter_records.rs`.

use crate::recorder;
use crate::{fork_local::ForkLocal, say};
use krphase_ffi::{AgentId, ContextId, CounterConfigId, CounterId, Sdk};
use krphase_format::NameSpace;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// The configs of one agent, one per group (`None`: that agent's resolution failed).
type AgentConfigs = Option<&'static [CounterConfigId]>;

/// The counting service's state: the groups, the context it runs in, each agent's configs.
pub struct Counting {
    groups: Vec<Vec<String>>,
    /// `KRPHASE_PMC_REFERENCE`'s counters (already in every group).
    reference: Vec<String>,
    pub ctx: ContextId,
    agents: ForkLocal<HashMap<u64, AgentConfigs>>,
    /// An unknown counter (or a failed SDK call) stopped counting for the rest of the run.
    pub(crate) off: AtomicBool,
}

impl Counting {
    /// Sets up the callback dispatch counting service in a context of its own (started in
    /// `initialize`, once the tool knows it drives replay). `None`, said once, when the SDK
    /// cannot count.
    pub fn configure(
        sdk: &Sdk,
        (groups, reference): (Vec<Vec<String>>, Vec<String>),
        dispatch_cb: krphase_ffi::DispatchCountingServiceFn,
        record_cb: krphase_ffi::DispatchCountingRecordFn,
    ) -> Option<Counting> {
        if !sdk.has_dispatch_counting() {
            say("KRPHASE_PMC: this SDK has no dispatch counting service; running without counters");
            return None;
        }
        let fail = |what: &str, s: krphase_ffi::Status| -> Option<Counting> {
            let name = sdk
                .status_name(s.0)
                .unwrap_or_else(|| format!("status {}", s.0));
            say(&format!(
                "KRPHASE_PMC: {what} failed: {name}; running without counters"
            ));
            None
        };
        let ctx = match sdk.create_context() {
            Ok(c) => c,
            Err(s) => return fail("create_context", s),
        };
        let null = std::ptr::null_mut();
        match sdk.configure_callback_dispatch_counting(ctx, dispatch_cb, null, record_cb, null) {
            Some(Ok(())) => {}
            Some(Err(s)) => return fail("configuring the dispatch counting service", s),
            None => return None,
        }
        Some(Counting {
            groups,
            reference,
            ctx,
            agents: ForkLocal::default(),
            off: AtomicBool::new(false),
        })
    }

    /// How many groups there are (pass i counts group i mod this).
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The configs of `agent`, resolving them on its first window; `None` once counting is off.
    #[cold]
    #[inline(never)]
    pub fn configs(&self, sdk: &Sdk, agent: u64) -> Option<&'static [CounterConfigId]> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        let got = self.agents.with(|m| {
            *m.entry(agent)
                .or_insert_with(|| match self.resolve(sdk, agent) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        self.off.store(true, Ordering::Relaxed);
                        let line = format!("KRPHASE_PMC: {e}; running without counters");
                        say(&line);
                        super::plan_note::note_counting_refused(&line);
                        None
                    }
                })
        });
        got.flatten()
    }

    /// One config per group on `agent`, and the counters' names in the file.
    fn resolve(&self, sdk: &Sdk, agent: u64) -> Result<&'static [CounterConfigId], String> {
        let id = AgentId { handle: agent };
        let status = |what: &str, s: krphase_ffi::Status| {
            let name = sdk
                .status_name(s.0)
                .unwrap_or_else(|| format!("status {}", s.0));
            format!("{what} on agent {agent} failed: {name}")
        };
        let ids = match sdk.agent_counters(id) {
            Some(Ok(ids)) => ids,
            Some(Err(s)) => return Err(status("listing the supported counters", s)),
            None => return Err("the SDK cannot list an agent's counters".into()),
        };
        let known: Vec<(CounterId, String)> = ids
            .iter()
            .filter_map(|&c| sdk.counter_info(c)?.ok())
            .map(|i| (i.id, i.name))
            .collect();
        let mut names = Vec::new();
        let mut configs = Vec::with_capacity(self.groups.len());
        for group in &self.groups {
            let mut want = Vec::with_capacity(group.len());
            for name in group {
                let Some((c, _)) = known.iter().find(|(_, n)| n == name) else {
                    return Err(unknown(name, agent, &known));
                };
                want.push(*c);
                names.push((NameSpace::Counter, c.handle, name.clone()));
            }
            // The SDK checks the counters against the agent's per-block limits here: the
            // reference counters must fit beside every group, or nothing is counted.
            match sdk.create_counter_config(id, &want) {
                Some(Ok(cfg)) => configs.push(cfg),
                Some(Err(s)) if self.reference.iter().any(|r| group.contains(r)) => {
                    let what = format!(
                        "creating the config of {group:?} (with the reference counters {:?})",
                        self.reference
                    );
                    return Err(format!(
                        "{}; the reference counters do not fit beside this group",
                        status(&what, s)
                    ));
                }
                Some(Err(s)) => {
                    return Err(status(&format!("creating the config of {group:?}"), s));
                }
                None => return Err("the SDK cannot create a counter config".into()),
            }
        }
        if let Some(r) = recorder::current() {
            r.send_names(names);
        }
        Ok(Box::leak(configs.into_boxed_slice()))
    }
}

/// The line for a counter `agent` does not support, naming the closest one it does.
fn unknown(name: &str, agent: u64, known: &[(CounterId, String)]) -> String {
    match known
        .iter()
        .min_by_key(|(_, k)| strsim::levenshtein(name, k))
    {
        Some((_, k)) => {
            format!("counter {name:?} is not supported on agent {agent} (did you mean {k}?)")
        }
        None => format!("counter {name:?} is not supported on agent {agent}, which has none"),
    }
}
