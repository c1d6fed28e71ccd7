//! The trace as Chrome trace-event JSON (`--format json`), written as a stream, one event at a
//! time: complete (`X`) slices, instant (`i`) declines, flow (`s`/`f`) arrows from a host pass to
//! its GPU slice, counter (`C`) events, and the process and thread names.
//!
//! Timestamps are absolute CLOCK_BOOTTIME microseconds, written as exact decimals (`ns / 1000`
//! with three decimals), so the text holds every nanosecond; a reader that parses them into a
//! double (as trace viewers do) keeps the nanosecond below 2^42 µs (about 50 days of uptime) and
//! stays within 2 ns to about 200 days. The protobuf trace carries integer nanoseconds.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use anyhow::Result;
use serde_json::{Map, Value, json};

use super::model::{Arg, Counter, Flow, RunInfo, Sink, Slice, Track, Val};

/// Queue tracks get thread ids above this, so they never collide with host thread ids.
const QUEUE_TID_BASE: i64 = 1 << 40;

/// The JSON writer: events streamed one at a time, and the current run's tracks.
pub struct JsonSink<W: Write> {
    w: W,
    first: bool,
    pub events: u64,
    pid: i64,
    pids: BTreeSet<i64>,
    threads: BTreeSet<i64>,
    /// Queue handle → its track's index above [`QUEUE_TID_BASE`], in order of first use.
    queues: BTreeMap<i64, i64>,
}

/// `ns` as microseconds, exactly: `123.456`.
fn us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// The args object: PMC counters grouped under `counters`.
fn args_object(args: &[Arg<'_>]) -> Value {
    let mut m = Map::new();
    let mut pmc = Map::new();
    for (k, v) in args {
        let v = match *v {
            Val::Int(i) => json!(i),
            Val::Str(s) => json!(s),
            Val::Bool(b) => json!(b),
            Val::Pmc(x) => {
                pmc.insert((*k).to_string(), json!(x));
                continue;
            }
        };
        m.insert((*k).to_string(), v);
    }
    if !pmc.is_empty() {
        m.insert("counters".into(), Value::Object(pmc));
    }
    Value::Object(m)
}

impl<W: Write> JsonSink<W> {
    pub fn new(mut w: W) -> Result<Self> {
        w.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        Ok(JsonSink {
            w,
            first: true,
            events: 0,
            pid: 0,
            pids: BTreeSet::new(),
            threads: BTreeSet::new(),
            queues: BTreeMap::new(),
        })
    }

    /// Closes the array and the object; returns the writer.
    pub fn finish(mut self) -> Result<W> {
        self.w.write_all(b"\n]}\n")?;
        Ok(self.w)
    }

    /// One event: `v` with `ts` (and `dur`) spliced in as exact decimals.
    fn emit(&mut self, v: &Value, ts: Option<i64>, dur: Option<i64>) -> Result<()> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        let body = serde_json::to_string(v)?;
        let rest = body.strip_prefix('{').unwrap_or(&body);
        self.w.write_all(b"{")?;
        if let Some(t) = ts {
            write!(self.w, "\"ts\":{},", us(t))?;
        }
        if let Some(d) = dur {
            write!(self.w, "\"dur\":{},", us(d))?;
        }
        self.w.write_all(rest.as_bytes())?;
        self.events += 1;
        Ok(())
    }

    fn tid(&mut self, t: Track) -> i64 {
        match t {
            Track::Thread(tid) => {
                self.threads.insert(tid);
                tid
            }
            Track::Queue(q) => {
                let n = self.queues.len() as i64;
                QUEUE_TID_BASE + *self.queues.entry(q).or_insert(n)
            }
        }
    }
}

impl<W: Write> Sink for JsonSink<W> {
    fn begin_run(&mut self, run: &RunInfo) -> Result<()> {
        // Two runs of one pid (a pid reused) keep apart: the later one is keyed by its run id.
        self.pid = if self.pids.insert(run.pid) {
            run.pid
        } else {
            -run.id
        };
        self.threads.clear();
        self.queues.clear();
        let v = json!({"ph": "M", "pid": self.pid, "tid": 0, "name": "process_name",
                       "args": {"name": run.name()}});
        self.emit(&v, None, None)
    }

    fn slice(&mut self, s: &Slice<'_>, args: &[Arg<'_>], flow: Flow) -> Result<()> {
        let tid = self.tid(s.track);
        let v = json!({"ph": "X", "pid": self.pid, "tid": tid, "name": s.name, "cat": s.cat,
                       "args": args_object(args)});
        self.emit(&v, Some(s.start), Some(s.end - s.start))?;
        let (ph, id) = match flow {
            Flow::None => return Ok(()),
            Flow::Out(id) => ("s", id),
            Flow::In(id) => ("f", id),
        };
        let v = json!({"ph": ph, "bp": "e", "id": id, "pid": self.pid, "tid": tid,
                       "name": "pass → GPU", "cat": "flow"});
        self.emit(&v, Some(s.start), None)
    }

    fn instant(
        &mut self,
        track: Track,
        name: &str,
        cat: &'static str,
        ts: i64,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let tid = self.tid(track);
        let v = json!({"ph": "i", "s": "t", "pid": self.pid, "tid": tid, "name": name,
                       "cat": cat, "args": args_object(args)});
        self.emit(&v, Some(ts), None)
    }

    fn counter(&mut self, which: Counter, ts: i64, value: i64) -> Result<()> {
        let (name, key) = match which {
            Counter::SnapshotBytes => ("snapshot bytes", "bytes"),
            Counter::InFlight => ("windows in flight", "windows"),
        };
        let v = json!({"ph": "C", "pid": self.pid, "name": name, "args": {key: value}});
        self.emit(&v, Some(ts), None)
    }

    /// A name for every thread and queue track of the run.
    fn end_run(&mut self) -> Result<()> {
        let threads: Vec<i64> = self.threads.iter().copied().collect();
        for t in threads {
            let v = json!({"ph": "M", "pid": self.pid, "tid": t, "name": "thread_name",
                           "args": {"name": format!("thread {t}")}});
            self.emit(&v, None, None)?;
        }
        let queues: Vec<(i64, i64)> = self.queues.iter().map(|(q, i)| (*q, *i)).collect();
        for (q, i) in queues {
            let v = json!({"ph": "M", "pid": self.pid, "tid": QUEUE_TID_BASE + i,
                           "name": "thread_name", "args": {"name": format!("queue {q:#x}")}});
            self.emit(&v, None, None)?;
        }
        Ok(())
    }
}
