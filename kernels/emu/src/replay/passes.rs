//! The pass loop: per pass PASS ENTER, submit with a pooled signal, the pass drain, PASS EXIT,
//! the continue decision and the restore (after PASS EXIT in host order, inside the next pass
//! after PASS ENTER in device order). A pass that does not drain ends the loop.

use super::copy_plan::{CopyPlan, Taken};
use super::drain::{SDK_DRAIN_LIMIT, drain_wait, forced_stuck, held};
use super::open_window::{Decline, OpenWindow};
use super::pass_model::{PassPlan, WindowModel};
use super::payload::{
    PayloadFields, build_payload, clear_local_stops, local_stops, read_callbacks,
};
use super::phase_clock::{PhaseClock, Span};
use super::record::{PassRecord, RestoreRecord, WindowRecord};
use super::submit::enqueue;
use super::tool_calls::{ask_continue, pass_enter, pass_exit};
use crate::clock::now_ns;
use crate::device::{Completion, KernelPacket, PassTimes, Signal};
use crate::log::{self, Level};
use crate::memory;
use crate::opts::{ContinueUserData, RestoreOrder};
use crate::pacing::{link_duration, pace_until};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the pass loop ended.
pub(super) struct PassLoopEnd {
    /// `none`, or `pass_drain_stuck` when a pass did not drain.
    pub(super) reason: Decline,
    /// The gate holding a forced stuck pass's kernel, to open once the window is over.
    pub(super) held_kernel: Option<Arc<Signal>>,
}

/// What one pass leads to.
enum PassEnd {
    /// Another pass follows.
    More,
    /// The loop is over.
    Last,
    /// The pass did not drain.
    Stuck,
}

/// Runs the passes from the snapshot's end until the tool or the pass count stops them.
pub(super) fn run(win: &mut OpenWindow, snap: &Taken) -> PassLoopEnd {
    clear_local_stops();
    let model = WindowModel::new(win, snap);
    let mut held_kernel = None;
    let mut i: u64 = 0;
    let reason = loop {
        match pass(win, snap, &model, i, &mut held_kernel) {
            PassEnd::Stuck => break "pass_drain_stuck",
            PassEnd::Last => break "none",
            PassEnd::More => {}
        }
        if win.cfg.restore_order == RestoreOrder::Host {
            restore(
                &mut win.record,
                snap,
                i,
                win.cfg.gbps,
                &mut win.clock,
                false,
            );
        }
        i += 1;
    };
    clear_local_stops();
    PassLoopEnd {
        reason,
        held_kernel,
    }
}

/// One pass: `prepare` runs from the previous phase's end (snapshot, restore or continue) to
/// PASS ENTER; the pass from PASS ENTER to PASS EXIT; then PASS EXIT's callback and the
/// continue decision.
fn pass(
    win: &mut OpenWindow,
    snap: &Taken,
    model: &WindowModel,
    i: u64,
    held_kernel: &mut Option<Arc<Signal>>,
) -> PassEnd {
    let total = win.record.requested;
    let mut pass_ud = win.tool.config_ud; // a fresh copy of the CONFIG value per pass
    let mut enter_payload = build_payload(
        win.cfg.layout,
        win.info,
        PayloadFields::pass_enter(i, total),
    );
    let prepare = win.clock.close();
    pass_enter(&win.tool, &win.record, &mut enter_payload, &mut pass_ud);
    if i > 0 && win.cfg.restore_order == RestoreOrder::Device {
        let mut own = PhaseClock::starting_now();
        restore(&mut win.record, snap, i - 1, win.cfg.gbps, &mut own, true);
    }
    let plan = model.pass(i);
    let submitted = submit_pass(win, i, &plan, held_kernel);
    if !drain_wait(&submitted.signal, submitted.drain_limit) {
        record_stuck_pass(win, i, prepare);
        return PassEnd::Stuck;
    }
    model.write_truth(win, i, &plan);
    let times = *submitted.gpu_times.lock();
    let gpu = Some((times.start, times.end));
    win.record.executed = i + 1;
    let mut exit_payload = build_payload(
        win.cfg.layout,
        win.info,
        PayloadFields::pass_exit(i, total, win.tool.cont),
    );
    let exit = win.clock.close().end;
    pass_exit(&win.tool, &win.record, &mut exit_payload, &mut pass_ud);
    let exit_callback = win.clock.close();
    win.record.tail = Some(Span {
        start: exit_callback.end,
        end: 0,
    });
    // The tool may override replay_continue at PASS EXIT for this pass only.
    let (_, pass_cont) = read_callbacks(win.cfg.layout, &mut exit_payload);
    let (more, continue_phase) = if total > 0 && i + 1 >= total {
        (false, None) // never consulted after the last pass of a fixed loop
    } else {
        let ud = match win.cfg.continue_user_data {
            ContinueUserData::Config => win.tool.config_ud,
            ContinueUserData::Pass => pass_ud,
        };
        let more = ask_continue(pass_cont, win.info, i, total, ud);
        (more, Some(win.clock.close()))
    };
    win.record.passes.push(PassRecord {
        index: i,
        enter: prepare.end,
        exit: Some(exit),
        gpu,
        enqueue_callback: Some(submitted.enqueue_callback),
        complete_callback: Some(times.complete_callback),
        prepare,
        exit_callback: Some(exit_callback),
        continue_phase,
    });
    if more { PassEnd::More } else { PassEnd::Last }
}

