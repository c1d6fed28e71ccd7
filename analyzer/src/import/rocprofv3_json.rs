//! rocprofv3's JSON output (`--output-format json`, `<name>_results.json`) attached to the run it
//! proves, its counter records stored by dispatch id and `replay_pass` (`krphase_json_*`), so that
//! counters collected in more than one pass can be compared pass to pass (`answers/fidelity`).
//!
//! The layout, as rocprofv3's JSON writer lays it out (rocprofiler-sdk in ROCm/rocm-systems,
//! `source/lib/output/generateJSON.cpp` @0980d0d7 and the counter record of `counter_info.hpp`
//! @92bf721e; the `replay_pass` field from `using-kernel-replay-rocprofv3.rst` @02c1fdd9): one
//! top-level key `rocprofiler-sdk-tool`, an array with one node per process holding `metadata`
//! (`pid`, `init_time`, `fini_time` in the SDK's clock, `node` with the `hostname`),
//! `counters` (each counter's `id.handle` and `name`) and
//! `callback_records.counter_collection`, one record per delivered dispatch counting callback:
//! `dispatch_data.dispatch_info.dispatch_id`, `records` (`counter_id.handle`, `value`, one per
//! dimension instance, summed here per counter) and `replay_pass` (0-based). The sources read
//! do not show where in the record the writer puts `replay_pass`: it is read on the record and,
//! failing that, on its `dispatch_data`; a record with neither has no pass (NULL).
//!
//! The process is proven as a rocpd process is (`rocpd::proof`: pid, host and overlapping time).
//! Malformed JSON, or a file that proves no run, changes nothing.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, params};
use serde_json::Value;

use crate::db;
use crate::rocpd::proof::{self, Process};

/// The key rocprofv3's JSON writer opens its document with: how the file is told by content.
pub const TOP_KEY: &str = "rocprofiler-sdk-tool";

/// One counter record: a dispatch, its pass, and each counter's value summed over instances.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub dispatch_id: i64,
    pub pass: Option<i64>,
    pub values: BTreeMap<String, f64>,
}

/// One process of the file.
#[derive(Debug, Clone)]
pub struct JsonProcess {
    pub process: Process,
    pub records: Vec<Record>,
}

fn handle(v: &Value) -> Option<u64> {
    v.get("handle")
        .and_then(Value::as_u64)
        .or_else(|| v.as_u64())
}

fn process_of(node: &Value, i: usize) -> Result<JsonProcess> {
    let meta = &node["metadata"];
    let pid = meta["pid"]
        .as_i64()
        .with_context(|| format!("process {i} has no metadata.pid"))?;
    let hostname = meta["node"]["hostname"].as_str().unwrap_or("").to_string();
    let time = |k: &str| meta[k].as_i64().filter(|t| *t > 0);
    let names: BTreeMap<u64, String> = node["counters"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter_map(|c| Some((handle(&c["id"])?, c["name"].as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let mut records = Vec::new();
    let empty = Vec::new();
    let list = node["callback_records"]["counter_collection"]
        .as_array()
        .unwrap_or(&empty);
    for (j, r) in list.iter().enumerate() {
        let dd = &r["dispatch_data"];
        let dispatch_id = dd["dispatch_info"]["dispatch_id"]
            .as_i64()
            .with_context(|| format!("counter record {j} has no dispatch_info.dispatch_id"))?;
        let pass = r
            .get("replay_pass")
            .or_else(|| dd.get("replay_pass"))
            .and_then(Value::as_i64);
        let mut values = BTreeMap::new();
        for v in r["records"].as_array().unwrap_or(&empty) {
            let id = handle(&v["counter_id"])
                .with_context(|| format!("counter record {j} has a value without counter_id"))?;
            let name = names
                .get(&id)
                .cloned()
                .unwrap_or_else(|| format!("counter {id}"));
            *values.entry(name).or_insert(0.0) += v["value"].as_f64().unwrap_or(0.0);
        }
        records.push(Record {
            dispatch_id,
            pass,
            values,
        });
    }
    Ok(JsonProcess {
        process: Process {
            guid: String::new(),
            pid,
            hostname,
            start: time("init_time"),
            end: time("fini_time"),
        },
        records,
    })
}

/// The processes of rocprofv3's JSON document `doc`, or the one line saying why it is not one.
pub fn parse(doc: &Value) -> Result<Vec<JsonProcess>> {
    let nodes = doc[TOP_KEY]
        .as_array()
        .with_context(|| format!("no {TOP_KEY:?} array: not rocprofv3's JSON output"))?;
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| process_of(n, i))
        .collect()
}

/// What one process's import stored.
pub struct Imported {
    pub run_id: i64,
    pub process: Process,
    pub records: usize,
    pub matched: usize,
    pub values: usize,
    pub replaced: bool,
}

fn store(
    conn: &mut Connection,
    path: &Path,
    hash: &str,
    run: i64,
    p: &JsonProcess,
) -> Result<Imported> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let replaced = tx.execute(
        "DELETE FROM krphase_json_file WHERE file_hash = ?1 AND run_id = ?2",
        params![hash, run],
    )? > 0;
    let mut windows: BTreeMap<i64, i64> = BTreeMap::new();
    {
        let mut st = tx.prepare("SELECT dispatch_id, id FROM krphase_window WHERE run_id = ?1")?;
        let rows = st.query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))?;
        for row in rows {
            let (d, w) = row?;
            windows.insert(d, w);
        }
    }
    let matched = p
        .records
        .iter()
        .filter(|r| windows.contains_key(&r.dispatch_id))
        .count();
    tx.execute(
        "INSERT INTO krphase_json_file (run_id, path, file_hash, pid, host, \"start\", \"end\",
                                        records, matched, imported_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, datetime('now'))",
        params![
            run,
            path.display().to_string(),
            hash,
            p.process.pid,
            p.process.hostname,
            p.process.start,
            p.process.end,
            p.records.len() as i64,
            matched as i64
        ],
    )?;
    let file_id = tx.last_insert_rowid();
    let mut values = 0;
    {
        let mut ins = tx.prepare(
            "INSERT INTO krphase_json_counter (json_file_id, run_id, window_id, dispatch_id,
                                               pass_index, counter, value)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for r in &p.records {
            let w = windows.get(&r.dispatch_id);
            for (name, v) in &r.values {
                ins.execute(params![file_id, run, w, r.dispatch_id, r.pass, name, v])?;
                values += 1;
            }
        }
    }
    tx.commit()?;
    Ok(Imported {
        run_id: run,
        process: p.process.clone(),
        records: p.records.len(),
        matched,
        values,
        replaced,
    })
}

