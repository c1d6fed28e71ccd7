//! The process's current recorder and the one state word the hot path loads.

use super::{Recorder, Starting, budget};
use crate::fork_local::{self, ForkLocal, Start};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The recorder of this process. One lock per fork depth, and a child's starts empty: a fork
/// child builds its own recorder and never waits on a lock a parent thread held at the fork.
static CURRENT: ForkLocal<Current> = ForkLocal::new(Start::Fresh);

#[derive(Clone, Copy, Default)]
struct Current {
    rec: Option<&'static Recorder>,
    /// A fork child has tried to build its recorder (once: a failure is said once).
    built: bool,
}

/// `generation << 1 | recording`: the one word the hot path loads. The generation is bumped
/// whenever the current recorder changes (install, fork); a thread whose attached value differs
/// takes the slow path (re-attach, or return when not recording).
pub(super) static RECORDER_STATE: AtomicU64 = AtomicU64::new(0);
pub(super) const RECORDING_BIT: u64 = 1;

/// Starts a fresh recorder in a fork child (without waiting for its file), and says how to
/// report an open that failed.
pub type ForkFactory = Box<dyn Fn() -> Option<(Starting, OpenFailed)> + Send + Sync>;
/// Says that a fork child's output could not be opened.
pub type OpenFailed = Box<dyn FnOnce(std::io::Error)>;
static FORK_FACTORY: OnceLock<ForkFactory> = OnceLock::new();

pub(super) fn set_recording(on: bool) {
    if on {
        RECORDER_STATE.fetch_or(RECORDING_BIT, Ordering::Release);
    } else {
        RECORDER_STATE.fetch_and(!RECORDING_BIT, Ordering::Release);
    }
}

/// Next generation, with the recording bit of `rec` (call with `CURRENT` locked).
fn bump_generation(rec: Option<&Recorder>) {
    let g = (RECORDER_STATE.load(Ordering::Relaxed) >> 1).wrapping_add(1) & (u64::MAX >> 2);
    let on = rec.is_some_and(Recorder::is_recording);
    RECORDER_STATE.store(g << 1 | u64::from(on), Ordering::Release);
}

/// Makes `rec` the process's recorder.
pub fn install(rec: &'static Recorder) {
    if let Some(mut g) = CURRENT.lock() {
        bump_generation(Some(rec));
        *g = Current {
            rec: Some(rec),
            built: true,
        };
    }
}

pub fn set_fork_factory(f: ForkFactory) {
    let _ = FORK_FACTORY.set(f);
}

/// The recorder of this process (a fork child gets its own, built on first use), and the
/// [`RECORDER_STATE`] value it belongs to.
pub(super) fn current_with_state() -> (Option<&'static Recorder>, u64) {
    let mut starting = None;
    let rec = CURRENT.lock().and_then(|mut g| {
        if !g.built && fork_local::depth() > 0 {
            // Fork child: the parent's writer thread does not exist here. The recorder is made
            // and installed under the lock (no wait, no file opened here: the writer opens it);
            // the wait for the open comes after the lock is released.
            g.built = true;
            starting = FORK_FACTORY.get().and_then(|f| f());
            g.rec = starting.as_ref().map(|(s, _)| s.rec);
            bump_generation(g.rec);
        }
        g.rec
    });
    if let Some((s, failed)) = starting
        && let Err(e) = s.wait_open()
    {
        failed(e);
    }
    (rec, RECORDER_STATE.load(Ordering::Acquire))
}

/// The recorder of this process (a fork child gets its own, built on first use).
pub fn current() -> Option<&'static Recorder> {
    current_with_state().0
}

/// The current recorder without building one (finalize, atexit).
pub fn peek() -> Option<&'static Recorder> {
    CURRENT.with(|c| c.rec).flatten()
}

/// The fork child handler: only atomic stores (the child builds its recorder at its first
/// event, and every lock it takes from here on is its own).
pub fn forked() {
    fork_local::on_fork_child();
    budget::reset();
    RECORDER_STATE.fetch_add(2, Ordering::Release);
}
