//! Window reconstruction: the event stream in, replay windows, declines and plain dispatches out,
//! in bounded memory.
//!
//! * **Drive mode** (the tool owned KERNEL_REPLAY): a window is CONFIG ENTER … PASS … CONFIG EXIT
//!   on one thread. Pre-pass = pass-count return → PASS 0 ENTER (lock, admission, drains,
//!   snapshot); the gap PASS i EXIT → PASS i+1 ENTER is the continue phase (EXIT → the continue
//!   callback's return, when a CONTINUE record exists) and restore i (the rest); tail = last
//!   PASS EXIT → CONFIG EXIT. A PASS ENTER without PASS EXIT (`pass_drain_stuck`) is an
//!   incomplete pass: the window keeps it, counts only completed passes and is `Declined`.
//!   Kernel-dispatch COMPLETE records (one per pass, same dispatch id) give each pass's GPU time.
//!   A CONFIG pair without PASS is a tool opt-out ([`Decline`]) or, when the tool asked for
//!   N > 1, an SDK decline (a [`Window`] with [`Outcome::Declined`]).
//! * **Observe mode** (another tool owns replay): passes share a dispatch id, so a dispatch with
//!   more than one enqueue or completion is a window. Its restore i is the gap from pass i's
//!   completion (host time at the COMPLETE callback, else its GPU end) to the enqueue of pass
//!   i+1: an upper bound on the SDK's restore, which lies inside it with the completion's hop,
//!   the owning tool's PASS callbacks and the SDK's pass preparation. A dispatch with one enqueue
//!   is a [`PlainDispatch`].
//!
//! COMPLETE records come from another thread and may reach the file after the window's own
//! records, so a dispatch is held until its completions arrive, a later dispatch on the same queue
//! completes, [`Reconstructor::finish`] is called, or a held-dispatch bound evicts it.
//!
//! Everything held is bounded by [`Limits`]; a record that would exceed an error bound makes
//! [`Reconstructor::push_at`] fail with a [`LimitError`] naming its file offset.

mod counters;
mod footprint;

pub use counters::CounterReading;

use crate::event::{Decision, Event, NameSpace};
use crate::limits::{Limit, LimitError, Limits};
use crate::version::FormatVersion;
use footprint::Footprint;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// Default bound on dispatches held while waiting for their records.
pub const DEFAULT_MAX_PENDING: usize = Limits::DEFAULT.held_dispatches;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interval {
    pub start: u64,
    pub end: u64,
}

