//! Window reconstruction fed with arbitrary records (the inside of an EVENTS block, without
//! the checksums that would hide it from the fuzzer).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    krphase_windows::decode::reconstruct_records(data);
});
