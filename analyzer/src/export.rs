//! `krphase export perfetto RUN -o trace.json`: Chrome trace-event JSON that opens in Perfetto.
//!
//! One track per host thread and one per queue. Each window is a slice on its thread with nested
//! config, pre-pass (split into drain and snapshot when an SDK log is joined), pass, continue
//! (PASS EXIT → replay_continue return, when recorded), restore and
//! tail slices; each pass's GPU execution is a slice on its queue's track; declines are instant
//! events (a stuck window, `pass_drain_stuck`, also keeps its slices, the stuck pass up to CONFIG
//! EXIT). Written as a stream, one event at a time.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::Connection;
use serde_json::{Value, json};

/// Queue tracks get thread ids above this, so they never collide with host thread ids.
const QUEUE_TID_BASE: i64 = 1 << 40;

struct Out<W: Write> {
    w: W,
    first: bool,
    pid: i64,
    origin: i64,
    events: u64,
}

impl<W: Write> Out<W> {
    fn emit(&mut self, v: Value) -> Result<()> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.w, &v)?;
        self.events += 1;
        Ok(())
    }

    fn us(&self, ns: i64) -> f64 {
        (ns - self.origin) as f64 / 1000.0
    }

    /// A complete ("X") slice; skipped when either end is unknown or it runs backwards.
    fn slice(
        &mut self,
        tid: i64,
        name: &str,
        cat: &str,
        start: Option<i64>,
        end: Option<i64>,
        args: Value,
    ) -> Result<()> {
        let (Some(s), Some(e)) = (start, end) else {
            return Ok(());
        };
        if e < s {
            return Ok(());
        }
        let v = json!({"ph": "X", "pid": self.pid, "tid": tid, "name": name, "cat": cat,
                       "ts": self.us(s), "dur": (e - s) as f64 / 1000.0, "args": args});
        self.emit(v)
    }
}

