//! A held dispatch: everything its records said so far, until it is emitted as a window, a
//! decline or a plain dispatch.

use crate::model::{ByteEstimate, ContinueCall, CounterReading, Pass};
use krphase_format::event::Decision;

#[derive(Debug, Default)]
pub(super) struct Group {
    pub(super) thread: u32,
    pub(super) kernel_id: Option<u64>,
    pub(super) agent: Option<u64>,
    pub(super) queue: Option<u64>,
    pub(super) correlation: Option<u64>,
    pub(super) config_enter: Option<u64>,
    pub(super) decision: Option<Decision>,
    pub(super) pass_count_return: Option<u64>,
    pub(super) requested: Option<u64>,
    pub(super) config_exit: Option<u64>,
    pub(super) passes: Vec<Pass>,
    pub(super) continues: Vec<ContinueCall>,
    pub(super) in_pass: Option<usize>,
    pub(super) enqueues: Vec<(u64, Option<u64>)>,
    pub(super) completes: Vec<(u64, u64)>,
    /// (GPU end, host time) of each COMPLETE_HOST record: pairs with the completion of that end.
    pub(super) complete_hosts: Vec<(u64, u64)>,
    /// COUNTER_VALUE records, attached to their passes when the dispatch is emitted.
    pub(super) counters: Vec<CounterReading>,
    pub(super) bytes: Option<ByteEstimate>,
    /// Reader-side estimate at the first enqueue (observe mode has no WINDOW_BYTES).
    pub(super) first_enqueue_bytes: Option<ByteEstimate>,
    /// A replayed drive-mode window (CONFIG EXIT seen with passes).
    pub(super) drive_window: bool,
    /// The submitting thread has moved on to another dispatch.
    pub(super) thread_done: bool,
    /// A later dispatch on the same queue completed (so did everything before it).
    pub(super) queue_sealed: bool,
    /// Entries (see `entries`) counted in the reconstructor's `held_entries`.
    pub(super) counted: usize,
}

impl Group {
    /// Passes, enqueues, completions and continue calls held.
    pub(super) fn entries(&self) -> usize {
        self.passes.len()
            + self.enqueues.len()
            + self.completes.len()
            + self.complete_hosts.len()
            + self.continues.len()
            + self.counters.len()
    }
}

/// The host time of the completion that ended at `gpu_end`, when its COMPLETE_HOST was seen.
pub(super) fn complete_host(hosts: &[(u64, u64)], gpu_end: Option<u64>) -> Option<u64> {
    let e = gpu_end?;
    hosts.iter().find(|&&(end, _)| end == e).map(|&(_, ts)| ts)
}
