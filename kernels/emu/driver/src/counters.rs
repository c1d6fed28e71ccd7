//! The counters the driver collects: one counter config per group and agent, made at the
//! agent's first counted dispatch (as rocprofv3's tool and the SDK samples do), and the records
//! the SDK delivers, kept in memory and written at finalize.

use krphase_ffi::{
    AgentId, CounterConfigId, CounterInfo, CounterRecord, DispatchCountingServiceData,
    KernelDispatchInfo, Sdk,
};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// The configs of each agent (one per group) and each counter id's name.
#[derive(Default)]
pub struct Configs {
    by_agent: HashMap<u64, Vec<CounterConfigId>>,
    names: HashMap<u64, String>,
    /// What the SDK says of each counter a group uses, with its agent (rocpd's `rocpd_info_pmc`).
    infos: Vec<(u64, CounterInfo)>,
}

/// One record callback: a pass of a dispatch, the dispatch as the SDK described it, the thread
/// that delivered it, and its counters' values.
pub struct Delivery {
    pub dispatch_id: u64,
    pub pass: u64,
    pub info: KernelDispatchInfo,
    /// The SDK's internal correlation id of the dispatch.
    pub correlation: u64,
    /// The pass's GPU start and end (the SDK's clock).
    pub start: u64,
    pub end: u64,
    pub thread: u64,
    pub values: Vec<(u64, f64)>,
}

pub static CONFIGS: Mutex<Option<Configs>> = Mutex::new(None);
pub static DELIVERIES: Mutex<Vec<Delivery>> = Mutex::new(Vec::new());

/// The config of `group` on `agent`, creating the agent's configs on first use. `Err` is the
/// failing call's line (fatal for the driver, as for rocprofv3's tool).
pub fn config_for(
    sdk: &Sdk,
    agent: u64,
    groups: &[Vec<String>],
    group: usize,
) -> Result<CounterConfigId, String> {
    let mut guard = CONFIGS.lock().unwrap_or_else(|p| p.into_inner());
    let c = guard.get_or_insert_with(Configs::default);
    if !c.by_agent.contains_key(&agent) {
        let made = make(sdk, agent, groups, c)?;
        c.by_agent.insert(agent, made);
    }
    Ok(c.by_agent[&agent][group])
}

fn make(
    sdk: &Sdk,
    agent: u64,
    groups: &[Vec<String>],
    c: &mut Configs,
) -> Result<Vec<CounterConfigId>, String> {
    let id = AgentId { handle: agent };
    let all = match sdk.agent_counters(id) {
        Some(Ok(v)) => v,
        Some(Err(s)) => return Err(format!("rocprofiler_iterate_agent_supported_counters: {s}")),
        None => return Err("rocprofiler_iterate_agent_supported_counters is missing".into()),
    };
    let known: Vec<CounterInfo> = all
        .iter()
        .filter_map(|&c| sdk.counter_info(c)?.ok())
        .collect();
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let mut want = Vec::new();
        for name in g {
            let Some(info) = known.iter().find(|i| &i.name == name) else {
                return Err(format!("counter {name:?} not found on agent {agent}"));
            };
            want.push(info.id);
            if c.names.insert(info.id.handle, name.clone()).is_none() {
                c.infos.push((agent, info.clone()));
            }
        }
        match sdk.create_counter_config(id, &want) {
            Some(Ok(cfg)) => out.push(cfg),
            Some(Err(s)) => return Err(format!("rocprofiler_create_counter_config: {s}")),
            None => return Err("rocprofiler_create_counter_config is missing".into()),
        }
    }
    Ok(out)
}

/// Keeps one record callback's values, each instance decoded to its counter and the instances
/// of one counter summed (rocprofv3's tool reports one value per counter and dispatch).
pub fn keep(sdk: &Sdk, data: &DispatchCountingServiceData, pass: u64, records: &[CounterRecord]) {
    let mut values: Vec<(u64, f64)> = Vec::new();
    for r in records {
        let c = match sdk.record_counter_id(r.id) {
            Some(Ok(c)) => c.handle,
            _ => r.id,
        };
        match values.iter_mut().find(|(id, _)| *id == c) {
            Some((_, v)) => *v += r.counter_value,
            None => values.push((c, r.counter_value)),
        }
    }
    DELIVERIES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Delivery {
            dispatch_id: data.dispatch_info.dispatch_id,
            pass,
            info: data.dispatch_info,
            correlation: data.correlation_id.internal,
            start: data.start_timestamp,
            end: data.end_timestamp,
            thread: sdk.thread_id().unwrap_or(0),
            values,
        });
}

/// The counters the groups use, with their agents, in the order first configured.
pub fn infos() -> Vec<(u64, CounterInfo)> {
    CONFIGS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|c| c.infos.clone())
        .unwrap_or_default()
}

/// The kept records as JSON Lines: `{"dispatch_id":D,"pass":P,"counters":{"NAME":V,…}}`.
pub fn json_lines() -> (usize, String) {
    let names = CONFIGS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|c| c.names.clone())
        .unwrap_or_default();
    let d = DELIVERIES.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = String::new();
    for r in d.iter() {
        let counters: Vec<String> = r
            .values
            .iter()
            .map(|(id, v)| {
                let name = names
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| format!("counter {id}"));
                format!("\"{name}\":{v}")
            })
            .collect();
        let _ = writeln!(
            out,
            "{{\"dispatch_id\":{},\"pass\":{},\"counters\":{{{}}}}}",
            r.dispatch_id,
            r.pass,
            counters.join(",")
        );
    }
    (d.len(), out)
}
