//! The intercepted packet write (`WriteInterceptor`) and the kernel replay window, step for step
//! as in the semantics reference §1: dispatch-id reservation, CONFIG ENTER, the pass-count call,
//! opt-outs, reentrancy, the per-agent writer lock, admission, queue drain, agent drain, snapshot,
//! the pass loop (PASS ENTER, submit, completion records, PASS EXIT, continue, restore), the
//! outcome line, CONFIG EXIT and the application's single completion.

use crate::clock::{now_ns, thread_id};
use crate::device::{
    AppCompletion, Completion, KernelBody, KernelPacket, Packet, Queue, Signal, agent_lock,
    queues_of,
};
use crate::kinds::{self, replay_op};
use crate::log::{self, Level};
use crate::memory::{self, Snapshot};
use crate::opts::{DeclineOpt, LayoutOpt, RestoreOrder, StuckSettings};
use crate::sdk::{Subscriber, sdk};
use crate::{ids, truth};
use krphase_ffi::{
    AgentId, CallbackPhase, CallbackTracingKind, CorrelationId, Dim3, KernelDispatchData,
    KernelDispatchInfo, QueueId, ReplayContinueFn, UserData, kernel_dispatch_op,
};
use parking_lot::Mutex;
use serde_json::json;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

mod payload;
mod record;

use payload::{
    IN_PASS_ENTER, LOCAL_STOPPED, PayloadFields, PayloadStore, build_payload, payload_ptr,
    read_callbacks,
};
use record::{PassRec, Span, Window};

/// The SDK variant and policy the window runs with.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub layout: LayoutOpt,
    pub restore_order: RestoreOrder,
    pub decline: Option<DeclineOpt>,
    pub budget: u64,
    pub gbps: f64,
    pub decline_on_vmem: bool,
    pub decline_on_untracked_pool: bool,
    /// `--decline pass_drain_stuck`: the pass whose kernel is held, and in how many windows.
    pub stuck: Option<StuckSettings>,
    /// Total wait of each drain before it counts as stuck (the SDK: 60 s).
    pub drain_timeout: Duration,
}

static CONFIG: OnceLock<ReplayConfig> = OnceLock::new();

pub fn configure(c: ReplayConfig) {
    let _ = CONFIG.set(c);
}

pub(crate) fn config() -> &'static ReplayConfig {
    CONFIG.get_or_init(|| ReplayConfig {
        layout: LayoutOpt::B,
        restore_order: RestoreOrder::Host,
        decline: None,
        budget: u64::MAX,
        gbps: 12.0,
        decline_on_vmem: true,
        decline_on_untracked_pool: false,
        stuck: None,
        drain_timeout: SDK_DRAIN_LIMIT,
    })
}

/// Drain waits run in 5 s slices, at most 12 of them (`--drain-timeout-ms` scales the slice).
const DRAIN_SLICE: Duration = Duration::from_secs(5);
const DRAIN_SLICES: u32 = 12;
const AGENT_DRAIN_POLL: Duration = Duration::from_millis(2);
/// Admission: the assumed link speed and the projected copy time that only warns.
const ASSUMED_GBPS: f64 = 4.0;
const WARN_SECONDS: f64 = 10.0;

thread_local! {
    static IN_WINDOW: Cell<u64> = const { Cell::new(0) };
    /// Set when a dispatch was submitted from inside this thread's window (reentrancy).
    static REENTRANCY_SEEN: Cell<bool> = const { Cell::new(false) };
}

/// Windows whose pass drain was made stuck so far (`--stuck-windows` caps it).
static STUCK_WINDOWS: AtomicU64 = AtomicU64::new(0);

/// The SDK's drain limit (5 s x 12). Healthy drains always get it, so a loaded machine never
/// turns a slow drain into a decline; `--drain-timeout-ms` only shortens a forced stuck wait.
const SDK_DRAIN_LIMIT: Duration = Duration::from_secs(DRAIN_SLICE.as_secs() * DRAIN_SLICES as u64);

