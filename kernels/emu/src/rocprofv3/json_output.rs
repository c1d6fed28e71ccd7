//! `--output-format json` under kernel replay: the counter tool's buffer (the one the rocpd
//! writer reads, `rocpd::BUFFER`) written as rocprofv3's JSON writer lays out its document
//! (rocprofiler-sdk in ROCm/rocm-systems, `source/lib/output/generateJSON.cpp` @0980d0d7, the
//! counter record of `counter_info.hpp` @92bf721e, and `replay_pass` from
//! `using-kernel-replay-rocprofv3.rst` @02c1fdd9): one top-level key `rocprofiler-sdk-tool`
//! holding one node per process with `metadata`, `agents`, `counters`, `strings`,
//! `code_objects`, `kernel_symbols`, `host_functions`, `summary`, `callback_records` (the
//! counter records, one per pass of each dispatch, with `replay_pass`) and `buffer_records`
//! (empty here: the stand-in traces nothing). The sources read do not place `replay_pass`
//! within the record; it is written beside `dispatch_data`.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// rocprofv3's JSON name: `<output file>_results.json`, the output file being the pid when `-o`
/// is not given (as for the rocpd database).
pub fn json_path(dir: &Path, name: Option<&str>, pid: u64) -> PathBuf {
    let stem = name.map_or_else(|| pid.to_string(), str::to_string);
    dir.join(format!("{stem}_results.json"))
}

fn handle(v: &Value) -> Value {
    json!({ "handle": v })
}

fn dim3(v: &Value) -> Value {
    json!({ "x": v[0], "y": v[1], "z": v[2] })
}

/// One counter record of the buffer as rocprofv3's `tool_counter_record_t`.
fn counter_record(r: &Value) -> Value {
    let values: Vec<Value> = r["values"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|p| json!({ "counter_id": handle(&p[0]), "value": p[1] }))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "thread_id": r["thread"],
        "dispatch_data": {
            "size": 0,
            "correlation_id": { "internal": r["correlation"], "external": { "value": 0 } },
            "dispatch_info": {
                "size": 0,
                "agent_id": handle(&r["agent"]),
                "queue_id": handle(&r["queue"]),
                "kernel_id": r["kernel_id"],
                "dispatch_id": r["dispatch_id"],
                "private_segment_size": r["private_segment_size"],
                "group_segment_size": r["group_segment_size"],
                "workgroup_size": dim3(&r["workgroup"]),
                "grid_size": dim3(&r["grid"]),
            },
            "start_timestamp": r["start"],
            "end_timestamp": r["end"],
        },
        "records": values,
        "stream_id": { "handle": 0 },
        "replay_pass": r["pass"],
    })
}

fn list(doc: &Value, key: &str, f: impl Fn(&Value) -> Value) -> Vec<Value> {
    doc[key]
        .as_array()
        .map(|a| a.iter().map(f).collect())
        .unwrap_or_default()
}

/// The document for the buffer `doc`.
pub fn document(doc: &Value) -> Value {
    let agents = list(doc, "agents", |a| {
        json!({
            "id": handle(&a["handle"]), "type": a["type"], "node_id": a["node_id"],
            "logical_node_id": a["logical_node_id"],
            "logical_node_type_id": a["logical_node_type_id"], "name": a["name"],
        })
    });
    let counters = list(doc, "counters", |c| {
        json!({
            "agent_id": handle(&c["agent"]), "id": handle(&c["id"]), "name": c["name"],
            "description": c["description"], "block": c["block"],
            "expression": c["expression"], "is_constant": c["is_constant"],
            "is_derived": c["is_derived"],
        })
    });
    let empty = |keys: &[&str]| -> Value {
        Value::Object(keys.iter().map(|k| (k.to_string(), json!([]))).collect())
    };
    let node = json!({
        "metadata": {
            "node": { "hostname": doc["hostname"] },
            "pid": doc["pid"],
            "init_time": doc["start"],
            "fini_time": doc["end"],
            "command": doc["command"],
            "config": {},
        },
        "agents": agents,
        "counters": counters,
        "strings": {
            "callback_records": [], "buffer_records": [], "marker_api": [],
            "correlation_id": { "external": [] },
            "counters": { "dimension_ids": [] },
            "pc_sample_instructions": [], "pc_sample_comments": [],
            "att_filenames": [], "code_object_snapshot_filenames": [],
        },
        "code_objects": [],
        "kernel_symbols": doc["kernel_symbols"],
        "host_functions": [],
        "summary": [],
        "callback_records": {
            "counter_collection": list(doc, "records", counter_record),
            "spm_counter_collection": [],
        },
        "buffer_records": empty(&[
            "kernel_dispatch", "hip_api", "hsa_api", "marker_api", "rccl_api", "memory_copy",
            "memory_allocation", "scratch_memory", "kfd", "rocdecode_api", "rocjpeg_api",
            "hipfile_api", "pc_sample_host_trap", "pc_sample_stochastic", "hip_graph",
            "rocshmem_api",
        ]),
    });
    json!({ "rocprofiler-sdk-tool": [node] })
}

/// Writes the JSON output of the buffer in `dir`; returns its path.
pub fn write(dir: &Path, name: Option<&str>, buffer: &Value) -> Result<PathBuf, String> {
    let pid = buffer["pid"].as_u64().unwrap_or(0);
    let path = json_path(dir, name, pid);
    let text = serde_json::to_string_pretty(&document(buffer))
        .map_err(|e| format!("cannot encode {}: {e}", path.display()))?;
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pass_is_one_counter_record_with_its_replay_pass() {
        let buffer = json!({
            "pid": 42, "hostname": "node", "start": 10, "end": 90, "command": ["app"],
            "agents": [], "kernel_symbols": [],
            "counters": [{ "id": 7, "agent": 1, "name": "SQ_WAVES" }],
            "records": [
                { "dispatch_id": 3, "pass": 0, "values": [[7, 64.0]], "grid": [1, 1, 1],
                  "workgroup": [1, 1, 1] },
                { "dispatch_id": 3, "pass": 1, "values": [[7, 64.0]], "grid": [1, 1, 1],
                  "workgroup": [1, 1, 1] },
            ],
        });
        let d = document(&buffer);
        let node = &d["rocprofiler-sdk-tool"][0];
        assert_eq!(node["metadata"]["pid"], 42);
        assert_eq!(node["metadata"]["node"]["hostname"], "node");
        let recs = node["callback_records"]["counter_collection"]
            .as_array()
            .unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1]["replay_pass"], 1);
        assert_eq!(recs[1]["dispatch_data"]["dispatch_info"]["dispatch_id"], 3);
        assert_eq!(recs[0]["records"][0]["counter_id"]["handle"], 7);
        assert_eq!(node["counters"][0]["id"]["handle"], 7);
    }
}
