//! The replay window of one accepted dispatch, step by step: dispatch-id reservation, CONFIG
//! ENTER and the pass-count call, the opt-outs, the reentrancy check, the per-agent writer lock,
//! the steps before the passes, the pass loop, and the end (the outcome and phase lines, CONFIG
//! EXIT, the application's single completion, the truth line). A decline after acceptance ends
//! the window with the WARNING outcome line, CONFIG EXIT and one ordinary run instead.

use super::config::{ReplayConfig, config};
use super::open_window::{Decline, OpenWindow};
use super::pass_model;
use super::passes::{self, PassLoopEnd};
use super::phase_clock::PhaseClock;
use super::pre_pass;
use super::record::{WindowRecord, write_decline_truth};
use super::submit::{Launch, dispatch_info, kernel_floor, submit_once};
use super::thread_window;
use super::tool_calls::{ReplayTool, config_enter, config_exit};
use super::totals;
use crate::clock::{now_ns, thread_id};
use crate::device::{AppCompletion, Packet, Queue, agent_lock};
use crate::log::{self, Level};
use crate::opts::PassCountOne;
use crate::sdk::{Subscriber, sdk};
use crate::{ids, truth};
use krphase_ffi::CorrelationId;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Runs the window of `launch`, whose replay `owner` claimed; returns once the dispatch is
/// submitted (replayed, or run once when declined).
pub(super) fn run(
    queue: &Queue,
    launch: Launch,
    corr: CorrelationId,
    app: Arc<AppCompletion>,
    owner: Subscriber,
) {
    let cfg = config();
    let dispatch_id = ids::next_dispatch();
    app.dispatch_id.store(dispatch_id, Ordering::SeqCst);
    let info = dispatch_info(queue, &launch, dispatch_id);
    let mut record = WindowRecord {
        dispatch_id,
        corr,
        kernel_id: launch.kernel_id,
        kernel_model: kernel_floor(&launch),
        agent: queue.agent,
        queue: queue.id,
        thread: thread_id(),
        ..Default::default()
    };
    let answer = config_enter(&owner, &mut record, cfg.layout, info);
    let mut tool = ReplayTool {
        owner,
        pass: None,
        config_ud: answer.user_data,
        cont: answer.cont,
        config_payload: answer.payload,
    };
    let requested = match accepted_pass_count(answer.passes, answer.cont, dispatch_id, cfg) {
        Ok(n) => n,
        Err(reason) => {
            let exit = config_exit(&mut tool, &record);
            write_decline_truth(
                dispatch_id,
                launch.kernel_id,
                reason,
                Some((record.config_enter, exit)),
            );
            submit_once(
                queue,
                launch,
                dispatch_id,
                corr,
                app,
                sdk().replay_claimed(),
            );
            return;
        }
    };
    record.requested = requested;
    tool.pass = sdk().replay_pass_subscriber(&tool.owner);
    let mut win = OpenWindow {
        cfg,
        queue,
        launch,
        app,
        info,
        tool,
        clock: PhaseClock::at(record.pass_count_return),
        record,
    };
    // Reentrancy: this thread is already inside a window on this agent.
    if thread_window::in_window_on(queue.agent) {
        win.record.reentrancy = true;
        thread_window::mark_reentrancy();
        finish_declined(win, "reentrant_dispatch");
        return;
    }
    locked(win);
}

/// The pass count the tool asked for, or the opt-out that makes the dispatch run once: no
/// `replay_pass_count`, a count of 1 (unless the build runs it as a loop of one pass), or 0
/// without `replay_continue` (which also warns).
fn accepted_pass_count(
    passes: Option<u64>,
    cont: krphase_ffi::ReplayContinueFn,
    dispatch_id: u64,
    cfg: &ReplayConfig,
) -> Result<u64, Decline> {
    match passes {
        None => Err("opt_out"),
        Some(1) if cfg.pass_count_one == PassCountOne::NoReplay => Err("pass_count_1"),
        Some(0) if cont.is_none() => {
            log::log(
                Level::Warning,
                "replay_callbacks.cpp",
                142,
                &format!(
                    "kernel replay: dispatch {dispatch_id}: replay_pass_count returned 0 without a replay_continue callback; the dispatch runs once"
                ),
            );
            Err("zero_without_continue")
        }
        Some(n) => Ok(n),
    }
}

