//! Pacing a copy, a latency or a kernel to its modelled duration: the real work runs first, then
//! the thread waits until the deadline, sleeping, and spinning for the last stretch, which a
//! sleep would overshoot. Spinning, not yielding: on a loaded machine a yield hands the core to
//! whatever else runs for its whole time slice (milliseconds), while a spinning thread keeps it.

use std::time::{Duration, Instant};

/// The last stretch before a deadline, waited by spinning rather than sleeping.
const SPIN_BEFORE: Duration = Duration::from_micros(200);

/// Returns once `deadline` has passed.
pub(crate) fn pace_until(deadline: Instant) {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > SPIN_BEFORE {
            std::thread::sleep(left - SPIN_BEFORE);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Without `--sdk-build`: a copy takes at least `bytes` at `gbps` (`--link-gbps`).
pub(crate) fn link_duration(bytes: u64, gbps: f64) -> Duration {
    Duration::from_secs_f64(bytes as f64 / (gbps * 1e9))
}
