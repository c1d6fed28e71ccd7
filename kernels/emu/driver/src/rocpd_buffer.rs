//! What rocprofv3's tool keeps for its rocpd writer, written at finalize into the output
//! directory as one JSON document (rocprofv3's tool leaves its buffers there the same way, and
//! its launcher turns them into `<name>_results.db` after the application exits): the process
//! (pid, parent, host, command line, its span in the SDK's clock and its start on the wall
//! clock), every agent the SDK reports (CPUs too, with their KFD node ids, by which rocpd rows
//! refer to agents), the kernel symbols the SDK reported, the counters the groups use and every counter record delivered, in delivery order
//! (under kernel replay one per pass, each with its pass).

use crate::counters::{self, DELIVERIES};
use krphase_ffi::{KernelSymbolData, Sdk, agent_type};
use serde_json::{Value, json};
use std::ffi::CStr;
use std::sync::Mutex;

/// Kernel symbols as the SDK's code-object callbacks reported them.
static SYMBOLS: Mutex<Vec<Value>> = Mutex::new(Vec::new());

/// Keeps one kernel symbol (`name` already read from the payload; `display` the name in the
/// form rocprofv3 shows, rocpd's `display_name`).
pub fn keep_symbol(k: &KernelSymbolData, name: &str, display: &str) {
    let v = json!({
        "kernel_id": k.kernel_id, "code_object_id": k.code_object_id, "name": name,
        "display_name": display,
        "kernel_object": k.kernel_object,
        "kernarg_segment_size": k.kernarg_segment_size,
        "kernarg_segment_alignment": k.kernarg_segment_alignment,
        "group_segment_size": k.group_segment_size,
        "private_segment_size": k.private_segment_size,
        "sgpr_count": k.sgpr_count, "arch_vgpr_count": k.arch_vgpr_count,
        "accum_vgpr_count": k.accum_vgpr_count,
    });
    SYMBOLS.lock().unwrap_or_else(|p| p.into_inner()).push(v);
}

/// The kernel name of a kernel-symbol payload, if it has one.
pub fn symbol_name(k: &KernelSymbolData) -> Option<String> {
    if k.kernel_name.is_null() {
        return None;
    }
    // SAFETY: the SDK's kernel name is a NUL-terminated string live for the callback that
    // handed `k` over.
    Some(
        unsafe { CStr::from_ptr(k.kernel_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

fn command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

fn records() -> Vec<Value> {
    let d = DELIVERIES.lock().unwrap_or_else(|p| p.into_inner());
    d.iter()
        .map(|r| {
            let i = &r.info;
            let dim = |d: krphase_ffi::Dim3| json!([d.x, d.y, d.z]);
            json!({
                "dispatch_id": r.dispatch_id, "pass": r.pass, "kernel_id": i.kernel_id,
                "agent": i.agent_id.handle, "queue": i.queue_id.handle, "thread": r.thread,
                "correlation": r.correlation, "start": r.start, "end": r.end,
                "grid": dim(i.grid_size), "workgroup": dim(i.workgroup_size),
                "private_segment_size": i.private_segment_size,
                "group_segment_size": i.group_segment_size,
                "values": r.values,
            })
        })
        .collect()
}

/// Every agent the SDK reports; an SDK without the query leaves the list empty and the writer
/// refuses the buffer (it cannot number agents by node id without it).
fn agents(sdk: &Sdk) -> Vec<Value> {
    match sdk.agents() {
        Some(Ok(agents)) => agents
            .into_iter()
            .map(|a| {
                let kind = match a.kind {
                    agent_type::CPU => "CPU",
                    agent_type::GPU => "GPU",
                    _ => "UNK",
                };
                json!({
                    "handle": a.id.handle, "type": kind, "node_id": a.node_id,
                    "logical_node_id": a.logical_node_id,
                    "logical_node_type_id": a.logical_node_type_id, "name": a.name,
                })
            })
            .collect(),
        Some(Err(s)) => {
            eprintln!("[rocprofiler-sdk-tool] rocprofiler_query_available_agents: {s}");
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// The whole buffer; `start` is the SDK's timestamp at the tool's initialize, `start_unix_ns`
/// the wall clock then.
pub fn document(sdk: &Sdk, start: u64, start_unix_ns: u64) -> Value {
    let counters: Vec<Value> = counters::infos()
        .into_iter()
        .map(|(agent, c)| {
            json!({
                "id": c.id.handle, "agent": agent, "name": c.name,
                "description": c.description, "block": c.block, "expression": c.expression,
                "is_constant": c.is_constant, "is_derived": c.is_derived,
            })
        })
        .collect();
    json!({
        "pid": std::process::id(),
        "ppid": std::os::unix::process::parent_id(),
        "hostname": hostname(),
        "command": command_line(),
        "start": start,
        "start_unix_ns": start_unix_ns,
        "agents": agents(sdk),
        "end": sdk.timestamp().unwrap_or(start),
        "kernel_symbols": *SYMBOLS.lock().unwrap_or_else(|p| p.into_inner()),
        "counters": counters,
        "records": records(),
    })
}
