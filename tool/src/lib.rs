//! libkrphase.so: a rocprofiler-sdk tool that timestamps every phase of kernel replay.
//!
//! The only exported symbol is `rocprofiler_configure` ([`abi`]). [`tool`] holds the state and
//! the reactions to SDK callbacks, [`recorder`] the lock-free per-thread buffers and the writer
//! thread, [`alloc`] the snapshot byte estimate (with
//! [`modvars`], the module-scope variables), [`config`] and [`output`] the environment (C5).
//! The file format is `krphase-format`.

mod abi;
pub mod alloc;
pub mod config;
pub mod modvars;
pub mod output;
pub mod recorder;
mod sys;
pub mod tool;

pub use abi::{synthetic_continue, synthetic_entry_points};
pub use sys::boottime_ns;

/// One `[krphase]` line on stderr.
pub(crate) fn say(msg: &str) {
    eprintln!("[krphase] {msg}");
}

/// [`say`], at most once per `flag`.
pub(crate) fn say_once(flag: &std::sync::atomic::AtomicBool, msg: &str) {
    if !flag.swap(true, std::sync::atomic::Ordering::Relaxed) {
        say(msg);
    }
}
