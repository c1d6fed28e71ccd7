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
//!   more than one enqueue or completion is a window; restore i ≈ GPU end of pass i → enqueue of
//!   pass i+1. A dispatch with one enqueue is a [`PlainDispatch`].
//!
//! COMPLETE records come from another thread and may reach the file after the window's own
//! records, so a dispatch is held until its completions arrive, a later dispatch on the same queue
//! completes, [`Reconstructor::finish`] is called, or the pending limit evicts it.

use crate::event::{Decision, Event, NameSpace, UNATTRIBUTED, alloc_class};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// Default bound on dispatches held while waiting for their records.
pub const DEFAULT_MAX_PENDING: usize = 1 << 16;

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
    /// PASS ENTER without PASS EXIT: the SDK broke the loop in this pass (`pass_drain_stuck`),
    /// or the file ends inside it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub incomplete: bool,
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
    bytes: Option<ByteEstimate>,
    /// Reader-side estimate at the first enqueue (observe mode has no WINDOW_BYTES).
    first_enqueue_bytes: Option<ByteEstimate>,
    /// A replayed drive-mode window (CONFIG EXIT seen with passes).
    drive_window: bool,
    /// The submitting thread has moved on to another dispatch.
    thread_done: bool,
    /// A later dispatch on the same queue completed (so did everything before it).
    queue_sealed: bool,
}

/// Turns events into [`Output`]s. Feed with [`push`](Self::push), take results with
/// [`pop`](Self::pop), and call [`finish`](Self::finish) at the end of the stream.
pub struct Reconstructor {
    groups: HashMap<u64, Group>,
    order: VecDeque<u64>,
    per_queue: HashMap<u64, VecDeque<u64>>,
    current: HashMap<u32, u64>,
    /// Last placement (agent, queue) recorded on each thread; applies to its later enqueues.
    placement: HashMap<u32, (u64, u64)>,
    names: HashMap<u64, String>,
    ready: VecDeque<Output>,
    max_pending: usize,
    evicted: u64,
    footprint: Footprint,
}

/// Live allocations and module-variable bytes per agent, replayed from ALLOC/FREE and
/// MODULE_VARS records: the snapshot estimate for windows the tool did not see open (observe
/// mode). Holds only live allocations.
#[derive(Debug, Default)]
struct Footprint {
    /// address → (agent, size, counted in the classified estimate).
    live: HashMap<u64, (u64, u64, bool)>,
    /// agent → (classified bytes, classified regions, all live bytes).
    agents: HashMap<u64, (u64, u64, u64)>,
    /// agent → (bytes, variables) of writable module variables.
    module_vars: HashMap<u64, (u64, u64)>,
    /// Module-variable bytes no agent could be named for (upper bounds only).
    unattributed: u64,
}

impl Footprint {
    fn alloc(&mut self, address: u64, agent: u64, size: u64, class: u8) {
        self.free(address);
        let snap = class & alloc_class::SNAPSHOT != 0;
        self.live.insert(address, (agent, size, snap));
        // Sizes come from the file: a crafted one must saturate, not overflow.
        let e = self.agents.entry(agent).or_default();
        e.2 = e.2.saturating_add(size);
        if snap {
            e.0 = e.0.saturating_add(size);
            e.1 = e.1.saturating_add(1);
        }
    }

    fn free(&mut self, address: u64) {
        let Some((agent, size, snap)) = self.live.remove(&address) else {
            return;
        };
        if let Some(e) = self.agents.get_mut(&agent) {
            e.2 = e.2.saturating_sub(size);
            if snap {
                e.0 = e.0.saturating_sub(size);
                e.1 = e.1.saturating_sub(1);
            }
        }
    }

    fn estimate(&self, agent: u64) -> ByteEstimate {
        let (c, r, u) = self.agents.get(&agent).copied().unwrap_or_default();
        let (mb, mn) = self.module_vars.get(&agent).copied().unwrap_or_default();
        ByteEstimate {
            classified: c.saturating_add(mb),
            classified_regions: r.saturating_add(mn).min(u64::from(u16::MAX)) as u16,
            upper_bound: u.saturating_add(mb).saturating_add(self.unattributed),
        }
    }
}

impl Default for Reconstructor {
    fn default() -> Self {
        Self::new()
    }
}

impl Reconstructor {
    pub fn new() -> Self {
        Self::with_max_pending(DEFAULT_MAX_PENDING)
    }

    pub fn with_max_pending(max_pending: usize) -> Self {
        Reconstructor {
            groups: HashMap::new(),
            order: VecDeque::new(),
            per_queue: HashMap::new(),
            current: HashMap::new(),
            placement: HashMap::new(),
            names: HashMap::new(),
            ready: VecDeque::new(),
            max_pending: max_pending.max(1),
            evicted: 0,
            footprint: Footprint::default(),
        }
    }

    /// The snapshot byte estimate for `agent` at this point of the stream, from the live
    /// allocations and module variables seen so far (what drive mode records at CONFIG ENTER).
    pub fn footprint_estimate(&self, agent: u64) -> ByteEstimate {
        self.footprint.estimate(agent)
    }

