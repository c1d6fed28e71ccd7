//! The panic boundary every `extern "C"` entry point runs inside: nothing unwinds into C.

use crate::panic_hook;

/// Runs `f`, turning a panic into "recording stops" (the tool's action, or one line before it
/// is installed) and `fallback`.
#[inline(always)]
pub fn guard<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    panic_hook::catch_or(fallback, f)
}
