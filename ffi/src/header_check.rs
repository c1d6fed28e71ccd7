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
