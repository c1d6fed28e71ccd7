//! Builds `<name>_results.db` from the counter tool's buffer after the application exited, as
//! rocprofv3's rocpd writer does for a counter-collection run without kernel tracing (followed
//! from rocprofiler-sdk's `generateRocpd.cpp` at rocm-systems commit ba070c37d3db, its
//! `uuid_v7.cpp` and the rocpd 3.0.3 schema):
//!
//! - identity: a UUIDv7 `guid`, tables suffixed `_<uuid with _>`, and `rocpd_metadata` rows
//!   `schema_version`, its major/minor/patch, `schema_creation_time`, `uuid` (the suffix,
//!   leading `_` included) and `guid`; the node id (`nid`) is a hash of the machine id
//!   ([`identity`]);
//! - one `rocpd_info_agent` row per agent the SDK reports, CPUs included, whose id is the
//!   agent's KFD node id; counters, code objects and dispatches refer to agents by it, and a
//!   counter supported by several agents is written once, for the first;
//! - the "Default Queue" (id 0) and "Default Stream" (id 0) rows, then one queue row per queue
//!   handle in order of first use ("Queue 0", "Queue 1", …), whose id is the handle; counter
//!   records carry no stream, so every dispatch is on the default stream;
//! - one `rocpd_kernel_dispatch` row per dispatch id (its row id is the dispatch id), made from
//!   the first counter record of that dispatch, with one `rocpd_event` (category
//!   `KERNEL_DISPATCH`); later records of the same dispatch add no dispatch row;
//! - one `rocpd_pmc_event` row per counter of every record, pointing at that dispatch's event.
//!
//! Under kernel replay every pass delivers a record with the same dispatch id, so the pass is
//! dropped: a dispatch keeps the first pass's times, and a counter collected in several passes
//! has several indistinguishable rows on the one event (`counters_collection` sums them).

use super::{identity, schema};
use rusqlite::{Connection, params};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or(0)
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or("")
}

fn read_sys(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .map(|t| t.trim().to_string())
        .unwrap_or_default()
}

/// Writes the database at `db` from the buffer document `doc`; the file appears only complete.
pub fn write(doc: &Value, db: &Path) -> Result<(), String> {
    let tmp = db.with_extension("db.partial");
    let _ = std::fs::remove_file(&tmp);
    let result = check(doc).and_then(|()| {
        Connection::open(&tmp)
            .map_err(|e| e.to_string())
            .and_then(|mut c| fill(&mut c, doc).map_err(|e| e.to_string()))
    });
    match result.and_then(|()| std::fs::rename(&tmp, db).map_err(|e| e.to_string())) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(format!("cannot write {}: {e}", db.display()))
        }
    }
}

/// Refuses a buffer whose records name an agent the buffer's agent list lacks: rocpd rows
/// refer to agents by node id, which only that list gives.
fn check(doc: &Value) -> Result<(), String> {
    let nodes = node_ids(doc);
    let empty = Vec::new();
    let records = doc["records"].as_array().unwrap_or(&empty);
    match records
        .iter()
        .map(|r| u(r, "agent"))
        .find(|a| !nodes.contains_key(a))
    {
        Some(a) => Err(format!(
            "the buffer lists no agent with handle {a} (the SDK reported {} agents)",
            nodes.len()
        )),
        None => Ok(()),
    }
}

/// Agent handle → KFD node id, for every agent the SDK reported.
fn node_ids(doc: &Value) -> BTreeMap<u64, i64> {
    let empty = Vec::new();
    doc["agents"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .map(|a| (u(a, "handle"), u(a, "node_id") as i64))
        .collect()
}

/// Queue handles in order of first use, the default queue (handle 0) excluded.
fn queues(records: &[Value]) -> Vec<u64> {
    let mut seen = HashSet::from([0]);
    records
        .iter()
        .map(|r| u(r, "queue"))
        .filter(|q| seen.insert(*q))
        .collect()
}

/// The machine id rocprofv3 reads, or the host name where the system has none.
fn machine_id(doc: &Value) -> String {
    std::fs::read_to_string("/etc/machine-id")
        .map(|m| m.trim().to_string())
        .ok()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| s(doc, "hostname").to_string())
}

