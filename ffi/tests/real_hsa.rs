//! The loader table request against Debian's real ROCr (`libhsa-runtime64.so.1`, package
//! `libhsa-runtime64-1`): it exports the extension-table function and no `hsa_ven_amd_loader_*`
//! function, and before `hsa_init` it answers HSA_STATUS_ERROR_NOT_INITIALIZED (0x100B), which
//! `loader_table` reports as such. This machine has no GPU, so `hsa_init` cannot succeed here and
//! is never called. A missing library fails the test with the line that installs it.

use krphase_ffi::LoaderMissing;
use krphase_ffi::hsa_loader::{
    HSA_EXTENSION_AMD_LOADER, HSA_STATUS_ERROR_NOT_INITIALIZED, HsaSystemGetMajorExtensionTableFn,
    loader_table,
};
use libloading::Library;
use std::ffi::c_void;

const REAL_ROCR: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

fn real_rocr() -> Library {
    assert!(
        std::path::Path::new(REAL_ROCR).exists(),
        "Debian's ROCm runtime is not installed ({REAL_ROCR} is missing); install it with: \
         apt-get install -y libhsa-runtime64-1 (scripts/test installs it)"
    );
    // SAFETY: loading ROCr runs its initialisers, which only set up process-local state (no
    // device is opened before hsa_init); the library stays loaded for the test's process.
    unsafe { Library::new(REAL_ROCR) }.unwrap_or_else(|e| panic!("dlopen {REAL_ROCR}: {e}"))
}

#[test]
fn before_hsa_init_the_real_rocr_answers_not_initialized() {
    let lib = real_rocr();
    // SAFETY: only the address is taken; it is typed as hsa.h declares the function.
    let get = *unsafe {
        lib.get::<HsaSystemGetMajorExtensionTableFn>(b"hsa_system_get_major_extension_table")
    }
    .expect("ROCr exports hsa_system_get_major_extension_table");
    // SAFETY: ROCr's own function, which keeps the contract `loader_table` asks for.
    assert_eq!(
        unsafe { loader_table(get) }.unwrap_err(),
        LoaderMissing::Status(HSA_STATUS_ERROR_NOT_INITIALIZED)
    );
    // ROCr checks initialization first, even before the table pointer.
    // SAFETY: a NULL table with a zero length: nothing may be written.
    let rc = unsafe {
        get(
            HSA_EXTENSION_AMD_LOADER,
            1,
            0,
            std::ptr::null_mut::<c_void>(),
        )
    };
    assert_eq!(rc, HSA_STATUS_ERROR_NOT_INITIALIZED);
    for name in [
        "hsa_ven_amd_loader_iterate_executables",
        "hsa_ven_amd_loader_query_host_address",
    ] {
        // SAFETY: only looked up, never called.
        let found = unsafe { lib.get::<*const c_void>(name.as_bytes()) }.is_ok();
        assert!(!found, "{REAL_ROCR} exports {name}");
    }
}