/// Writes the trace of `run_id` to `path`; returns the number of trace events.
pub fn export_perfetto(conn: &Connection, run_id: i64, path: &Path) -> Result<u64> {
    let (pid, origin): (Option<i64>, Option<i64>) = conn
        .query_row(
            "SELECT pid, \"start\" FROM krphase_run WHERE id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|_| anyhow::anyhow!("unknown run id {run_id}"))?;
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = Out {
        w: BufWriter::new(file),
        first: true,
        pid: pid.unwrap_or(run_id),
        origin: origin.unwrap_or(0),
        events: 0,
    };
    out.w
        .write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
    out.emit(
        json!({"ph": "M", "pid": out.pid, "tid": 0, "name": "process_name",
                    "args": {"name": format!("krphase run {run_id} (pid {})", out.pid)}}),
    )?;

    let mut threads: BTreeMap<i64, ()> = BTreeMap::new();
    let mut queues: BTreeMap<i64, i64> = BTreeMap::new();
    let queue_tid = |queues: &mut BTreeMap<i64, i64>, q: i64| -> i64 {
        let n = queues.len() as i64;
        QUEUE_TID_BASE + *queues.entry(q).or_insert(n)
    };

    let mut passes = conn.prepare_cached(
        "SELECT pass_index, \"start\", \"end\", gpu_start, gpu_end, restore_start, restore_end,
                continue_ns, incomplete
         FROM krphase_pass WHERE window_id = ?1 ORDER BY pass_index",
    )?;
    let mut windows = conn.prepare(
        "SELECT w.id, w.dispatch_id, COALESCE(w.kernel, '?'), COALESCE(w.thread, 0), w.queue,
                w.outcome, v.reason, w.executed_passes, w.\"start\", w.\"end\", w.pass_count_return,
                w.first_pass_enter, w.last_pass_exit, v.snapshot_ns, v.drain_ns, v.snapshot_bytes,
                w.stuck_ns
         FROM krphase_window w JOIN krphase_window_phase v ON v.window_id = w.id
         WHERE w.run_id = ?1 ORDER BY w.id",
    )?;
    let mut rows = windows.query([run_id])?;
    while let Some(r) = rows.next()? {
        let wid: i64 = r.get(0)?;
        let dispatch: i64 = r.get(1)?;
        let kernel: String = r.get(2)?;
        let tid: i64 = r.get(3)?;
        let queue: Option<i64> = r.get(4)?;
        let outcome: String = r.get(5)?;
        let reason: String = r.get(6)?;
        let start: Option<i64> = r.get(8)?;
        let end: Option<i64> = r.get(9)?;
        threads.insert(tid, ());
        if outcome != "replayed" {
            if let Some(ts) = start {
                let v = json!({"ph": "i", "s": "t", "pid": out.pid, "tid": tid, "ts": out.us(ts),
                               "name": format!("declined: {reason}"), "cat": "decline",
                               "args": {"dispatch_id": dispatch, "kernel": kernel, "outcome": outcome}});
                out.emit(v)?;
            }
            // A stuck window (`pass_drain_stuck`) still ran passes: draw them, the stuck one
            // up to CONFIG EXIT.
            if r.get::<_, Option<i64>>(16)?.is_none() {
                continue;
            }
        }
        let pcr: Option<i64> = r.get(10)?;
        let first_enter: Option<i64> = r.get(11)?;
        let last_exit: Option<i64> = r.get(12)?;
        let snapshot_ns: Option<i64> = r.get(13)?;
        let drain_ns: Option<i64> = r.get(14)?;
        let bytes: Option<i64> = r.get(15)?;
        let args = json!({"dispatch_id": dispatch, "passes": r.get::<_, Option<i64>>(7)?,
                          "snapshot_bytes": bytes});
        out.slice(tid, &format!("window {kernel}"), "window", start, end, args)?;
        out.slice(tid, "config", "phase", start, pcr, json!({}))?;
        out.slice(tid, "pre-pass", "phase", pcr, first_enter, json!({}))?;
        if let (Some(p), Some(d), Some(s)) = (pcr, drain_ns, snapshot_ns) {
            out.slice(
                tid,
                "lock+drain",
                "phase",
                Some(p),
                Some(p + d.max(0)),
                json!({}),
            )?;
            out.slice(
                tid,
                "snapshot",
                "phase",
                Some(p + d.max(0)),
                Some(p + d.max(0) + s),
                json!({"bytes": bytes}),
            )?;
        }
        let mut prow = passes.query([wid])?;
        while let Some(p) = prow.next()? {
            let idx: i64 = p.get(0)?;
            let exit: Option<i64> = p.get(2)?;
            let incomplete = p.get::<_, i64>(8)? != 0;
            out.slice(
                tid,
                &if incomplete {
                    format!("pass {idx} (stuck)")
                } else {
                    format!("pass {idx}")
                },
                "pass",
                p.get(1)?,
                // A stuck pass never exited: it lasts until CONFIG EXIT.
                if incomplete { exit.or(end) } else { exit },
                if incomplete {
                    json!({"incomplete": true})
                } else {
                    json!({})
                },
            )?;
            // The continue decision: PASS EXIT → replay_continue return, before the restore.
            if let (Some(x), Some(c)) = (exit, p.get::<_, Option<i64>>(7)?) {
                out.slice(
                    tid,
                    "continue",
                    "continue",
                    Some(x),
                    Some(x + c.max(0)),
                    json!({"after_pass": idx}),
                )?;
            }
            out.slice(
                tid,
                "restore",
                "restore",
                p.get(5)?,
                p.get(6)?,
                json!({"after_pass": idx}),
            )?;
            if let Some(q) = queue {
                let qt = queue_tid(&mut queues, q);
                out.slice(
                    qt,
                    &format!("{kernel} pass {idx}"),
                    "gpu",
                    p.get(3)?,
                    p.get(4)?,
                    json!({"dispatch_id": dispatch}),
                )?;
            }
        }
        out.slice(tid, "tail", "phase", last_exit, end, json!({}))?;
    }
    drop(rows);
    // Plain dispatches: enqueue on the thread, GPU on the queue.
    let mut plain = conn.prepare(
        "SELECT dispatch_id, COALESCE(kernel, '?'), COALESCE(thread, 0), queue, \"start\", \"end\",
                gpu_start, gpu_end FROM krphase_dispatch WHERE run_id = ?1 ORDER BY id",
    )?;
    let mut rows = plain.query([run_id])?;
    while let Some(r) = rows.next()? {
        let (d, k, tid, q): (i64, String, i64, Option<i64>) =
            (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
        threads.insert(tid, ());
        out.slice(
            tid,
            &format!("enqueue {k}"),
            "dispatch",
            r.get(4)?,
            r.get(5)?,
            json!({"dispatch_id": d}),
        )?;
        if let Some(q) = q {
            let qt = queue_tid(&mut queues, q);
            out.slice(
                qt,
                &k,
                "gpu",
                r.get(6)?,
                r.get(7)?,
                json!({"dispatch_id": d}),
            )?;
        }
    }
    for t in threads.keys() {
        out.emit(
            json!({"ph": "M", "pid": out.pid, "tid": t, "name": "thread_name",
                        "args": {"name": format!("thread {t}")}}),
        )?;
    }
    for (q, i) in &queues {
        out.emit(
            json!({"ph": "M", "pid": out.pid, "tid": QUEUE_TID_BASE + i, "name": "thread_name",
                        "args": {"name": format!("queue {q:#x}")}}),
        )?;
    }
    out.w.write_all(b"\n]}\n")?;
    out.w.flush()?;
    Ok(out.events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthSpec, write_synthetic_file};

    #[test]
    fn trace_is_valid_json_with_nested_slices() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.krp");
        write_synthetic_file(
            &f,
            &SynthSpec {
                windows: 20,
                ..SynthSpec::default()
            },
        )
        .unwrap();
        let mut c = crate::db::open(dir.path().join("k.db")).unwrap();
        let run = crate::import::import_phase_file(&mut c, &f, None).unwrap();
        let out = dir.path().join("trace.json");
        let n = export_perfetto(&c, run, &out).unwrap();
        let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        assert_eq!(ev.len() as u64, n);
        let count = |name: &str| ev.iter().filter(|e| e["name"] == name).count();
        assert_eq!(
            count("window stream_copy") + count("window stream_triad"),
            20
        );
        assert_eq!(count("pass 0"), 20);
        assert_eq!(count("restore"), 20);
        assert_eq!(ev.iter().filter(|e| e["cat"] == "gpu").count(), 40 + 2);
        assert_eq!(
            ev.iter().filter(|e| e["ph"] == "i").count(),
            2,
            "two opt-outs"
        );
        // Every pass slice lies inside a window slice on the same track.
        let windows: Vec<(f64, f64)> = ev
            .iter()
            .filter(|e| e["cat"] == "window")
            .map(|e| {
                (
                    e["ts"].as_f64().unwrap(),
                    e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap(),
                )
            })
            .collect();
        for p in ev.iter().filter(|e| e["cat"] == "pass") {
            let (s, d) = (p["ts"].as_f64().unwrap(), p["dur"].as_f64().unwrap());
            assert!(windows.iter().any(|&(a, b)| a <= s && s + d <= b + 1e-6));
        }
        assert!(export_perfetto(&c, 99, &out).is_err());
    }
}
