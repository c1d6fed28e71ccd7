//! The SDK log parser (`krphase import-log`) over arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    krphase_analyzer::import::sdk_log::parse_log(data).expect("reading from memory cannot fail");
});
