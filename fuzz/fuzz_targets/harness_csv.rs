//! replay_perf.py's measurement CSV reader (`krphase import-harness`) over arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(rows) = krphase_analyzer::import::measurement_csv::read_csv_from(data, "input") {
        for r in &rows {
            r.output_dirs();
        }
    }
});