    /// Dispatches emitted before their records were complete because of the pending limit.
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
            self.enforce_bound();
        }
        self.groups.get_mut(&d).expect("group just inserted")
    }

    fn enforce_bound(&mut self) {
        while self.groups.len() > self.max_pending {
            let Some(d) = self.order.pop_front() else {
                break;
            };
            if let Some(g) = self.groups.remove(&d) {
                self.evicted += 1;
                self.emit(d, g);
            }
        }
        if self.order.len() > 2 * self.groups.len() + 1024 {
            let groups = &self.groups;
            self.order.retain(|d| groups.contains_key(d));
        }
    }

    /// The submitting thread started dispatch `d`: earlier dispatches of that thread are done.
    fn mark_thread(&mut self, thread: u32, d: u64) {
        if let Some(prev) = self.current.insert(thread, d)
            && prev != d
            && let Some(g) = self.groups.get_mut(&prev)
        {
            g.thread_done = true;
            self.try_close(prev);
        }
    }

    /// Takes in the next event of the stream.
    pub fn push(&mut self, ev: &Event) {
        match *ev {
            Event::Name {
                space: NameSpace::Kernel,
                key,
                ref name,
            } => {
                self.names.insert(key, name.clone());
            }
            Event::ConfigEnter {
                thread,
                ts,
                dispatch_id,
                kernel_id,
                decision,
            } => {
                self.mark_thread(thread, dispatch_id);
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
            } => self.on_dispatch_info(thread, dispatch_id, agent, queue),
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
            } => self.on_pass_enter(thread, ts, dispatch_id, pass),
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
                duration_ns,
            } => {
                let call = ContinueCall {
                    after_pass: pass.min(u64::from(u32::MAX)) as u32,
                    total,
                    call: Interval {
                        start: ts,
                        end: ts.saturating_add(u64::from(duration_ns)),
                    },
                    result,
                };
                let g = self.group(dispatch_id, thread);
                if g.continues.len() < 1 << 20 {
                    g.continues.push(call);
                }
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
            } => self.on_enqueue_enter(thread, ts, dispatch_id, kernel_id),
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
            } => self.on_complete(thread, dispatch_id, gpu_start, gpu_end),
            _ => self.push_footprint(ev),
        }
    }

    /// Events that change the live-allocation and module-variable state, and the snapshot
    /// byte estimate recorded at a window's start.
    fn push_footprint(&mut self, ev: &Event) {
        match *ev {
            Event::Alloc {
                address,
                size,
                agent,
                class,
                ..
            } => self.footprint.alloc(address, agent, size, class),
            Event::Free { address, .. } => self.footprint.free(address),
            Event::ModuleVars {
                agent,
                bytes,
                variables,
                ..
            } => {
                if agent == UNATTRIBUTED {
                    self.footprint.unattributed = bytes;
                } else {
                    self.footprint
                        .module_vars
                        .insert(agent, (bytes, u64::from(variables)));
                }
            }
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
            }
            _ => {}
        }
    }

    fn on_dispatch_info(&mut self, thread: u32, dispatch_id: u64, agent: u64, queue: u64) {
        let g = self.group(dispatch_id, thread);
        g.agent = Some(agent);
        let first = g.queue.is_none();
        g.queue = Some(queue);
        // Recorded at an enqueue (not at CONFIG): the thread's placement from now on.
        let at_enqueue = !g.enqueues.is_empty()
            || g.in_pass
                .is_some_and(|i| g.passes[i].enqueue_enter.is_some());
        if at_enqueue {
            self.placement.insert(thread, (agent, queue));
        }
        let est = self.footprint.estimate(agent);
        let g = self.groups.get_mut(&dispatch_id).expect("group exists");
        // The first enqueue's placement (it follows that enqueue's record).
        if at_enqueue && g.enqueues.len() <= 1 && g.config_enter.is_none() {
            g.first_enqueue_bytes = Some(est);
        }
        if first {
            self.per_queue
                .entry(queue)
                .or_default()
                .push_back(dispatch_id);
        }
    }

    fn on_pass_enter(&mut self, thread: u32, ts: u64, dispatch_id: u64, pass: u32) {
        let g = self.group(dispatch_id, thread);
        let i = pass as usize;
        if i < 1 << 20 {
            while g.passes.len() <= i {
                let index = g.passes.len() as u32;
                g.passes.push(Pass {
                    index,
                    ..Pass::default()
                });
            }
            g.passes[i].enter = Some(ts);
            g.in_pass = Some(i);
        }
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

    fn on_enqueue_enter(&mut self, thread: u32, ts: u64, dispatch_id: u64, kernel_id: u64) {
        self.mark_thread(thread, dispatch_id);
        let place = self.placement.get(&thread).copied();
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
            self.per_queue
                .entry(queue)
                .or_default()
                .push_back(dispatch_id);
        }
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

    fn on_complete(&mut self, thread: u32, dispatch_id: u64, gpu_start: u64, gpu_end: u64) {
        let g = self.group(dispatch_id, thread);
        g.completes.push((gpu_start, gpu_end));
        let queue = g.queue;
        self.try_close(dispatch_id);
        if let Some(q) = queue {
            self.seal_queue_before(q, dispatch_id);
        }
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
                if self.groups.contains_key(&front) {
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
            let g = self.groups.remove(&d).expect("present");
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
        g.completes.sort_unstable();
        // Passes seen without CONFIG EXIT (file cut mid-window) still form a drive window.
        if !g.passes.is_empty() {
            for (p, &(s, e)) in g.passes.iter_mut().zip(g.completes.iter()) {
                p.gpu_start = Some(s);
                p.gpu_end = Some(e);
            }
            for p in &mut g.passes {
                p.incomplete = p.enter.is_some() && p.exit.is_none();
            }
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
                incomplete: false,
            })
            .collect();
        let restores = passes
            .windows(2)
            .filter_map(|w| {
                Some(Restore {
                    after_pass: w[0].index,
                    start: w[0].gpu_end?,
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
            if let Some(g) = self.groups.remove(&d) {
                self.emit(d, g);
            }
        }
        self.per_queue.clear();
        self.current.clear();
    }
}
