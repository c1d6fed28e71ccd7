//! When a held dispatch is complete, and its emission.
//!
//! A dispatch's own records come from the thread that dispatched it; its COMPLETE and
//! COMPLETE_HOST records come from the SDK's completion thread. Each thread's records reach the
//! file in its own order, but the threads' buffers reach it in any order (a buffer is handed over
//! when full or by age), so either side may come first. A dispatch is therefore closed only on
//! what its own thread's order proves: a drive-mode window once CONFIG EXIT and a completion per
//! pass are in; observe mode and plain dispatches once their thread has moved on to another
//! dispatch and their completions match their enqueues; a window with a stuck pass once its
//! completed passes' completions are in and a later dispatch on its queue completed.
//! A later completion on the queue never closes an observed or plain dispatch: its thread's
//! records may still be on their way. [`Reconstructor::finish`] and the held-dispatch bounds
//! (`bounds.rs`) emit what is left.

use super::Reconstructor;
use super::group::Group;
use crate::limits::{Limit, LimitError};
use krphase_format::event::Event;

impl Reconstructor {
    /// COMPLETE, COMPLETE_HOST and COMPLETE_AT.
    pub(super) fn take_completion(&mut self, ev: &Event) -> Result<(), LimitError> {
        match *ev {
            Event::Complete {
                thread,
                dispatch_id,
                gpu_start,
                gpu_end,
            } => self.on_complete(thread, dispatch_id, gpu_start, gpu_end),
            Event::CompleteHost {
                thread,
                ts,
                dispatch_id,
                gpu_end,
            } => self.on_complete_host(thread, ts, dispatch_id, gpu_end),
            Event::CompleteAt {
                ts,
                dispatch_id,
                gpu_start,
                gpu_end,
            } => {
                // COMPLETE_HOST and COMPLETE in one record (3.0); it carries no thread id.
                self.on_complete_host(0, ts, dispatch_id, gpu_end)?;
                self.on_complete(0, dispatch_id, gpu_start, gpu_end)
            }
            _ => Ok(()),
        }
    }

    /// Host time of a completion (COMPLETE_HOST, written just before its COMPLETE, which closes
    /// the dispatch): held until then.
    fn on_complete_host(
        &mut self,
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        gpu_end: u64,
    ) -> Result<(), LimitError> {
        let held = self
            .groups
            .get(&dispatch_id)
            .map_or(0, |g| g.complete_hosts.len());
        self.check_per_dispatch(dispatch_id, held)?;
        self.group(dispatch_id, thread)
            .complete_hosts
            .push((gpu_end, ts));
        Ok(())
    }

    fn on_complete(
        &mut self,
        thread: u32,
        dispatch_id: u64,
        gpu_start: u64,
        gpu_end: u64,
    ) -> Result<(), LimitError> {
        let held = self
            .groups
            .get(&dispatch_id)
            .map_or(0, |g| g.completes.len());
        self.check_per_dispatch(dispatch_id, held)?;
        let g = self.group(dispatch_id, thread);
        g.completes.push((gpu_start, gpu_end));
        let queue = g.queue;
        self.try_close(dispatch_id);
        if let Some(q) = queue {
            self.seal_queue_before(q, dispatch_id);
        }
        Ok(())
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
                self.per_queue_len -= 1;
                // A dispatch that moved to another queue left a stale entry here.
                if self.groups.get(&front).is_some_and(|g| g.queue == Some(q)) {
                    sealed.push(front);
                }
            }
        }
        for s in sealed {
            // Not `thread_done`: the dispatch finished on the GPU, but its thread's records
            // (a buffer flushed by age) may still be on their way to the file.
            if let Some(g) = self.groups.get_mut(&s) {
                g.queue_sealed = true;
            }
            self.try_close(s);
        }
    }

    /// Adds dispatch `d` to the queue it was placed on.
    pub(super) fn queue_dispatch(&mut self, queue: u64, d: u64) -> Result<(), LimitError> {
        if !self.per_queue.contains_key(&queue) && self.per_queue.len() >= self.limits.queues {
            return Err(self.limit(Limit::Queues, None));
        }
        self.per_queue.entry(queue).or_default().push_back(d);
        self.per_queue_len += 1;
        Ok(())
    }

    /// The submitting thread started dispatch `d`: earlier dispatches of that thread are done.
    pub(super) fn mark_thread(&mut self, thread: u32, d: u64) -> Result<(), LimitError> {
        self.check_thread(thread)?;
        if let Some(prev) = self.current.insert(thread, d)
            && prev != d
            && let Some(g) = self.groups.get_mut(&prev)
        {
            g.thread_done = true;
            self.try_close(prev);
        }
        Ok(())
    }

    pub(super) fn try_close(&mut self, d: u64) {
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
            let g = self.take_group(d).expect("present");
            self.emit(d, g);
        }
    }

    /// Emits held dispatch `d`: with passes, a drive-mode window (passes seen without CONFIG
    /// EXIT, a file cut mid-window, still form one); without, what observe mode infers.
    pub(super) fn emit(&mut self, d: u64, mut g: Group) {
        self.emitted.insert(d, self.limits.held_dispatches);
        g.completes.sort_unstable();
        if g.passes.is_empty() {
            self.emit_observed(d, g);
        } else {
            self.emit_drive(d, g);
        }
    }
}
