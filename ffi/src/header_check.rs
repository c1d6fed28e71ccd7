//! Compile-time comparison of our declarations with the installed SDK headers and HSA headers
//! (feature `bindgen`). The build script (`build/`) generates the included files; a mismatch
//! fails the build at the `assert!` that names the type and field. See docs/bindgen.md.

/// Bindings generated from the installed rocprofiler-sdk headers.
#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code
)]
#[allow(clippy::all, clippy::pedantic)]
pub mod sys {
    include!(concat!(env!("OUT_DIR"), "/rocprofiler_sys.rs"));
}

include!(concat!(env!("OUT_DIR"), "/layout_asserts.rs"));

/// Bindings generated from the installed HSA headers (empty when none were found).
#[allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    dead_code
)]
#[allow(clippy::all, clippy::pedantic)]
pub mod hsa_sys {
    include!(concat!(env!("OUT_DIR"), "/hsa_sys.rs"));
}

include!(concat!(env!("OUT_DIR"), "/hsa_asserts.rs"));

/// Checks what the build found against what the caller says the headers are
/// (`KRPHASE_EXPECT_HEADER_LAYOUT=A|B`, `KRPHASE_EXPECT_HEADER_PIPE_ID=0|1`,
/// `KRPHASE_EXPECT_HSA_INCLUDE=DIR`, read at compile time; unset means "not checked"), so the
/// self-checks in docs/bindgen.md can fail: an HSA check that found no headers compared nothing.
#[cfg(test)]
mod tests {
    #[test]
    fn the_headers_are_what_the_caller_says() {
        if let Some(want) = option_env!("KRPHASE_EXPECT_HEADER_LAYOUT") {
            let got = super::HEADER_PAYLOAD_LAYOUT.map(|l| format!("{l:?}"));
            assert_eq!(got.as_deref(), Some(want), "payload layout of the headers");
        }
        if let Some(want) = option_env!("KRPHASE_EXPECT_HEADER_PIPE_ID") {
            assert_eq!(
                super::HEADER_DISPATCH_PIPE_ID,
                want == "1",
                "pipe_id in the headers"
            );
        }
    }

    #[test]
    fn the_hsa_headers_are_where_the_caller_says_and_were_compared() {
        let Some(want) = option_env!("KRPHASE_EXPECT_HSA_INCLUDE") else {
            return;
        };
        assert_eq!(super::HEADER_HSA_INCLUDE, Some(want), "HSA headers read");
        for t in [
            "hsa_ven_amd_loader_1_00_pfn_t",
            "hsa_ven_amd_loader_1_01_pfn_t",
            "hsa_ven_amd_loader_1_02_pfn_t",
            "hsa_ven_amd_loader_1_03_pfn_t",
            "hsa_amd_pointer_info_t",
            "hsa_executable_symbol_t",
            "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS",
            "HSA_SYMBOL_KIND_VARIABLE",
            "HSA_EXTENSION_AMD_LOADER",
            "HSA_STATUS_ERROR_NOT_INITIALIZED",
        ] {
            assert!(
                super::HEADER_HSA_CHECKED.contains(&t),
                "{t} not compared: {:?}",
                super::HEADER_HSA_CHECKED
            );
        }
    }
}
