//! Builds `<name>_results.db` from the counter tool's buffer after the application exited, as
//! rocprofv3's rocpd writer does for a counter-collection run without kernel tracing:
//!
//! - one `rocpd_kernel_dispatch` row per dispatch id (its row id is the dispatch id), made from
//!   the first counter record of that dispatch, with one `rocpd_event` (category
//!   `KERNEL_DISPATCH`); later records of the same dispatch add no dispatch row;
//! - one `rocpd_pmc_event` row per counter of every record, pointing at that dispatch's event.
//!
//! Under kernel replay every pass delivers a record with the same dispatch id, so the pass is
//! dropped: a dispatch keeps the first pass's times, and a counter collected in several passes
//! has several indistinguishable rows on the one event (`counters_collection` sums them).

use super::schema;
use rusqlite::{Connection, params};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A run's identity in table names (`_<uuid>` suffix) and `guid` columns.
fn identity(pid: u64, start: u64) -> (String, String) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let hi = nanos ^ start.rotate_left(17);
    let lo = (pid << 32) ^ start ^ nanos.rotate_left(29);
    let hex = format!("{hi:016x}{lo:016x}");
    let guid = format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    );
    (guid.replace('-', "_"), guid)
}

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
    let result = Connection::open(&tmp)
        .map_err(|e| e.to_string())
        .and_then(|mut c| fill(&mut c, doc).map_err(|e| e.to_string()));
    match result.and_then(|()| std::fs::rename(&tmp, db).map_err(|e| e.to_string())) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(format!("cannot write {}: {e}", db.display()))
        }
    }
}

/// Ids the writer gives agents and queues: 1, 2, … in handle order.
fn numbered(records: &[Value], key: &str) -> BTreeMap<u64, u64> {
    let mut m: BTreeMap<u64, u64> = records.iter().map(|r| (u(r, key), 0)).collect();
    for (i, v) in m.values_mut().enumerate() {
        *v = i as u64 + 1;
    }
    m
}

fn fill(c: &mut Connection, doc: &Value) -> rusqlite::Result<()> {
    let pid = u(doc, "pid");
    let (uuid, guid) = identity(pid, u(doc, "start"));
    let tx = c.transaction()?;
    tx.execute_batch(&schema::tables_and_views(&uuid, &guid))?;
    let t = |name: &str| format!("\"rocpd_{name}_{uuid}\"");
    for (tag, value) in [
        ("schema_version", schema::VERSION),
        ("uuid", &uuid),
        ("guid", &guid),
    ] {
        tx.execute(
            &format!("INSERT INTO {} (tag, value) VALUES (?1, ?2)", t("metadata")),
            params![tag, value],
        )?;
    }
    let empty = Vec::new();
    let records = doc["records"].as_array().unwrap_or(&empty);
    info_rows(&tx, doc, records, &t)?;
    dispatch_rows(&tx, records, pid, &t)?;
    tx.commit()
}

