//! The panic boundary every `extern "C"` entry point runs inside: nothing unwinds into C.

use crate::{events::tool, say};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f`, turning a panic into "recording stops" and `fallback`.
#[inline(always)]
pub fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            caught();
            fallback
        }
    }
}

#[cold]
#[inline(never)]
fn caught() {
    match tool::get() {
        Some(t) => t.on_panic(),
        None => say("internal error (panic caught) during set-up; not recording"),
    }
}
