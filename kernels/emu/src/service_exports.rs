//! The public API functions of services the emulator models beyond callback tracing: the agent
//! query, buffers (create, flush, destroy) and callback threads, internal-thread notification,
//! forced configuration, the OpenMP tools queries, and the buffer-tracing kind check. Thin
//! wrappers over `krphase_emu::{agent_info, buffers}`; each catches panics and maps them to an
//! error.

use krphase_emu::{agent_info, buffers, sdk::sdk};
use krphase_ffi::{
    AGENT_INFO_VERSION_0, AgentV0, AvailableAgentsFn, BufferId, BufferTracingFn, CallbackThread,
    ConfigureFn, ContextId, Status,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};

use crate::boundary::{OK, code, guard};

/// Referenced from `main` so the linker keeps this module's symbols.
pub fn keep() {
    std::hint::black_box(rocprofiler_flush_buffer as extern "C" fn(BufferId) -> u32);
}

/// The agent records laid out at `stride` bytes each, kept for the life of the process: the
/// header promises the pointers stay valid until after tool finalization.
fn agent_storage(stride_words: usize) -> &'static [u64] {
    static STORE: Mutex<Option<HashMap<usize, &'static [u64]>>> = Mutex::new(None);
    let mut g = STORE.lock();
    g.get_or_insert_with(HashMap::new)
        .entry(stride_words)
        .or_insert_with(|| {
            let records = agent_info::records();
            let mut words = vec![0u64; stride_words * records.len()];
            for (i, r) in records.iter().enumerate() {
                // SAFETY: `words` holds `stride_words` (>= size_of::<AgentV0>() / 8) u64s per
                // record, 8-aligned as AgentV0 needs; the write stays inside record i's slot.
                unsafe {
                    words
                        .as_mut_ptr()
                        .add(i * stride_words)
                        .cast::<AgentV0>()
                        .write(*r)
                };
            }
            Vec::leak(words)
        })
}

/// `rocprofiler_query_available_agents`. A tool compiled against a longer agent struct (newer
/// headers add a UUID and firmware versions) gets records of its size whose tail reads zero;
/// `size` in each record says how much the emulator filled.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_query_available_agents(
    version: u32,
    callback: AvailableAgentsFn,
    agent_size: usize,
    user_data: *mut c_void,
) -> u32 {
    let ud = user_data as usize;
    guard(move || {
        let Some(cb) = callback else {
            return Status::INVALID_ARGUMENT.0;
        };
        if version != AGENT_INFO_VERSION_0 {
            return Status::INVALID_ARGUMENT.0;
        }
        let stride_words = agent_size.max(std::mem::size_of::<AgentV0>()).div_ceil(8);
        let store = agent_storage(stride_words);
        let mut ptrs: Vec<*const c_void> = store
            .chunks_exact(stride_words)
            .map(|c| c.as_ptr().cast::<c_void>())
            .collect();
        // SAFETY: the tool's callback with the header's signature; the array and the records
        // it points to outlive the call (the records live for the process).
        unsafe { cb(version, ptrs.as_mut_ptr(), ptrs.len(), ud as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_create_buffer(
    context: ContextId,
    size: usize,
    watermark: usize,
    policy: u32,
    callback: BufferTracingFn,
    _callback_data: *mut c_void,
    buffer_id: *mut BufferId,
) -> u32 {
    let out = buffer_id as usize;
    guard(move || {
        if callback.is_none() || out == 0 {
            return Status::INVALID_ARGUMENT.0;
        }
        match buffers::create(context, size, watermark, policy) {
            Ok(id) => {
                // SAFETY: a non-NULL out-pointer to the caller's buffer id.
                unsafe { (out as *mut BufferId).write(id) };
                OK
            }
            Err(s) => s.0,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_flush_buffer(buffer_id: BufferId) -> u32 {
    guard(move || code(buffers::flush(buffer_id)))
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_destroy_buffer(buffer_id: BufferId) -> u32 {
    guard(move || code(buffers::destroy(buffer_id)))
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_create_callback_thread(thread: *mut CallbackThread) -> u32 {
    let out = thread as usize;
    guard(move || {
        if out == 0 {
            return Status::INVALID_ARGUMENT.0;
        }
        match buffers::create_thread() {
            Ok(t) => {
                // SAFETY: a non-NULL out-pointer to the caller's callback-thread handle.
                unsafe { (out as *mut CallbackThread).write(t) };
                OK
            }
            Err(s) => s.0,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_assign_callback_thread(
    buffer_id: BufferId,
    thread: CallbackThread,
) -> u32 {
    guard(move || code(buffers::assign(buffer_id, thread)))
}

/// The emulator's libraries create no internal threads, so the callbacks are accepted and never
/// called; the header gives SUCCESS as the only result.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_at_internal_thread_create(
    _precreate: Option<unsafe extern "C" fn(u32, *mut c_void)>,
    _postcreate: Option<unsafe extern "C" fn(u32, *mut c_void)>,
    _libs: c_int,
    _data: *mut c_void,
) -> u32 {
    OK
}

/// Whether a buffer-tracing kind is configured on a context: none ever is (buffer tracing is
/// not modelled), which is a true answer for any existing context.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_query_buffer_tracing_kind_configured(
    context: ContextId,
    _kind: u32,
    result: *mut c_int,
) -> u32 {
    let out = result as usize;
    guard(move || {
        if out == 0 {
            return Status::INVALID_ARGUMENT.0;
        }
        if !sdk().context_exists(context) {
            return Status::CONTEXT_NOT_FOUND.0;
        }
        // SAFETY: a non-NULL out-pointer to the caller's int.
        unsafe { (out as *mut c_int).write(0) };
        OK
    })
}

/// `rocprofiler_force_configure`: before configuration begins (a preloaded library's constructor
/// runs before the emulator's `main`), the function joins the clients ahead of every other, as
/// in the SDK's `find_clients()`; afterwards the header's CONFIGURATION_LOCKED.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_force_configure(configure: Option<ConfigureFn>) -> u32 {
    guard(|| match configure {
        None => Status::INVALID_ARGUMENT.0,
        Some(f) if krphase_emu::registration::force_configure(f) => OK,
        Some(_) => Status::CONFIGURATION_LOCKED.0,
    })
}

/// No OpenMP runtime runs under the emulator: OMPT is neither initialized nor finalized.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_ompt_is_initialized(status: *mut c_int) -> u32 {
    ompt_status(status)
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_ompt_is_finalized(status: *mut c_int) -> u32 {
    ompt_status(status)
}

fn ompt_status(status: *mut c_int) -> u32 {
    if !status.is_null() {
        // SAFETY: a non-NULL out-pointer to the caller's int.
        unsafe { status.write(0) };
    }
    OK
}

/// Declines the OMPT tool role (NULL), as the SDK does when no client subscribes to OMPT.
#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_ompt_start_tool(
    _omp_version: u32,
    _runtime_version: *const std::ffi::c_char,
) -> *mut c_void {
    std::ptr::null_mut()
}
