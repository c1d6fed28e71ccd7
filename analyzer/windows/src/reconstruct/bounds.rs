//! Keeping to the [`Limits`](crate::limits::Limits): the error for a record that would exceed
//! an error bound, and the eviction of the oldest held dispatches when a held-dispatch bound is
//! reached (emitted incomplete and counted).

use super::Reconstructor;
use crate::limits::{Limit, LimitError};
use std::collections::VecDeque;

impl Reconstructor {
    /// The error for bound `limit`, at the record being taken in.
    pub(super) fn limit(&self, limit: Limit, dispatch_id: Option<u64>) -> LimitError {
        let l = &self.limits;
        let max = match limit {
            Limit::PassesPerDispatch => l.passes_per_dispatch,
            Limit::Threads => l.threads,
            Limit::Queues => l.queues,
            Limit::Agents => l.agents,
            Limit::LiveAllocations => l.live_allocations,
            Limit::KernelNames => l.kernel_names,
            Limit::KernelNameBytes => l.kernel_name_bytes,
        };
        LimitError {
            offset: self.at,
            limit,
            max,
            dispatch_id,
        }
    }

    /// Fails when dispatch `d` already holds `len` entries of one sort (passes, enqueues, …).
    pub(super) fn check_per_dispatch(&self, d: u64, len: usize) -> Result<(), LimitError> {
        if len >= self.limits.passes_per_dispatch {
            return Err(self.limit(Limit::PassesPerDispatch, Some(d)));
        }
        Ok(())
    }

    /// Fails when `thread` is new and the thread bound is reached.
    pub(super) fn check_thread(&self, thread: u32) -> Result<(), LimitError> {
        let known = self.current.contains_key(&thread) || self.placement.contains_key(&thread);
        if !known && self.current.len().max(self.placement.len()) >= self.limits.threads {
            return Err(self.limit(Limit::Threads, None));
        }
        Ok(())
    }

    /// Evicts the oldest held dispatches while a held-dispatch bound is exceeded, and drops
    /// bookkeeping of dispatches no longer held.
    pub(super) fn enforce_bound(&mut self) {
        while self.groups.len() > self.limits.held_dispatches
            || self.held_entries > self.limits.held_entries
        {
            let Some(d) = self.order.pop_front() else {
                break;
            };
            if let Some(g) = self.take_group(d) {
                self.evicted += 1;
                self.emit(d, g);
            }
        }
        let slack = 2 * self.groups.len() + 1024;
        if self.order.len() > slack {
            let groups = &self.groups;
            self.order.retain(|d| groups.contains_key(d));
        }
        if self.per_queue_len > slack {
            let groups = &self.groups;
            self.per_queue.retain(|_, dq| {
                dq.retain(|d| groups.contains_key(d));
                !dq.is_empty()
            });
            self.per_queue_len = self.per_queue.values().map(VecDeque::len).sum();
        }
    }
}
