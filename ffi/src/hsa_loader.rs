//! ROCr's loader extension (`hsa_ven_amd_loader.h`): its function table, and the one way a tool
//! gets it.
//!
//! ROCr exports none of the `hsa_ven_amd_loader_*` functions by name. A tool asks for them with
//! `hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, length, &table)`, which
//! answers `HSA_STATUS_ERROR_NOT_INITIALIZED` until HSA is initialized, then copies
//! `min(length, sizeof its newest table)` bytes. The table versions append members, so 1.00, 1.01
//! and 1.02 are prefixes of 1.03 ([`LOADER_TABLE_SIZES`]); krphase asks for 1.03, the first with
//! `iterate_executables`, and treats a runtime that left that member empty as not having it.
//!
//! Written from the header's declarations on x86-64 (LP64); `header_check` compares them with the
//! installed HSA headers.

use crate::types::{HSA_STATUS_SUCCESS, HsaExecutable, HsaIterateExecutablesFn};
use std::ffi::{c_int, c_void};
use std::fmt;

/// `HSA_EXTENSION_AMD_LOADER` (`hsa_extension_t`).
pub const HSA_EXTENSION_AMD_LOADER: u16 = 0x201;
/// The loader extension's only major version.
pub const LOADER_MAJOR: u16 = 1;
/// `HSA_STATUS_ERROR`: ROCr's answer for an extension or major version it does not serve.
pub const HSA_STATUS_ERROR: u32 = 0x1000;
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
pub const HSA_STATUS_ERROR_INVALID_ARGUMENT: u32 = 0x1001;
/// `HSA_STATUS_ERROR_NOT_INITIALIZED`: HSA calls made before `hsa_init` (or after the last
/// `hsa_shut_down`).
pub const HSA_STATUS_ERROR_NOT_INITIALIZED: u32 = 0x100B;

/// `hsa_loaded_code_object_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HsaLoadedCodeObject {
    pub handle: u64,
}

/// `hsa_code_object_reader_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HsaCodeObjectReader {
    pub handle: u64,
}

/// `hsa_system_get_major_extension_table(extension, version_major, table_length, table)`.
pub type HsaSystemGetMajorExtensionTableFn = unsafe extern "C" fn(
    extension: u16,
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> u32;

/// `hsa_ven_amd_loader_query_host_address(device_address, host_address)`.
pub type LoaderQueryHostAddressFn =
    unsafe extern "C" fn(device_address: *const c_void, host_address: *mut *const c_void) -> u32;
/// `hsa_ven_amd_loader_query_segment_descriptors(descriptors, count)`; the descriptors are
/// `hsa_ven_amd_loader_segment_descriptor_t`, which krphase never reads.
pub type LoaderQuerySegmentDescriptorsFn = unsafe extern "C" fn(
    segment_descriptors: *mut c_void,
    num_segment_descriptors: *mut usize,
) -> u32;
/// `hsa_ven_amd_loader_query_executable(device_address, executable)`.
pub type LoaderQueryExecutableFn =
    unsafe extern "C" fn(device_address: *const c_void, executable: *mut HsaExecutable) -> u32;
/// Callback of `hsa_ven_amd_loader_executable_iterate_loaded_code_objects`.
pub type LoadedCodeObjectIterFn = Option<
    unsafe extern "C" fn(
        executable: HsaExecutable,
        loaded_code_object: HsaLoadedCodeObject,
        data: *mut c_void,
    ) -> u32,
>;
/// `hsa_ven_amd_loader_executable_iterate_loaded_code_objects(executable, callback, data)`.
pub type LoaderIterateLoadedCodeObjectsFn = unsafe extern "C" fn(
    executable: HsaExecutable,
    callback: LoadedCodeObjectIterFn,
    data: *mut c_void,
) -> u32;
/// `hsa_ven_amd_loader_loaded_code_object_get_info(loaded_code_object, attribute, value)`.
pub type LoaderLoadedCodeObjectGetInfoFn = unsafe extern "C" fn(
    loaded_code_object: HsaLoadedCodeObject,
    attribute: u32,
    value: *mut c_void,
) -> u32;
/// `hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(file, offset, size,
/// reader)`; `hsa_file_t` is a file descriptor on Linux.
pub type LoaderCodeObjectReaderCreateFn = unsafe extern "C" fn(
    file: c_int,
    offset: usize,
    size: usize,
    code_object_reader: *mut HsaCodeObjectReader,
) -> u32;

/// `hsa_ven_amd_loader_1_03_pfn_t` (56 B): the members in the header's order. A member the
/// runtime did not fill stays `None`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct HsaVenAmdLoader1_03 {
    /// 1.00.
    pub query_host_address: Option<LoaderQueryHostAddressFn>,
    pub query_segment_descriptors: Option<LoaderQuerySegmentDescriptorsFn>,
    pub query_executable: Option<LoaderQueryExecutableFn>,
    /// 1.01.
    pub executable_iterate_loaded_code_objects: Option<LoaderIterateLoadedCodeObjectsFn>,
    pub loaded_code_object_get_info: Option<LoaderLoadedCodeObjectGetInfoFn>,
    /// 1.02.
    pub code_object_reader_create_from_file_with_offset_size:
        Option<LoaderCodeObjectReaderCreateFn>,
    /// 1.03.
    pub iterate_executables: Option<HsaIterateExecutablesFn>,
}

