//! The SDK's finalization, once per process: the code object's symbols and the code object are
//! unloaded (their UNLOAD callbacks), then every client's finalize runs. The SDK registers it
//! with `atexit` before it configures any tool, so a process that calls `exit()` from any
//! thread, or a fork child that exits, still finalizes its tools, after the tools' own atexit
//! handlers (which were registered later and run first); the end of `run` calls it directly.

use crate::sdk::sdk;
use crate::{program, registration, tool_time};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static STARTED: AtomicBool = AtomicBool::new(false);
/// The process that registered the handler; a fork child has another pid.
static OWNER: AtomicU32 = AtomicU32::new(0);

/// Finalizes the SDK unless that has already begun (in this process or, before a fork, in
/// the parent).
pub fn finalize_sdk() {
    if STARTED.swap(true, Ordering::SeqCst) {
        return;
    }
    sdk().set_fini_status(-1);
    program::unload_code_object();
    registration::finalize_all();
    sdk().set_fini_status(1);
}

/// Whether this process is a fork child of the one that started the SDK.
pub fn in_fork_child() -> bool {
    OWNER.load(Ordering::SeqCst) != std::process::id()
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let ran = !STARTED.load(Ordering::SeqCst);
        finalize_sdk();
        // A fork child writes no truth: a parent thread may have held the truth file's lock
        // when the process was forked.
        if ran && !in_fork_child() {
            tool_time::write_truth("exit");
        }
    });
}

/// Registers the atexit finalization (before any tool is configured, as the SDK does).
pub fn register_at_exit() {
    OWNER.store(std::process::id(), Ordering::SeqCst);
    // SAFETY: `at_exit` is an `extern "C" fn()` that catches every panic, so nothing unwinds
    // into libc's exit path.
    unsafe { libc::atexit(at_exit) };
}
