//! Compile-time comparison of our declarations with the installed SDK headers (feature
//! `bindgen`). `build.rs` generates both included files; a mismatch fails the build at the
//! `assert!` that names the type and field. See docs/bindgen.md.

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

/// Checks what the build found against what the caller says the headers are
/// (`KRPHASE_EXPECT_HEADER_LAYOUT=A|B`, `KRPHASE_EXPECT_HEADER_PIPE_ID=0|1`, read at compile
/// time; unset means "not checked"), so the fixture self-check in docs/bindgen.md can fail.
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
}
