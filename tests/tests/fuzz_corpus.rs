//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the same library entry
//! points the fuzz targets in `fuzz/fuzz_targets/` call, so every input a campaign found
//! interesting, crashes fixed since among them, is checked in every `cargo test`: no panic, and
//! every `.krp` refusal is one line naming the offset.

use std::fs;
use std::path::{Path, PathBuf};

use krphase_analyzer::import::{measurement_csv, sdk_log};
use krphase_windows::decode;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= 5,
        "{}: a corpus of {} files is too small to be the committed one",
        dir.display(),
        files.len()
    );
    files
        .into_iter()
        .map(|p| {
            let b = fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, b)
        })
        .collect()
}

/// A `.krp` refusal as the analyzer prints it: one line, starting with the offset.
fn assert_clear(p: &Path, e: &krphase_format::ReadError) {
    let msg = e.to_string();
    assert!(
        msg.starts_with("offset ") && !msg.contains('\n') && msg.len() < 300,
        "{}: unclear error {msg:?}",
        p.display()
    );
}

#[test]
fn krp_file_corpus_decodes_or_is_refused_clearly() {
    let (mut ok, mut refused) = (0, 0);
    for (p, b) in corpus("krp_file") {
        for input in [b.clone(), decode::with_checksums_fixed(&b)] {
            match decode::decode_file(&input) {
                Ok(_) => ok += 1,
                Err(e) => {
                    assert_clear(&p, &e);
                    refused += 1;
                }
            }
        }
    }
    // The corpus holds real files (the golden file among them) and broken ones.
    assert!(ok > 0 && refused > 0, "{ok} decoded, {refused} refused");
}

#[test]
fn krp_records_corpus_reconstructs() {
    let mut outputs = 0;
    for (_, b) in corpus("krp_records") {
        outputs += decode::reconstruct_records(&b).outputs;
    }
    assert!(outputs > 0, "the corpus holds real windows");
}

#[test]
fn sdk_log_corpus_parses() {
    let mut windows = 0;
    for (p, b) in corpus("sdk_log") {
        let parsed = sdk_log::parse_log(&b[..]).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        windows += parsed.records.len();
    }
    assert!(windows > 0, "the corpus holds real outcome and phase lines");
}

#[test]
fn harness_csv_corpus_reads_or_is_refused_with_a_line() {
    let (mut rows, mut refused) = (0, 0);
    for (p, b) in corpus("harness_csv") {
        match measurement_csv::read_csv_from(&b[..], "input") {
            Ok(r) => {
                for row in &r {
                    row.output_dirs();
                }
                rows += r.len();
            }
            Err(e) => {
                let msg = format!("{e:#}");
                assert!(msg.starts_with("input: "), "{}: {msg:?}", p.display());
                refused += 1;
            }
        }
    }
    assert!(
        rows > 0 && refused > 0,
        "{rows} rows read, {refused} refused"
    );
}

/// The fuzzer's one out-of-memory input (40 PASS ENTER records with pass index 2^20 − 1): the
/// reconstruction limit refuses it instead of allocating passes (records fed without a file
/// have no offset; from a file the error names it).
#[test]
fn the_pass_index_out_of_memory_input_is_refused_by_the_limit() {
    let (_, b) = corpus("krp_records")
        .into_iter()
        .find(|(p, _)| p.ends_with("regression-oom-pass-index"))
        .expect("the regression input is in the corpus");
    let d = decode::reconstruct_records(&b);
    let why = d.refused.expect("refused");
    assert!(
        why.contains("more than 65536 passes") && why.contains("reconstruction limit"),
        "{why}"
    );
}