/// What every row needs: node id, pid, and the table-name maker.
struct Ctx<'a> {
    nid: i64,
    pid: i64,
    t: &'a dyn Fn(&str) -> String,
}

fn fill(c: &mut Connection, doc: &Value) -> rusqlite::Result<()> {
    let pid = u(doc, "pid");
    let machine = machine_id(doc);
    let guid = identity::uuid_v7(
        u(doc, "start_unix_ns"),
        &machine,
        pid,
        u(doc, "ppid"),
        u(doc, "start"),
    );
    let uuid = identity::suffix(&guid);
    let tx = c.transaction()?;
    tx.execute_batch(&schema::tables_and_views(&uuid, &guid))?;
    let t = |name: &str| format!("\"rocpd_{name}{uuid}\"");
    metadata_rows(&tx, &t, &uuid, &guid)?;
    let ctx = Ctx {
        nid: identity::node(&machine).1,
        pid: pid as i64,
        t: &t,
    };
    let empty = Vec::new();
    let records = doc["records"].as_array().unwrap_or(&empty);
    info_rows(&tx, doc, &machine, records, &ctx)?;
    dispatch_rows(&tx, &node_ids(doc), records, &ctx)?;
    tx.commit()
}

/// `rocpd_metadata` as the 3.0.3 schema fills it.
fn metadata_rows(
    tx: &rusqlite::Transaction,
    t: &dyn Fn(&str) -> String,
    uuid: &str,
    guid: &str,
) -> rusqlite::Result<()> {
    let mut parts = schema::VERSION.split('.');
    let mut part = || parts.next().unwrap_or("0").to_string();
    let (major, minor, patch) = (part(), part(), part());
    let mut st = tx.prepare(&format!(
        "INSERT INTO {} (tag, value) VALUES (?1, ?2)",
        t("metadata")
    ))?;
    for (tag, value) in [
        ("schema_version", schema::VERSION),
        ("schema_version_major", &major),
        ("schema_version_minor", &minor),
        ("schema_version_patch", &patch),
    ] {
        st.execute(params![tag, value])?;
    }
    tx.execute(
        &format!(
            "INSERT INTO {} (tag, value) VALUES ('schema_creation_time', CURRENT_TIMESTAMP)",
            t("metadata")
        ),
        [],
    )?;
    for (tag, value) in [("uuid", uuid), ("guid", guid)] {
        st.execute(params![tag, value])?;
    }
    Ok(())
}

/// Node, process, threads, agents, queues, stream, code objects, kernel symbols, counters,
/// strings.
fn info_rows(
    tx: &rusqlite::Transaction,
    doc: &Value,
    machine: &str,
    records: &[Value],
    c: &Ctx,
) -> rusqlite::Result<()> {
    let (t, nid, pid) = (c.t, c.nid, c.pid);
    let hash = identity::node(machine).0;
    tx.execute(
        &format!("INSERT INTO {} (id, hash, machine_id, system_name, hostname, release, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", t("info_node")),
        params![nid, hash, machine, read_sys("ostype"), s(doc, "hostname"), read_sys("osrelease"), read_sys("version")],
    )?;
    let command = doc["command"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    tx.execute(
        &format!("INSERT INTO {} (id, nid, ppid, pid, init, fini, start, \"end\", command) VALUES (?1, ?2, ?3, ?1, ?4, ?5, ?4, ?5, ?6)", t("info_process")),
        params![pid, nid, u(doc, "ppid") as i64, u(doc, "start") as i64, u(doc, "end") as i64, command],
    )?;
    let threads: std::collections::BTreeSet<u64> = records.iter().map(|r| u(r, "thread")).collect();
    for tid in threads {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, ppid, pid, tid, start, \"end\") VALUES (?1, ?2, ?3, ?4, ?1, ?5, ?6)", t("info_thread")),
            params![tid as i64, nid, u(doc, "ppid") as i64, pid, u(doc, "start") as i64, u(doc, "end") as i64],
        )?;
    }
    agent_rows(tx, doc, c)?;
    stream_and_queue_rows(tx, records, c)?;
    symbol_rows(tx, doc, records, c)?;
    counter_rows(tx, doc, c)?;
    for (id, string) in [(1, "KERNEL_DISPATCH"), (2, "")] {
        tx.execute(
            &format!("INSERT INTO {} (id, string) VALUES (?1, ?2)", t("string")),
            params![id, string],
        )?;
    }
    Ok(())
}

