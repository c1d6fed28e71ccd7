//! The shared objects loaded in this process, by the names the dynamic loader keeps for them
//! (`dl_iterate_phdr`), and whether rocprofv3's tool library is one of them.
//!
//! rocprofv3 preloads its tool (`LD_PRELOAD`), so the library is in the process before any
//! client is configured, whichever order the SDK configures the clients in.

use std::ffi::{CStr, c_int, c_void};

/// The file name of rocprofv3's tool library (`{ROCM}/lib/rocprofiler-sdk/`; rocprofv3.py tries
/// a `.so.<major>` when the bare name is missing).
pub const ROCPROFV3_TOOL: &str = "librocprofiler-sdk-tool.so";

/// The emulator's stand-in for rocprofv3's tool (`kernels/emu/driver`), which its `rocprofv3`
/// stand-in preloads under this name. It behaves as the real tool does (claims replay, aborts
/// when refused), so it is recognised as one.
pub const EMULATED_ROCPROFV3_TOOL: &str = "libkrphase_emu_driver.so";

/// The path (as the loader keeps it) of every object loaded in this process, the executable
/// (whose name is empty) left out.
pub fn loaded_objects() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    // SAFETY: `collect` matches the callback type dl_iterate_phdr expects; `data` points to
    // `names`, which outlives the call, and is used only inside it, on this thread (glibc calls
    // the callback synchronously, holding its loader lock).
    unsafe { libc::dl_iterate_phdr(Some(collect), (&raw mut names).cast::<c_void>()) };
    names
}

/// Called by `dl_iterate_phdr` once per loaded object.
unsafe extern "C" fn collect(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: glibc passes a valid `dl_phdr_info` for the duration of the call, and `data` is the
    // `Vec<String>` `loaded_objects` handed in (no other reference to it exists meanwhile).
    let (info, names) = unsafe { (&*info, &mut *data.cast::<Vec<String>>()) };
    if !info.dlpi_name.is_null() {
        // SAFETY: a non-null `dlpi_name` is the NUL-terminated name the loader keeps for the
        // object, valid while the callback runs; it is copied before returning.
        let name = unsafe { CStr::from_ptr(info.dlpi_name) };
        if !name.is_empty() {
            names.push(name.to_string_lossy().into_owned());
        }
    }
    0
}

/// Whether `path`'s file name is rocprofv3's tool library (also as `.so.<version>`) or the
/// emulator's stand-in for it.
pub fn is_rocprofv3_tool(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    [ROCPROFV3_TOOL, EMULATED_ROCPROFV3_TOOL].iter().any(|n| {
        file == *n
            || file
                .strip_prefix(n)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|v| !v.is_empty() && v.split('.').all(|p| p.parse::<u32>().is_ok()))
    })
}

/// The loaded path of rocprofv3's tool library (or the emulator's stand-in), if it is in this
/// process.
pub fn rocprofv3_tool_loaded() -> Option<String> {
    loaded_objects().into_iter().find(|p| is_rocprofv3_tool(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_file_name_with_or_without_version() {
        assert!(is_rocprofv3_tool(
            "/opt/rocm/lib/rocprofiler-sdk/librocprofiler-sdk-tool.so"
        ));
        assert!(is_rocprofv3_tool("librocprofiler-sdk-tool.so.1"));
        assert!(is_rocprofv3_tool("/x/librocprofiler-sdk-tool.so.1.0.0"));
        assert!(is_rocprofv3_tool("/t/debug/libkrphase_emu_driver.so"));
        assert!(!is_rocprofv3_tool("/opt/rocm/lib/librocprofiler-sdk.so.1"));
        assert!(!is_rocprofv3_tool("/x/librocprofiler-sdk-tool.so.bak"));
        assert!(!is_rocprofv3_tool("/librocprofiler-sdk-tool.so/libc.so.6"));
    }

    #[test]
    fn lists_this_process_s_libc() {
        let all = loaded_objects();
        assert!(all.iter().any(|p| p.contains("libc.so")), "{all:?}");
        assert_eq!(rocprofv3_tool_loaded(), None);
    }
}
