//! The tool's state, shared by every callback: configuration, SDK handle, the numbers found by
//! name, mode, payload layout, kernel filter results, live allocations and module variables.
//! The reactions to each callback are in `window.rs`, `dispatch.rs`, `alloc_events.rs` and
//! `code_object_events.rs`.

use super::alloc::AllocTracker;
use super::counting::Counting;
use super::layout::LayoutDetector;
use super::modvars::ModVars;
use super::routes::Ops;
use crate::config::Config;
use crate::fork_local::ForkLocal;
use crate::{panic_hook, recorder, say};
use krphase_ffi::{ContextId, Sdk};
use krphase_format::{Header, Mode};
use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

pub struct Tool {
    pub cfg: Config,
    /// `None` only for the synthetic set-up benchmarks and tests use (the `test-support`
    /// feature's `install_synthetic`).
    pub sdk: Option<Sdk>,
    pub ops: Ops,
    /// The mode in effect (drive falls back to observe on status 15).
    mode: AtomicU8,
    pub layout: LayoutDetector,
    /// kernel id → matches the filter (a fork child starts from a copy, never waiting).
    kernels: ForkLocal<HashMap<u64, bool>>,
    pub allocs: AllocTracker,
    /// Writable module variables per agent (the snapshot bytes no tracing reports).
    pub modvars: ModVars,
    pub ctx: ContextId,
    replay_configured: AtomicBool,
    panicked: AtomicBool,
    /// The file header as written (a fork child's file starts from it).
    pub header: Header,
    /// The dispatch counting service, when `KRPHASE_PMC` asked for counters in drive mode.
    pub counting: OnceLock<Counting>,
}

/// The process's tool, once configured. The tracing callbacks never load it: each is
/// registered with the tool as its `callback_args`.
static TOOL: OnceLock<&'static Tool> = OnceLock::new();

/// The tool, once configured.
pub fn get() -> Option<&'static Tool> {
    TOOL.get().copied()
}

/// Makes `tool` the process's tool; false when one is installed already.
pub fn install(tool: &'static Tool) -> bool {
    crate::panic_hook::set_on_caught(on_caught);
    TOOL.set(tool).is_ok()
}

/// A panic caught on a rare path of the hot path ([`crate::panic_hook::catch`]): as at the
/// callback boundary, recording stops.
fn on_caught() {
    if let Some(t) = get() {
        t.on_panic();
    }
}

impl Tool {
    pub fn new(
        cfg: Config,
        sdk: Option<Sdk>,
        ops: Ops,
        mode: Mode,
        ctx: ContextId,
        header: Header,
    ) -> Tool {
        Tool {
            layout: LayoutDetector::new(cfg.layout),
            cfg,
            sdk,
            ops,
            mode: AtomicU8::new(mode.to_u8()),
            kernels: ForkLocal::default(),
            allocs: AllocTracker::default(),
            modvars: ModVars::default(),
            ctx,
            replay_configured: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            header,
            counting: OnceLock::new(),
        }
    }

    pub fn mode(&self) -> Mode {
        Mode::from_u8(self.mode.load(Ordering::Relaxed)).unwrap_or(Mode::Observe)
    }

    /// Drive fell back to observe (another tool owns KERNEL_REPLAY).
    pub fn set_mode(&self, mode: Mode) {
        self.mode.store(mode.to_u8(), Ordering::Release);
    }

    pub fn replay_configured(&self) -> bool {
        self.replay_configured.load(Ordering::Relaxed)
    }

    /// The KERNEL_REPLAY service is configured by this tool (allocations after it count).
    pub fn set_replay_configured(&self) {
        self.replay_configured.store(true, Ordering::Release);
    }

    /// A panic was caught at the C boundary: stop recording and driving.
    pub fn on_panic(&self) {
        if !self.panicked.swap(true, Ordering::AcqRel) {
            say(&format!(
                "internal error (panic caught{}); recording stops, the application continues",
                panic_hook::last_panic()
            ));
            if let Some(r) = recorder::peek() {
                r.stop();
            }
        }
    }

    pub fn panicked(&self) -> bool {
        self.panicked.load(Ordering::Relaxed)
    }

    /// Whether the kernel passes the kernel filter (always without a filter).
    pub fn kernel_matches(&self, kernel_id: u64) -> bool {
        if self.cfg.filter.is_none() {
            return true;
        }
        // A kernel whose name was never registered cannot match a name filter.
        self.kernels
            .with(|k| k.get(&kernel_id).copied())
            .flatten()
            .unwrap_or(false)
    }

    /// Remembers whether a registered kernel's name (the SDK's raw symbol name) passes the
    /// filter: formatted and searched once here, at registration, never per dispatch.
    pub fn remember_kernel(&self, kernel_id: u64, name: &str) {
        let matches = self.cfg.filter.as_ref().is_none_or(|f| f.selects(name));
        self.kernels.with(|k| k.insert(kernel_id, matches));
    }
}
