//! The steps between taking the writer lock and the first pass, each one phase of the window:
//! admission, queue drain, agent drain and snapshot. Each returns the decline that stops the
//! window, if any.

use super::copy_plan::{self, CopyPlan, Taken};
use super::drain::{SDK_DRAIN_LIMIT, agent_idle, drain_wait};
use super::open_window::{Decline, OpenWindow};
use super::phase_clock::Span;
use super::record::{SnapshotRecord, WindowRecord};
use crate::clock::now_ns;
use crate::device::{Packet, Signal};
use crate::device_backing;
use crate::log::{self, Level};
use crate::memory::{self, Region};
use crate::opts::{DeclineOpt, DeviceFallback};
use crate::pacing::{link_duration, pace_until};
use std::sync::Arc;
use std::time::Instant;

/// Admission's projected copy time: the assumed link speed, and the time that only warns.
const ASSUMED_GBPS: f64 = 4.0;
const WARN_SECONDS: f64 = 10.0;

/// Admission, before any copy: measures the footprint and the untracked memory and applies the
/// budget and the untracked-memory policy. Returns what the snapshot will copy.
pub(super) fn admission(win: &mut OpenWindow) -> Result<Vec<Arc<Region>>, Decline> {
    let agent = win.queue.agent;
    // Without --sdk-build the markers are skipped, as in the sources the emulator follows.
    let skip_markers = win.cfg.model.is_none_or(|m| m.build.skip_cu_markers);
    let inv = memory::inventory(agent, skip_markers);
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

/// Queue drain: a barrier-AND with a private signal on this queue. With `--sdk-build` the
/// signal's creation costs what the build pays for it (nothing when pooled), timed on its own.
pub(super) fn queue_drain(win: &mut OpenWindow) -> Result<(), Decline> {
    let created = (now_ns(), Instant::now());
    let drain = Signal::new(1);
    if let Some(m) = win.cfg.model {
        let model = m.drain_signal();
        pace_until(created.1 + model);
        win.record.drain_signal_model = Some(model);
        win.record.drain_signal = Some(Span {
            start: created.0,
            end: now_ns(),
        });
    }
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

/// What the snapshot's copies are modelled as, or the decline of a device-only build whose
/// backing does not fit (`None` without `--sdk-build`).
fn plan(win: &OpenWindow, inventory: &[Arc<Region>]) -> Result<Option<CopyPlan>, Decline> {
    let Some(m) = win.cfg.model else {
        return Ok(None);
    };
    let gpu_local = if m.build.device_side {
        device_backing::reserve(win.queue.agent, inventory, win.cfg.device_memory)
    } else {
        Vec::new()
    };
    let short = gpu_local.iter().filter(|l| !**l).count();
    if short > 0 && win.cfg.device_fallback == DeviceFallback::Decline {
        log::log(
            Level::Warning,
            "memory_snapshot.cpp",
            377,
            &format!(
                "kernel replay: dispatch {}: device-side snapshot: no GPU-local backing for {short} of {} regions (device memory full); the dispatch runs once",
                win.record.dispatch_id,
                inventory.len()
            ),
        );
        return Err("snapshot_failed");
    }
    Ok(Some(copy_plan::snapshot_plan(&m, inventory, &gpu_local)))
}

/// Snapshot: a real copy of every tracked region plus writable module variables, paced to the
/// build's copies (or to `--link-gbps`).
pub(super) fn snapshot(
    win: &mut OpenWindow,
    inventory: Vec<Arc<Region>>,
) -> Result<Taken, Decline> {
    let start = Instant::now();
    let plan = match plan(win, &inventory) {
        Ok(p) => p,
        Err(reason) => {
            win.record.snapshot = Some(SnapshotRecord {
                span: win.clock.close(),
                bytes: 0,
                regions: 0,
                copies: None,
                gpu_local_regions: 0,
            });
            return Err(reason);
        }
    };
    let snap = memory::snap(inventory);
    pace_until(
        start
            + plan
                .as_ref()
                .map_or(link_duration(snap.bytes, win.cfg.gbps), CopyPlan::total),
    );
    let regions = snap.regions.len() as u64;
    let gpu_local = plan.as_ref().map_or(0, CopyPlan::gpu_local_regions);
    win.record.snapshot = Some(SnapshotRecord {
        span: win.clock.close(),
        bytes: snap.bytes,
        regions,
        copies: plan.as_ref().map(CopyPlan::truth),
        gpu_local_regions: gpu_local,
    });
    if log::enabled(Level::Info) {
        log_captured(win.queue.agent, regions, plan.as_ref().map(|_| gpu_local));
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
    let restore =
        plan.map(|p| copy_plan::restore_plan(&win.cfg.model.expect("a plan has a model"), &p));
    Ok(Taken { snap, restore })
}

/// The snapshot's INFO line; the device variant's names its GPU-local and host regions.
fn log_captured(agent: u64, regions: u64, gpu_local: Option<u64>) {
    let msg = match gpu_local {
        Some(d) if d > 0 => format!(
            "kernel-replay snapshot: captured/prepared {regions} regions ({d} GPU-local, {} host) for agent {agent}",
            regions - d
        ),
        _ => format!(
            "kernel-replay snapshot: captured {regions} regions (tracked allocations + module variables) for agent {agent}"
        ),
    };
    log::log(Level::Info, "memory_snapshot.cpp", 412, &msg);
}
