//! CLOCK_BOOTTIME nanoseconds (the SDK's timestamp domain) and kernel thread ids.

pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_BOOTTIME always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread's `gettid` value, as `rocprofiler_get_thread_id` returns it.
pub fn thread_id() -> u64 {
    // SAFETY: SYS_gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

/// Milliseconds between two nanosecond timestamps.
pub fn ms(start: u64, end: u64) -> f64 {
    end.saturating_sub(start) as f64 / 1e6
}