/// One row per agent the SDK reported, keyed by its node id.
fn agent_rows(tx: &rusqlite::Transaction, doc: &Value, c: &Ctx) -> rusqlite::Result<()> {
    let mut st = tx.prepare(&format!("INSERT INTO {} (id, nid, pid, type, absolute_index, logical_index, type_index, name) VALUES (?1, ?2, ?3, ?4, ?1, ?5, ?6, ?7)", (c.t)("info_agent")))?;
    for a in doc["agents"].as_array().unwrap_or(&Vec::new()) {
        let i = |k: &str| a[k].as_i64().unwrap_or(0);
        st.execute(params![
            i("node_id"),
            c.nid,
            c.pid,
            s(a, "type"),
            i("logical_node_id"),
            i("logical_node_type_id"),
            s(a, "name")
        ])?;
    }
    Ok(())
}

/// The default stream and queue (id 0), then each queue by handle in order of first use.
fn stream_and_queue_rows(
    tx: &rusqlite::Transaction,
    records: &[Value],
    c: &Ctx,
) -> rusqlite::Result<()> {
    let row = |table: &str, id: i64, name: &str| {
        tx.execute(
            &format!(
                "INSERT INTO {} (id, nid, pid, name) VALUES (?1, ?2, ?3, ?4)",
                (c.t)(table)
            ),
            params![id, c.nid, c.pid, name],
        )
    };
    row("info_stream", 0, "Default Stream")?;
    row("info_queue", 0, "Default Queue")?;
    for (i, q) in queues(records).into_iter().enumerate() {
        row("info_queue", q as i64, &format!("Queue {i}"))?;
    }
    Ok(())
}

/// One `rocpd_info_pmc` row per counter id, for the first agent that listed it.
fn counter_rows(tx: &rusqlite::Transaction, doc: &Value, c: &Ctx) -> rusqlite::Result<()> {
    let nodes = node_ids(doc);
    let mut written = HashSet::new();
    for k in doc["counters"].as_array().unwrap_or(&Vec::new()) {
        if !written.insert(u(k, "id")) {
            continue;
        }
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, agent_id, target_arch, name, symbol, description, component, value_type, block, expression, is_constant, is_derived) VALUES (?1, ?2, ?3, ?4, 'GPU', ?5, ?5, ?6, 'rocm', 'ABS', ?7, ?8, ?9, ?10)", (c.t)("info_pmc")),
            params![u(k, "id") as i64, c.nid, c.pid, nodes.get(&u(k, "agent")), s(k, "name"), s(k, "description"), s(k, "block"), s(k, "expression"), k["is_constant"].as_bool().unwrap_or(false), k["is_derived"].as_bool().unwrap_or(false)],
        )?;
    }
    Ok(())
}

