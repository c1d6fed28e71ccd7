//! One accepted window in progress: the dispatch it replays, the owning tool, the record it
//! fills in, and the clock of its phase boundaries. Every step of the timeline takes it.

use super::config::ReplayConfig;
use super::phase_clock::PhaseClock;
use super::record::WindowRecord;
use super::submit::Launch;
use super::tool_calls::ReplayTool;
use crate::device::{AppCompletion, Queue};
use krphase_ffi::KernelDispatchInfo;
use std::sync::Arc;

/// One reason a window declines after acceptance (`untracked_memory`, `queue_drain_stuck`, ...).
pub(super) type Decline = &'static str;

pub(super) struct OpenWindow<'q> {
    pub(super) cfg: &'static ReplayConfig,
    pub(super) queue: &'q Queue,
    pub(super) launch: Launch,
    /// The application's completion: fired once, whatever the window does.
    pub(super) app: Arc<AppCompletion>,
    pub(super) info: KernelDispatchInfo,
    pub(super) tool: ReplayTool,
    pub(super) record: WindowRecord,
    pub(super) clock: PhaseClock,
}
