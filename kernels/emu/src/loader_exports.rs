//! ROCr's loader extension as the emulator serves it: the exported
//! `hsa_system_get_major_extension_table` copies (up to the length asked for) a real 1.03 table
//! (`krphase_ffi::HsaVenAmdLoader1_03`, whose 1.00–1.02 versions are its prefixes) holding the
//! functions below. None of them is exported, as in ROCr, whose export list has no
//! `hsa_ven_amd_loader_*` function. The emulator models `iterate_executables`,
//! `query_executable` and `query_host_address`; the code-object members answer HSA_STATUS_ERROR.

use crate::boundary::{HSA_INVALID_ARGUMENT, hsa_guard, hsa_iterate, iterate};
use krphase_emu::{hsa_runtime, symbols};
use krphase_ffi::hsa_loader::{HSA_STATUS_ERROR, HsaCodeObjectReader, HsaLoadedCodeObject};
use krphase_ffi::{HsaExecutable, HsaExecutableIterFn, HsaVenAmdLoader1_03};
use std::ffi::{c_int, c_void};

/// Referenced from `main` so the linker keeps this module's symbols.
pub fn keep() {
    std::hint::black_box(
        hsa_system_get_major_extension_table as extern "C" fn(u16, u16, usize, *mut c_void) -> u32,
    );
}

/// The table ROCr fills: every member set.
const TABLE: HsaVenAmdLoader1_03 = HsaVenAmdLoader1_03 {
    query_host_address: Some(query_host_address),
    query_segment_descriptors: Some(query_segment_descriptors),
    query_executable: Some(query_executable),
    executable_iterate_loaded_code_objects: Some(iterate_loaded_code_objects),
    loaded_code_object_get_info: Some(loaded_code_object_get_info),
    code_object_reader_create_from_file_with_offset_size: Some(code_object_reader_create),
    iterate_executables: Some(iterate_executables),
};

#[unsafe(no_mangle)]
pub extern "C" fn hsa_system_get_major_extension_table(
    extension: u16,
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> u32 {
    let out = table as usize;
    hsa_guard(move || {
        match hsa_runtime::loader_table_request(extension, version_major, table_length, out == 0) {
            Ok(n) => {
                // SAFETY: `out` is the caller's non-NULL table of `table_length` bytes, and `n`
                // is at most that (and at most the 1.03 table's size).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        (&TABLE as *const HsaVenAmdLoader1_03).cast::<u8>(),
                        out as *mut u8,
                        n,
                    )
                };
                0
            }
            Err(rc) => rc,
        }
    })
}

unsafe extern "C" fn iterate_executables(callback: HsaExecutableIterFn, data: *mut c_void) -> u32 {
    hsa_iterate(callback, data, |cb, data| {
        iterate(&symbols::executables(), |e| {
            // SAFETY: the caller's callback with the loader extension's signature.
            unsafe { cb(e, data) }
        })
    })
}

/// Writes `value` through the caller's out-pointer; INVALID_ARGUMENT for NULL.
fn answer<T>(out: usize, value: Option<T>) -> u32 {
    match value {
        Some(_) if out == 0 => HSA_INVALID_ARGUMENT,
        Some(v) => {
            // SAFETY: non-NULL; the caller's out-pointer of the type the header declares.
            unsafe { (out as *mut T).write(v) };
            0
        }
        None => HSA_INVALID_ARGUMENT,
    }
}

unsafe extern "C" fn query_executable(
    device_address: *const c_void,
    executable: *mut HsaExecutable,
) -> u32 {
    let (a, out) = (device_address as u64, executable as usize);
    hsa_guard(move || answer(out, symbols::executable_at(a)))
}

unsafe extern "C" fn query_host_address(
    device_address: *const c_void,
    host_address: *mut *const c_void,
) -> u32 {
    let (a, out) = (device_address as u64, host_address as usize);
    // The emulator's device memory is host memory at the same address.
    hsa_guard(move || answer(out, symbols::executable_at(a).map(|_| a as *const c_void)))
}

unsafe extern "C" fn query_segment_descriptors(_descriptors: *mut c_void, _n: *mut usize) -> u32 {
    HSA_STATUS_ERROR
}

unsafe extern "C" fn iterate_loaded_code_objects(
    _executable: HsaExecutable,
    _callback: krphase_ffi::hsa_loader::LoadedCodeObjectIterFn,
    _data: *mut c_void,
) -> u32 {
    HSA_STATUS_ERROR
}

unsafe extern "C" fn loaded_code_object_get_info(
    _object: HsaLoadedCodeObject,
    _attribute: u32,
    _value: *mut c_void,
) -> u32 {
    HSA_STATUS_ERROR
}

unsafe extern "C" fn code_object_reader_create(
    _file: c_int,
    _offset: usize,
    _size: usize,
    _reader: *mut HsaCodeObjectReader,
) -> u32 {
    HSA_STATUS_ERROR
}
