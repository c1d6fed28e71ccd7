//! KERNEL_DISPATCH callbacks, the per-dispatch hot path: enqueue ENTER/EXIT and completion.
//! Each records through the thread handle the callback layer reached once.

use super::tool::Tool;
use crate::recorder::{Flush, Thread};
use krphase_ffi::KernelDispatchInfo;
use krphase_format::Record;
use krphase_format::event::HEAD56_LIMIT;

impl Tool {
    /// ENQUEUE ENTER: the enqueue record, and the placement when it changed for this thread
    /// (the reader applies it to the thread's later enqueues).
    #[inline(always)]
    pub fn on_enqueue_enter(&self, th: Thread, info: &KernelDispatchInfo, tid: u32, ts: u64) {
        let d = info.dispatch_id;
        if self.modvars.is_dirty() {
            // Observe mode has no CONFIG ENTER: the walk runs before a dispatch's first record.
            self.refresh_modvars(info.agent_id.handle);
        }
        let (agent, queue) = (info.agent_id.handle, info.queue_id.handle);
        th.record_placed(
            Record::enqueue_enter(tid, ts, d, info.kernel_id),
            (agent, queue),
            Record::dispatch_info(tid, d, agent, queue, true),
            ts,
        );
    }

    #[inline(always)]
    pub fn on_enqueue_exit(&self, th: Thread, d: u64, tid: u32, corr: u64, ts: u64) {
        th.record(Record::enqueue_exit(tid, ts, d, corr), ts, Flush::Lazy);
    }

    /// COMPLETE: one COMPLETE_AT record (host time, GPU interval, dispatch id in 56 bits); a
    /// dispatch id beyond 56 bits (no SDK numbers them so) takes the two-record form, the host
    /// time first (COMPLETE_HOST, naming the completion by its GPU end), then COMPLETE.
    #[inline(always)]
    pub fn on_complete(&self, th: Thread, d: u64, start: u64, end: u64, tid: u32, ts: u64) {
        if d < HEAD56_LIMIT {
            th.record_exact(Record::complete_at(ts, d, start, end), ts);
        } else {
            th.record(Record::complete_host(tid, ts, d, end), ts, Flush::Lazy);
            th.record(Record::complete(tid, d, start, end), ts, Flush::Lazy);
        }
    }
}
