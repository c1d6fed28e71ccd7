//! Feature `bindgen` only: generate bindings from the installed rocprofiler-sdk headers
//! (`sdk_headers`) and HSA headers (`hsa_headers`), and files of compile-time assertions that our
//! `#[repr(C)]` declarations and constants match them. Without the feature this does nothing.
//! See docs/bindgen.md.

#[cfg(feature = "bindgen")]
mod hsa_headers;
#[cfg(feature = "bindgen")]
mod sdk_headers;
#[cfg(feature = "bindgen")]
mod shared;

fn main() {
    #[cfg(feature = "bindgen")]
    {
        let sdk_include = sdk_headers::run();
        hsa_headers::run(&sdk_include);
    }
}