/// A submitted pass: the pooled signal its completion releases, where its GPU times arrive,
/// and how long its drain may wait.
struct SubmittedPass {
    signal: Arc<Signal>,
    gpu_times: Arc<Mutex<PassTimes>>,
    drain_limit: Duration,
    /// When the KERNEL_DISPATCH ENQUEUE callbacks began.
    enqueue_callback: u64,
}

/// Submits pass `i` with a pooled signal and its pass-model effect; the application's signal is
/// left out. The forced
/// stuck pass's kernel is held behind a gate, stored in `held_kernel`.
fn submit_pass(
    win: &OpenWindow,
    i: u64,
    plan: &PassPlan,
    held_kernel: &mut Option<Arc<Signal>>,
) -> SubmittedPass {
    let signal = Signal::new(1);
    let gpu_times = Arc::new(Mutex::new(PassTimes::default()));
    let mut body = win.launch.body.clone();
    let mut drain_limit = SDK_DRAIN_LIMIT;
    if forced_stuck(win.cfg.stuck, i) {
        drain_limit = win.cfg.drain_timeout;
        let gate = Signal::new(1);
        body = held(body, gate.clone());
        *held_kernel = Some(gate);
    }
    let packet = KernelPacket {
        body,
        info: win.info,
        corr: win.record.corr.internal,
        thread_id: win.record.thread,
        suppressed: local_stops(),
        pass: Some(i),
        counting: Vec::new(),
        floor: win.record.kernel_model,
        effect: plan.effect,
        after: plan.after.clone(),
        completion: Completion::Pass {
            signal: signal.clone(),
            times: gpu_times.clone(),
        },
    };
    let enqueue_callback = now_ns();
    enqueue(win.queue, packet);
    SubmittedPass {
        signal,
        gpu_times,
        drain_limit,
        enqueue_callback,
    }
}

/// A pass that did not drain: no PASS EXIT and no restore, since its kernel is still running
/// (its records and signal arrive whenever it finishes); `executed_passes` counts the completed
/// ones, and the tail starts when the drain gave up.
fn record_stuck_pass(win: &mut OpenWindow, i: u64, prepare: Span) {
    let w = &mut win.record;
    w.executed = i;
    w.passes.push(PassRecord {
        index: i,
        enter: prepare.end,
        exit: None,
        gpu: None,
        enqueue_callback: None,
        complete_callback: None,
        prepare,
        exit_callback: None,
        continue_phase: None,
    });
    w.tail = Some(Span {
        start: win.clock.close().end,
        end: 0,
    });
}

/// Restores the snapshot after pass `after_pass`, paced to the build's copies (or to
/// `--link-gbps`); the restore is the phase `clock` is in, and ends with the copy. `in_pass`:
/// it runs after the next PASS ENTER, ahead of that pass's kernel.
fn restore(
    w: &mut WindowRecord,
    taken: &Taken,
    after_pass: u64,
    gbps: f64,
    clock: &mut PhaseClock,
    in_pass: bool,
) {
    let start = Instant::now();
    let bytes = memory::restore(&taken.snap);
    let plan = taken.restore.as_ref();
    pace_until(start + plan.map_or(link_duration(bytes, gbps), CopyPlan::total));
    w.restores.push(RestoreRecord {
        after_pass,
        span: clock.close(),
        bytes,
        in_pass,
        copies: plan.map(CopyPlan::truth),
    });
    if log::enabled(Level::Info) {
        let n = taken.snap.regions.len();
        log::log(
            Level::Info,
            "memory_snapshot.cpp",
            468,
            &format!("kernel-replay restore: restored {n}/{n} regions"),
        );
    }
}
