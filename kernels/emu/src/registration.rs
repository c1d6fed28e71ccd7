//! Tool discovery and the client lifecycle, as the SDK's `registration.cpp` `find_clients()`
//! does it (reference: real-rocm.md §1): first the configure functions handed to
//! `rocprofiler_force_configure` before start-up, then the `ROCP_TOOL_LIBRARIES` entries (cut at
//! ':', an entry kept only when a ':' follows it unless the value has no ':' at all — the
//! drop-last rule, on by default, `--tool-list-quirk=off` turns it off), each dlopened; then the
//! configure function the SDK's own weak `rocprofiler_configure` reference resolves to (the
//! "unknown" client), then `dlsym(RTLD_DEFAULT)`, `dlsym(RTLD_NEXT)` and the link-map scan
//! (`loaded_tools.rs`: a preloaded tool). A configure function already listed is skipped. Every
//! client's `rocprofiler_configure` then every `initialize` runs inside the configuration window,
//! and at exit `finalize`, all in that order.

use crate::sdk::sdk;
use crate::tool_time::{Call, timed};
use krphase_ffi::{ClientId, ConfigureFn, ToolConfigureResult};
use parking_lot::Mutex;
use std::ffi::CString;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// `ROCPROFILER_VERSION` for a version triple.
pub fn version_number(v: (u32, u32, u32)) -> u32 {
    10000 * v.0 + 100 * v.1 + v.2
}