/// The window under the agent's writer lock: `setup` ends when the lock is requested and
/// `lock_wait` when it is held.
fn locked(mut win: OpenWindow) {
    let agent = win.queue.agent;
    win.record.setup = Some(win.clock.close());
    let guard = agent_lock(agent).write();
    win.record.lock_wait = Some(win.clock.close());
    let outer = thread_window::enter(agent);
    if let Err(reason) = replay(&mut win) {
        // SDK decline after acceptance: the dispatch runs once, still under the writer lock.
        finish_declined(win, reason);
    }
    thread_window::leave(outer);
    drop(guard);
}

/// Admission, drains, snapshot, the passes and the end of a replayed window.
fn replay(win: &mut OpenWindow) -> Result<(), Decline> {
    pass_model::open(win);
    let inventory = pre_pass::admission(win)?;
    pre_pass::queue_drain(win)?;
    pre_pass::agent_drain(win)?;
    let snap = pre_pass::snapshot(win, inventory)?;
    let end = passes::run(win, &snap);
    finish_replayed(win, end);
    Ok(())
}

/// The outcome line (INFO when replayed, WARNING for a stuck pass or a reentrant dispatch), the
/// phase line (with `--phase-line` only), CONFIG EXIT (which ends the tail), the application's completion behind a
/// barrier (so behind a stuck kernel), the stuck kernel's release, and the truth line.
fn finish_replayed(win: &mut OpenWindow, end: PassLoopEnd) {
    let w = &mut win.record;
    w.reentrancy = thread_window::take_reentrancy();
    let level = if end.reason == "none" && !w.reentrancy {
        Level::Info
    } else {
        Level::Warning
    };
    if log::enabled(level) {
        log::log(
            level,
            "replay_diagnostics.cpp",
            88,
            &w.outcome_line(end.reason),
        );
    }
    if win.cfg.phase_line && log::enabled(Level::Info) {
        let pre_exit = now_ns();
        log::log(Level::Info, "queue_hooks.cpp", 512, &w.phase_line(pre_exit));
    }
    w.config_exit = config_exit(&mut win.tool, w);
    if let Some(t) = w.tail.as_mut() {
        t.end = w.config_exit;
    }
    win.queue.push(Packet::Barrier {
        signal: None,
        app: Some(win.app.clone()),
    });
    if let Some(g) = end.held_kernel {
        g.add(-1); // the stuck kernel finishes eventually
    }
    write_truth(w, end.reason);
}

/// A decline after acceptance: the WARNING outcome line, CONFIG EXIT, the truth line, then a
/// single ordinary run.
fn finish_declined(mut win: OpenWindow, reason: Decline) {
    let w = &mut win.record;
    if log::enabled(Level::Warning) {
        log::log(
            Level::Warning,
            "replay_diagnostics.cpp",
            88,
            &w.outcome_line(reason),
        );
    }
    w.config_exit = config_exit(&mut win.tool, w);
    write_truth(w, reason);
    let (id, corr) = (w.dispatch_id, w.corr);
    // The thread holds this agent's writer lock (its own window, or the outer window of a
    // reentrant dispatch), so no reader lock is taken.
    submit_once(win.queue, win.launch, id, corr, win.app, false);
}

/// The window's truth line, with its true phase durations, which also go into the run's totals.
fn write_truth(w: &WindowRecord, reason: Decline) {
    let phases = totals::add(w, reason);
    if truth::enabled() {
        let mut t = w.truth(reason);
        t["phase_ns"] = phases;
        truth::write(&t);
    }
}
