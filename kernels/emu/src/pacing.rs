//! Pacing a copy, a latency or a kernel to its modelled duration: the real work runs first, then the
//! thread waits until the deadline (sleeping, and yielding for the last stretch, which a sleep
//! would overshoot).

use std::time::{Duration, Instant};

/// The last stretch before a deadline, waited by yielding rather than sleeping.
const YIELD_BEFORE: Duration = Duration::from_micros(200);

/// Returns once `deadline` has passed.
pub(crate) fn pace_until(deadline: Instant) {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > YIELD_BEFORE {
            std::thread::sleep(left - YIELD_BEFORE);
        } else {
            std::thread::yield_now();
        }
    }
}

/// Without `--sdk-build`: a copy takes at least `bytes` at `gbps` (`--link-gbps`).
pub(crate) fn link_duration(bytes: u64, gbps: f64) -> Duration {
    Duration::from_secs_f64(bytes as f64 / (gbps * 1e9))
}
