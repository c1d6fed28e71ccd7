//! Where the rocprofv3 stand-in's counter tool lives (`libkrphase_emu_driver.so`, the
//! `kernels/emu/driver` crate, a client of its own) and how it joins a process the way rocprofv3
//! adds its tool: appended to (or, driver first, put before) `ROCP_TOOL_LIBRARIES` and
//! `LD_PRELOAD`ed. `krphase-emu run --driver-passes N` re-executes itself (same pid) with that
//! environment when the library is not in the process yet.

use crate::opts::{DriverOrder, DriverSettings};
use std::ffi::OsString;
use std::path::PathBuf;

/// The library's file name.
pub const LIBRARY: &str = "libkrphase_emu_driver.so";

/// `KRPHASE_EMU_DRIVER_LIBRARY`, else the library next to this executable.
pub fn library_path() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("KRPHASE_EMU_DRIVER_LIBRARY").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate krphase-emu: {e}"))?;
    let p = exe.with_file_name(LIBRARY);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "the driver client {} is missing (build it: cargo build -p krphase-emu-driver; or set KRPHASE_EMU_DRIVER_LIBRARY)",
            p.display()
        ))
    }
}

/// Whether the driver library is loaded in this process (its marker symbol is visible).
pub fn loaded() -> bool {
    // SAFETY: a lookup by a NUL-terminated name in the global scope; nothing is called.
    !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"krphase_emu_driver_loaded".as_ptr()) }.is_null()
}

/// `value` with `entry` added to its ':'-separated list, first or last. Last is rocprofv3.py's
/// append (the SDK's drop-last rule drops the entry; the preload finds it). First is no real
/// tool's composition but the list a user writes to have the driver configured first:
/// `entry:<list>:`, the trailing ':' keeping the user's last entry under the drop-last rule.
fn join(value: Option<OsString>, entry: &str, first: bool) -> String {
    let old = value
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.is_empty());
    match (old, first) {
        (None, _) => entry.to_string(),
        (Some(o), true) => format!("{entry}:{}:", o.trim_end_matches(':')),
        (Some(o), false) => format!("{o}:{entry}"),
    }
}

/// The environment that loads the driver as rocprofv3 loads its tool, with its settings.
pub fn environment(lib: &str, d: &DriverSettings) -> Vec<(String, String)> {
    let first = d.order == DriverOrder::First;
    let mut env = vec![
        (
            "ROCP_TOOL_LIBRARIES".to_string(),
            join(std::env::var_os("ROCP_TOOL_LIBRARIES"), lib, first),
        ),
        (
            "LD_PRELOAD".to_string(),
            join(std::env::var_os("LD_PRELOAD"), lib, false),
        ),
        ("ROCPROF_KERNEL_REPLAY".to_string(), "1".to_string()),
        (
            "KRPHASE_EMU_DRIVER_PASSES".to_string(),
            d.passes.to_string(),
        ),
    ];
    if let Some(f) = &d.filter {
        env.push(("KRPHASE_EMU_DRIVER_FILTER".into(), f.as_str().to_string()));
    }
    env
}

/// Re-executes this process with the driver loaded; returns only on failure.
pub fn reexec_with(d: &DriverSettings) -> String {
    use std::os::unix::process::CommandExt;
    let lib = match library_path() {
        Ok(p) => p.display().to_string(),
        Err(e) => return e,
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return format!("cannot locate krphase-emu: {e}"),
    };
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .envs(environment(&lib, d))
        .exec();
    format!("cannot re-execute with the driver client: {err}")
}
