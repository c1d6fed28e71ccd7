//! What a replay window measured and how it is reported: the outcome line, the phase line and
//! the truth line of a window, and the truth line of a dispatch declined before any window.

use super::phase_clock::Span;
use crate::clock::ms;
use crate::truth;
use krphase_ffi::CorrelationId;
use serde_json::{Value, json};

/// The registered name of a kernel id ("unknown" for an id the workloads do not define).
pub(super) fn kernel_name(id: u64) -> &'static str {
    krphase_kernels::kernel_name(id).unwrap_or("unknown")
}

/// A truth-file interval, or null for a phase not reached.
pub(super) fn span(s: &Option<Span>) -> Value {
    match s {
        Some(s) => json!({"start": s.start, "end": s.end}),
        None => Value::Null,
    }
}

/// One executed pass: host enter/exit and GPU start/end (exit and GPU times missing for a stuck
/// pass: its kernel had not finished when the window ended).
pub(super) struct PassRecord {
    pub(super) index: u64,
    pub(super) enter: u64,
    pub(super) exit: Option<u64>,
    pub(super) gpu: Option<(u64, u64)>,
    /// When the pass's KERNEL_DISPATCH ENQUEUE and COMPLETE callbacks began: the span an
    /// observing tool sees (the stuck pass's completion is never waited for).
    pub(super) enqueue_callback: Option<u64>,
    pub(super) complete_callback: Option<u64>,
    /// Previous phase's end → PASS ENTER: local-context setup and the PASS payload build.
    pub(super) prepare: Span,
    /// PASS EXIT invoked → returned.
    pub(super) exit_callback: Option<Span>,
    /// PASS EXIT returned → the continue decision made (the replay_continue call, if any);
    /// null after the last pass of a fixed loop, where nothing is consulted.
    pub(super) continue_phase: Option<Span>,
}

/// The snapshot: when it was copied, its bytes and its regions; with `--sdk-build`, its copies
/// by kind (what the copy was paced to) and the regions that got GPU-local backing.
pub(super) struct SnapshotRecord {
    pub(super) span: Span,
    pub(super) bytes: u64,
    pub(super) regions: u64,
    pub(super) copies: Option<Value>,
    pub(super) gpu_local_regions: u64,
}

/// One restore: the pass it follows, when it copied, the bytes it put back, whether it ran
/// inside the next pass (after its PASS ENTER) and, with `--sdk-build`, its copies by kind.
pub(super) struct RestoreRecord {
    pub(super) after_pass: u64,
    pub(super) span: Span,
    pub(super) bytes: u64,
    pub(super) in_pass: bool,
    pub(super) copies: Option<Value>,
}

/// Everything one window measured, filled in as the timeline advances.
#[derive(Default)]
pub(super) struct WindowRecord {
    pub(super) dispatch_id: u64,
    pub(super) corr: CorrelationId,
    pub(super) kernel_id: u64,
    /// With `--sdk-build`: the duration each pass's kernel is paced to (none: unpaced).
    pub(super) kernel_model: Option<std::time::Duration>,
    pub(super) agent: u64,
    pub(super) queue: u64,
    pub(super) thread: u64,
    pub(super) requested: u64,
    pub(super) executed: u64,
    pub(super) config_enter: u64,
    pub(super) pass_count_return: u64,
    /// Pass-count return → writer-lock request: opt-out and reentrancy checks.
    pub(super) setup: Option<Span>,
    pub(super) lock_wait: Option<Span>,
    pub(super) admission: Option<Span>,
    pub(super) queue_drain: Option<Span>,
    /// With `--sdk-build`: the drain signal's creation, at the start of `queue_drain`, and the
    /// duration it was paced to.
    pub(super) drain_signal: Option<Span>,
    pub(super) drain_signal_model: Option<std::time::Duration>,
    pub(super) agent_drain: Option<Span>,
    pub(super) snapshot: Option<SnapshotRecord>,
    pub(super) passes: Vec<PassRecord>,
    pub(super) restores: Vec<RestoreRecord>,
    pub(super) tail: Option<Span>,
    pub(super) config_exit: u64,
    pub(super) footprint: (u64, u64),
    pub(super) vmem: (u64, u64),
    pub(super) pool: (u64, u64),
    pub(super) reentrancy: bool,
}

