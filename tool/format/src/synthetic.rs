//! Event builders for synthetic replay windows with chosen timestamps, for tests of readers (the
//! window reconstruction of `krphase-windows`, the analyzer's import) that would otherwise spell
//! out every event.

use crate::Event;
use crate::event::Decision;

/// The thread the GPU-completion events of [`Synthetic::complete`] come from (a completion
/// callback runs on the SDK's own thread, not the dispatching one).
pub const COMPLETION_THREAD: u32 = 99;

/// Builds the events of windows dispatched from one thread for one kernel on one queue.
#[derive(Debug, Clone, Copy)]
pub struct Synthetic {
    pub thread: u32,
    pub kernel_id: u64,
    pub agent: u64,
    pub queue: u64,
    /// Payload layout recorded on PASS ENTER / EXIT.
    pub layout: u8,
}

impl Synthetic {
    /// CONFIG ENTER, placement and pass-count query (10 ns, returning `n`) of dispatch `d`,
    /// starting at `t0`.
    pub fn open(&self, d: u64, t0: u64, decision: Decision, n: u64) -> Vec<Event> {
        vec![
            Event::ConfigEnter {
                thread: self.thread,
                ts: t0,
                dispatch_id: d,
                kernel_id: self.kernel_id,
                decision,
            },
            Event::DispatchInfo {
                thread: self.thread,
                dispatch_id: d,
                agent: self.agent,
                queue: self.queue,
            },
            Event::PassCountEnter {
                thread: self.thread,
                ts: t0 + 10,
                dispatch_id: d,
            },
            Event::PassCountReturn {
                thread: self.thread,
                ts: t0 + 20,
                dispatch_id: d,
                passes: n,
            },
        ]
    }

    /// PASS ENTER of pass `i` of `total`, and its PASS EXIT when `exit` is given (a stuck pass
    /// has none).
    pub fn pass(&self, d: u64, i: u32, total: u32, enter: u64, exit: Option<u64>) -> Vec<Event> {
        let mut v = vec![Event::PassEnter {
            thread: self.thread,
            ts: enter,
            dispatch_id: d,
            pass: i,
            total,
            layout: self.layout,
        }];
        v.extend(exit.map(|ts| Event::PassExit {
            thread: self.thread,
            ts,
            dispatch_id: d,
            pass: i,
            total,
            layout: self.layout,
        }));
        v
    }

    /// The continue decision after pass `i`, entered at `ts`, taking `own` (encoded as
    /// [`crate::event::own_time`]) of the tool's own time and returning `result`.
    pub fn cont(&self, d: u64, i: u64, total: u32, ts: u64, own: u16, result: bool) -> Event {
        Event::Continue {
            thread: self.thread,
            ts,
            dispatch_id: d,
            pass: i,
            result,
            total,
            own_time: own,
        }
    }

    /// The GPU interval of one kernel execution of dispatch `d`.
    pub fn complete(&self, d: u64, start: u64, end: u64) -> Event {
        Event::Complete {
            thread: COMPLETION_THREAD,
            dispatch_id: d,
            gpu_start: start,
            gpu_end: end,
        }
    }

    /// The host time `ts` at the completion callback of the kernel execution of `d` that ended
    /// at `gpu_end` (written just before its [`Synthetic::complete`]).
    pub fn complete_host(&self, d: u64, ts: u64, gpu_end: u64) -> Event {
        Event::CompleteHost {
            thread: COMPLETION_THREAD,
            ts,
            dispatch_id: d,
            gpu_end,
        }
    }

    /// CONFIG EXIT of dispatch `d`.
    pub fn config_exit(&self, d: u64, ts: u64) -> Event {
        Event::ConfigExit {
            thread: self.thread,
            ts,
            dispatch_id: d,
        }
    }
}
