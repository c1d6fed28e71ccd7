//! The process's current recorder and the one state word the hot path loads.

use super::Recorder;
use crate::sys;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

static CURRENT: Mutex<Option<Arc<Recorder>>> = Mutex::new(None);

/// `generation << 1 | recording`: the one word the hot path loads. The generation is bumped
/// whenever the current recorder changes (install, fork); a thread whose attached value differs
/// takes the slow path (re-attach, or return when not recording).
pub(super) static RECORDER_STATE: AtomicU64 = AtomicU64::new(0);
pub(super) const RECORDING_BIT: u64 = 1;

/// Builds a fresh recorder in a fork child.
pub type ForkFactory = Box<dyn Fn() -> Option<Arc<Recorder>> + Send + Sync>;
static FORK_FACTORY: OnceLock<ForkFactory> = OnceLock::new();

pub(super) fn set_recording(on: bool) {
    if on {
        RECORDER_STATE.fetch_or(RECORDING_BIT, Ordering::Release);
    } else {
        RECORDER_STATE.fetch_and(!RECORDING_BIT, Ordering::Release);
    }
}

/// Next generation, with the recording bit of `rec` (call with `CURRENT` locked).
fn bump_generation(rec: Option<&Arc<Recorder>>) {
    let g = (RECORDER_STATE.load(Ordering::Relaxed) >> 1).wrapping_add(1) & (u64::MAX >> 2);
    let on = rec.is_some_and(|r| r.is_recording());
    RECORDER_STATE.store(g << 1 | u64::from(on), Ordering::Release);
}

/// Makes `rec` the process's recorder.
pub fn install(rec: Arc<Recorder>) {
    let mut g = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    bump_generation(Some(&rec));
    *g = Some(rec);
}

pub fn set_fork_factory(f: ForkFactory) {
    let _ = FORK_FACTORY.set(f);
}

/// The recorder of this process (a fork child gets its own, built on first use), and the
/// [`RECORDER_STATE`] value it belongs to.
pub(super) fn current_with_state() -> (Option<Arc<Recorder>>, u64) {
    let mut g = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = g.as_ref()
        && r.pid != sys::getpid()
    {
        // Fork child: the parent's writer thread does not exist here.
        *g = FORK_FACTORY.get().and_then(|f| f());
        bump_generation(g.as_ref());
    }
    (g.clone(), RECORDER_STATE.load(Ordering::Acquire))
}

/// The recorder of this process (a fork child gets its own, built on first use).
pub fn current() -> Option<Arc<Recorder>> {
    current_with_state().0
}

/// The current recorder without building one (finalize, atexit).
pub fn peek() -> Option<Arc<Recorder>> {
    CURRENT.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Called in a fork child: make every thread re-fetch the recorder (an atomic add only).
pub fn forked() {
    RECORDER_STATE.fetch_add(2, Ordering::Release);
}
