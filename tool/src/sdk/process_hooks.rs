//! Process-wide hooks: the atexit safety net (closes the file when the SDK never calls
//! finalize) and the fork-child hook (the child records into its own file).

use super::boundary::guard;
use super::finalize;
use crate::{recorder, sys};
use std::panic::catch_unwind;

/// Registers the atexit safety net, once per process (in `initialize`).
pub fn register() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| sys::at_exit(at_exit));
    register_fork_child();
}

/// Registers the fork-child hook, once per process (at configure: a fork between configure and
/// `initialize` is a fork too).
pub fn register_fork_child() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| sys::at_fork_child(at_fork_child));
}

extern "C" fn at_exit() {
    guard((), || {
        finalize::finalize(krphase_format::trailer::flags::ATEXIT)
    });
}

unsafe extern "C" fn at_fork_child() {
    // Only atomic stores here: the child builds its own recorder at its first event, and its
    // locks are its own from now on (`fork_local`).
    let _ = catch_unwind(recorder::forked);
}
