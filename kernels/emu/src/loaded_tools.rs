//! The `rocprofiler_configure` functions already in the process, found as the SDK's
//! `registration.cpp` finds them after the `ROCP_TOOL_LIBRARIES` entries: the "unknown" client —
//! what the SDK's own weak `rocprofiler_configure` reference resolves to, the first definition in
//! the global scope; the emulated SDK (the executable) defines none of its own, so that is the
//! global lookup's answer, or nothing —, then `dlsym(RTLD_DEFAULT)`,
//! then `dlsym(RTLD_NEXT)`, and — only when one of those found a symbol — every library in the
//! link map that exports one. A tool `LD_PRELOAD`ed (rocprofv3's) is found this way even when the
//! last-entry quirk dropped it from the list; a tool loaded `RTLD_LOCAL` from the list is in the
//! link map too, and the caller skips a function already listed.

use krphase_ffi::ConfigureFn;
use std::ffi::{CStr, c_int, c_void};

const SYMBOL: &CStr = c"rocprofiler_configure";

/// `dlsym(handle, "rocprofiler_configure")` as a configure function.
fn lookup(handle: *mut c_void) -> Option<ConfigureFn> {
    // SAFETY: dlsym with a valid pseudo-handle or a handle from dlopen, and a NUL-terminated name.
    let p = unsafe { libc::dlsym(handle, SYMBOL.as_ptr()) };
    // SAFETY: a symbol of this name is the registration.h entry point with this signature.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, ConfigureFn>(p) })
}

/// The loaded objects' names (the main program's is empty).
fn link_map_names() -> Vec<std::ffi::CString> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is the `Vec` passed below; `info` is valid for this call and its name
        // is NULL or NUL-terminated.
        unsafe {
            let v = &mut *data.cast::<Vec<std::ffi::CString>>();
            let name = (*info).dlpi_name;
            if !name.is_null() && *name != 0 {
                v.push(CStr::from_ptr(name).to_owned());
            }
        }
        0
    }
    let mut names: Vec<std::ffi::CString> = Vec::new();
    // SAFETY: the callback matches dl_iterate_phdr's signature and only reads its arguments.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut names as *mut Vec<_>).cast()) };
    names
}

/// The configure functions already loaded, in the SDK's search order (duplicates included).
pub fn already_loaded() -> Vec<ConfigureFn> {
    // The "unknown" client, then RTLD_DEFAULT, then RTLD_NEXT (duplicates are skipped by the
    // caller, as in the SDK).
    let mut out: Vec<ConfigureFn> = [libc::RTLD_DEFAULT, libc::RTLD_DEFAULT, libc::RTLD_NEXT]
        .into_iter()
        .filter_map(lookup)
        .collect();
    if out.is_empty() {
        return out;
    }
    for name in link_map_names() {
        // SAFETY: RTLD_NOLOAD only returns a handle to an object already loaded; it runs nothing.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
        if h.is_null() {
            continue;
        }
        if let Some(f) = lookup(h) {
            out.push(f);
        }
        // SAFETY: balances the dlopen above; the object stays loaded (it was before).
        unsafe { libc::dlclose(h) };
    }
    out
}
