//! `Sdk::load` search order, in one sequential test: each step loads a fake SDK into this
//! process for good, so the steps must run in this order and in their own test binary.

mod support;

use krphase_ffi::sdk::{SDK_SONAME, required_symbols};
use krphase_ffi::{LoadError, Sdk, SdkSource};
use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
use std::ffi::OsStr;
use support::build_fake;

#[test]
fn load_searches_global_scope_then_soname_then_register_library() {
    // No SDK in a plain test process: every required symbol is named.
    let all_missing = LoadError::MissingSymbols(required_symbols());
    assert_eq!(
        Sdk::load_with_register_library(None).unwrap_err(),
        all_missing
    );
    assert_eq!(Sdk::load().unwrap_err(), all_missing);
    let msg = all_missing.to_string();
    for name in required_symbols() {
        assert!(msg.contains(name), "{msg} names {name}");
    }

    // $ROCPROFILER_REGISTER_LIBRARY naming a library that is not loaded: never loaded by us.
    let by_path = build_fake("by-path", &[], None);
    let env = Some(by_path.as_os_str());
    assert_eq!(
        Sdk::load_with_register_library(env).unwrap_err(),
        all_missing
    );
    assert_eq!(
        Sdk::load_with_register_library(Some(OsStr::new(""))).unwrap_err(),
        all_missing
    );

    // Once loaded privately (RTLD_LOCAL), the path finds it; without the path nothing does.
    // SAFETY: the test's own C file; empty initialisers.
    let _local = unsafe { libloading::Library::new(&by_path) }.unwrap();
    let sdk = Sdk::load_with_register_library(env).unwrap();
    assert_eq!(
        sdk.source(),
        &SdkSource::RegisterLibrary(by_path.to_string_lossy().into_owned())
    );
    assert_eq!(
        Sdk::load_with_register_library(None).unwrap_err(),
        all_missing
    );

    // A private copy carrying the SDK's soname is found by that name.
    let with_soname = build_fake("soname", &[], Some(SDK_SONAME));
    // SAFETY: as above.
    let _soname = unsafe { libloading::Library::new(&with_soname) }.unwrap();
    let sdk = Sdk::load_with_register_library(None).unwrap();
    assert_eq!(sdk.source(), &SdkSource::Soname);
    assert!(sdk.find_kind("KERNEL_REPLAY").unwrap().is_some());

    // A copy in the global scope (as LD_PRELOAD or rocprofiler-register's RTLD_GLOBAL) wins.
    let global = build_fake("global", &[], None);
    // SAFETY: as above.
    let _global = unsafe { Library::open(Some(&global), RTLD_NOW | RTLD_GLOBAL) }.unwrap();
    let sdk = Sdk::load().unwrap();
    assert_eq!(sdk.source(), &SdkSource::GlobalScope);
    assert!(sdk.timestamp().unwrap() > 0);
}
