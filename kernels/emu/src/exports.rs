//! The SDK's C ABI, exported under the real names and C signatures: every function in
//! `krphase-ffi`'s symbol table (`ffi/src/sdk.rs`), plus ROCr's exports `hsa_amd_pointer_info`
//! and the executable-symbol functions. The loader's functions are not exports, as in ROCr: they
//! come through the extension table (`loader_exports.rs`). Each function catches panics and maps
//! them to an error.

use krphase_emu::{clock, kinds, memory, sdk::sdk, symbols};
use krphase_ffi::{
    CallbackTracingFn, CallbackTracingKind, ContextId, HsaAgent, HsaAgentSymbolIterFn,
    HsaAmdPointerInfo, HsaExecutable, HsaExecutableSymbol, HsaSymbolIterFn, KindIterFn,
    KindOperationIterFn, Status, TracingOperation, VersionTriplet,
};
use std::ffi::{CString, c_char, c_int, c_void};
use std::panic::catch_unwind;
use std::sync::LazyLock;

use crate::boundary::{HSA_INVALID_ARGUMENT, OK, code, guard, hsa_guard, hsa_iterate, iterate};
const INVALID: u32 = Status::INVALID_ARGUMENT.0;

/// Stores `v` through an optional out-pointer (NULL: the caller does not want the value).
fn store<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL out-pointers are the caller's, of the type the ABI declares.
        unsafe { p.write(v) };
    }
}

/// Stores `v()` through a required out-pointer; INVALID_ARGUMENT when it is NULL.
fn store_required<T>(p: *mut T, v: impl FnOnce() -> T) -> u32 {
    if p.is_null() {
        return INVALID;
    }
    store(p, v());
    OK
}

