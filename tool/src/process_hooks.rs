//! Process-wide hooks: the atexit safety net (closes the file when the SDK never calls
//! finalize) and the fork-child hook (the child records into its own file).

use crate::boundary::guard;
use crate::{finalize, recorder, sys};
use std::panic::catch_unwind;

/// Registers both hooks, once per process.
pub fn register() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        sys::at_exit(at_exit);
        sys::at_fork_child(at_fork_child);
    });
}

extern "C" fn at_exit() {
    guard((), || {
        finalize::finalize(krphase_format::trailer::flags::ATEXIT)
    });
}

unsafe extern "C" fn at_fork_child() {
    // Only an atomic increment here: the child builds its own recorder at its first event.
    let _ = catch_unwind(recorder::forked);
}