/// `sizeof` of each table version on x86-64, by minor version (1.00 → 24 … 1.03 → 56): each is
/// the prefix of [`HsaVenAmdLoader1_03`] that ends after its last member.
pub const LOADER_TABLE_SIZES: [(u16, usize); 4] = [(0, 24), (1, 40), (2, 48), (3, 56)];

/// Why the loader's `iterate_executables` could not be had from the runtime in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoaderMissing {
    /// `hsa_system_get_major_extension_table` is not in the process.
    TableFunction,
    /// The table function answered this `hsa_status_t`.
    Status(u32),
    /// It answered SUCCESS but left the 1.03 member empty: a runtime that knows an older table.
    IterateExecutables,
}

impl fmt::Display for LoaderMissing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = size_of::<HsaVenAmdLoader1_03>();
        match self {
            LoaderMissing::TableFunction => {
                f.write_str("ROCr's hsa_system_get_major_extension_table is not in this process")
            }
            LoaderMissing::Status(s) => write!(
                f,
                "hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, {size}) \
                 returned {s:#x}{}",
                hsa_status_name(*s).map_or(String::new(), |n| format!(" ({n})"))
            ),
            LoaderMissing::IterateExecutables => f.write_str(
                "ROCr's loader extension table has no hsa_ven_amd_loader_iterate_executables \
                 (the runtime filled a table older than 1.03)",
            ),
        }
    }
}

impl std::error::Error for LoaderMissing {}

/// The names of the `hsa_status_t` values krphase can meet on this path.
pub fn hsa_status_name(status: u32) -> Option<&'static str> {
    Some(match status {
        HSA_STATUS_SUCCESS => "HSA_STATUS_SUCCESS",
        HSA_STATUS_ERROR => "HSA_STATUS_ERROR",
        HSA_STATUS_ERROR_INVALID_ARGUMENT => "HSA_STATUS_ERROR_INVALID_ARGUMENT",
        0x1008 => "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        HSA_STATUS_ERROR_NOT_INITIALIZED => "HSA_STATUS_ERROR_NOT_INITIALIZED",
        _ => return None,
    })
}