/// The entries the SDK uses from a `ROCP_TOOL_LIBRARIES` value. With `drop_last` (the real rule),
/// a value holding a ':' loses its last entry (so a trailing ':' keeps every named entry).
pub fn parse_tool_list(value: &str, drop_last: bool) -> Vec<String> {
    if value.is_empty() {
        return Vec::new();
    }
    let mut parts: Vec<&str> = value.split(':').collect();
    if drop_last && parts.len() > 1 {
        parts.pop();
    }
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// Where a client's configure function comes from.
pub enum Source {
    /// Handed to `rocprofiler_force_configure` before start-up.
    Forced(ConfigureFn),
    Library(String),
    /// Already in the process (found by symbol lookup, not from the list): the "unknown"
    /// configure first, then RTLD_DEFAULT, RTLD_NEXT and the link map.
    Loaded(ConfigureFn),
}

/// The configure functions `rocprofiler_force_configure` accepted, in call order.
static FORCED: Mutex<Vec<ConfigureFn>> = Mutex::new(Vec::new());

/// Records a forced configure; false once configuration has begun (the caller then answers
/// CONFIGURATION_LOCKED).
pub fn force_configure(f: ConfigureFn) -> bool {
    let mut forced = FORCED.lock();
    if sdk().init_status() != 0 {
        return false;
    }
    forced.push(f);
    true
}

/// The clients in the SDK's order: forced configures, the `ROCP_TOOL_LIBRARIES` entries, then
/// the configure functions already loaded in the process. Configuration begins here: a later
/// `rocprofiler_force_configure` is refused.
pub fn sources(tool_list: &str, drop_last: bool) -> Vec<Source> {
    let mut v: Vec<Source> = {
        let forced = FORCED.lock();
        sdk().set_init_status(-1);
        forced.iter().copied().map(Source::Forced).collect()
    };
    v.extend(
        parse_tool_list(tool_list, drop_last)
            .into_iter()
            .map(Source::Library),
    );
    v.extend(
        crate::loaded_tools::already_loaded()
            .into_iter()
            .map(Source::Loaded),
    );
    v
}

struct Client {
    id: Box<ClientId>,
    result: Option<ToolConfigureResult>,
    finalized: AtomicBool,
}

// SAFETY: the raw pointers inside are tool-owned statics (name string, tool_data) that the SDK
// only passes back to the same tool; access is serialized by the CLIENTS mutex.
unsafe impl Send for Client {}

static CLIENTS: LazyLock<Mutex<Vec<Client>>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// Handles are `random offset + index`; priority is the index.
const HANDLE_OFFSET: u32 = 0x5a00;

/// Why a tool-list entry yields no client: a library that cannot be loaded stops start-up; one
/// without `rocprofiler_configure` is skipped with a warning.
enum OpenError {
    Load(String),
    NoConfigure(String),
}

fn open_library(path: &str) -> Result<ConfigureFn, OpenError> {
    use libloading::os::unix::{Library, RTLD_LAZY, RTLD_LOCAL};
    const RTLD_NOLOAD: i32 = libc::RTLD_NOLOAD;
    // SAFETY: loading a tool library runs its initializers; that is what the SDK does too.
    let lib = unsafe { Library::open(Some(path), RTLD_NOLOAD | RTLD_LAZY) }
        .or_else(|_| {
            // SAFETY: as above.
            unsafe { Library::open(Some(path), RTLD_LOCAL | RTLD_LAZY) }
        })
        .map_err(|e| {
            OpenError::Load(format!(
                "ROCP_TOOL_LIBRARIES entry {path:?} could not be loaded: {e}"
            ))
        })?;
    // SAFETY: the symbol, if present, is `rocprofiler_configure` with the registration.h signature.
    let f = unsafe { lib.get::<ConfigureFn>(b"rocprofiler_configure\0") }
        .map(|s| *s)
        .map_err(|_| {
            OpenError::NoConfigure(format!("{path:?} has no rocprofiler_configure symbol"))
        });
    std::mem::forget(lib); // tools stay loaded for the life of the process
    f
}

/// `rocprofiler_client_finalize_t`: finalizes one client early; its finalize never runs again.
unsafe extern "C" fn client_finalize(id: ClientId) {
    let _ = std::panic::catch_unwind(|| finalize_client(id.handle));
}

fn finalize_client(handle: u32) {
    let (fini, data) = {
        let clients = CLIENTS.lock();
        let Some(c) = clients.iter().find(|c| c.id.handle == handle) else {
            return;
        };
        if c.finalized.swap(true, Ordering::SeqCst) {
            return;
        }
        let r = c.result.expect("finalized clients returned a result");
        (r.finalize, r.tool_data)
    };
    for ctx in sdk().client_contexts(handle) {
        let _ = sdk().stop_context(ctx);
    }
    if let Some(f) = fini {
        // SAFETY: the tool returned this finalize pointer with its tool_data.
        timed(Call::Finalize, || unsafe { f(data) });
    }
}

/// Loads and configures every client in order, then initializes them: the configuration window.
/// A library that cannot be opened is fatal, as in the SDK.
pub fn initialize(sources: Vec<Source>, version: (u32, u32, u32)) -> Result<(), String> {
    let s = sdk();
    s.set_init_status(-1);
    let vstr = CString::new(format!("{}.{}.{}", version.0, version.1, version.2)).expect("no NUL");
    let vnum = version_number(version);
    let mut seen: Vec<usize> = Vec::new();
    let mut index = 0u32;
    for src in sources {
        let configure = match src {
            Source::Library(path) => match open_library(&path) {
                Ok(f) => f,
                Err(OpenError::NoConfigure(e)) => {
                    crate::log::log(crate::log::Level::Warning, "registration.cpp", 301, &e);
                    continue;
                }
                Err(OpenError::Load(e)) => return Err(e),
            },
            Source::Forced(f) | Source::Loaded(f) => f,
        };
        // An entry whose configure function is already listed is skipped.
        if seen.contains(&(configure as usize)) {
            continue;
        }
        seen.push(configure as usize);
        let handle = HANDLE_OFFSET + index;
        let mut id = Box::new(ClientId {
            size: std::mem::size_of::<ClientId>(),
            name: std::ptr::null(),
            handle,
        });
        s.set_current_client(handle);
        let idp: *mut ClientId = &mut *id;
        // SAFETY: the tool's rocprofiler_configure with the registration.h signature; the
        // client id lives in a Box for the life of the process.
        let r = timed(Call::Configure, || unsafe {
            configure(vnum, vstr.as_ptr(), index, idp)
        });
        index += 1;
        let result = if r.is_null() {
            s.remove_client_contexts(handle);
            None
        } else {
            // SAFETY: non-NULL results point to a tool-owned configure result; the SDK copies it.
            Some(unsafe { *r })
        };
        CLIENTS.lock().push(Client {
            id,
            result,
            finalized: AtomicBool::new(false),
        });
    }
    let inits: Vec<_> = CLIENTS
        .lock()
        .iter()
        .filter_map(|c| c.result.map(|r| (c.id.handle, r.initialize, r.tool_data)))
        .collect();
    for (handle, init, data) in inits {
        s.set_current_client(handle);
        if let Some(f) = init {
            // SAFETY: the tool's initialize; the returned int is ignored, as in the SDK.
            timed(Call::Configure, || unsafe {
                f(Some(client_finalize), data)
            });
        }
    }
    s.set_current_client(u32::MAX);
    s.set_init_status(1);
    Ok(())
}

/// Stops each client's contexts and calls its finalize, in registration order.
pub fn finalize_all() {
    let handles: Vec<u32> = CLIENTS
        .lock()
        .iter()
        .filter(|c| c.result.is_some())
        .map(|c| c.id.handle)
        .collect();
    for h in handles {
        finalize_client(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_rule_drops_the_last_entry_only_with_a_colon() {
        assert_eq!(parse_tool_list("a.so", true), vec!["a.so"]);
        assert_eq!(parse_tool_list("a.so:b.so", true), vec!["a.so"]);
        assert_eq!(
            parse_tool_list("a.so:b.so:c.so", true),
            vec!["a.so", "b.so"]
        );
        assert_eq!(parse_tool_list("a.so:b.so:", true), vec!["a.so", "b.so"]);
        assert_eq!(parse_tool_list("a.so:b.so", false), vec!["a.so", "b.so"]);
        assert!(parse_tool_list("", false).is_empty());
    }

    #[test]
    fn version_number_formula() {
        assert_eq!(version_number((1, 4, 1)), 10401);
    }
}
