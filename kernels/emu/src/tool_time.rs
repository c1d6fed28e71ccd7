//! How long the application's threads spent inside tool code (`--time-callbacks`): every call
//! the emulated SDK makes into a tool is timed, and the longest per class goes into a
//! `tool_time` truth line. Off by default, so ordinary runs take no extra clock readings around
//! the tool's callbacks.

use crate::clock::now_ns;
use crate::truth;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Which kind of tool call a duration belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// A tracing callback, or the pass-count / continue call of a replay window.
    Callback,
    /// `rocprofiler_configure` or the client's `initialize`.
    Configure,
    /// The client's `finalize`.
    Finalize,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static MAX_CALLBACK: AtomicU64 = AtomicU64::new(0);
static MAX_CONFIGURE: AtomicU64 = AtomicU64::new(0);
static MAX_FINALIZE: AtomicU64 = AtomicU64::new(0);
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Turns timing on (before any tool is loaded).
pub fn enable() {
    ENABLED.store(true, Ordering::SeqCst);
}

/// Runs `f`, a call into a tool, and keeps its duration if timing is on.
#[inline]
pub fn timed<R>(call: Call, f: impl FnOnce() -> R) -> R {
    if !ENABLED.load(Ordering::Relaxed) {
        return f();
    }
    let start = now_ns();
    let r = f();
    let took = now_ns().saturating_sub(start);
    let max = match call {
        Call::Callback => &MAX_CALLBACK,
        Call::Configure => &MAX_CONFIGURE,
        Call::Finalize => &MAX_FINALIZE,
    };
    max.fetch_max(took, Ordering::Relaxed);
    CALLS.fetch_add(1, Ordering::Relaxed);
    r
}

/// Writes the `tool_time` truth line (longest call per class so far, in ns; `at` says when:
/// `end`, `exit`, `abort`). A later line supersedes an earlier one.
pub fn write_truth(at: &str) {
    if !ENABLED.load(Ordering::SeqCst) {
        return;
    }
    truth::write(&json!({
        "type": "tool_time",
        "pid": std::process::id(),
        "at": at,
        "max_callback_ns": MAX_CALLBACK.load(Ordering::SeqCst),
        "max_configure_ns": MAX_CONFIGURE.load(Ordering::SeqCst),
        "max_finalize_ns": MAX_FINALIZE.load(Ordering::SeqCst),
        "calls": CALLS.load(Ordering::SeqCst),
    }));
}