/// Asks `get` for the 1.03 loader table (all 56 bytes) and returns it when the call succeeded and
/// filled `iterate_executables`.
///
/// # Safety
/// `get` is ROCr's `hsa_system_get_major_extension_table`, or a function with its contract: it
/// writes at most `table_length` bytes to `table`, and every non-null member it writes is a
/// function of the type the header gives that member.
pub unsafe fn loader_table(
    get: HsaSystemGetMajorExtensionTableFn,
) -> Result<HsaVenAmdLoader1_03, LoaderMissing> {
    let mut table = HsaVenAmdLoader1_03::default();
    let length = size_of::<HsaVenAmdLoader1_03>();
    // SAFETY: `table` is a writable, zeroed (all `None`) table of `length` bytes, and the caller
    // vouches that `get` writes no more than that; any bytes it writes into a member are a null
    // or non-null pointer, both valid for `Option<fn>`.
    let rc = unsafe {
        get(
            HSA_EXTENSION_AMD_LOADER,
            LOADER_MAJOR,
            length,
            (&mut table as *mut HsaVenAmdLoader1_03).cast(),
        )
    };
    if rc != HSA_STATUS_SUCCESS {
        return Err(LoaderMissing::Status(rc));
    }
    if table.iterate_executables.is_none() {
        return Err(LoaderMissing::IterateExecutables);
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;
    use std::sync::atomic::{AtomicUsize, Ordering};

    unsafe extern "C" fn no_executables(
        _cb: crate::types::HsaExecutableIterFn,
        _data: *mut c_void,
    ) -> u32 {
        0
    }

    /// The length the last fake call was asked to fill.
    static ASKED: AtomicUsize = AtomicUsize::new(0);

    /// A runtime that knows tables up to `N` bytes and copies `min(N, length)` of its own.
    unsafe extern "C" fn runtime_with<const N: usize>(
        extension: u16,
        major: u16,
        length: usize,
        table: *mut c_void,
    ) -> u32 {
        ASKED.store(length, Ordering::SeqCst);
        if (extension, major) != (HSA_EXTENSION_AMD_LOADER, LOADER_MAJOR) {
            return HSA_STATUS_ERROR;
        }
        let full = HsaVenAmdLoader1_03 {
            iterate_executables: Some(no_executables),
            ..Default::default()
        };
        // SAFETY: the caller's table holds `length` bytes; at most that many are copied.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&full as *const HsaVenAmdLoader1_03).cast::<u8>(),
                table.cast::<u8>(),
                N.min(length),
            )
        };
        HSA_STATUS_SUCCESS
    }

    unsafe extern "C" fn not_initialized(_: u16, _: u16, _: usize, _: *mut c_void) -> u32 {
        HSA_STATUS_ERROR_NOT_INITIALIZED
    }

    #[test]
    fn tables_are_prefixes_of_1_03() {
        assert_eq!(size_of::<HsaVenAmdLoader1_03>(), 56);
        let ends = [
            offset_of!(HsaVenAmdLoader1_03, query_executable) + 8,
            offset_of!(HsaVenAmdLoader1_03, loaded_code_object_get_info) + 8,
            offset_of!(
                HsaVenAmdLoader1_03,
                code_object_reader_create_from_file_with_offset_size
            ) + 8,
            offset_of!(HsaVenAmdLoader1_03, iterate_executables) + 8,
        ];
        let sizes: Vec<usize> = LOADER_TABLE_SIZES.iter().map(|&(_, s)| s).collect();
        assert_eq!(sizes, ends);
    }

    #[test]
    fn the_1_03_table_is_asked_for_in_full_and_checked() {
        // SAFETY: the fakes keep the table function's contract.
        let t = unsafe { loader_table(runtime_with::<56>) }.unwrap();
        assert_eq!(ASKED.load(Ordering::SeqCst), 56);
        assert!(t.iterate_executables.is_some());
        // SAFETY: as above.
        let older = unsafe { loader_table(runtime_with::<48>) }.unwrap_err();
        assert_eq!(older, LoaderMissing::IterateExecutables);
        // SAFETY: as above.
        let early = unsafe { loader_table(not_initialized) }.unwrap_err();
        assert_eq!(early, LoaderMissing::Status(0x100B));
        assert_eq!(
            early.to_string(),
            "hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, 56) returned \
             0x100b (HSA_STATUS_ERROR_NOT_INITIALIZED)"
        );
        assert!(
            LoaderMissing::IterateExecutables
                .to_string()
                .contains("hsa_ven_amd_loader_iterate_executables")
        );
    }
}