/// The node id of each code object's agent: the agent of the first dispatch of one of its
/// kernels (the buffer's symbols carry no agent), else the first GPU the SDK reported.
fn code_object_agents(doc: &Value, records: &[Value]) -> BTreeMap<u64, Option<i64>> {
    let nodes = node_ids(doc);
    let empty = Vec::new();
    let first_gpu = doc["agents"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .find(|a| s(a, "type") == "GPU")
        .map(|a| u(a, "node_id") as i64);
    let mut kernel_agent: BTreeMap<u64, u64> = BTreeMap::new();
    for r in records {
        kernel_agent
            .entry(u(r, "kernel_id"))
            .or_insert(u(r, "agent"));
    }
    let mut out: BTreeMap<u64, Option<i64>> = BTreeMap::new();
    for k in doc["kernel_symbols"].as_array().unwrap_or(&empty) {
        let agent = kernel_agent
            .get(&u(k, "kernel_id"))
            .and_then(|h| nodes.get(h).copied());
        let slot = out.entry(u(k, "code_object_id")).or_insert(None);
        *slot = slot.or(agent);
    }
    out.values_mut().for_each(|a| *a = a.or(first_gpu));
    out
}

/// Code objects (one per id the symbols name) and the kernel symbols.
fn symbol_rows(
    tx: &rusqlite::Transaction,
    doc: &Value,
    records: &[Value],
    c: &Ctx,
) -> rusqlite::Result<()> {
    let (t, nid, pid) = (c.t, c.nid, c.pid);
    for (co, agent) in code_object_agents(doc, records) {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, agent_id, storage_type) VALUES (?1, ?2, ?3, ?4, 'MEMORY')", t("info_code_object")),
            params![co as i64, nid, pid, agent],
        )?;
    }
    for k in doc["kernel_symbols"].as_array().unwrap_or(&Vec::new()) {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count) VALUES (?1, ?2, ?3, ?4, ?5, ?14, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)", t("info_kernel_symbol")),
            params![u(k, "kernel_id") as i64, nid, pid, u(k, "code_object_id") as i64, s(k, "name"), u(k, "kernel_object") as i64, u(k, "kernarg_segment_size") as i64, u(k, "kernarg_segment_alignment") as i64, u(k, "group_segment_size") as i64, u(k, "private_segment_size") as i64, u(k, "sgpr_count") as i64, u(k, "arch_vgpr_count") as i64, u(k, "accum_vgpr_count") as i64, k["display_name"].as_str().unwrap_or(s(k, "name"))],
        )?;
    }
    Ok(())
}

/// One dispatch row and event per dispatch id (the first record's), on the agent's node id,
/// the queue's handle and the default stream; then every record's counter values on its
/// dispatch's event, pass dropped.
fn dispatch_rows(
    tx: &rusqlite::Transaction,
    nodes: &BTreeMap<u64, i64>,
    records: &[Value],
    c: &Ctx,
) -> rusqlite::Result<()> {
    let (t, nid, pid) = (c.t, c.nid, c.pid);
    let mut events: BTreeMap<u64, i64> = BTreeMap::new();
    for r in records {
        let d = u(r, "dispatch_id");
        if events.contains_key(&d) {
            continue;
        }
        tx.execute(
            &format!("INSERT INTO {} (category_id, stack_id, parent_stack_id, correlation_id) VALUES (1, ?1, ?1, 0)", t("event")),
            params![u(r, "correlation") as i64],
        )?;
        let event = tx.last_insert_rowid();
        events.insert(d, event);
        let dim = |k: &str, i: usize| r[k][i].as_i64().unwrap_or(1);
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\", private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?1, ?7, 0, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, 2, ?18)", t("kernel_dispatch")),
            params![d as i64, nid, pid, u(r, "thread") as i64, nodes[&u(r, "agent")], u(r, "kernel_id") as i64, u(r, "queue") as i64, u(r, "start") as i64, u(r, "end") as i64, u(r, "private_segment_size") as i64, u(r, "group_segment_size") as i64, dim("workgroup", 0), dim("workgroup", 1), dim("workgroup", 2), dim("grid", 0), dim("grid", 1), dim("grid", 2), event],
        )?;
    }
    let mut st = tx.prepare(&format!(
        "INSERT INTO {} (event_id, pmc_id, value) VALUES (?1, ?2, ?3)",
        t("pmc_event")
    ))?;
    for r in records {
        let event = events[&u(r, "dispatch_id")];
        for v in r["values"].as_array().unwrap_or(&Vec::new()) {
            st.execute(params![
                event,
                v[0].as_u64().unwrap_or(0) as i64,
                v[1].as_f64().unwrap_or(0.0)
            ])?;
        }
    }
    Ok(())
}
