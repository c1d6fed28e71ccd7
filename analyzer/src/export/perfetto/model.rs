//! What a krphase trace shows, read from the database and handed to a [`Sink`] (the Perfetto
//! protobuf writer or the Chrome JSON writer) one event at a time, run after run.
//!
//! Per run: one track per host thread and one per GPU queue. Each window is a slice on its thread
//! with nested config, pre-pass (split into lock+drain and snapshot when an SDK log is joined),
//! pass, continue (PASS EXIT → replay_continue return, when recorded), restore and tail slices;
//! each pass's GPU execution is a slice on its queue's track, with a flow from the host pass
//! slice; declines are instants with their reason (a stuck window, `pass_drain_stuck`, also keeps
//! its slices, the stuck pass up to CONFIG EXIT); plain dispatches are an enqueue slice on the
//! thread and a GPU slice on the queue. Two counter tracks per run: the snapshot's bytes (from
//! the snapshot's start to its end) and the windows in flight. Every slice carries `basis`, where
//! its interval comes from (`db/basis.rs`): `in_process` for the tool's timestamps, `sdk_log` or
//! `sdk_phase_line` for the SDK's snapshot, `in_process_minus_sdk_log` for lock+drain,
//! `dispatch` for observe mode's `restore bound` (completion to the next enqueue, which holds the
//! SDK's restore) and its windows.
//!
//! Timestamps are the database's own: CLOCK_BOOTTIME nanoseconds, the clock the SDK stamps its
//! records with, so the trace lines up with the SDK's (and rocprofv3's) of the same run.

use anyhow::Result;

pub use super::rows::RunInfo;

/// A track of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Track {
    /// A host thread, by its id.
    Thread(i64),
    /// A GPU queue, by its handle.
    Queue(i64),
}

/// A run's counter tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// Bytes the snapshot of the window in its pre-pass moves (0 outside snapshots).
    SnapshotBytes,
    /// Replay windows open at once in the run.
    InFlight,
}

/// An argument's value.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    Int(i64),
    Str(&'a str),
    Bool(bool),
    /// A hardware counter of the pass's counter group (its name is the argument's).
    Pmc(f64),
}

/// A named argument of a slice or instant.
pub type Arg<'a> = (&'a str, Val<'a>);

/// A flow arrow between two slices: it leaves the host pass slice and ends at its GPU slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    None,
    Out(u64),
    In(u64),
}

/// A slice to draw: its track, name, category and interval (ns).
pub struct Slice<'a> {
    pub track: Track,
    pub name: &'a str,
    pub cat: &'static str,
    pub start: i64,
    pub end: i64,
}

/// Where the trace's events go.
pub trait Sink {
    fn begin_run(&mut self, run: &RunInfo) -> Result<()>;
    /// A slice, with a flow leaving or ending at it.
    fn slice(&mut self, s: &Slice<'_>, args: &[Arg<'_>], flow: Flow) -> Result<()>;
    fn instant(
        &mut self,
        track: Track,
        name: &str,
        cat: &'static str,
        ts: i64,
        args: &[Arg<'_>],
    ) -> Result<()>;
    fn counter(&mut self, which: Counter, ts: i64, value: i64) -> Result<()>;
    fn end_run(&mut self) -> Result<()>;
}

/// One run's writing state: the sink, the next flow id and the windows' spans for the
/// in-flight counter.
pub struct RunWriter<'s, S: Sink> {
    pub sink: &'s mut S,
    next_flow: u64,
    /// (start, end) of every window drawn, for the in-flight counter written after them.
    spans: Vec<(i64, i64)>,
}

impl<'s, S: Sink> RunWriter<'s, S> {
    /// The writing state of run `run_id`: its flow ids start at `run_id << 40`, so two runs'
    /// flows never meet.
    pub fn new(sink: &'s mut S, run_id: i64) -> Self {
        RunWriter {
            sink,
            next_flow: (run_id as u64) << 40,
            spans: Vec::new(),
        }
    }

    /// A slice, skipped when either end is unknown or it runs backwards.
    pub fn slice(
        &mut self,
        track: Track,
        name: &str,
        cat: &'static str,
        span: (Option<i64>, Option<i64>),
        args: &[Arg<'_>],
        flow: Flow,
    ) -> Result<bool> {
        let (Some(start), Some(end)) = span else {
            return Ok(false);
        };
        if end < start {
            return Ok(false);
        }
        let s = Slice {
            track,
            name,
            cat,
            start,
            end,
        };
        self.sink.slice(&s, args, flow)?;
        Ok(true)
    }

    /// A new flow id, unique in the trace (the run id in the high bits).
    pub fn flow(&mut self) -> u64 {
        self.next_flow += 1;
        self.next_flow
    }

    /// Counts a drawn window for the in-flight counter.
    pub fn window_span(&mut self, start: i64, end: i64) {
        self.spans.push((start, end));
    }

    /// The in-flight counter: +1 at each window's start, −1 at its end, in time order (an end
    /// before a start at the same instant), one value per change.
    pub fn write_in_flight(&mut self) -> Result<()> {
        let mut edges: Vec<(i64, i64)> = Vec::with_capacity(self.spans.len() * 2);
        for &(s, e) in &self.spans {
            edges.push((s, 1));
            edges.push((e, -1));
        }
        edges.sort_unstable();
        let mut n = 0;
        let mut i = 0;
        while i < edges.len() {
            let ts = edges[i].0;
            while i < edges.len() && edges[i].0 == ts {
                n += edges[i].1;
                i += 1;
            }
            self.sink.counter(Counter::InFlight, ts, n)?;
        }
        Ok(())
    }
}
