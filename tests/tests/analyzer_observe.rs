//! An observe-mode run (the emulator's rocprofv3-like client owns replay, the tool only watches):
//! import, join the SDK log, and check the report against the emulator's ground truth.

use std::process::Command;

use serde_json::Value;

#[test]
fn observe_mode_windows_match_the_truth() {
    let a = krphase_tests::artifacts();
    let dir = krphase_tests::scratch_dir("analyzer-observe");
    let (krp, log, truth) = (
        dir.join("run.krp"),
        dir.join("stderr.log"),
        dir.join("truth.jsonl"),
    );
    let o = Command::new(&a.emu)
        .args([
            "run",
            "saxpy",
            "--elements",
            "65536",
            "--iterations",
            "6",
            "--driver-passes",
            "3",
        ])
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", &krp)
        .env("ROCPROFILER_LOG_LEVEL", "info")
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env_remove("KRPHASE_MODE")
        .stderr(std::fs::File::create(&log).unwrap())
        .output()
        .expect("run the emulator");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let db = dir.join("k.db");
    let run = |args: &[&std::ffi::OsStr]| {
        let o = krphase_tests::krphase_db(&db, args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    run(&["import".as_ref(), krp.as_os_str()]);
    let joined = run(&["import-log".as_ref(), log.as_os_str()]);
    assert!(joined.contains("joined to run 1"), "{joined}");
    let report: Value = serde_json::from_str(&run(&[
        "report".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
    ]))
    .unwrap();
    let r = &report["runs"][0];
    let truth = krphase_tests::read_truth(&truth);
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
    let restores = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == "restore")
        .unwrap();
    assert_eq!(restores["samples"].as_u64().unwrap(), replayed.len() as u64);
    // The snapshot comes from the joined log; bytes agree with the truth.
    let bytes: i64 = replayed
        .iter()
        .map(|t| t["snapshot"]["bytes"].as_i64().unwrap())
        .sum();
    assert_eq!(r["bytes"]["snapshot_bytes_total"].as_i64().unwrap(), bytes);
    assert!(r["log_joined"].as_bool().unwrap());
}
