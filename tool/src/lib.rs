//! libkrphase.so: a rocprofiler-sdk tool that timestamps every phase of kernel replay.
//!
//! Along the data's path: `callbacks` is the C boundary (the only exported symbol is
//! `rocprofiler_configure`; every entry point runs inside [`boundary::guard`]); [`configure`]
//! registers the tool and chooses the mode; the reactions to each callback are in [`window`]
//! (replay windows, with [`layout`] detecting the payload layout), [`dispatch`] (the per-dispatch
//! hot path), [`alloc_events`] and [`code_object_events`]; all of them share the state in
//! [`tool`]. [`recorder`] holds the lock-free per-thread buffers and the writer thread, and
//! [`mod@finalize`] closes the file. [`alloc`] and [`modvars`] compute the snapshot byte estimate,
//! [`config`] and [`output`] read the environment (`KRPHASE_*`). The file format is
//! `krphase-format`.
//!
//! The `test-support` feature adds `test_support` (a tool without an SDK, driven with synthetic
//! records) and a panic injector; the shipped library never enables it.

pub mod boundary;
mod callbacks;
pub mod config;
pub mod events;
pub mod configure;
pub mod finalize;
pub mod fork_local;
pub mod output;
pub mod output_file;
mod panic_hook;
mod process_hooks;
pub mod recorder;
mod sys;
#[cfg(feature = "test-support")]
pub mod test_support;
mod written;

pub use finalize::finalize;
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
