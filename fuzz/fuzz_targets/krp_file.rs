//! The `.krp` decoder over arbitrary bytes: streaming reader, then window reconstruction; once
//! as given, once with every block's checksum made right so mutations reach the decoders behind it.
#![no_main]

use krphase_windows::decode::{decode_file, with_checksums_fixed};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    for input in [data.to_vec(), with_checksums_fixed(data)] {
        if let Err(e) = decode_file(&input) {
            // Every refusal is one line naming the offset, as the analyzer prints it.
            let msg = e.to_string();
            assert!(
                msg.starts_with("offset ") && !msg.contains('\n') && msg.len() < 300,
                "{msg:?}"
            );
        }
    }
});
