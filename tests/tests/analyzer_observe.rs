//! An observe-mode run (the emulator's rocprofv3-like client owns replay, the tool only watches):
//! import, join the SDK log, and check the report against the emulator's ground truth.

use serde_json::Value;

#[test]
fn observe_mode_windows_match_the_truth() {
    let emu = krphase_tests::run_logged(
        "analyzer-observe",
        &[
            "saxpy",
            "--elements",
            "65536",
            "--iterations",
            "6",
            "--driver-passes",
            "3",
        ],
        &[],
    );
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let joined = emu.krphase(&["import-log".as_ref(), emu.log.as_os_str()]);
    assert!(joined.contains("joined to run 1"), "{joined}");
    let r = &emu.report_run();
    let truth = krphase_tests::read_truth(&emu.truth);
    let replayed: Vec<&Value> = truth
        .iter()
        .filter(|t| t["type"] == "window" && t["outcome"] == "replayed")
        .collect();
    assert_eq!(r["mode"], "observe");
    assert_eq!(
        r["windows"]["replayed"].as_u64().unwrap(),
        replayed.len() as u64
    );
    assert_eq!(r["passes_per_window"].as_f64(), Some(3.0));
    let restores = krphase_tests::report_phase(r, "restore");
    assert_eq!(restores["samples"].as_u64().unwrap(), replayed.len() as u64);
    // The snapshot comes from the joined log; bytes agree with the truth.
    let bytes: i64 = replayed
        .iter()
        .map(|t| t["snapshot"]["bytes"].as_i64().unwrap())
        .sum();
    assert_eq!(r["bytes"]["snapshot_bytes_total"].as_i64().unwrap(), bytes);
    assert!(r["log_joined"].as_bool().unwrap());
}
