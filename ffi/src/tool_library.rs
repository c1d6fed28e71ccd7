//! Whether a tool library would load: opened as the SDK opens a `ROCP_TOOL_LIBRARIES` entry, but
//! with every symbol bound at once so a missing dependency shows now rather than at first use,
//! and checked for the `rocprofiler_configure` entry point the SDK looks up.

use std::path::Path;

/// Loads `path` (RTLD_NOW | RTLD_LOCAL), looks up `rocprofiler_configure`, and unloads it.
/// Loading runs the library's initializers, so use it on tool libraries only.
pub fn check_tool_library(path: &Path) -> Result<(), String> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading a tool library runs its initializers; krphase's tool has none that act
    // before the SDK calls rocprofiler_configure, and the library is closed again at once.
    let lib =
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map_err(|e| e.to_string())?;
    // SAFETY: only the address is looked up; nothing is called through it.
    let found = unsafe { lib.get::<*const ()>(b"rocprofiler_configure\0") }.is_ok();
    if found {
        Ok(())
    } else {
        Err("it does not export rocprofiler_configure".to_string())
    }
}