/// Referenced from `main` so the linker keeps this module's symbols.
pub fn keep() {
    std::hint::black_box(
        rocprofiler_get_version_triplet as extern "C" fn(*mut VersionTriplet) -> u32,
    );
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_get_version(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
) -> u32 {
    guard(|| {
        let (a, b, c) = sdk().version();
        for (p, v) in [(major, a), (minor, b), (patch, c)] {
            store(p, v);
        }
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_get_version_triplet(info: *mut VersionTriplet) -> u32 {
    guard(|| {
        store_required(info, || {
            let (major, minor, patch) = sdk().version();
            VersionTriplet {
                major,
                minor,
                patch,
            }
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_create_context(id: *mut ContextId) -> u32 {
    guard(|| {
        if id.is_null() {
            return INVALID;
        }
        // SAFETY: non-NULL, the caller's context id.
        let id = unsafe { &mut *id };
        code(sdk().create_context(id))
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_start_context(id: ContextId) -> u32 {
    guard(|| code(sdk().start_context(id)))
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_stop_context(id: ContextId) -> u32 {
    guard(|| code(sdk().stop_context(id)))
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_context_is_active(id: ContextId, status: *mut c_int) -> u32 {
    guard(|| match sdk().context_is_active(id) {
        Ok(a) => {
            store(status, c_int::from(a));
            OK
        }
        Err(s) => s.0,
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_context_is_valid(id: ContextId, status: *mut c_int) -> u32 {
    guard(|| {
        let valid = sdk().context_exists(id);
        store(status, c_int::from(valid));
        if valid {
            OK
        } else {
            Status::CONTEXT_NOT_FOUND.0
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_configure_callback_tracing_service(
    id: ContextId,
    kind: CallbackTracingKind,
    operations: *const TracingOperation,
    operations_count: usize,
    callback: CallbackTracingFn,
    callback_args: *mut c_void,
) -> u32 {
    guard(move || {
        let ops: &[TracingOperation] = if operations.is_null() || operations_count == 0 {
            &[]
        } else {
            // SAFETY: the caller passes `operations_count` readable operations.
            unsafe { std::slice::from_raw_parts(operations, operations_count) }
        };
        let data = callback_args as usize;
        code(sdk().configure_callback_tracing(id, kind.0, ops, callback, data as *mut c_void))
    })
}

fn write_name(s: &'static CString, name: *mut *const c_char, len: *mut u64) {
    store(name, s.as_ptr());
    store(len, s.as_bytes().len() as u64);
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_query_callback_tracing_kind_name(
    kind: CallbackTracingKind,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> u32 {
    guard(move || match kinds::c_names().kinds.get(kind.0 as usize) {
        Some(s) => {
            write_name(s, name, name_len);
            OK
        }
        None => Status::KIND_NOT_FOUND.0,
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_query_callback_tracing_kind_operation_name(
    kind: CallbackTracingKind,
    operation: TracingOperation,
    name: *mut *const c_char,
    name_len: *mut u64,
) -> u32 {
    guard(move || {
        let names = kinds::c_names();
        let last = names.kinds.len() as u32;
        if kind.0 > last {
            return Status::KIND_NOT_FOUND.0;
        }
        if kind.0 == 0 || kind.0 == last {
            return INVALID;
        }
        match usize::try_from(operation)
            .ok()
            .and_then(|o| names.ops[kind.0 as usize].get(o))
        {
            Some(s) => {
                write_name(s, name, name_len);
                OK
            }
            None => {
                store(name, std::ptr::null());
                store(name_len, 0);
                Status::OPERATION_NOT_FOUND.0
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kinds(
    callback: KindIterFn,
    data: *mut c_void,
) -> u32 {
    let data = data as usize;
    guard(move || {
        let Some(cb) = callback else { return INVALID };
        for k in 0..kinds::table().last() {
            // SAFETY: the tool's iteration callback with the documented signature.
            if unsafe { cb(CallbackTracingKind(k), data as *mut c_void) } != 0 {
                break;
            }
        }
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_iterate_callback_tracing_kind_operations(
    kind: CallbackTracingKind,
    callback: KindOperationIterFn,
    data: *mut c_void,
) -> u32 {
    let data = data as usize;
    guard(move || {
        let t = kinds::table();
        if kind.0 == 0 || kind.0 >= t.last() {
            return INVALID;
        }
        let Some(cb) = callback else { return INVALID };
        for op in 0..t.operations(kind.0).len() as i32 {
            // SAFETY: the tool's iteration callback with the documented signature.
            if unsafe { cb(kind, op, data as *mut c_void) } != 0 {
                break;
            }
        }
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_get_timestamp(ts: *mut u64) -> u32 {
    guard(|| store_required(ts, clock::now_ns))
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_get_thread_id(tid: *mut u64) -> u32 {
    guard(|| store_required(tid, clock::thread_id))
}

static STATUS_NAMES: LazyLock<Vec<CString>> = LazyLock::new(|| {
    (0..42)
        .map(|i| {
            let n = Status(i).name().unwrap_or("UNKNOWN");
            CString::new(format!("ROCPROFILER_STATUS_{n}")).expect("no NUL")
        })
        .collect()
});

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_get_status_name(status: u32) -> *const c_char {
    catch_unwind(|| {
        STATUS_NAMES
            .get(status as usize)
            .map_or(std::ptr::null(), |s| s.as_ptr())
    })
    .unwrap_or(std::ptr::null())
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_get_status_string(status: u32) -> *const c_char {
    catch_unwind(|| {
        krphase_emu::status_text::message(status).map_or(std::ptr::null(), |s| s.as_ptr())
    })
    .unwrap_or(std::ptr::null())
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_is_initialized(status: *mut c_int) -> u32 {
    guard(|| {
        store(status, sdk().init_status());
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn rocprofiler_is_finalized(status: *mut c_int) -> u32 {
    guard(|| {
        store(status, sdk().fini_status());
        OK
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_pointer_info(
    ptr: *const c_void,
    info: *mut HsaAmdPointerInfo,
    _alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut HsaAgent,
) -> u32 {
    let (p, i) = (ptr as usize, info as usize);
    let r = hsa_guard(move || {
        let info = i as *mut HsaAmdPointerInfo;
        if info.is_null() {
            return HSA_INVALID_ARGUMENT;
        }
        // SAFETY: non-NULL, the caller's struct; `size` is set by the caller and we write no
        // more than it declares.
        let info = unsafe { &mut *info };
        if (info.size as usize) < 8 {
            return HSA_INVALID_ARGUMENT;
        }
        memory::pointer_info(p as u64, info);
        0
    });
    if r == 0 {
        // No list is allocated.
        store(num_agents_accessible, 0);
        store(accessible, std::ptr::null_mut());
    }
    r
}

/// Walks an executable's symbols (all, or those of one agent) with `call`, as [`iterate`] does.
fn walk_symbols(
    executable: HsaExecutable,
    agent: Option<HsaAgent>,
    call: impl FnMut(HsaExecutableSymbol) -> u32,
) -> u32 {
    match symbols::symbols_of(executable, agent) {
        Ok(v) => iterate(&v, call),
        Err(rc) => rc,
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn hsa_executable_iterate_symbols(
    executable: HsaExecutable,
    callback: HsaSymbolIterFn,
    data: *mut c_void,
) -> u32 {
    hsa_iterate(callback, data, |cb, data| {
        walk_symbols(executable, None, |sym| {
            // SAFETY: the caller's callback with hsa.h's signature.
            unsafe { cb(executable, sym, data) }
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hsa_executable_iterate_agent_symbols(
    executable: HsaExecutable,
    agent: HsaAgent,
    callback: HsaAgentSymbolIterFn,
    data: *mut c_void,
) -> u32 {
    hsa_iterate(callback, data, |cb, data| {
        walk_symbols(executable, Some(agent), |sym| {
            // SAFETY: the caller's callback with hsa.h's signature.
            unsafe { cb(executable, agent, sym, data) }
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn hsa_executable_symbol_get_info(
    symbol: HsaExecutableSymbol,
    attribute: u32,
    value: *mut c_void,
) -> u32 {
    let value = value as usize;
    hsa_guard(move || {
        if value == 0 {
            return HSA_INVALID_ARGUMENT;
        }
        match symbols::info(symbol, attribute) {
            Ok(bytes) => {
                // SAFETY: non-NULL; the caller provides storage of the attribute's documented
                // size (NAME: NAME_LENGTH bytes), which is exactly `bytes.len()`.
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), value as *mut u8, bytes.len())
                };
                0
            }
            Err(rc) => rc,
        }
    })
}

/// Emulator-only test hook (not an SDK symbol): submits one small dispatch to the GPU agent from
/// the calling thread, as a tool that (wrongly) launches GPU work inside a replay callback would.
#[unsafe(no_mangle)]
pub extern "C" fn krphase_emu_reentrant_launch() -> u32 {
    guard(|| {
        krphase_emu::program::reentrant_launch();
        OK
    })
}