impl Interval {
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pass {
    pub index: u32,
    /// Host time just inside PASS ENTER / PASS EXIT (drive mode).
    pub enter: Option<u64>,
    pub exit: Option<u64>,
    /// KERNEL_DISPATCH ENQUEUE ENTER/EXIT of this pass, when traced.
    pub enqueue_enter: Option<u64>,
    pub enqueue_exit: Option<u64>,
    pub gpu_start: Option<u64>,
    pub gpu_end: Option<u64>,
    /// Host time at this pass's COMPLETE callback (COMPLETE_HOST), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_host: Option<u64>,
    /// PASS ENTER without PASS EXIT: the SDK broke the loop in this pass (`pass_drain_stuck`),
    /// or the file ends inside it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub incomplete: bool,
    /// Counter values the SDK's dispatch counting service reported for this pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterReading>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The gap after PASS `after_pass`: `start..end` is the restore (continue return, or PASS EXIT
/// when no CONTINUE record exists, → next PASS ENTER).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restore {
    pub after_pass: u32,
    pub start: u64,
    pub end: u64,
    /// PASS EXIT → the continue callback's return (the SDK's loop decision), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_phase: Option<Interval>,
}

/// One call of the tool's `replay_continue` (drive mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueCall {
    /// The pass just finished, as the SDK passed it.
    pub after_pass: u32,
    /// Total passes as the SDK passed it (0: indefinite loop).
    pub total: u32,
    /// Callback entry → just before it returned.
    pub call: Interval,
    /// The loop continues.
    pub result: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Drive,
    Observe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Replayed,
    /// The tool asked for N > 1 but no PASS ran (the SDK declined; the reason is in its log).
    Declined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ByteEstimate {
    /// Coarse-grained, agent-owned, not kernarg, allocated after configure.
    pub classified: u64,
    pub classified_regions: u16,
    /// Every live allocation on the agent.
    pub upper_bound: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub dispatch_id: u64,
    pub correlation_id: Option<u64>,
    pub kernel_id: Option<u64>,
    pub kernel_name: Option<String>,
    pub agent: Option<u64>,
    pub queue: Option<u64>,
    pub thread: u32,
    pub source: Source,
    pub outcome: Outcome,
    pub requested_passes: Option<u64>,
    pub executed_passes: u64,
    pub config_enter: Option<u64>,
    pub pass_count_return: Option<u64>,
    pub config_exit: Option<u64>,
    pub passes: Vec<Pass>,
    pub restores: Vec<Restore>,
    /// Pass-count return → PASS 0 ENTER.
    pub pre_pass: Option<Interval>,
    /// Last PASS EXIT → CONFIG EXIT (none when the last pass is incomplete).
    pub tail: Option<Interval>,
    pub bytes: Option<ByteEstimate>,
    /// Every continue decision, in order (drive mode; empty in older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub continues: Vec<ContinueCall>,
    /// Incomplete pass's ENTER → CONFIG EXIT: the stuck pass, the SDK's drain wait and the loop
    /// exit (`pass_drain_stuck`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck: Option<Interval>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeclineReason {
    /// Pass-count callback left NULL (kernel filter).
    OptOut,
    /// Pass-count returned 1.
    #[serde(rename = "pass_count_1")]
    PassCountOne,
    /// Pass-count returned 0 without a continue callback.
    ZeroWithoutContinue,
    /// The tool had stopped driving (payload layout not confirmed).
    Stopped,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decline {
    pub dispatch_id: u64,
    pub kernel_id: Option<u64>,
    pub kernel_name: Option<String>,
    pub thread: u32,
    pub reason: DeclineReason,
    pub config_enter: Option<u64>,
    pub config_exit: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlainDispatch {
    pub dispatch_id: u64,
    pub kernel_id: Option<u64>,
    pub kernel_name: Option<String>,
    pub thread: u32,
    pub agent: Option<u64>,
    pub queue: Option<u64>,
    pub correlation_id: Option<u64>,
    /// True when a CONFIG pair preceded it (opt-out or SDK decline).
    pub had_config: bool,
    pub enqueue_enter: Option<u64>,
    pub enqueue_exit: Option<u64>,
    pub gpu_start: Option<u64>,
    pub gpu_end: Option<u64>,
}

impl PlainDispatch {
    /// Host time spent in the traced enqueue (ENQUEUE ENTER → EXIT).
    pub fn enqueue_cost(&self) -> Option<u64> {
        Some(self.enqueue_exit?.saturating_sub(self.enqueue_enter?))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Output {
    Window(Window),
    Decline(Decline),
    Plain(PlainDispatch),
    /// A counter value whose dispatch was emitted before the value reached the file, or whose
    /// dispatch has no pass of that index.
    Counter(CounterReading),
}

#[derive(Debug, Default)]
struct Group {
    thread: u32,
    kernel_id: Option<u64>,
    agent: Option<u64>,
    queue: Option<u64>,
    correlation: Option<u64>,
    config_enter: Option<u64>,
    decision: Option<Decision>,
    pass_count_return: Option<u64>,
    requested: Option<u64>,
    config_exit: Option<u64>,
    passes: Vec<Pass>,
    continues: Vec<ContinueCall>,
    in_pass: Option<usize>,
    enqueues: Vec<(u64, Option<u64>)>,
    completes: Vec<(u64, u64)>,
    /// (GPU end, host time) of each COMPLETE_HOST record: pairs with the completion of that end.
    complete_hosts: Vec<(u64, u64)>,
    /// COUNTER_VALUE records, attached to their passes when the dispatch is emitted.
    counters: Vec<CounterReading>,
    bytes: Option<ByteEstimate>,
    /// Reader-side estimate at the first enqueue (observe mode has no WINDOW_BYTES).
    first_enqueue_bytes: Option<ByteEstimate>,
    /// A replayed drive-mode window (CONFIG EXIT seen with passes).
    drive_window: bool,
    /// The submitting thread has moved on to another dispatch.
    thread_done: bool,
    /// A later dispatch on the same queue completed (so did everything before it).
    queue_sealed: bool,
    /// Entries (see `entries`) counted in the reconstructor's `held_entries`.
    counted: usize,
}

/// The dispatch a record may add passes, enqueues, completions or continue calls to.
fn entry_adding_dispatch(ev: &Event) -> Option<u64> {
    match *ev {
        Event::PassEnter { dispatch_id, .. }
        | Event::Continue { dispatch_id, .. }
        | Event::EnqueueEnter { dispatch_id, .. }
        | Event::Complete { dispatch_id, .. }
        | Event::CompleteHost { dispatch_id, .. }
        | Event::CompleteAt { dispatch_id, .. }
        | Event::CounterValue { dispatch_id, .. } => Some(dispatch_id),
        _ => None,
    }
}

/// Turns events into [`Output`]s. Feed with [`push`](Self::push), take results with
/// [`pop`](Self::pop), and call [`finish`](Self::finish) at the end of the stream.
pub struct Reconstructor {
    groups: HashMap<u64, Group>,
    order: VecDeque<u64>,
    per_queue: HashMap<u64, VecDeque<u64>>,
    /// Dispatch ids in all of `per_queue` together.
    per_queue_len: usize,
    current: HashMap<u32, u64>,
    /// Last placement (agent, queue) recorded on each thread; applies to its later enqueues.
    placement: HashMap<u32, (u64, u64)>,
    /// Whether a thread's enqueue placement applies to its later enqueues (see
    /// [`Reconstructor::for_version`]).
    sticky_placement: bool,
    /// A 1.x file may come from a writer that recorded the placement of every enqueue.
    placement_may_be_per_dispatch: bool,
    /// A 1.x file's CONTINUE own time is plain saturating nanoseconds (its writers came before
    /// [`crate::event::own_time`]).
    own_time_plain_ns: bool,
    names: HashMap<u64, String>,
    /// Counter names by counter id (bounded with the kernel names).
    counter_names: HashMap<u64, String>,
    name_bytes: usize,
    /// Dispatches emitted lately: a counter value for one of them comes out on its own.
    emitted: counters::Emitted,
    ready: VecDeque<Output>,
    limits: Limits,
    /// Passes, enqueues, completions and continue calls of the held dispatches.
    held_entries: usize,
    /// File offset of the record being taken in, for errors.
    at: Option<u64>,
    evicted: u64,
    footprint: Footprint,
}

impl Group {
    /// Passes, enqueues, completions and continue calls held.
    fn entries(&self) -> usize {
        self.passes.len()
            + self.enqueues.len()
            + self.completes.len()
            + self.complete_hosts.len()
            + self.continues.len()
            + self.counters.len()
    }
}

/// The host time of the completion that ended at `gpu_end`, when its COMPLETE_HOST was seen.
fn complete_host(hosts: &[(u64, u64)], gpu_end: Option<u64>) -> Option<u64> {
    let e = gpu_end?;
    hosts.iter().find(|&&(end, _)| end == e).map(|&(_, ts)| ts)
}

impl Default for Reconstructor {
    fn default() -> Self {
        Self::new()
    }
}

impl Reconstructor {
    /// A reconstructor for the current format, with the default [`Limits`].
    pub fn new() -> Self {
        Self::with_limits(Limits::DEFAULT)
    }

    /// As [`Reconstructor::new`], holding at most `max_pending` dispatches.
    pub fn with_max_pending(max_pending: usize) -> Self {
        Self::with_limits(Limits {
            held_dispatches: max_pending,
            ..Limits::DEFAULT
        })
    }

    pub fn with_limits(limits: Limits) -> Self {
        Reconstructor {
            groups: HashMap::new(),
            order: VecDeque::new(),
            per_queue: HashMap::new(),
            per_queue_len: 0,
            current: HashMap::new(),
            placement: HashMap::new(),
            sticky_placement: true,
            placement_may_be_per_dispatch: false,
            own_time_plain_ns: false,
            names: HashMap::new(),
            counter_names: HashMap::new(),
            name_bytes: 0,
            emitted: counters::Emitted::default(),
            ready: VecDeque::new(),
            limits: Limits {
                held_dispatches: limits.held_dispatches.max(1),
                held_entries: limits.held_entries.max(1),
                ..limits
            },
            held_entries: 0,
            at: None,
            evicted: 0,
            footprint: Footprint::default(),
        }
    }

    /// A reconstructor reading events with the meaning of format `version`.
    ///
    /// 1.x: files of version 1 come from two writers the file cannot tell apart: the first
    /// recorded an enqueue's placement (DISPATCH_INFO) for every dispatch, the later one only
    /// when the thread's placement changed (2.0's sticky rule). The reader applies the sticky
    /// rule until the file shows the first writer: a placement at an enqueue that repeats the
    /// thread's current one, which a sticky writer never records. From then on a dispatch without
    /// its own placement has none, as that writer meant (its placement record had been dropped).
    ///
    /// Their CONTINUE own time is plain nanoseconds, saturating at 65 535.
    pub fn for_version(version: FormatVersion) -> Self {
        Self::new().reading(version)
    }

    /// As [`Reconstructor::for_version`], with `limits`.
    pub fn for_version_with_limits(version: FormatVersion, limits: Limits) -> Self {
        Self::with_limits(limits).reading(version)
    }

    /// A CONTINUE record's own time in ns, with the meaning of the file's version.
    fn own_time_ns(&self, raw: u16) -> u64 {
        if self.own_time_plain_ns {
            u64::from(raw)
        } else {
            crate::event::own_time::decode(raw)
        }
    }

    fn reading(mut self, version: FormatVersion) -> Self {
        self.placement_may_be_per_dispatch = version.major == 1;
        self.own_time_plain_ns = version.major == 1;
        self
    }

    /// The snapshot byte estimate for `agent` at this point of the stream, from the live
    /// allocations and module variables seen so far (what drive mode records at CONFIG ENTER).
    pub fn footprint_estimate(&self, agent: u64) -> ByteEstimate {
        self.footprint.estimate(agent)
    }

    /// Dispatches emitted before their records were complete because a held-dispatch bound
    /// ([`Limits::held_dispatches`], [`Limits::held_entries`]) was reached.
    pub fn evicted(&self) -> u64 {
        self.evicted
    }

    /// Kernel name for a kernel id, if the string table had it.
    pub fn kernel_name(&self, kernel_id: u64) -> Option<&str> {
        self.names.get(&kernel_id).map(String::as_str)
    }

    /// Dispatches currently held.
    pub fn pending(&self) -> usize {
        self.groups.len()
    }

    pub fn pop(&mut self) -> Option<Output> {
        self.ready.pop_front()
    }

    fn group(&mut self, d: u64, thread: u32) -> &mut Group {
        if !self.groups.contains_key(&d) {
            self.order.push_back(d);
            self.groups.insert(
                d,
                Group {
                    thread,
                    ..Group::default()
                },
            );
        }
        self.groups.get_mut(&d).expect("group just inserted")
    }

    /// The error for bound `limit`, at the record being taken in.
    fn limit(&self, limit: Limit, dispatch_id: Option<u64>) -> LimitError {
        let l = &self.limits;
        let max = match limit {
            Limit::PassesPerDispatch => l.passes_per_dispatch,
            Limit::Threads => l.threads,
            Limit::Queues => l.queues,
            Limit::Agents => l.agents,
            Limit::LiveAllocations => l.live_allocations,
            Limit::KernelNames => l.kernel_names,
            Limit::KernelNameBytes => l.kernel_name_bytes,
        };
        LimitError {
            offset: self.at,
            limit,
            max,
            dispatch_id,
        }
    }

    /// Fails when dispatch `d` already holds `len` entries of one sort (passes, enqueues, …).
    fn check_per_dispatch(&self, d: u64, len: usize) -> Result<(), LimitError> {
        if len >= self.limits.passes_per_dispatch {
            return Err(self.limit(Limit::PassesPerDispatch, Some(d)));
        }
        Ok(())
    }

    /// Fails when `thread` is new and the thread bound is reached.
    fn check_thread(&self, thread: u32) -> Result<(), LimitError> {
        let known = self.current.contains_key(&thread) || self.placement.contains_key(&thread);
        if !known && self.current.len().max(self.placement.len()) >= self.limits.threads {
            return Err(self.limit(Limit::Threads, None));
        }
        Ok(())
    }

    /// Removes a held dispatch.
    fn take_group(&mut self, d: u64) -> Option<Group> {
        let g = self.groups.remove(&d)?;
        self.held_entries -= g.counted;
        Some(g)
    }

    /// Adds dispatch `d` to the queue it was placed on.
    fn queue_dispatch(&mut self, queue: u64, d: u64) -> Result<(), LimitError> {
        if !self.per_queue.contains_key(&queue) && self.per_queue.len() >= self.limits.queues {
            return Err(self.limit(Limit::Queues, None));
        }
        self.per_queue.entry(queue).or_default().push_back(d);
        self.per_queue_len += 1;
        Ok(())
    }

    /// Evicts the oldest held dispatches while a held-dispatch bound is exceeded, and drops
    /// bookkeeping of dispatches no longer held.
    fn enforce_bound(&mut self) {
        while self.groups.len() > self.limits.held_dispatches
            || self.held_entries > self.limits.held_entries
        {
            let Some(d) = self.order.pop_front() else {
                break;
            };
            if let Some(g) = self.take_group(d) {
                self.evicted += 1;
                self.emit(d, g);
            }
        }
        let slack = 2 * self.groups.len() + 1024;
        if self.order.len() > slack {
            let groups = &self.groups;
            self.order.retain(|d| groups.contains_key(d));
        }
        if self.per_queue_len > slack {
            let groups = &self.groups;
            self.per_queue.retain(|_, dq| {
                dq.retain(|d| groups.contains_key(d));
                !dq.is_empty()
            });
            self.per_queue_len = self.per_queue.values().map(VecDeque::len).sum();
        }
    }

    /// The submitting thread started dispatch `d`: earlier dispatches of that thread are done.
    fn mark_thread(&mut self, thread: u32, d: u64) -> Result<(), LimitError> {
        self.check_thread(thread)?;
        if let Some(prev) = self.current.insert(thread, d)
            && prev != d
            && let Some(g) = self.groups.get_mut(&prev)
        {
            g.thread_done = true;
            self.try_close(prev);
        }
        Ok(())
    }

    /// Takes in the next event of the stream (no file offset for errors: see
    /// [`Reconstructor::push_at`]).
    pub fn push(&mut self, ev: &Event) -> Result<(), LimitError> {
        self.at = None;
        self.take(ev)
    }

    /// Takes in the next event of the stream, found at file `offset` (what a [`LimitError`]
    /// names: [`crate::FileReader::last_offset`]).
    pub fn push_at(&mut self, ev: &Event, offset: u64) -> Result<(), LimitError> {
        self.at = Some(offset);
        self.take(ev)
    }

    fn take(&mut self, ev: &Event) -> Result<(), LimitError> {
        self.take_event(ev)?;
        // Entries the record added to its dispatch, if that is still held.
        if let Some(g) = entry_adding_dispatch(ev).and_then(|d| self.groups.get_mut(&d)) {
            let n = g.entries();
            self.held_entries += n - g.counted;
            g.counted = n;
        }
        self.enforce_bound();
        Ok(())
    }

    /// Adds a kernel name, or with `counter` a counter name; both count against the name bounds.
    fn add_name(&mut self, key: u64, name: &str, counter: bool) -> Result<(), LimitError> {
        let held = self.names.len() + self.counter_names.len();
        let map = if counter {
            &self.counter_names
        } else {
            &self.names
        };
        let old = map.get(&key).map_or(0, String::len);
        if old == 0 && !map.contains_key(&key) && held >= self.limits.kernel_names {
            return Err(self.limit(Limit::KernelNames, None));
        }
        let bytes = self.name_bytes - old + name.len();
        if bytes > self.limits.kernel_name_bytes {
            return Err(self.limit(Limit::KernelNameBytes, None));
        }
        self.name_bytes = bytes;
        let map = if counter {
            &mut self.counter_names
        } else {
            &mut self.names
        };
        map.insert(key, name.to_string());
        Ok(())
    }

    /// A COUNTER_VALUE: held with its dispatch, or out at once when that was emitted already.
    fn on_counter_value(&mut self, thread: u32, reading: CounterReading) -> Result<(), LimitError> {
        let d = reading.dispatch_id;
        if !self.groups.contains_key(&d) && self.emitted.contains(d) {
            let name = self.counter_names.get(&reading.counter).cloned();
            self.ready
                .push_back(Output::Counter(CounterReading { name, ..reading }));
            return Ok(());
        }
        let held = self.groups.get(&d).map_or(0, |g| g.counters.len());
        self.check_per_dispatch(d, held)?;
        self.group(d, thread).counters.push(reading);
        Ok(())
    }

    /// Attaches each counter value to its pass (named from the string table); values without
    /// such a pass come out on their own.
    fn attach_counters(&mut self, passes: &mut [Pass], counters: Vec<CounterReading>) {
        for mut c in counters {
            c.name = self.counter_names.get(&c.counter).cloned();
            match passes.get_mut(c.pass as usize) {
                Some(p) => p.counters.push(c),
                None => self.ready.push_back(Output::Counter(c)),
            }
        }
    }

    fn take_event(&mut self, ev: &Event) -> Result<(), LimitError> {
        if let Some((thread, reading)) = counters::reading(ev) {
            return self.on_counter_value(thread, reading);
        }
        match *ev {
            Event::Name {
                space: NameSpace::Kernel,
                key,
                ref name,
            } => self.add_name(key, name, false)?,
            Event::Name {
                space: NameSpace::Counter,
                key,
                ref name,
            } => self.add_name(key, name, true)?,
            Event::ConfigEnter {
                thread,
                ts,
                dispatch_id,
                kernel_id,
                decision,
            } => {
                self.mark_thread(thread, dispatch_id)?;
                let g = self.group(dispatch_id, thread);
                g.thread = thread;
                g.config_enter = Some(ts);
                g.kernel_id = Some(kernel_id);
                g.decision = Some(decision);
            }
            Event::DispatchInfo {
                thread,
                dispatch_id,
                agent,
                queue,
            } => self.on_dispatch_info(thread, dispatch_id, agent, queue)?,
            Event::Correlation {
                thread,
                dispatch_id,
                internal,
                ..
            } => {
                self.group(dispatch_id, thread).correlation = Some(internal);
            }
            Event::PassCountReturn {
                thread,
                ts,
                dispatch_id,
                passes,
            } => {
                let g = self.group(dispatch_id, thread);
                g.pass_count_return = Some(ts);
                g.requested = Some(passes);
            }
            Event::PassEnter {
                thread,
                ts,
                dispatch_id,
                pass,
                ..
            } => self.on_pass_enter(thread, ts, dispatch_id, pass)?,
            Event::PassExit {
                thread,
                ts,
                dispatch_id,
                pass,
                ..
            } => {
                let g = self.group(dispatch_id, thread);
                if let Some(p) = g.passes.get_mut(pass as usize) {
                    p.exit = Some(ts);
                }
                g.in_pass = None;
            }
            Event::Continue {
                thread,
                dispatch_id,
                pass,
                result,
                total,
                ts,
                own_time,
            } => {
                let call = ContinueCall {
                    after_pass: pass.min(u64::from(u32::MAX)) as u32,
                    total,
                    call: Interval {
                        start: ts,
                        end: ts.saturating_add(self.own_time_ns(own_time)),
                    },
                    result,
                };
                let held = self
                    .groups
                    .get(&dispatch_id)
                    .map_or(0, |g| g.continues.len());
                self.check_per_dispatch(dispatch_id, held)?;
                self.group(dispatch_id, thread).continues.push(call);
            }
            Event::ConfigExit {
                thread,
                ts,
                dispatch_id,
            } => self.on_config_exit(thread, ts, dispatch_id),
            Event::EnqueueEnter {
                thread,
                ts,
                dispatch_id,
                kernel_id,
            } => self.on_enqueue_enter(thread, ts, dispatch_id, kernel_id)?,
            Event::EnqueueExit {
                thread,
                ts,
                dispatch_id,
                correlation,
            } => self.on_enqueue_exit(thread, ts, dispatch_id, correlation),
            Event::Complete {
                thread,
                dispatch_id,
                gpu_start,
                gpu_end,
            } => self.on_complete(thread, dispatch_id, gpu_start, gpu_end)?,
            Event::CompleteHost {
                thread,
                ts,
                dispatch_id,
                gpu_end,
            } => self.on_complete_host(thread, ts, dispatch_id, gpu_end)?,
            Event::CompleteAt {
                ts,
                dispatch_id,
                gpu_start,
                gpu_end,
            } => {
                // COMPLETE_HOST and COMPLETE in one record (3.0); it carries no thread id.
                self.on_complete_host(0, ts, dispatch_id, gpu_end)?;
                self.on_complete(0, dispatch_id, gpu_start, gpu_end)?;
            }
            _ => self.push_footprint(ev)?,
        }
        Ok(())
    }

    /// Events that change the live-allocation and module-variable state, and the snapshot
    /// byte estimate recorded at a window's start.
    fn push_footprint(&mut self, ev: &Event) -> Result<(), LimitError> {
        let held = match *ev {
            Event::Alloc {
                address,
                size,
                agent,
                class,
                ..
            } => self
                .footprint
                .alloc((address, agent, size, class), &self.limits),
            Event::Free { address, .. } => {
                self.footprint.free(address);
                Ok(())
            }
            Event::ModuleVars {
                agent,
                bytes,
                variables,
                ..
            } => self
                .footprint
                .module_vars(agent, bytes, variables, &self.limits),
            Event::WindowBytes {
                thread,
                dispatch_id,
                classified,
                regions,
                upper_bound,
            } => {
                self.group(dispatch_id, thread).bytes = Some(ByteEstimate {
                    classified,
                    classified_regions: regions,
                    upper_bound,
                });
                Ok(())
            }
            _ => Ok(()),
        };
        held.map_err(|limit| self.limit(limit, None))
    }

    fn on_dispatch_info(
        &mut self,
        thread: u32,
        dispatch_id: u64,
        agent: u64,
        queue: u64,
    ) -> Result<(), LimitError> {
        self.check_thread(thread)?;
        let g = self.group(dispatch_id, thread);
        g.agent = Some(agent);
        let moved = g.queue != Some(queue);
        g.queue = Some(queue);
        // Recorded at an enqueue (not at CONFIG): the thread's placement from now on.
        let at_enqueue = !g.enqueues.is_empty()
            || g.in_pass
                .is_some_and(|i| g.passes[i].enqueue_enter.is_some());
        if at_enqueue {
            let prev = self.placement.insert(thread, (agent, queue));
            // Only a writer recording every enqueue's placement repeats the current one.
            if self.placement_may_be_per_dispatch && prev == Some((agent, queue)) && !moved {
                self.sticky_placement = false;
            }
        }
        let est = self.footprint.estimate(agent);
        let g = self.groups.get_mut(&dispatch_id).expect("group exists");
        // The first enqueue's placement (it follows that enqueue's record).
        if at_enqueue && g.enqueues.len() <= 1 && g.config_enter.is_none() {
            g.first_enqueue_bytes = Some(est);
        }
        // A dispatch placed by the thread's earlier placement and now by its own record joins
        // its own queue (the stale entry is skipped when that queue is sealed).
        if moved {
            self.queue_dispatch(queue, dispatch_id)?;
        }
        Ok(())
    }

    fn on_pass_enter(
        &mut self,
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        pass: u32,
    ) -> Result<(), LimitError> {
        let i = pass as usize;
        self.check_per_dispatch(dispatch_id, i)?;
        let g = self.group(dispatch_id, thread);
        while g.passes.len() <= i {
            let index = g.passes.len() as u32;
            g.passes.push(Pass {
                index,
                ..Pass::default()
            });
        }
        g.passes[i].enter = Some(ts);
        g.in_pass = Some(i);
        Ok(())
    }

    fn on_config_exit(&mut self, thread: u32, ts: u64, dispatch_id: u64) {
        let g = self.group(dispatch_id, thread);
        g.config_exit = Some(ts);
        g.in_pass = None;
        if !g.passes.is_empty() {
            g.drive_window = true;
            self.try_close(dispatch_id);
        } else {
            self.emit_config_only(dispatch_id);
        }
    }

    fn on_enqueue_enter(
        &mut self,
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        kernel_id: u64,
    ) -> Result<(), LimitError> {
        self.mark_thread(thread, dispatch_id)?;
        let held = self
            .groups
            .get(&dispatch_id)
            .map_or(0, |g| g.enqueues.len());
        self.check_per_dispatch(dispatch_id, held)?;
        let place = self
            .placement
            .get(&thread)
            .copied()
            .filter(|_| self.sticky_placement);
        let est = place.map(|(agent, _)| self.footprint.estimate(agent));
        let g = self.group(dispatch_id, thread);
        g.kernel_id.get_or_insert(kernel_id);
        if g.first_enqueue_bytes.is_none() && g.queue.is_none() {
            g.first_enqueue_bytes = est;
        }
        match g.in_pass {
            Some(i) => g.passes[i].enqueue_enter = Some(ts),
            None => g.enqueues.push((ts, None)),
        }
        if g.queue.is_none()
            && let Some((agent, queue)) = place
        {
            g.agent = Some(agent);
            g.queue = Some(queue);
            self.queue_dispatch(queue, dispatch_id)?;
        }
        Ok(())
    }

    fn on_enqueue_exit(&mut self, thread: u32, ts: u64, dispatch_id: u64, correlation: u64) {
        let g = self.group(dispatch_id, thread);
        g.correlation.get_or_insert(correlation);
        match g.in_pass {
            Some(i) => g.passes[i].enqueue_exit = Some(ts),
            None => {
                if let Some(last) = g.enqueues.last_mut() {
                    last.1 = Some(ts);
                }
            }
        }
    }

    /// Host time of a completion (COMPLETE_HOST, written just before its COMPLETE, which closes
    /// the dispatch): held until then.
    fn on_complete_host(
        &mut self,
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        gpu_end: u64,
    ) -> Result<(), LimitError> {
        let held = self
            .groups
            .get(&dispatch_id)
            .map_or(0, |g| g.complete_hosts.len());
        self.check_per_dispatch(dispatch_id, held)?;
        self.group(dispatch_id, thread)
            .complete_hosts
            .push((gpu_end, ts));
        Ok(())
    }

    fn on_complete(
        &mut self,
        thread: u32,
        dispatch_id: u64,
        gpu_start: u64,
        gpu_end: u64,
    ) -> Result<(), LimitError> {
        let held = self
            .groups
            .get(&dispatch_id)
            .map_or(0, |g| g.completes.len());
        self.check_per_dispatch(dispatch_id, held)?;
        let g = self.group(dispatch_id, thread);
        g.completes.push((gpu_start, gpu_end));
        let queue = g.queue;
        self.try_close(dispatch_id);
        if let Some(q) = queue {
            self.seal_queue_before(q, dispatch_id);
        }
        Ok(())
    }

    /// A completion of `d` on queue `q` means every earlier dispatch on `q` has finished.
    fn seal_queue_before(&mut self, q: u64, d: u64) {
        let mut sealed = Vec::new();
        if let Some(dq) = self.per_queue.get_mut(&q) {
            while let Some(&front) = dq.front() {
                if front == d {
                    break;
                }
                dq.pop_front();
                self.per_queue_len -= 1;
                // A dispatch that moved to another queue left a stale entry here.
                if self.groups.get(&front).is_some_and(|g| g.queue == Some(q)) {
                    sealed.push(front);
                }
            }
        }
        for s in sealed {
            if let Some(g) = self.groups.get_mut(&s) {
                g.thread_done = true;
                g.queue_sealed = true;
            }
            self.try_close(s);
        }
    }

    fn try_close(&mut self, d: u64) {
        let Some(g) = self.groups.get(&d) else { return };
        let close = if g.drive_window {
            // A stuck pass may never complete: its window closes once every completed pass has
            // its COMPLETE and a later dispatch on the queue completed (a late COMPLETE of the
            // stuck pass would precede that one).
            let completed = g.passes.iter().filter(|p| p.exit.is_some()).count();
            g.completes.len() >= g.passes.len()
                || (completed < g.passes.len() && g.completes.len() >= completed && g.queue_sealed)
        } else {
            g.thread_done
                && g.config_exit.is_some() == g.config_enter.is_some()
                && g.completes.len() >= g.enqueues.len()
        };
        if close {
            let g = self.take_group(d).expect("present");
            self.emit(d, g);
        }
    }

    fn name_of(&self, k: Option<u64>) -> Option<String> {
        k.and_then(|k| self.names.get(&k).cloned())
    }

    /// A window of `d` carrying the group's identity and CONFIG times, no passes yet.
    fn window_of(&self, d: u64, g: &Group, source: Source, outcome: Outcome) -> Window {
        Window {
            dispatch_id: d,
            correlation_id: g.correlation,
            kernel_id: g.kernel_id,
            kernel_name: self.name_of(g.kernel_id),
            agent: g.agent,
            queue: g.queue,
            thread: g.thread,
            source,
            outcome,
            requested_passes: None,
            executed_passes: 0,
            config_enter: g.config_enter,
            pass_count_return: None,
            config_exit: g.config_exit,
            passes: Vec::new(),
            restores: Vec::new(),
            pre_pass: None,
            tail: None,
            bytes: None,
            continues: Vec::new(),
            stuck: None,
        }
    }

    /// CONFIG EXIT without a PASS: a tool opt-out or an SDK decline, emitted at once.
    fn emit_config_only(&mut self, d: u64) {
        let Some(g) = self.groups.get(&d) else { return };
        let reason = match (g.decision, g.requested) {
            (Some(Decision::FilteredOut), _) => Some(DeclineReason::OptOut),
            (Some(Decision::Stopped), _) => Some(DeclineReason::Stopped),
            (_, Some(1)) | (Some(Decision::PassesOne), _) => Some(DeclineReason::PassCountOne),
            // N = 0 with the continue callback set: an indefinite loop the SDK declined.
            (Some(Decision::Indefinite), _) => None,
            (_, Some(0)) => Some(DeclineReason::ZeroWithoutContinue),
            (_, None) => Some(DeclineReason::OptOut),
            _ => None,
        };
        let out = match reason {
            Some(reason) => Output::Decline(Decline {
                dispatch_id: d,
                kernel_id: g.kernel_id,
                kernel_name: self.name_of(g.kernel_id),
                thread: g.thread,
                reason,
                config_enter: g.config_enter,
                config_exit: g.config_exit,
            }),
            None => Output::Window(Window {
                requested_passes: g.requested,
                pass_count_return: g.pass_count_return,
                bytes: g.bytes,
                ..self.window_of(d, g, Source::Drive, Outcome::Declined)
            }),
        };
        self.ready.push_back(out);
        // The dispatch still runs once: keep the group for its plain enqueue/completion.
        self.try_close(d);
    }

    fn emit(&mut self, d: u64, mut g: Group) {
        self.emitted.insert(d, self.limits.held_dispatches);
        g.completes.sort_unstable();
        let mut counters = std::mem::take(&mut g.counters);
        // Passes seen without CONFIG EXIT (file cut mid-window) still form a drive window.
        if !g.passes.is_empty() {
            for (p, &(s, e)) in g.passes.iter_mut().zip(g.completes.iter()) {
                p.gpu_start = Some(s);
                p.gpu_end = Some(e);
                p.complete_host = complete_host(&g.complete_hosts, Some(e));
            }
            for p in &mut g.passes {
                p.incomplete = p.enter.is_some() && p.exit.is_none();
            }
            let mut passes = std::mem::take(&mut g.passes);
            self.attach_counters(&mut passes, counters);
            g.passes = passes;
            let continues = &g.continues;
            let restores = g
                .passes
                .windows(2)
                .filter_map(|w| {
                    let (exit, next) = (w[0].exit?, w[1].enter?);
                    // The SDK calls continue between this EXIT and the next ENTER; a record
                    // outside that gap (clock trouble) is ignored.
                    let ret = continues
                        .iter()
                        .rev()
                        .find(|c| c.after_pass == w[0].index)
                        .map(|c| c.call.end.clamp(exit, next.max(exit)))
                        .filter(|_| next >= exit);
                    Some(Restore {
                        after_pass: w[0].index,
                        start: ret.unwrap_or(exit),
                        end: next,
                        continue_phase: ret.map(|end| Interval { start: exit, end }),
                    })
                })
                .collect();
            let pre_pass = match (g.pass_count_return, g.passes.first().and_then(|p| p.enter)) {
                (Some(start), Some(end)) => Some(Interval { start, end }),
                _ => None,
            };
            let last = g.passes.last();
            let tail = match (last.and_then(|p| p.exit), g.config_exit) {
                (Some(start), Some(end)) => Some(Interval { start, end }),
                _ => None,
            };
            let stuck = match (
                last.filter(|p| p.incomplete).and_then(|p| p.enter),
                g.config_exit,
            ) {
                (Some(start), Some(end)) => Some(Interval { start, end }),
                _ => None,
            };
            let executed = g.passes.iter().filter(|p| p.exit.is_some()).count() as u64;
            // The SDK broke the loop inside a pass: its outcome line says declined.
            let outcome = if stuck.is_some() {
                Outcome::Declined
            } else {
                Outcome::Replayed
            };
            let base = self.window_of(d, &g, Source::Drive, outcome);
            self.ready.push_back(Output::Window(Window {
                requested_passes: g.requested,
                executed_passes: executed,
                pass_count_return: g.pass_count_return,
                passes: g.passes,
                restores,
                pre_pass,
                tail,
                bytes: g.bytes,
                continues: g.continues,
                stuck,
                ..base
            }));
            return;
        }
        let n = g.enqueues.len().max(g.completes.len());
        if n <= 1 {
            self.attach_counters(&mut [], std::mem::take(&mut counters));
        }
        if n == 0 {
            return;
        }
        if n == 1 {
            let (ee, ex) = g
                .enqueues
                .first()
                .copied()
                .map_or((None, None), |(a, b)| (Some(a), b));
            let c = g.completes.first().copied();
            self.ready.push_back(Output::Plain(PlainDispatch {
                dispatch_id: d,
                kernel_id: g.kernel_id,
                kernel_name: self.name_of(g.kernel_id),
                thread: g.thread,
                agent: g.agent,
                queue: g.queue,
                correlation_id: g.correlation,
                had_config: g.config_enter.is_some(),
                enqueue_enter: ee,
                enqueue_exit: ex,
                gpu_start: c.map(|c| c.0),
                gpu_end: c.map(|c| c.1),
            }));
            return;
        }
        let passes: Vec<Pass> = (0..n)
            .map(|i| Pass {
                index: i as u32,
                enter: None,
                exit: None,
                enqueue_enter: g.enqueues.get(i).map(|e| e.0),
                enqueue_exit: g.enqueues.get(i).and_then(|e| e.1),
                gpu_start: g.completes.get(i).map(|c| c.0),
                gpu_end: g.completes.get(i).map(|c| c.1),
                complete_host: complete_host(&g.complete_hosts, g.completes.get(i).map(|c| c.1)),
                incomplete: false,
                counters: Vec::new(),
            })
            .collect();
        let mut passes = passes;
        self.attach_counters(&mut passes, counters);
        let restores = passes
            .windows(2)
            .filter_map(|w| {
                Some(Restore {
                    after_pass: w[0].index,
                    // The last host time of the pass the process sees (files without
                    // COMPLETE_HOST: the GPU end, which the completion's hop follows).
                    start: w[0].complete_host.or(w[0].gpu_end)?,
                    // Without a per-pass enqueue (an SDK that enqueues once per window), the
                    // next pass's GPU start bounds the gap from above.
                    end: w[1].enqueue_enter.or(w[1].gpu_start)?,
                    continue_phase: None,
                })
            })
            .collect();
        let base = self.window_of(d, &g, Source::Observe, Outcome::Replayed);
        self.ready.push_back(Output::Window(Window {
            executed_passes: n as u64,
            passes,
            restores,
            bytes: g.bytes.or(g.first_enqueue_bytes),
            continues: g.continues,
            ..base
        }));
    }

    /// End of stream: emit everything still held, oldest first.
    pub fn finish(&mut self) {
        while let Some(d) = self.order.pop_front() {
            if let Some(g) = self.take_group(d) {
                self.emit(d, g);
            }
        }
        self.per_queue.clear();
        self.per_queue_len = 0;
        self.current.clear();
    }
}
