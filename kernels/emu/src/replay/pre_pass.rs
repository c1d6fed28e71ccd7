//! The steps between taking the writer lock and the first pass, each one phase of the window:
//! admission, queue drain, agent drain and snapshot. Each returns the decline that stops the
//! window, if any.

use super::drain::{SDK_DRAIN_LIMIT, agent_idle, drain_wait};
use super::open_window::{Decline, OpenWindow};
use super::record::{SnapshotRecord, WindowRecord};
use crate::device::{Packet, Signal};
use crate::log::{self, Level};
use crate::memory::{self, Region, Snapshot};
use crate::opts::DeclineOpt;
use std::sync::Arc;

/// Admission's projected copy time: the assumed link speed, and the time that only warns.
const ASSUMED_GBPS: f64 = 4.0;
const WARN_SECONDS: f64 = 10.0;

/// Admission, before any copy: measures the footprint and the untracked memory and applies the
/// budget and the untracked-memory policy. Returns what the snapshot will copy.
pub(super) fn admission(win: &mut OpenWindow) -> Result<Vec<Arc<Region>>, Decline> {
    let agent = win.queue.agent;
    let inv = memory::inventory(agent);
    let w = &mut win.record;
    w.footprint = memory::total(&inv);
    w.vmem = memory::untracked_vmem(agent);
    w.pool = memory::untracked_pool(agent);
    warn_long_copy(w);
    let reason = admission_decline(win);
    win.record.admission = Some(win.clock.close());
    match reason {
        Some(r) => Err(r),
        None => Ok(inv),
    }
}

/// The warning for a snapshot and restores projected to copy for longer than `WARN_SECONDS`.
fn warn_long_copy(w: &WindowRecord) {
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
}

fn admission_decline(win: &OpenWindow) -> Option<Decline> {
    let (cfg, w) = (win.cfg, &win.record);
    let forced = cfg.decline;
    if forced == Some(DeclineOpt::UntrackedMemory)
        || (cfg.decline_on_vmem && w.vmem.1 > 0)
        || (cfg.decline_on_untracked_pool && w.pool.1 > 0)
    {
        Some("untracked_memory")
    } else if forced == Some(DeclineOpt::FootprintBudget) || w.footprint.0 > cfg.budget {
        Some("footprint_budget")
    } else {
        None
    }
}

/// Queue drain: a barrier-AND with a private signal on this queue.
pub(super) fn queue_drain(win: &mut OpenWindow) -> Result<(), Decline> {
    let drain = Signal::new(1);
    win.queue.push(Packet::Barrier {
        signal: Some(drain.clone()),
        app: None,
    });
    let drained = drain_wait(&drain, SDK_DRAIN_LIMIT);
    win.record.queue_drain = Some(win.clock.close());
    if !drained || win.cfg.decline == Some(DeclineOpt::QueueDrainStuck) {
        std::mem::forget(drain); // deliberately leaked, as the SDK does
        return Err("queue_drain_stuck");
    }
    Ok(())
}

/// Agent drain: every queue's async handlers have run.
pub(super) fn agent_drain(win: &mut OpenWindow) -> Result<(), Decline> {
    let idle = agent_idle(win.queue.agent);
    win.record.agent_drain = Some(win.clock.close());
    if !idle || win.cfg.decline == Some(DeclineOpt::AgentDrainStuck) {
        return Err("agent_drain_stuck");
    }
    Ok(())
}

/// Snapshot: a real copy of every tracked region plus writable module variables.
pub(super) fn snapshot(
    win: &mut OpenWindow,
    inventory: Vec<Arc<Region>>,
) -> Result<Snapshot, Decline> {
    let snap: Snapshot = memory::snap(inventory, win.cfg.gbps);
    let regions = snap.regions.len() as u64;
    win.record.snapshot = Some(SnapshotRecord {
        span: win.clock.close(),
        bytes: snap.bytes,
        regions,
    });
    if log::enabled(Level::Info) {
        log::log(
            Level::Info,
            "memory_snapshot.cpp",
            412,
            &format!(
                "kernel-replay snapshot: captured {regions} regions (tracked allocations + module variables) for agent {}",
                win.queue.agent
            ),
        );
    }
    if win.cfg.decline == Some(DeclineOpt::SnapshotFailed) {
        log::log(
            Level::Warning,
            "queue_hooks.cpp",
            301,
            &format!(
                "kernel replay: dispatch {}: snapshot failed; the dispatch runs once",
                win.record.dispatch_id
            ),
        );
        return Err("snapshot_failed");
    }
    Ok(snap)
}
