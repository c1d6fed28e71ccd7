//! What every exported function does at the C boundary: no panic crosses it (in an SDK function
//! a panic becomes ROCPROFILER_STATUS_ERROR, in an HSA function HSA_STATUS_ERROR_INVALID_ARGUMENT),
//! a `Result` becomes the status number, and an HSA iteration calls the caller's callback as
//! ROCr's iterators do.

use krphase_ffi::Status;
use std::ffi::c_void;

pub const OK: u32 = Status::SUCCESS;
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
pub const HSA_INVALID_ARGUMENT: u32 = 0x1001;

/// [`guard`] for the HSA functions, which answer a panic with INVALID_ARGUMENT.
pub fn hsa_guard(f: impl FnOnce() -> u32 + std::panic::UnwindSafe) -> u32 {
    std::panic::catch_unwind(f).unwrap_or(HSA_INVALID_ARGUMENT)
}

/// Runs an HSA iteration callback over `items`; a non-SUCCESS return stops the walk and is
/// returned (INFO_BREAK included), as ROCr's iterators do.
pub fn iterate<T: Copy>(items: &[T], mut call: impl FnMut(T) -> u32) -> u32 {
    for &i in items {
        let rc = call(i);
        if rc != 0 {
            return rc;
        }
    }
    0
}

/// Runs an HSA iteration under [`hsa_guard`] with the caller's callback and `data`
/// (INVALID_ARGUMENT for a NULL callback).
pub fn hsa_iterate<F: Copy + std::panic::UnwindSafe>(
    callback: Option<F>,
    data: *mut c_void,
    walk: impl FnOnce(F, *mut c_void) -> u32 + std::panic::UnwindSafe,
) -> u32 {
    let data = data as usize;
    hsa_guard(move || {
        let Some(cb) = callback else {
            return HSA_INVALID_ARGUMENT;
        };
        walk(cb, data as *mut c_void)
    })
}

/// Runs `f`, answering a panic with ROCPROFILER_STATUS_ERROR.
pub fn guard(f: impl FnOnce() -> u32 + std::panic::UnwindSafe) -> u32 {
    std::panic::catch_unwind(f).unwrap_or(Status::ERROR.0)
}

/// The status number of `r`.
pub fn code(r: Result<(), Status>) -> u32 {
    r.map_or_else(|s| s.0, |()| OK)
}