/// Node, process, threads, agents, queues, code objects, kernel symbols, counters, strings.
fn info_rows(
    tx: &rusqlite::Transaction,
    doc: &Value,
    records: &[Value],
    t: &dyn Fn(&str) -> String,
) -> rusqlite::Result<()> {
    let pid = u(doc, "pid");
    let machine = std::fs::read_to_string("/etc/machine-id")
        .map(|m| m.trim().to_string())
        .unwrap_or_else(|_| s(doc, "hostname").to_string());
    let hash = machine.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    }) >> 1;
    tx.execute(
        &format!("INSERT INTO {} (id, hash, machine_id, system_name, hostname, release, version) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6)", t("info_node")),
        params![hash as i64, machine, read_sys("ostype"), s(doc, "hostname"), read_sys("osrelease"), read_sys("version")],
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
        &format!("INSERT INTO {} (id, nid, ppid, pid, init, fini, start, \"end\", command) VALUES (?1, 1, ?2, ?1, ?3, ?4, ?3, ?4, ?5)", t("info_process")),
        params![pid as i64, u(doc, "ppid") as i64, u(doc, "start") as i64, u(doc, "end") as i64, command],
    )?;
    for (tid, _) in numbered(records, "thread") {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, ppid, pid, tid, start, \"end\") VALUES (?1, 1, ?2, ?3, ?1, ?4, ?5)", t("info_thread")),
            params![tid as i64, u(doc, "ppid") as i64, pid as i64, u(doc, "start") as i64, u(doc, "end") as i64],
        )?;
    }
    let agents = numbered(records, "agent");
    for (i, id) in agents.values().enumerate() {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, type, absolute_index, logical_index, type_index, name) VALUES (?1, 1, ?2, 'GPU', ?1, ?1, ?3, 'krphase-emu')", t("info_agent")),
            params![*id as i64, pid as i64, i as i64],
        )?;
    }
    for (i, id) in numbered(records, "queue").values().enumerate() {
        tx.execute(
            &format!(
                "INSERT INTO {} (id, nid, pid, name) VALUES (?1, 1, ?2, ?3)",
                t("info_queue")
            ),
            params![*id as i64, pid as i64, format!("Queue {i}")],
        )?;
    }
    symbol_rows(tx, doc, &agents, t)?;
    for c in doc["counters"].as_array().unwrap_or(&Vec::new()) {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, agent_id, target_arch, name, symbol, description, component, value_type, block, expression, is_constant, is_derived) VALUES (?1, 1, ?2, ?3, 'GPU', ?4, ?4, ?5, 'rocm', 'ABS', ?6, ?7, ?8, ?9)", t("info_pmc")),
            params![u(c, "id") as i64, pid as i64, agents.get(&u(c, "agent")).map(|a| *a as i64), s(c, "name"), s(c, "description"), s(c, "block"), s(c, "expression"), c["is_constant"].as_bool().unwrap_or(false), c["is_derived"].as_bool().unwrap_or(false)],
        )?;
    }
    for (id, string) in [(1, "KERNEL_DISPATCH"), (2, "")] {
        tx.execute(
            &format!("INSERT INTO {} (id, string) VALUES (?1, ?2)", t("string")),
            params![id, string],
        )?;
    }
    Ok(())
}

/// Code objects (one per id the symbols name) and the kernel symbols.
fn symbol_rows(
    tx: &rusqlite::Transaction,
    doc: &Value,
    agents: &BTreeMap<u64, u64>,
    t: &dyn Fn(&str) -> String,
) -> rusqlite::Result<()> {
    let pid = u(doc, "pid") as i64;
    let empty = Vec::new();
    let symbols = doc["kernel_symbols"].as_array().unwrap_or(&empty);
    let objects: std::collections::BTreeSet<u64> =
        symbols.iter().map(|k| u(k, "code_object_id")).collect();
    let agent = agents.values().next().map(|a| *a as i64);
    for co in objects {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, agent_id, storage_type) VALUES (?1, 1, ?2, ?3, 'MEMORY')", t("info_code_object")),
            params![co as i64, pid, agent],
        )?;
    }
    for k in symbols {
        tx.execute(
            &format!("INSERT INTO {} (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count) VALUES (?1, 1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", t("info_kernel_symbol")),
            params![u(k, "kernel_id") as i64, pid, u(k, "code_object_id") as i64, s(k, "name"), u(k, "kernel_object") as i64, u(k, "kernarg_segment_size") as i64, u(k, "kernarg_segment_alignment") as i64, u(k, "group_segment_size") as i64, u(k, "private_segment_size") as i64, u(k, "sgpr_count") as i64, u(k, "arch_vgpr_count") as i64, u(k, "accum_vgpr_count") as i64],
        )?;
    }
    Ok(())
}

/// One dispatch row and event per dispatch id (the first record's), then every record's counter
/// values on its dispatch's event, pass dropped.
fn dispatch_rows(
    tx: &rusqlite::Transaction,
    records: &[Value],
    pid: u64,
    t: &dyn Fn(&str) -> String,
) -> rusqlite::Result<()> {
    let agents = numbered(records, "agent");
    let queues = numbered(records, "queue");
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
            &format!("INSERT INTO {} (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\", private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) VALUES (?1, 1, ?2, ?3, ?4, ?5, ?1, ?6, 0, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, 2, ?17)", t("kernel_dispatch")),
            params![d as i64, pid as i64, u(r, "thread") as i64, agents[&u(r, "agent")] as i64, u(r, "kernel_id") as i64, queues[&u(r, "queue")] as i64, u(r, "start") as i64, u(r, "end") as i64, u(r, "private_segment_size") as i64, u(r, "group_segment_size") as i64, dim("workgroup", 0), dim("workgroup", 1), dim("workgroup", 2), dim("grid", 0), dim("grid", 1), dim("grid", 2), event],
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
