//! Waiting for the device to go idle: the SDK's drain limits, the signal wait in slices, the
//! agent-wide wait for async handlers, and the forced stuck pass (`--decline pass_drain_stuck`).

use crate::device::{KernelBody, Signal, queues_of};
use crate::opts::StuckSettings;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Drain waits run in 5 s slices, at most 12 of them (`--drain-timeout-ms` scales the slice).
const DRAIN_SLICE: Duration = Duration::from_secs(5);
const DRAIN_SLICES: u32 = 12;
const AGENT_DRAIN_POLL: Duration = Duration::from_millis(2);

/// The SDK's drain limit (5 s x 12). Healthy drains always get it, so a loaded machine never
/// turns a slow drain into a decline; `--drain-timeout-ms` only shortens a forced stuck wait.
pub(super) const SDK_DRAIN_LIMIT: Duration =
    Duration::from_secs(DRAIN_SLICE.as_secs() * DRAIN_SLICES as u64);

/// Waits for `signal` in 12 slices of `limit`; false when it never reached 0.
pub(super) fn drain_wait(signal: &Signal, limit: Duration) -> bool {
    let slice = limit / DRAIN_SLICES;
    (0..DRAIN_SLICES).any(|_| signal.wait_zero(slice))
}

/// Waits until every queue of `agent` has run its async handlers; false when that took longer
/// than the SDK's drain limit.
pub(super) fn agent_idle(agent: u64) -> bool {
    let begun = Instant::now();
    loop {
        let active: usize = queues_of(agent)
            .iter()
            .map(|q| q.async_active.load(Ordering::SeqCst))
            .sum();
        if active == 0 {
            return true;
        }
        if begun.elapsed() > SDK_DRAIN_LIMIT {
            return false;
        }
        std::thread::sleep(AGENT_DRAIN_POLL);
    }
}

/// Windows whose pass drain was made stuck so far (`--stuck-windows` caps it).
static STUCK_WINDOWS: AtomicU64 = AtomicU64::new(0);

/// Whether this window's pass `pass` is the forced stuck one: the right pass, and the
/// `--stuck-windows` budget not used up (each window counts once, when it reaches the pass).
pub(super) fn forced_stuck(stuck: Option<StuckSettings>, pass: u64) -> bool {
    let Some(st) = stuck else {
        return false;
    };
    pass == st.pass
        && STUCK_WINDOWS
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (st.windows.is_none_or(|max| n < max)).then_some(n + 1)
            })
            .is_ok()
}

/// A kernel body that first waits for `gate` to open: the stuck pass's kernel, held on the
/// queue worker (so its queue and the agent stay busy) until the window has given up on it.
pub(super) fn held(body: KernelBody, gate: Arc<Signal>) -> KernelBody {
    Arc::new(move || {
        while !gate.wait_zero(DRAIN_SLICE) {}
        body()
    })
}