/// Waits for `signal` in 12 slices of `limit`; false when it never reached 0.
fn drain_wait(signal: &Signal, limit: Duration) -> bool {
    let slice = limit / DRAIN_SLICES;
    (0..DRAIN_SLICES).any(|_| signal.wait_zero(slice))
}

/// Whether this window's pass `pass` is the forced stuck one: the right pass, and the
/// `--stuck-windows` budget not used up (each window counts once, when it reaches the pass).
fn forced_stuck(pass: u64) -> bool {
    let Some(st) = config().stuck else {
        return false;
    };
    pass == st.pass
        && STUCK_WINDOWS
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (st.windows.is_none_or(|max| n < max)).then_some(n + 1)
            })
            .is_ok()
}

/// A kernel body that first waits for `gate` to open: the stuck pass's kernel, held on the
/// queue worker (so its queue and the agent stay busy) until the window has given up on it.
fn held(body: KernelBody, gate: Arc<Signal>) -> KernelBody {
    Arc::new(move || {
        while !gate.wait_zero(DRAIN_SLICE) {}
        body()
    })
}

static WARN_GRAPH: AtomicBool = AtomicBool::new(false);
static WARN_MULTI: AtomicBool = AtomicBool::new(false);

/// One kernel launch as the application asks for it.
pub struct Launch {
    pub kernel_id: u64,
    pub grid: u32,
    pub workgroup: u32,
    pub body: KernelBody,
}

fn dispatch_info(queue: &Queue, l: &Launch, dispatch_id: u64) -> KernelDispatchInfo {
    KernelDispatchInfo {
        agent_id: AgentId {
            handle: queue.agent,
        },
        queue_id: QueueId { handle: queue.id },
        kernel_id: l.kernel_id,
        dispatch_id,
        workgroup_size: Dim3 {
            x: l.workgroup,
            y: 1,
            z: 1,
        },
        grid_size: Dim3 {
            x: l.grid,
            y: 1,
            z: 1,
        },
        ..Default::default()
    }
}

pub(crate) fn kernel_name(id: u64) -> &'static str {
    krphase_kernels::kernel_name(id).unwrap_or("unknown")
}

/// The KERNEL_DISPATCH ENQUEUE callbacks around `push`, on the submitting thread.
fn enqueue(queue: &Queue, packet: KernelPacket) {
    let kind = CallbackTracingKind::KERNEL_DISPATCH.0;
    let subs: Vec<Subscriber> = sdk()
        .subscribers(kind, kernel_dispatch_op::ENQUEUE)
        .into_iter()
        .filter(|s| !packet.suppressed.contains(&s.context))
        .collect();
    let mut uds = vec![UserData::default(); subs.len()];
    let mut data = KernelDispatchData {
        size: std::mem::size_of::<KernelDispatchData>() as u64,
        start_timestamp: 0,
        end_timestamp: 0,
        dispatch_info: packet.info,
    };
    let (tid, corr) = (packet.thread_id, ids::correlation(packet.corr));
    for (s, ud) in subs.iter().zip(uds.iter_mut()) {
        s.invoke(
            tid,
            corr,
            kind,
            kernel_dispatch_op::ENQUEUE,
            CallbackPhase::ENTER,
            (&mut data as *mut KernelDispatchData).cast(),
            ud,
        );
    }
    for (s, ud) in subs.iter().zip(uds.iter_mut()) {
        s.invoke(
            tid,
            corr,
            kind,
            kernel_dispatch_op::ENQUEUE,
            CallbackPhase::EXIT,
            (&mut data as *mut KernelDispatchData).cast(),
            ud,
        );
    }
    queue.push(Packet::Kernel(packet));
}

