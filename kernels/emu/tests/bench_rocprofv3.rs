//! The `krphase-emu rocprofv3` stand-in against the emulator's ground truth: application replay
//! runs the app once per group under `pass_<n>`, kernel replay drives G passes per dispatch in one
//! run, the include regex reaches the driver, input-file groups rotate, and the beta flag alone
//! stays on application replay.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use krphase_tests::{artifacts, output_text, path_with_artifacts, read_truth, scratch_dir};

const APP: [&str; 5] = ["run", "stream", "--elements", "4096", "--iterations"];

/// Kernel replay as rocprofv3 gates it: the mode and the beta flag.
const KERNEL_REPLAY: [&str; 3] = ["--replay-mode", "kernel", "--kernel-replay-beta-enabled"];

/// Runs the stand-in with `args` then `-- krphase-emu run stream ...`, truth into `truth`.
fn rocprofv3(dir: &Path, args: &[&str], truth: &Path) -> Output {
    let a = artifacts();
    Command::new(&a.emu)
        .current_dir(dir)
        .arg("rocprofv3")
        .args(args)
        .arg("--")
        .arg(&a.emu)
        .args(APP)
        .arg("2")
        .env("PATH", path_with_artifacts())
        .env("KRPHASE_EMU_TRUTH", truth)
        .env_remove("ROCP_TOOL_LIBRARIES")
        .env_remove("KRPHASE_EMU_DRIVER_PASSES")
        .env_remove("KRPHASE_EMU_DRIVER_FILTER")
        .output()
        .expect("run krphase-emu rocprofv3")
}

/// Runs the stand-in, which must succeed, and returns the ground truth per pid.
fn rocprofv3_ok(dir: &Path, args: &[&str], truth_path: &Path) -> Truth {
    let o = rocprofv3(dir, args, truth_path);
    assert!(o.status.success(), "{}", output_text(&o));
    truth(truth_path)
}

/// Per pid: (result lines, replayed windows, the requested passes of the replayed windows).
type Truth = HashMap<i64, (usize, usize, Vec<i64>)>;

