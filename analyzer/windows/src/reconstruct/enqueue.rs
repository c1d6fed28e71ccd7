//! Enqueues and their placement: KERNEL_DISPATCH ENQUEUE ENTER and EXIT, DISPATCH_INFO and
//! CORRELATION records, inside a pass of a drive-mode window or on their own (observe mode, a
//! plain dispatch). A placement recorded at an enqueue is the thread's from then on (2.0's
//! sticky rule; see [`Reconstructor::for_version`] for 1.x files).

use super::Reconstructor;
use crate::limits::LimitError;
use krphase_format::event::Event;

impl Reconstructor {
    /// DISPATCH_INFO, CORRELATION, ENQUEUE ENTER and ENQUEUE EXIT.
    pub(super) fn take_enqueue(&mut self, ev: &Event) -> Result<(), LimitError> {
        match *ev {
            Event::DispatchInfo {
                thread,
                dispatch_id,
                agent,
                queue,
            } => self.on_dispatch_info(thread, dispatch_id, agent, queue)?,
            Event::Correlation {
                thread,
                dispatch_id,
                internal,
                ..
            } => {
                self.group(dispatch_id, thread).correlation = Some(internal);
            }
            Event::EnqueueEnter {
                thread,
                ts,
                dispatch_id,
                kernel_id,
            } => self.on_enqueue_enter(thread, ts, dispatch_id, kernel_id)?,
            Event::EnqueueExit {
                thread,
                ts,
                dispatch_id,
                correlation,
            } => self.on_enqueue_exit(thread, ts, dispatch_id, correlation),
            _ => {}
        }
        Ok(())
    }

    fn on_dispatch_info(
        &mut self,
        thread: u32,
        dispatch_id: u64,
        agent: u64,
        queue: u64,
    ) -> Result<(), LimitError> {
        self.check_thread(thread)?;
        let g = self.group(dispatch_id, thread);
        g.agent = Some(agent);
        let moved = g.queue != Some(queue);
        g.queue = Some(queue);
        // Recorded at an enqueue (not at CONFIG): the thread's placement from now on.
        let at_enqueue = !g.enqueues.is_empty()
            || g.in_pass
                .is_some_and(|i| g.passes[i].enqueue_enter.is_some());
        if at_enqueue {
            let prev = self.placement.insert(thread, (agent, queue));
            // Only a writer recording every enqueue's placement repeats the current one.
            if self.placement_may_be_per_dispatch && prev == Some((agent, queue)) && !moved {
                self.sticky_placement = false;
            }
        }
        let est = self.footprint.estimate(agent);
        let g = self.groups.get_mut(&dispatch_id).expect("group exists");
        // The first enqueue's placement (it follows that enqueue's record).
        if at_enqueue && g.enqueues.len() <= 1 && g.config_enter.is_none() {
            g.first_enqueue_bytes = Some(est);
        }
        // A dispatch placed by the thread's earlier placement and now by its own record joins
        // its own queue (the stale entry is skipped when that queue is sealed).
        if moved {
            self.queue_dispatch(queue, dispatch_id)?;
        }
        Ok(())
    }

    fn on_enqueue_enter(
        &mut self,
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        kernel_id: u64,
    ) -> Result<(), LimitError> {
        self.mark_thread(thread, dispatch_id)?;
        let held = self
            .groups
            .get(&dispatch_id)
            .map_or(0, |g| g.enqueues.len());
        self.check_per_dispatch(dispatch_id, held)?;
        let place = self
            .placement
            .get(&thread)
            .copied()
            .filter(|_| self.sticky_placement);
        let est = place.map(|(agent, _)| self.footprint.estimate(agent));
        let g = self.group(dispatch_id, thread);
        // The dispatch's first enqueue names its thread, also when its completion (from the
        // SDK's completion thread) reached the file first and opened the group.
        if g.config_enter.is_none() && g.enqueues.is_empty() && g.passes.is_empty() {
            g.thread = thread;
        }
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
            self.queue_dispatch(queue, dispatch_id)?;
        }
        Ok(())
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
}