fn ordinary(
    queue: &Queue,
    l: Launch,
    dispatch_id: u64,
    corr: CorrelationId,
    app: Arc<AppCompletion>,
    reader: bool,
) {
    // A thread inside a window on this agent already holds the writer side.
    let own_window = IN_WINDOW.with(|c| c.get()) == queue.agent;
    let _guard = if reader && !own_window {
        Some(agent_lock(queue.agent).read())
    } else {
        None
    };
    app.dispatch_id.store(dispatch_id, Ordering::SeqCst);
    let packet = KernelPacket {
        info: dispatch_info(queue, &l, dispatch_id),
        body: l.body,
        corr: corr.internal,
        thread_id: thread_id(),
        suppressed: Vec::new(),
        completion: Completion::App(app),
    };
    enqueue(queue, packet);
}

fn decline_truth(dispatch_id: u64, kernel_id: u64, reason: &str, config: Option<(u64, u64)>) {
    if !truth::enabled() {
        return;
    }
    truth::write(&json!({
        "type": "decline", "pid": std::process::id(), "dispatch_id": dispatch_id,
        "kernel": kernel_name(kernel_id), "reason": reason, "config": config.is_some(),
        "config_enter": config.map(|c| c.0), "config_exit": config.map(|c| c.1),
    }));
}

/// The intercepted write of `launches` to `queue` (one call = one packet batch). `graph` marks a
/// HIP graph launch. Returns when the packets are submitted (after the whole window, if
/// replayed); each launch's completion is returned for the application to track.
pub fn write_packets(queue: &Queue, launches: Vec<Launch>, graph: bool) -> Vec<Arc<AppCompletion>> {
    let s = sdk();
    let apps: Vec<_> = launches.iter().map(|_| queue.app_completion()).collect();
    if s.finalizing() {
        for (l, app) in launches.into_iter().zip(apps.iter().cloned()) {
            ordinary(
                queue,
                l,
                ids::next_dispatch(),
                ids::next_correlation(),
                app,
                false,
            );
        }
        return apps;
    }
    let owner = s.replay_owner();
    let reader = s.replay_claimed();
    if owner.is_some() {
        if graph {
            log::once(
                &WARN_GRAPH,
                Level::Warning,
                "queue_hooks.cpp",
                188,
                "kernel replay: HIP graph launches are not supported; graph dispatches run once without replay",
            );
        }
        if launches.len() > 1 {
            log::once(
                &WARN_MULTI,
                Level::Warning,
                "queue_hooks.cpp",
                196,
                "kernel replay: only single-packet dispatch submissions are replayed; multi-packet writes run once without replay",
            );
        }
    }
    let eligible = owner.is_some() && launches.len() == 1 && !graph;
    if !eligible {
        let reason = if graph {
            "graph_launch"
        } else {
            "multi_packet"
        };
        for (l, app) in launches.into_iter().zip(apps.iter().cloned()) {
            let corr = ids::next_correlation();
            let id = ids::next_dispatch();
            if owner.is_some() {
                decline_truth(id, l.kernel_id, reason, None);
            }
            ordinary(queue, l, id, corr, app, reader);
        }
        return apps;
    }
    let l = launches.into_iter().next().expect("one launch");
    let corr = ids::next_correlation();
    window(
        queue,
        l,
        corr,
        apps[0].clone(),
        owner.expect("eligible has owner"),
    );
    apps
}

/// Payload fields outside a pass (CONFIG ENTER and EXIT): no pass index, callbacks or toggles.
fn config_fields() -> PayloadFields {
    PayloadFields {
        current: 0,
        total: 0,
        pass_count: None,
        cont: None,
        toggles: false,
    }
}

/// CONFIG EXIT: builds its payload and invokes the callback; returns the CONFIG EXIT timestamp,
/// taken just before the callback.
fn config_exit(
    owner: &Subscriber,
    w: &Window,
    layout: LayoutOpt,
    info: KernelDispatchInfo,
    config_ud: &mut UserData,
) -> u64 {
    let mut ep = build_payload(layout, info, config_fields());
    let t = now_ns();
    invoke_replay(
        owner,
        w,
        replay_op::CONFIG,
        CallbackPhase::EXIT,
        &mut ep,
        config_ud,
    );
    t
}

