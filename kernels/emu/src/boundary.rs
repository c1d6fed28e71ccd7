//! What every exported SDK function does at the C boundary: no panic crosses it (a panic becomes
//! ROCPROFILER_STATUS_ERROR), and a `Result` becomes the status number.

use krphase_ffi::Status;

pub const OK: u32 = Status::SUCCESS;

/// Runs `f`, answering a panic with ROCPROFILER_STATUS_ERROR.
pub fn guard(f: impl FnOnce() -> u32 + std::panic::UnwindSafe) -> u32 {
    std::panic::catch_unwind(f).unwrap_or(Status::ERROR.0)
}

/// The status number of `r`.
pub fn code(r: Result<(), Status>) -> u32 {
    r.map_or_else(|s| s.0, |()| OK)
}