impl WindowRecord {
    pub(super) fn outcome_line(&self, reason: &str) -> String {
        let outcome = if reason == "none" {
            "replayed"
        } else {
            "declined"
        };
        let snap = self
            .snapshot
            .as_ref()
            .map_or(0.0, |s| ms(s.span.start, s.span.end) / 1e3);
        let restore: f64 = self
            .restores
            .iter()
            .map(|r| ms(r.span.start, r.span.end) / 1e3)
            .fold(0.0, |a, b| a + b); // not sum(): an empty f64 sum is -0.0
        format!(
            "[kernel-replay] dispatch_id={} outcome={} reason={} requested_passes={} executed_passes={} footprint_bytes={} footprint_regions={} untracked_vmem_bytes={} untracked_vmem_regions={} untracked_pool_bytes={} untracked_pool_regions={} snap_seconds={:.4} restore_seconds={:.4} reentrancy={}",
            self.dispatch_id,
            outcome,
            reason,
            self.requested,
            self.executed,
            self.footprint.0,
            self.footprint.1,
            self.vmem.0,
            self.vmem.1,
            self.pool.0,
            self.pool.1,
            snap,
            restore,
            u8::from(self.reentrancy)
        )
    }

    pub(super) fn phase_line(&self, config_exit: u64) -> String {
        let lock_drain = match (&self.lock_wait, &self.agent_drain) {
            (Some(a), Some(b)) => ms(a.start, b.end),
            _ => 0.0,
        };
        let (snap_ms, bytes, regions) = self.snapshot.as_ref().map_or((0.0, 0, 0), |s| {
            (ms(s.span.start, s.span.end), s.bytes, s.regions)
        });
        let passes: f64 = self
            .passes
            .iter()
            .map(|p| ms(p.enter, p.exit.unwrap_or(p.enter)))
            .fold(0.0, |a, b| a + b);
        let restores: f64 = self
            .restores
            .iter()
            .map(|r| ms(r.span.start, r.span.end))
            .fold(0.0, |a, b| a + b);
        format!(
            "kernel replay: dispatch {} phases: lock+drain {:.3} ms, snapshot {:.3} ms ({} bytes in {} regions), {} passes {:.3} ms, {} restores {:.3} ms, window {:.3} ms",
            self.dispatch_id,
            lock_drain,
            snap_ms,
            bytes,
            regions,
            self.passes.len(),
            passes,
            self.restores.len(),
            restores,
            ms(self.config_enter, config_exit)
        )
    }

    pub(super) fn truth(&self, reason: &str) -> Value {
        json!({
            "type": "window", "pid": std::process::id(), "dispatch_id": self.dispatch_id,
            "correlation_id": self.corr.internal, "kernel_id": self.kernel_id,
            "kernel": kernel_name(self.kernel_id), "agent": self.agent, "queue": self.queue,
            "thread": self.thread, "kernel_model_ns": self.kernel_model.map(|d| d.as_nanos() as u64),
            "outcome": if reason == "none" { "replayed" } else { "declined" }, "reason": reason,
            "requested_passes": self.requested, "executed_passes": self.executed,
            "config_enter": self.config_enter, "pass_count_return": self.pass_count_return,
            "setup": span(&self.setup), "lock_wait": span(&self.lock_wait), "admission": span(&self.admission),
            "queue_drain": span(&self.queue_drain), "agent_drain": span(&self.agent_drain),
            "drain_signal": span(&self.drain_signal),
            "drain_signal_model_ns": self.drain_signal_model.map(|d| d.as_nanos() as u64),
            "snapshot": self.snapshot.as_ref().map_or(Value::Null, |s| json!({"start": s.span.start, "end": s.span.end, "bytes": s.bytes, "regions": s.regions, "copies": s.copies, "gpu_local_regions": s.gpu_local_regions})),
            "passes": self.passes.iter().map(|p| json!({"index": p.index, "enter": p.enter, "exit": p.exit, "gpu_start": p.gpu.map(|g| g.0), "gpu_end": p.gpu.map(|g| g.1), "enqueue_callback": p.enqueue_callback, "complete_callback": p.complete_callback, "prepare": span(&Some(p.prepare)), "exit_callback": span(&p.exit_callback), "continue": span(&p.continue_phase)})).collect::<Vec<_>>(),
            "restores": self.restores.iter().map(|r| json!({"after_pass": r.after_pass, "next_pass": r.after_pass + 1, "start": r.span.start, "end": r.span.end, "bytes": r.bytes, "in_pass": r.in_pass, "placement": if r.in_pass { "in_pass" } else { "between_passes" }, "copies": r.copies})).collect::<Vec<_>>(),
            "tail": span(&self.tail),
            "config_exit": self.config_exit,
        })
    }
}

/// The truth line of a dispatch declined before or without a window: an opt-out (`config` holds
/// its CONFIG ENTER and EXIT times) or a graph or multi-packet write (no CONFIG at all).
pub(super) fn write_decline_truth(
    dispatch_id: u64,
    kernel_id: u64,
    reason: &str,
    config: Option<(u64, u64)>,
) {
    if !truth::enabled() {
        return;
    }
    truth::write(&json!({
        "type": "decline", "pid": std::process::id(), "dispatch_id": dispatch_id,
        "kernel": kernel_name(kernel_id), "reason": reason, "config": config.is_some(),
        "config_enter": config.map(|c| c.0), "config_exit": config.map(|c| c.1),
    }));
}