fn invoke_replay(
    sub: &Subscriber,
    w: &Window,
    op: i32,
    phase: CallbackPhase,
    p: &mut PayloadStore,
    ud: &mut UserData,
) {
    sub.invoke(
        w.thread,
        w.corr,
        kinds::table().kernel_replay,
        op,
        phase,
        payload_ptr(p),
        ud,
    );
}

fn window(
    queue: &Queue,
    l: Launch,
    corr: CorrelationId,
    app: Arc<AppCompletion>,
    owner: Subscriber,
) {
    let cfg = config();
    let dispatch_id = ids::next_dispatch();
    app.dispatch_id.store(dispatch_id, Ordering::SeqCst);
    let info = dispatch_info(queue, &l, dispatch_id);
    let mut w = Window {
        dispatch_id,
        corr,
        kernel_id: l.kernel_id,
        agent: queue.agent,
        queue: queue.id,
        thread: thread_id(),
        ..Default::default()
    };
    // CONFIG ENTER, then the pass-count call with the value stored at ENTER.
    let mut config_ud = UserData::default();
    let mut cp = build_payload(cfg.layout, info, config_fields());
    w.config_enter = now_ns();
    invoke_replay(
        &owner,
        &w,
        replay_op::CONFIG,
        CallbackPhase::ENTER,
        &mut cp,
        &mut config_ud,
    );
    let (pass_count, cont) = read_callbacks(cfg.layout, &mut cp);
    // SAFETY: the tool stored this callback with the header's signature.
    let n = pass_count.map(|f| unsafe { f(info, config_ud) });
    w.pass_count_return = now_ns();

    let opt_out = match n {
        None => Some("opt_out"),
        Some(1) => Some("pass_count_1"),
        Some(0) if cont.is_none() => Some("zero_without_continue"),
        _ => None,
    };
    if let Some(reason) = opt_out {
        if reason == "zero_without_continue" {
            log::log(
                Level::Warning,
                "replay_callbacks.cpp",
                142,
                &format!(
                    "kernel replay: dispatch {dispatch_id}: replay_pass_count returned 0 without a replay_continue callback; the dispatch runs once"
                ),
            );
        }
        let exit = config_exit(&owner, &w, cfg.layout, info, &mut config_ud);
        decline_truth(
            dispatch_id,
            l.kernel_id,
            reason,
            Some((w.config_enter, exit)),
        );
        ordinary(queue, l, dispatch_id, corr, app, sdk().replay_claimed());
        return;
    }
    let n = n.unwrap_or(0);
    w.requested = n;
    let pass_sub = sdk().replay_pass_subscriber(&owner);

    // Reentrancy: this thread is already inside a window on this agent.
    if IN_WINDOW.with(|c| c.get()) == queue.agent {
        w.reentrancy = true;
        REENTRANCY_SEEN.with(|c| c.set(true));
        finish_declined(
            queue,
            l,
            app,
            &owner,
            &mut w,
            config_ud,
            "reentrant_dispatch",
        );
        return;
    }

    // Each phase boundary below is one clock reading, shared by the end of one phase and the
    // start of the next, so the truth's phases tile the window without gaps.
    let t = now_ns();
    w.setup = Some(Span {
        start: w.pass_count_return,
        end: t,
    });
    let guard = agent_lock(queue.agent).write();
    let locked = now_ns();
    w.lock_wait = Some(Span {
        start: t,
        end: locked,
    });
    // Saved and restored: a window may open inside another agent's window on this thread.
    let outer_window = IN_WINDOW.with(|c| c.replace(queue.agent));
    let outer_seen = REENTRANCY_SEEN.with(|c| c.replace(false));
    let result = locked_window(
        queue, &l, &app, &owner, pass_sub, &mut w, config_ud, cont, info, locked,
    );
    if let Err(reason) = result {
        // SDK decline after acceptance: the dispatch runs once, still under the writer lock.
        finish_declined(queue, l, app, &owner, &mut w, config_ud, reason);
    }
    IN_WINDOW.with(|c| c.set(outer_window));
    REENTRANCY_SEEN.with(|c| c.set(outer_seen));
    drop(guard);
}

