//! The HSA runtime's state as a tool meets it: whether `hsa_init` has run, and what
//! `hsa_system_get_major_extension_table` answers (the emulator serves one extension, the loader,
//! whose functions ROCr gives out only through that table; the binary exports no
//! `hsa_ven_amd_loader_*` symbol). `--loader-table` stands in for an older runtime, whose
//! shorter table lacks `iterate_executables`, or for one without the table.
//!
//! The emulator's `hsa_init` is the point where the tools are configured and initialized and the
//! code object is not yet loaded: in a HIP process the SDK configures its tools while the runtime
//! starts, and code objects load after. Before it every call answers NOT_INITIALIZED, as ROCr's
//! does before `hsa_init`.

use crate::truth;
use krphase_ffi::HsaVenAmdLoader1_03;
use krphase_ffi::hsa_loader::{
    HSA_EXTENSION_AMD_LOADER, HSA_STATUS_ERROR, HSA_STATUS_ERROR_INVALID_ARGUMENT,
    HSA_STATUS_ERROR_NOT_INITIALIZED, LOADER_MAJOR,
};
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static OPEN: AtomicBool = AtomicBool::new(false);
/// The bytes of the 1.03 table this runtime knows (0: it serves no loader table).
static SERVED: AtomicUsize = AtomicUsize::new(size_of::<HsaVenAmdLoader1_03>());

/// Serves the first `bytes` of the 1.03 table (`--loader-table`: an older runtime's table is
/// a prefix of it; 0 serves none).
pub fn serve(bytes: usize) {
    SERVED.store(
        bytes.min(size_of::<HsaVenAmdLoader1_03>()),
        Ordering::SeqCst,
    );
}

/// `hsa_init` has run: extension tables are served from now on.
pub fn open() {
    OPEN.store(true, Ordering::SeqCst);
}

pub fn is_open() -> bool {
    OPEN.load(Ordering::SeqCst)
}

/// What `hsa_system_get_major_extension_table(extension, major, length, table)` answers, with
/// ROCr's checks in ROCr's order: the number of bytes of the 1.03 loader table to copy (at most
/// `length`), or the status. Each call is a truth line (`extension_table`).
pub fn loader_table_request(
    extension: u16,
    major: u16,
    length: usize,
    table_is_null: bool,
) -> Result<usize, u32> {
    let answer = if !is_open() {
        Err(HSA_STATUS_ERROR_NOT_INITIALIZED)
    } else if table_is_null || length == 0 {
        Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    } else if extension != HSA_EXTENSION_AMD_LOADER
        || major != LOADER_MAJOR
        || SERVED.load(Ordering::SeqCst) == 0
    {
        // ROCr's answer for an extension or major version it does not serve.
        Err(HSA_STATUS_ERROR)
    } else {
        Ok(length.min(SERVED.load(Ordering::SeqCst)))
    };
    if truth::enabled() {
        truth::write(&json!({
            "type": "extension_table",
            "pid": std::process::id(),
            "extension": extension,
            "major": major,
            "length": length,
            "copied": answer.unwrap_or(0),
            "status": answer.err().unwrap_or(0),
        }));
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loader_table_is_served_only_after_hsa_init_and_in_rocr_order() {
        // One test: the state is process-wide and only ever opens.
        assert_eq!(
            loader_table_request(0x201, 1, 56, false),
            Err(HSA_STATUS_ERROR_NOT_INITIALIZED)
        );
        assert_eq!(
            loader_table_request(0x201, 1, 56, true),
            Err(HSA_STATUS_ERROR_NOT_INITIALIZED),
            "NOT_INITIALIZED comes before the NULL check"
        );
        open();
        assert_eq!(loader_table_request(0x201, 1, 56, false), Ok(56));
        assert_eq!(loader_table_request(0x201, 1, 64, false), Ok(56));
        assert_eq!(loader_table_request(0x201, 1, 24, false), Ok(24));
        assert_eq!(
            loader_table_request(0x201, 1, 56, true),
            Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
        );
        assert_eq!(
            loader_table_request(0x201, 1, 0, false),
            Err(HSA_STATUS_ERROR_INVALID_ARGUMENT)
        );
        assert_eq!(
            loader_table_request(0x201, 2, 56, false),
            Err(HSA_STATUS_ERROR)
        );
        assert_eq!(
            loader_table_request(0x0, 1, 56, false),
            Err(HSA_STATUS_ERROR)
        );
        // An older runtime copies only the table it knows.
        serve(48);
        assert_eq!(loader_table_request(0x201, 1, 56, false), Ok(48));
        serve(0);
        assert_eq!(
            loader_table_request(0x201, 1, 56, false),
            Err(HSA_STATUS_ERROR)
        );
        serve(56);
    }
}
