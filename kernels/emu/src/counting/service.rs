//! The counting service around one kernel packet: the dispatch callbacks on the submitting
//! thread (for a replayed dispatch once per pass, after that pass's PASS ENTER), and the record
//! callbacks on the async-handler thread once the kernel has run, before its signal is released
//! (so a pass's records arrive before its PASS EXIT). Each delivery also writes a
//! `counter_record` truth line.

use super::model::{self, PassEffect};
use super::{catalogue, configs};
use crate::sdk::{CountingService, sdk};
use crate::tool_time::{Call, timed};
use crate::truth;
use krphase_ffi::{
    AgentId, AsyncCorrelationId, CounterConfigId, CounterRecord, DispatchCountingServiceData,
    KernelDispatchInfo, UserData,
};
use serde_json::json;
use std::ffi::c_void;

/// What one context asked to count for one packet.
#[derive(Debug, Clone)]
pub struct Request {
    context: u64,
    service: CountingService,
    config: u64,
    /// The tool's user data for this dispatch, as its 8 bytes (the union holds a pointer, which
    /// is not `Send`; the record callback gets the same bits back).
    user_data: u64,
}

fn service_data(
    info: &KernelDispatchInfo,
    corr: u64,
    times: (u64, u64),
) -> DispatchCountingServiceData {
    DispatchCountingServiceData {
        size: std::mem::size_of::<DispatchCountingServiceData>() as u64,
        correlation_id: AsyncCorrelationId {
            internal: corr,
            external: UserData::default(),
        },
        start_timestamp: times.0,
        end_timestamp: times.1,
        dispatch_info: *info,
    }
}

/// Calls every active counting context's dispatch callback (except contexts locally stopped for
/// this pass) and keeps the configs they chose; a context that leaves the config at 0 counts
/// nothing for this packet.
pub fn dispatch(info: &KernelDispatchInfo, corr: u64, suppressed: &[u64]) -> Vec<Request> {
    let mut out = Vec::new();
    for sub in sdk().counting_subscribers() {
        if suppressed.contains(&sub.context) {
            continue;
        }
        let svc = sub.service;
        let mut config = CounterConfigId::default();
        let mut user_data = UserData::default();
        let data = service_data(info, corr, (0, 0));
        // SAFETY: the tool registered this callback through the C API with this signature; the
        // out-pointers are live for the call.
        timed(Call::Callback, || unsafe {
            (svc.dispatch)(
                data,
                &mut config,
                &mut user_data,
                svc.dispatch_data as *mut c_void,
            )
        });
        if config.handle != 0 {
            out.push(Request {
                context: sub.context,
                service: svc,
                config: config.handle,
                user_data: user_data.as_u64(),
            });
        }
    }
    out
}

/// Delivers one record callback per request, with one record per counter of its config.
/// A config that does not exist (destroyed) or belongs to another agent counts nothing.
pub fn deliver(
    requests: &[Request],
    info: &KernelDispatchInfo,
    corr: u64,
    pass: Option<u64>,
    times: (u64, u64),
    effect: &PassEffect,
) {
    for r in requests {
        let user_data = UserData { value: r.user_data };
        let Some(cfg) = configs::get(r.config).filter(|c| c.agent == info.agent_id.handle) else {
            continue;
        };
        let mut records: Vec<CounterRecord> = cfg
            .counters
            .iter()
            .map(|&i| CounterRecord {
                id: catalogue::instance_id(catalogue::counter_id(cfg.agent, i)),
                counter_value: model::value(i, info, effect),
                dispatch_id: info.dispatch_id,
                user_data,
                agent_id: AgentId { handle: cfg.agent },
            })
            .collect();
        let data = service_data(info, corr, times);
        let svc = r.service;
        // SAFETY: as in `dispatch`; `records` holds `records.len()` records for the call.
        timed(Call::Callback, || unsafe {
            (svc.record)(
                data,
                records.as_mut_ptr(),
                records.len(),
                user_data,
                svc.record_data as *mut c_void,
            )
        });
        if truth::enabled() {
            truth::write(&json!({
                "type": "counter_record", "pid": std::process::id(),
                "dispatch_id": info.dispatch_id, "kernel_id": info.kernel_id,
                "pass": pass, "context": r.context, "agent": cfg.agent, "config": r.config,
                "grid": info.grid_size.x, "workgroup": info.workgroup_size.x,
                "counters": cfg.counters.iter().map(|&i| json!({
                    "name": catalogue::COUNTERS[i].name,
                    "id": catalogue::counter_id(cfg.agent, i),
                    "value": model::value(i, info, effect),
                })).collect::<Vec<_>>(),
            }));
        }
    }
}