/// Outcome line (WARNING), CONFIG EXIT, truth, then a single ordinary run.
fn finish_declined(
    queue: &Queue,
    l: Launch,
    app: Arc<AppCompletion>,
    owner: &Subscriber,
    w: &mut Window,
    mut config_ud: UserData,
    reason: &str,
) {
    let cfg = config();
    if log::enabled(Level::Warning) {
        log::log(
            Level::Warning,
            "replay_diagnostics.cpp",
            88,
            &w.outcome_line(reason),
        );
    }
    let info = dispatch_info(queue, &l, w.dispatch_id);
    w.config_exit = config_exit(owner, w, cfg.layout, info, &mut config_ud);
    if truth::enabled() {
        truth::write(&w.truth(reason));
    }
    let (id, corr) = (w.dispatch_id, w.corr);
    // The thread holds this agent's writer lock (its own window, or the outer window of a
    // reentrant dispatch), so no reader lock is taken.
    ordinary(queue, l, id, corr, app, false);
}

#[allow(clippy::too_many_arguments)]
fn locked_window(
    queue: &Queue,
    l: &Launch,
    app: &Arc<AppCompletion>,
    owner: &Subscriber,
    pass_sub: Option<Subscriber>,
    w: &mut Window,
    mut config_ud: UserData,
    cont: ReplayContinueFn,
    info: KernelDispatchInfo,
    locked: u64,
) -> Result<(), &'static str> {
    let cfg = config();
    let forced = cfg.decline;
    let agent = queue.agent;

    // Admission, before any copy; it starts where the lock wait ended.
    let mut t = locked;
    let inv = memory::inventory(agent);
    w.footprint = memory::total(&inv);
    w.vmem = memory::untracked_vmem(agent);
    w.pool = memory::untracked_pool(agent);
    let projected_passes = if w.requested == 0 { 2 } else { w.requested };
    let projected_s = (w.footprint.0 * projected_passes) as f64 / (ASSUMED_GBPS * 1e9);
    if projected_s > WARN_SECONDS && log::enabled(Level::Warning) {
        log::log(
            Level::Warning,
            "replay_diagnostics.cpp",
            61,
            &format!(
                "kernel replay: dispatch {}: projected snapshot/restore copy time {projected_s:.1} s exceeds {WARN_SECONDS:.0} s",
                w.dispatch_id
            ),
        );
    }
    let reason = if forced == Some(DeclineOpt::UntrackedMemory)
        || (cfg.decline_on_vmem && w.vmem.1 > 0)
        || (cfg.decline_on_untracked_pool && w.pool.1 > 0)
    {
        Some("untracked_memory")
    } else if forced == Some(DeclineOpt::FootprintBudget) || w.footprint.0 > cfg.budget {
        Some("footprint_budget")
    } else {
        None
    };
    let end = now_ns();
    w.admission = Some(Span { start: t, end });
    t = end;
    if let Some(r) = reason {
        return Err(r);
    }

    // Queue drain: a barrier-AND with a private signal on this queue.
    let drain = Signal::new(1);
    queue.push(Packet::Barrier {
        signal: Some(drain.clone()),
        app: None,
    });
    let drained = drain_wait(&drain, SDK_DRAIN_LIMIT);
    let end = now_ns();
    w.queue_drain = Some(Span { start: t, end });
    t = end;
    if !drained || forced == Some(DeclineOpt::QueueDrainStuck) {
        std::mem::forget(drain); // deliberately leaked, as the SDK does
        return Err("queue_drain_stuck");
    }

    // Agent drain: every queue's async handlers have run.
    let begun = Instant::now();
    let mut stuck = false;
    loop {
        let active: usize = queues_of(agent)
            .iter()
            .map(|q| q.async_active.load(Ordering::SeqCst))
            .sum();
        if active == 0 {
            break;
        }
        if begun.elapsed() > SDK_DRAIN_LIMIT {
            stuck = true;
            break;
        }
        std::thread::sleep(AGENT_DRAIN_POLL);
    }
    let end = now_ns();
    w.agent_drain = Some(Span { start: t, end });
    t = end;
    if stuck || forced == Some(DeclineOpt::AgentDrainStuck) {
        return Err("agent_drain_stuck");
    }

    // Snapshot: a real copy of every tracked region plus writable module variables.
    let snap: Snapshot = memory::snap(inv, cfg.gbps);
    let regions = snap.regions.len() as u64;
    let end = now_ns();
    w.snapshot = Some((Span { start: t, end }, snap.bytes, regions));
    t = end;
    if log::enabled(Level::Info) {
        log::log(
            Level::Info,
            "memory_snapshot.cpp",
            412,
            &format!(
                "kernel-replay snapshot: captured {regions} regions (tracked allocations + module variables) for agent {agent}"
            ),
        );
    }
    if forced == Some(DeclineOpt::SnapshotFailed) {
        log::log(
            Level::Warning,
            "queue_hooks.cpp",
            301,
            &format!(
                "kernel replay: dispatch {}: snapshot failed; the dispatch runs once",
                w.dispatch_id
            ),
        );
        return Err("snapshot_failed");
    }

    // The pass loop.
    let total = w.requested;
    LOCAL_STOPPED.with(|s| s.borrow_mut().clear());
    let mut reason = "none";
    // The held kernel of a forced stuck pass, released once the window is over.
    let mut gate: Option<Arc<Signal>> = None;
    let mut i: u64 = 0;
    loop {
        let mut pass_ud = config_ud; // a fresh copy of the CONFIG value per pass
        let mut pe = build_payload(
            cfg.layout,
            info,
            PayloadFields {
                current: i,
                total,
                pass_count: None,
                cont: None,
                toggles: true,
            },
        );
        // Prepare: from the previous phase's end (snapshot, restore or continue) to PASS ENTER.
        let enter = now_ns();
        let prepare = Span {
            start: t,
            end: enter,
        };
        if let Some(ps) = &pass_sub {
            IN_PASS_ENTER.with(|c| c.set(true));
            invoke_replay(
                ps,
                w,
                replay_op::PASS,
                CallbackPhase::ENTER,
                &mut pe,
                &mut pass_ud,
            );
            IN_PASS_ENTER.with(|c| c.set(false));
        }
        if i > 0 && cfg.restore_order == RestoreOrder::Device {
            let start = now_ns();
            restore(w, &snap, i - 1, cfg.gbps, start);
        }
        // Submit the pass with a pooled signal; the application's signal is left out.
        let signal = Signal::new(1);
        let times = Arc::new(Mutex::new((0, 0)));
        let mut body = l.body.clone();
        let mut limit = SDK_DRAIN_LIMIT;
        if forced_stuck(i) {
            limit = cfg.drain_timeout;
            let g = Signal::new(1);
            body = held(body, g.clone());
            gate = Some(g);
        }
        let packet = KernelPacket {
            body,
            info,
            corr: w.corr.internal,
            thread_id: w.thread,
            suppressed: LOCAL_STOPPED.with(|s| s.borrow().clone()),
            completion: Completion::Pass {
                signal: signal.clone(),
                times: times.clone(),
            },
        };
        enqueue(queue, packet);
        let done = drain_wait(&signal, limit);
        if !done {
            // No PASS EXIT and no restore: the pass's kernel is still running (its records and
            // signal arrive whenever it finishes); executed_passes counts the completed ones.
            w.executed = i;
            w.passes.push(PassRec {
                index: i,
                enter,
                exit: None,
                gpu: None,
                prepare,
                exit_callback: None,
                continue_phase: None,
            });
            reason = "pass_drain_stuck";
            w.tail = Some(Span {
                start: now_ns(),
                end: 0,
            });
            break;
        }
        let gpu = Some(*times.lock());
        w.executed = i + 1;
        let mut px = build_payload(
            cfg.layout,
            info,
            PayloadFields {
                current: i,
                total,
                pass_count: None,
                cont,
                toggles: false,
            },
        );
        let exit = now_ns();
        if let Some(ps) = &pass_sub {
            invoke_replay(
                ps,
                w,
                replay_op::PASS,
                CallbackPhase::EXIT,
                &mut px,
                &mut pass_ud,
            );
        }
        let returned = now_ns();
        w.tail = Some(Span {
            start: returned,
            end: 0,
        });
        t = returned;
        // The tool may override replay_continue at PASS EXIT for this pass only.
        let (_, pass_cont) = read_callbacks(cfg.layout, &mut px);
        let (more, continue_phase) = if total > 0 && i + 1 >= total {
            (false, None) // never consulted after the last pass of a fixed loop
        } else {
            let more = if let Some(f) = pass_cont {
                // SAFETY: the tool stored this callback with the header's signature.
                unsafe { f(info, i, total, pass_ud) != 0 }
            } else {
                total > 0
            };
            let end = now_ns();
            let c = Span { start: t, end };
            t = end;
            (more, Some(c))
        };
        w.passes.push(PassRec {
            index: i,
            enter,
            exit: Some(exit),
            gpu,
            prepare,
            exit_callback: Some(Span {
                start: exit,
                end: returned,
            }),
            continue_phase,
        });
        if !more {
            break;
        }
        if cfg.restore_order == RestoreOrder::Host {
            t = restore(w, &snap, i, cfg.gbps, t);
        }
        i += 1;
    }
    LOCAL_STOPPED.with(|s| s.borrow_mut().clear());
    w.reentrancy = REENTRANCY_SEEN.with(|c| c.replace(false));

    let level = if reason == "none" && !w.reentrancy {
        Level::Info
    } else {
        Level::Warning
    };
    if log::enabled(level) {
        log::log(level, "replay_diagnostics.cpp", 88, &w.outcome_line(reason));
    }
    if log::enabled(Level::Info) {
        let pre_exit = now_ns();
        log::log(Level::Info, "queue_hooks.cpp", 512, &w.phase_line(pre_exit));
    }
    w.config_exit = config_exit(owner, w, cfg.layout, info, &mut config_ud);
    if let Some(t) = w.tail.as_mut() {
        t.end = w.config_exit;
    }
    // The application's completion, exactly once, behind a barrier (so behind a stuck kernel).
    queue.push(Packet::Barrier {
        signal: None,
        app: Some(app.clone()),
    });
    if let Some(g) = gate {
        g.add(-1); // the stuck kernel finishes eventually
    }
    if truth::enabled() {
        truth::write(&w.truth(reason));
    }
    Ok(())
}

/// Restores the snapshot; the restore phase starts at `start` (the previous phase's end) and its
/// end is returned, to start the next phase.
fn restore(w: &mut Window, snap: &Snapshot, after_pass: u64, gbps: f64, start: u64) -> u64 {
    let bytes = memory::restore(snap, gbps);
    let end = now_ns();
    w.restores.push((after_pass, Span { start, end }, bytes));
    if log::enabled(Level::Info) {
        log::log(
            Level::Info,
            "memory_snapshot.cpp",
            468,
            &format!(
                "kernel-replay restore: restored {}/{} regions",
                snap.regions.len(),
                snap.regions.len()
            ),
        );
    }
    end
}