fn truth(path: &Path) -> Truth {
    let mut m = Truth::new();
    for v in read_truth(path) {
        let e = m.entry(v["pid"].as_i64().unwrap()).or_default();
        match v["type"].as_str() {
            Some("result") => e.0 += 1,
            Some("window") if v["outcome"] == "replayed" => {
                e.1 += 1;
                e.2.push(v["requested_passes"].as_i64().unwrap());
            }
            _ => {}
        }
    }
    m
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn several_pmc_groups_run_the_app_once_per_group() {
    let dir = scratch_dir("rv3-app-replay");
    let procs = rocprofv3_ok(
        &dir,
        &[
            "--pmc", "A", "B", "--pmc", "A", "C", "--pmc", "A", "D", "-d", "out", "-o", "r",
        ],
        &dir.join("truth.jsonl"),
    );
    assert_eq!(procs.len(), 3, "one process per group: {procs:?}");
    assert!(
        procs
            .values()
            .all(|(results, replayed, _)| *results == 1 && *replayed == 0)
    );
    for n in 1..=3 {
        let j = json(&dir.join(format!("out/pass_{n}/r_results.json")));
        assert_eq!(j["collection"], "application-replay");
        assert_eq!(j["dispatches"], 10);
        assert_eq!(j["dispatch_groups"][0], serde_json::json!([n - 1]));
    }
}

#[test]
fn kernel_replay_drives_one_pass_per_group_in_one_run() {
    let dir = scratch_dir("rv3-kernel-replay");
    let args = [
        &KERNEL_REPLAY[..],
        &[
            // Real counter names: the stand-in's counter tool resolves them on the agent, and an
            // unknown one is fatal, as in rocprofv3.
            "--pmc",
            "SQ_WAVES",
            "--pmc",
            "GRBM_COUNT",
            "--pmc",
            "SQ_INSTS_VALU",
            "-d",
            "out",
            "--output-format",
            "json",
            "csv",
        ],
    ]
    .concat();
    let procs = rocprofv3_ok(&dir, &args, &dir.join("truth.jsonl"));
    assert_eq!(procs.len(), 1);
    let (results, replayed, passes) = procs.values().next().unwrap();
    assert_eq!((*results, *replayed), (1, 10));
    assert!(passes.iter().all(|p| *p == 3), "{passes:?}");
    // rocprofv3's own JSON layout: one counter record per pass of each dispatch, each with its
    // replay_pass and its group's counter.
    let found: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_results.json"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let j = json(&found[0]);
    let node = &j["rocprofiler-sdk-tool"][0];
    let recs = node["callback_records"]["counter_collection"]
        .as_array()
        .unwrap();
    assert_eq!(recs.len(), 10 * 3);
    let names: std::collections::HashMap<u64, String> = node["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let id = c["id"]["handle"].as_u64().unwrap();
            (id, c["name"].as_str().unwrap().to_string())
        })
        .collect();
    for r in recs {
        let pass = r["replay_pass"].as_u64().unwrap() as usize;
        let id = r["records"][0]["counter_id"]["handle"].as_u64().unwrap();
        assert_eq!(
            names[&id],
            ["SQ_WAVES", "GRBM_COUNT", "SQ_INSTS_VALU"][pass]
        );
    }
    let csv = std::fs::read_to_string(dir.join("out/out_counter_collection.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 10 * 3);
}

#[test]
fn include_regex_reaches_the_driver() {
    let dir = scratch_dir("rv3-filter");
    let with_regex = |regex| {
        [
            &KERNEL_REPLAY[..],
            &[
                "--pmc",
                "SQ_WAVES",
                "--pmc",
                "GRBM_COUNT",
                "--kernel-include-regex",
                regex,
            ],
        ]
        .concat()
    };
    let none = rocprofv3_ok(
        &dir,
        &with_regex("^__no_such_kernel__$"),
        &dir.join("truth.jsonl"),
    );
    assert!(none.values().all(|(_, replayed, _)| *replayed == 0));
    let triad = rocprofv3_ok(
        &dir,
        &with_regex(r"^stream_triad\("),
        &dir.join("truth-triad.jsonl"),
    );
    let replayed: usize = triad.values().map(|(_, r, _)| r).sum();
    assert_eq!(replayed, 2, "one triad per iteration");
}

#[test]
fn input_file_groups_rotate_across_dispatches() {
    let dir = scratch_dir("rv3-rotation");
    let input = dir.join("groups.json");
    std::fs::write(
        &input,
        r#"{"jobs":[{"pmc_groups":[["A"],["B"],["C"]],"pmc_group_interval":1}]}"#,
    )
    .unwrap();
    let input_s = input.display().to_string();
    let procs = rocprofv3_ok(
        &dir,
        &["-i", &input_s, "-d", "out"],
        &dir.join("truth.jsonl"),
    );
    assert_eq!(procs.len(), 1);
    assert!(procs.values().all(|(_, replayed, _)| *replayed == 0));
    let j = json(&dir.join("out/out_results.json"));
    assert_eq!(j["collection"], "multiplexed");
    let groups: Vec<i64> = j["dispatch_groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g[0].as_i64().unwrap())
        .collect();
    assert_eq!(groups, vec![0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
}

#[test]
fn beta_flag_alone_stays_on_application_replay() {
    let dir = scratch_dir("rv3-beta-only");
    let t = dir.join("truth.jsonl");
    let beta_only = [
        "--kernel-replay-beta-enabled",
        "--pmc",
        "A",
        "--pmc",
        "B",
        "-d",
        "out",
    ];
    let o = rocprofv3(&dir, &beta_only, &t);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not enable kernel replay"));
    let procs = truth(&t);
    assert_eq!(procs.len(), 2);
    assert!(procs.values().all(|(_, replayed, _)| *replayed == 0));
    let refused = rocprofv3(&dir, &["--replay-mode", "kernel", "--pmc", "A"], &t);
    assert_eq!(refused.status.code(), Some(1), "{}", output_text(&refused));
    let bad = rocprofv3(&dir, &["--bogus"], &t);
    assert_eq!(bad.status.code(), Some(2), "{}", output_text(&bad));
}

/// The kernels the stand-in's tool replays in the names workload under `args`.
fn replayed_names(dir: &Path, case: &str, args: &[&str]) -> std::collections::BTreeSet<String> {
    let a = artifacts();
    let truth = dir.join(format!("truth-{case}.jsonl"));
    let o = Command::new(&a.emu)
        .current_dir(dir)
        .arg("rocprofv3")
        .args(KERNEL_REPLAY)
        .args(["--pmc", "SQ_WAVES", "--pmc", "GRBM_COUNT"])
        .args(args)
        .arg("--")
        .arg(&a.emu)
        .args(["run", "names", "--elements", "64", "--iterations", "1"])
        .env("PATH", path_with_artifacts())
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env_remove("ROCP_TOOL_LIBRARIES")
        .env_remove("KRPHASE_EMU_DRIVER_PASSES")
        .env_remove("KRPHASE_EMU_DRIVER_FILTER")
        .output()
        .expect("run krphase-emu rocprofv3");
    assert!(o.status.success(), "{}", output_text(&o));
    read_truth(&truth)
        .iter()
        .filter(|v| v["type"] == "window" && v["outcome"] == "replayed")
        .map(|v| v["kernel"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_include_regex_sees_the_name_form_rocprofv3_chose() {
    let dir = scratch_dir("rocprofv3-name-forms");
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    // Demangled (the default): `void step<…>(…)` is not `^step$`; the truncated name is.
    let regex = ["--kernel-include-regex", "^step$"];
    assert_eq!(replayed_names(&dir, "default", &regex), set(&[]));
    let mut truncated = regex.to_vec();
    truncated.push("--truncate-kernels");
    assert_eq!(
        replayed_names(&dir, "truncated", &truncated),
        set(&["names_step_u64", "names_step_i64"])
    );
    let mangled = ["--mangled-kernels", "--kernel-include-regex", "^_ZN3krp"];
    assert_eq!(
        replayed_names(&dir, "mangled", &mangled),
        set(&["names_saxpy"])
    );
}
