//! Observe-mode inference: what a held dispatch without PASS records is. Another tool owned
//! replay, so the passes of a window share its dispatch id: more than one enqueue or completion
//! makes a window whose passes are its enqueues and completions in order; one makes a plain
//! dispatch (also a drive-mode opt-out or decline, which still runs once).

use super::Reconstructor;
use super::group::{Group, complete_host};
use crate::model::{Outcome, Output, Pass, PlainDispatch, Source, Window};
use crate::phases;

impl Reconstructor {
    /// Emits a held dispatch without passes: a window, a plain dispatch, or (neither enqueued
    /// nor completed) nothing; counter values without a pass to join come out on their own.
    pub(super) fn emit_observed(&mut self, d: u64, mut g: Group) {
        let counters = std::mem::take(&mut g.counters);
        let n = g.enqueues.len().max(g.completes.len());
        if n <= 1 {
            self.attach_counters(&mut [], counters);
            if n == 1 {
                self.emit_plain(d, &g);
            }
            return;
        }
        let mut passes = observed_passes(&g, n);
        self.attach_counters(&mut passes, counters);
        let restores = phases::observe_restores(&passes);
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

    /// A dispatch enqueued or completed once.
    fn emit_plain(&mut self, d: u64, g: &Group) {
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
    }
}

/// The `n` passes of an observed window: the i-th enqueue and the i-th completion (sorted by
/// GPU start) of the dispatch.
fn observed_passes(g: &Group, n: usize) -> Vec<Pass> {
    (0..n)
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
        .collect()
}
