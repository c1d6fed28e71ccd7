//! Thin wrappers over the libc calls the tool needs (the only `unsafe` outside the C boundary,
//! `sdk/callbacks.rs`).

use std::ffi::CStr;

/// CLOCK_BOOTTIME in ns: the SDK's clock, and the domain of GPU timestamps.
#[inline]
pub fn boottime_ns() -> u64 {
    clock_ns(libc::CLOCK_BOOTTIME)
}

/// The time-stamp counter (`rdtsc`): the hot path's clock where [`invariant_tsc`] holds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: `rdtsc` exists on every x86_64 CPU, reads no memory and has no preconditions.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Whether the CPU says its TSC runs at a constant rate in every power state (CPUID leaf
/// 0x8000_0007, EDX bit 8: "invariant TSC").
#[cfg(target_arch = "x86_64")]
pub fn invariant_tsc() -> bool {
    use core::arch::x86_64::__cpuid;
    __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
}

/// CLOCK_REALTIME in ns (only for the header's clock anchor).
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// The local time zone's offset from UTC (seconds east) at the CLOCK_REALTIME instant
/// `realtime_ns`, as `localtime_r` (the SDK's glog) applies it; `None` if the C library cannot say.
pub fn utc_offset_s(realtime_ns: u64) -> Option<i32> {
    let secs = (realtime_ns / 1_000_000_000) as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value for localtime_r to overwrite.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads our time_t and writes our tm; both outlive the call.
    let ok = !unsafe { libc::localtime_r(&secs, &mut tm) }.is_null();
    ok.then(|| i32::try_from(tm.tm_gmtoff).ok()).flatten()
}

#[inline]
fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; clock_gettime is a vDSO call that cannot fail for these ids.
    unsafe { libc::clock_gettime(id, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// The OS thread id (`gettid`); callers cache it per thread.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

pub fn getpid() -> u32 {
    std::process::id()
}

pub fn getppid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() as u32 }
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is writable for its length; gethostname NUL-terminates on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    CStr::from_bytes_until_nul(&buf)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown".into())
}

/// Registers `f` to run at process exit.
pub fn at_exit(f: extern "C" fn()) {
    // SAFETY: f is a plain `extern "C" fn()` that lives for the whole process.
    unsafe { libc::atexit(f) };
}

/// Registers `f` to run in the child after `fork`.
pub fn at_fork_child(f: unsafe extern "C" fn()) {
    // SAFETY: f lives for the whole process; no prepare/parent handlers.
    unsafe { libc::pthread_atfork(None, None, Some(f)) };
}

/// Writes `buf` to fd 2 with plain `write` calls (no lock), retrying on EINTR and short writes.
pub fn write_stderr(mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: buf is a valid readable slice for its length.
        let n = unsafe { libc::write(2, buf.as_ptr().cast(), buf.len()) };
        if n > 0 {
            buf = &buf[n as usize..];
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return;
        }
    }
}

/// An environment variable read with libc's `getenv` (std's reader takes a lock a fork child
/// could find held).
pub fn getenv(name: &str) -> Option<String> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: c is NUL-terminated; getenv returns NULL or a NUL-terminated string that stays
    // valid until the environment is changed, and it is copied at once.
    let p = unsafe { libc::getenv(c.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: p is non-NULL and NUL-terminated (above).
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}
