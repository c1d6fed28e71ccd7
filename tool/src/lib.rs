//! libkrphase.so: a rocprofiler-sdk tool that timestamps every phase of kernel replay.
//!
//! One folder per step of the data's path. [`config`]: the `KRPHASE_*` settings, read once at
//! configure time. [`sdk`]: the C boundary (the only exported symbol is `rocprofiler_configure`;
//! every entry point runs inside [`sdk::boundary::guard`]), registration, and finalize.
//! [`events`]: the reactions to each callback (replay windows, dispatches, allocations, code
//! objects, counter records) and the state they share. [`recorder`]: the lock-free per-thread
//! buffers and the writer thread. [`output`]: the output file's path and its opening. The file
//! format is `krphase-format`.
//!
//! Beside the steps: `sys` (the libc calls), [`fork_local`] (locks a fork child never finds
//! held) and `panic_hook` (where the last panic happened, for the boundary's one line).
//!
//! The `test-support` feature adds `test_support` (a tool without an SDK, driven with synthetic
//! records), a panic injector and a hand-over delay; the shipped library never enables it.

pub mod clock;
pub mod config;
pub mod events;
pub mod fork_local;
pub mod output;
mod panic_hook;
pub mod recorder;
pub mod sdk;
mod sys;
#[cfg(feature = "test-support")]
pub mod test_support;

pub use clock::now as clock_now;
pub use sdk::finalize::finalize;
pub use sys::boottime_ns;

/// One `[krphase]` line on stderr, in one `write` (std's stderr lock is not taken: a fork child
/// could find it held by a thread that does not exist there).
pub(crate) fn say(msg: &str) {
    sys::write_stderr(format!("[krphase] {msg}\n").as_bytes());
}

/// [`say`], at most once per `flag`.
pub(crate) fn say_once(flag: &std::sync::atomic::AtomicBool, msg: &str) {
    if !flag.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say(msg);
    }
}
