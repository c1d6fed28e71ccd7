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
//!   A CONFIG pair without PASS is a tool opt-out ([`Decline`](crate::Decline)) or, when the tool
//!   asked for N > 1, an SDK decline (a [`Window`] with [`Outcome::Declined`](crate::Outcome)).
//! * **Observe mode** (another tool owns replay): passes share a dispatch id, so a dispatch with
//!   more than one enqueue or completion is a window. Its restore i is the gap from pass i's
//!   completion (host time at the COMPLETE callback, else its GPU end) to the enqueue of pass
//!   i+1: an upper bound on the SDK's restore, which lies inside it with the completion's hop,
//!   the owning tool's PASS callbacks and the SDK's pass preparation. A dispatch with one enqueue
//!   is a [`PlainDispatch`](crate::PlainDispatch).
//!
//! COMPLETE records come from another thread and may reach the file before or after the window's
//! own records, so a dispatch is held until both sides are in (`close.rs`),
//! [`Reconstructor::finish`] is called, or a held-dispatch bound evicts it. The outputs do not
//! depend on the order in which different threads' records reach the file (each thread's own
//! order kept; `tests/record_order.rs`), except the observe-mode byte estimate, taken from the
//! allocations seen when the dispatch's first placement is read.
//!
//! Everything held is bounded by [`Limits`]; a record that would exceed an error bound makes
//! [`Reconstructor::push_at`] fail with a [`LimitError`] naming its file offset.
//!
//! This file holds the [`Reconstructor`] and its public calls; a held dispatch is a `Group`
//! (`group.rs`). `take.rs` routes each event to the handler of its family: `drive.rs` (CONFIG,
//! PASS and CONTINUE records, and the assembly of a drive-mode window), `enqueue.rs` (enqueues
//! and their placement), `close.rs` (completions, and when a held dispatch is complete and
//! emitted), `bytes.rs` (byte estimates), `counters.rs` and `names.rs`. `observe.rs` infers
//! observe-mode windows and plain dispatches from a held dispatch without passes; `bounds.rs`
//! keeps to the [`Limits`]. The phases' arithmetic is `crate::phases`.

mod bounds;
mod bytes;
mod close;
mod counters;
mod drive;
mod enqueue;
mod group;
mod names;
mod observe;
mod take;

use crate::footprint::Footprint;
use crate::limits::{LimitError, Limits};
use crate::model::{ByteEstimate, Outcome, Output, Source, Window};
use group::Group;
use krphase_format::FormatVersion;
use krphase_format::event::Event;
use std::collections::VecDeque;

// Every map here is looked up a few times per record (std's SipHash was a third of an import's
// decoding); none is iterated into an output, so their order does not matter.
use foldhash::HashMap;

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
    /// [`krphase_format::event::own_time`]).
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
            groups: HashMap::default(),
            order: VecDeque::new(),
            per_queue: HashMap::default(),
            per_queue_len: 0,
            current: HashMap::default(),
            placement: HashMap::default(),
            sticky_placement: true,
            placement_may_be_per_dispatch: false,
            own_time_plain_ns: false,
            names: HashMap::default(),
            counter_names: HashMap::default(),
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

    /// Takes in the next event of the stream (no file offset for errors: see
    /// [`Reconstructor::push_at`]).
    pub fn push(&mut self, ev: &Event) -> Result<(), LimitError> {
        self.at = None;
        self.take(ev)
    }

    /// Takes in the next event of the stream, found at file `offset` (what a [`LimitError`]
    /// names: [`krphase_format::FileReader::last_offset`]).
    pub fn push_at(&mut self, ev: &Event, offset: u64) -> Result<(), LimitError> {
        self.at = Some(offset);
        self.take(ev)
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

    /// The held dispatch `d`, opened by a record of `thread` when it is new.
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

    /// Removes a held dispatch.
    fn take_group(&mut self, d: u64) -> Option<Group> {
        let g = self.groups.remove(&d)?;
        self.held_entries -= g.counted;
        Some(g)
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
}