/// Imports every process of the JSON file at `path` that proves an imported run; refuses,
/// storing nothing, when the file is not rocprofv3's JSON or no process proves a run.
pub fn import_json(conn: &mut Connection, path: &Path) -> Result<(Vec<Imported>, Vec<String>)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let doc: Value = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("{}: not valid JSON ({e}); nothing stored", path.display()))?;
    let procs =
        parse(&doc).map_err(|e| anyhow::anyhow!("{}: {e}; nothing stored", path.display()))?;
    if procs.is_empty() {
        bail!(
            "{}: rocprofv3's JSON holds no process; nothing stored",
            path.display()
        );
    }
    let mut proven = Vec::new();
    let mut skipped = Vec::new();
    for p in &procs {
        match proof::run_of(conn, &p.process) {
            Ok(run) => proven.push((run, p)),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    if proven.is_empty() {
        bail!("{}: {}; nothing stored", path.display(), skipped[0]);
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let mut out = Vec::new();
    for (run, p) in proven {
        out.push(store(conn, path, &hash, run, p)?);
    }
    Ok((out, skipped))
}

/// `krphase import FILE` of rocprofv3's JSON: one line per process attached.
pub fn import_json_command(db_path: &Path, file: &Path) -> Result<()> {
    let mut conn = db::open_existing(db_path)?;
    let (imported, skipped) = import_json(&mut conn, file)?;
    for why in skipped {
        println!("{}: a process left out: {why}", file.display());
    }
    for i in imported {
        println!(
            "{}: rocprofv3 JSON, process {} on {} is run {}: {} counter records ({} on its \
             windows), {} values{}",
            file.display(),
            i.process.pid,
            i.process.hostname,
            i.run_id,
            i.records,
            i.matched,
            i.values,
            if i.replaced {
                "; replaced the earlier import"
            } else {
                ""
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(pass_on_record: bool) -> Value {
        let pass = serde_json::json!(2);
        let mut rec = serde_json::json!({
            "thread_id": 1,
            "dispatch_data": { "dispatch_info": { "dispatch_id": 9 } },
            "records": [
                { "counter_id": { "handle": 5 }, "value": 3.0 },
                { "counter_id": { "handle": 5 }, "value": 4.0 },
                { "counter_id": { "handle": 6 }, "value": 1.0 }
            ],
        });
        if pass_on_record {
            rec["replay_pass"] = pass;
        } else {
            rec["dispatch_data"]["replay_pass"] = pass;
        }
        serde_json::json!({ TOP_KEY: [{
            "metadata": { "pid": 77, "init_time": 10, "fini_time": 20,
                          "node": { "hostname": "node" } },
            "counters": [ { "id": { "handle": 5 }, "name": "SQ_WAVES" } ],
            "callback_records": { "counter_collection": [rec] },
        }]})
    }

    /// The sources read do not place `replay_pass` within the record: both places are read.
    #[test]
    fn replay_pass_is_read_on_the_record_or_its_dispatch_data() {
        for on_record in [true, false] {
            let p = parse(&doc(on_record)).unwrap();
            assert_eq!(p.len(), 1);
            assert_eq!(p[0].process.pid, 77);
            assert_eq!(p[0].process.hostname, "node");
            assert_eq!((p[0].process.start, p[0].process.end), (Some(10), Some(20)));
            let r = &p[0].records[0];
            assert_eq!((r.dispatch_id, r.pass), (9, Some(2)));
            // Instances of one counter summed; an unnamed counter shown by its id.
            assert_eq!(r.values["SQ_WAVES"], 7.0);
            assert_eq!(r.values["counter 6"], 1.0);
        }
        let mut none = doc(true);
        let rec = &mut none[TOP_KEY][0]["callback_records"]["counter_collection"][0];
        rec.as_object_mut().unwrap().remove("replay_pass");
        assert_eq!(parse(&none).unwrap()[0].records[0].pass, None);
    }

    #[test]
    fn a_document_that_is_not_rocprofv3s_is_refused_in_one_line() {
        let e = parse(&serde_json::json!({ "other": [] })).unwrap_err();
        assert!(e.to_string().contains("not rocprofv3's JSON output"), "{e}");
        let mut d = doc(true);
        d[TOP_KEY][0]["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("pid");
        assert!(parse(&d).unwrap_err().to_string().contains("metadata.pid"));
    }
}
