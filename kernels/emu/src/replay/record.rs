//! One replay window's measured record: the outcome line, the phase line and the truth line.

use super::kernel_name;
use crate::clock::ms;
use krphase_ffi::CorrelationId;
use serde_json::{Value, json};

/// A measured interval, CLOCK_BOOTTIME ns.
#[derive(Clone, Copy)]
pub(super) struct Span {
    pub(super) start: u64,
    pub(super) end: u64,
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
pub(super) struct PassRec {
    pub(super) index: u64,
    pub(super) enter: u64,
    pub(super) exit: Option<u64>,
    pub(super) gpu: Option<(u64, u64)>,
    /// Previous phase's end → PASS ENTER: local-context setup and the PASS payload build.
    pub(super) prepare: Span,
    /// PASS EXIT invoked → returned.
    pub(super) exit_callback: Option<Span>,
    /// PASS EXIT returned → the continue decision made (the replay_continue call, if any);
    /// null after the last pass of a fixed loop, where nothing is consulted.
    pub(super) continue_phase: Option<Span>,
}

/// Everything one window measured, filled in as the timeline advances.
#[derive(Default)]
pub(super) struct Window {
    pub(super) dispatch_id: u64,
    pub(super) corr: CorrelationId,
    pub(super) kernel_id: u64,
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
    pub(super) agent_drain: Option<Span>,
    pub(super) snapshot: Option<(Span, u64, u64)>,
    pub(super) passes: Vec<PassRec>,
    pub(super) restores: Vec<(u64, Span, u64)>,
    pub(super) tail: Option<Span>,
    pub(super) config_exit: u64,
    pub(super) footprint: (u64, u64),
    pub(super) vmem: (u64, u64),
    pub(super) pool: (u64, u64),
    pub(super) reentrancy: bool,
}

impl Window {
    pub(super) fn outcome_line(&self, reason: &str) -> String {
        let outcome = if reason == "none" {
            "replayed"
        } else {
            "declined"
        };
        let snap = self
            .snapshot
            .as_ref()
            .map_or(0.0, |s| ms(s.0.start, s.0.end) / 1e3);
        let restore: f64 = self
            .restores
            .iter()
            .map(|r| ms(r.1.start, r.1.end) / 1e3)
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
        let (snap_ms, bytes, regions) = self
            .snapshot
            .as_ref()
            .map_or((0.0, 0, 0), |s| (ms(s.0.start, s.0.end), s.1, s.2));
        let passes: f64 = self
            .passes
            .iter()
            .map(|p| ms(p.enter, p.exit.unwrap_or(p.enter)))
            .fold(0.0, |a, b| a + b);
        let restores: f64 = self
            .restores
            .iter()
            .map(|r| ms(r.1.start, r.1.end))
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
            "thread": self.thread,
            "outcome": if reason == "none" { "replayed" } else { "declined" }, "reason": reason,
            "requested_passes": self.requested, "executed_passes": self.executed,
            "config_enter": self.config_enter, "pass_count_return": self.pass_count_return,
            "setup": span(&self.setup), "lock_wait": span(&self.lock_wait), "admission": span(&self.admission),
            "queue_drain": span(&self.queue_drain), "agent_drain": span(&self.agent_drain),
            "snapshot": self.snapshot.as_ref().map_or(Value::Null, |(s, b, r)| json!({"start": s.start, "end": s.end, "bytes": b, "regions": r})),
            "passes": self.passes.iter().map(|p| json!({"index": p.index, "enter": p.enter, "exit": p.exit, "gpu_start": p.gpu.map(|g| g.0), "gpu_end": p.gpu.map(|g| g.1), "prepare": span(&Some(p.prepare)), "exit_callback": span(&p.exit_callback), "continue": span(&p.continue_phase)})).collect::<Vec<_>>(),
            "restores": self.restores.iter().map(|(i, s, b)| json!({"after_pass": i, "start": s.start, "end": s.end, "bytes": b})).collect::<Vec<_>>(),
            "tail": span(&self.tail),
            "config_exit": self.config_exit,
        })
    }
}
