//! The dispatch counting service end to end, through the C ABI: krphase's drive mode with
//! `KRPHASE_PMC` (values read back from the database and the Perfetto export), and observe mode
//! with the rocprofv3 stand-in's driver client collecting (values from the file it writes). In
//! both: exactly one record per executed pass, with the values of the emulator's model as its
//! ground truth states them. Plus `KRPHASE_PMC`'s refusals, each one line, the run going on.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// (dispatch id, pass) → counter name → value.
type PerPass = BTreeMap<(u64, u64), BTreeMap<String, f64>>;

/// The emulator's `counter_record` truth lines: one per record callback it delivered.
fn truth_records(truth: &Path) -> (usize, PerPass) {
    let lines: Vec<Value> = krphase_tests::read_truth(truth)
        .into_iter()
        .filter(|t| t["type"] == "counter_record")
        .collect();
    let mut m = PerPass::new();
    for t in &lines {
        let key = (
            t["dispatch_id"].as_u64().unwrap(),
            t["pass"].as_u64().expect("a replayed pass"),
        );
        let e = m.entry(key).or_default();
        for c in t["counters"].as_array().unwrap() {
            e.insert(
                c["name"].as_str().unwrap().into(),
                c["value"].as_f64().unwrap(),
            );
        }
    }
    (lines.len(), m)
}

/// Every (dispatch, pass) of the replayed windows, each exactly once.
fn all_passes(windows: &[(u64, u64)]) -> Vec<(u64, u64)> {
    windows
        .iter()
        .flat_map(|&(d, n)| (0..n).map(move |p| (d, p)))
        .collect()
}

/// The counter rows of the run's database, by (dispatch, pass); also the number of rows.
fn db_counters(db: &Path) -> (usize, PerPass) {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT k.dispatch_id, k.pass_index, k.name, k.value, k.window_id IS NOT NULL
             FROM krphase_counter k",
        )
        .unwrap();
    let rows: Vec<(i64, i64, String, f64, bool)> = st
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut m = PerPass::new();
    for (d, p, name, v, windowed) in &rows {
        assert!(windowed, "every value belongs to a window");
        let prev = m
            .entry((*d as u64, *p as u64))
            .or_default()
            .insert(name.clone(), *v);
        assert!(prev.is_none(), "one value per counter and pass");
    }
    (rows.len(), m)
}

#[test]
fn drive_mode_collects_one_group_per_pass_into_the_database() {
    let emu = krphase_tests::run_logged(
        "counting-drive",
        &["saxpy", "--elements", "8192", "--iterations", "4"],
        &[(
            "KRPHASE_PMC",
            "SQ_WAVES GRBM_COUNT;SQ_INSTS_VALU,SQ_BUSY_CYCLES; GRBM_GUI_ACTIVE",
        )],
    );
    let windows = krphase_tests::executed_passes(&emu.truth);
    assert_eq!(windows.len(), 4);
    assert!(
        windows.iter().all(|w| w.1 == 3),
        "one pass per group: {windows:?}"
    );
    let (deliveries, truth) = truth_records(&emu.truth);
    let passes = all_passes(&windows);
    assert_eq!(
        deliveries,
        passes.len(),
        "one record callback per executed pass"
    );
    assert_eq!(truth.keys().copied().collect::<Vec<_>>(), passes);
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let (rows, got) = db_counters(&emu.db());
    assert_eq!(
        rows,
        4 * 5,
        "each pass its group's counters: 2 + 2 + 1 per window"
    );
    assert_eq!(got, truth, "the database holds the values the SDK reported");
    // The groups: pass i counts group i, with the model's values (8192 items, 256 per group).
    let first = &got[&(windows[0].0, 1)];
    assert_eq!(first["SQ_INSTS_VALU"], 16.0 * 128.0);
    assert_eq!(first["SQ_BUSY_CYCLES"], 4.0 * 8192.0);
    // The report shows them with their basis; the trace puts them on the pass slices.
    let r = emu.report_run();
    let shown = r["counters"].as_array().unwrap();
    assert_eq!(shown.len(), 20);
    assert!(shown.iter().all(|c| c["basis"] == "sdk_counting"));
    let trace = emu.dir.join("t.json");
    emu.krphase(&[
        "export".as_ref(),
        "perfetto".as_ref(),
        "1".as_ref(),
        "--output".as_ref(),
        trace.as_os_str(),
    ]);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let pass_slices: Vec<&Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "pass")
        .collect();
    assert_eq!(pass_slices.len(), passes.len());
    for s in pass_slices {
        assert_eq!(s["args"]["counters_basis"], "sdk_counting", "{s}");
        assert!(
            !s["args"]["counters"].as_object().unwrap().is_empty(),
            "{s}"
        );
    }
}

#[test]
fn an_indefinite_loop_repeats_the_groups() {
    let emu = krphase_tests::run_logged(
        "counting-indefinite",
        &["saxpy", "--elements", "4096", "--iterations", "2"],
        &[
            ("KRPHASE_PMC", "SQ_WAVES;GRBM_COUNT"),
            ("KRPHASE_PASSES", "0"),
            ("KRPHASE_MAX_PASSES", "3"),
        ],
    );
    let windows = krphase_tests::executed_passes(&emu.truth);
    assert!(windows.iter().all(|w| w.1 == 3), "{windows:?}");
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let (_, got) = db_counters(&emu.db());
    assert_eq!(got, truth_records(&emu.truth).1);
    for &(d, _) in &windows {
        let names = |p: u64| got[&(d, p)].keys().cloned().collect::<Vec<_>>();
        assert_eq!(names(0), ["SQ_WAVES"]);
        assert_eq!(names(1), ["GRBM_COUNT"]);
        assert_eq!(names(2), ["SQ_WAVES"], "pass 2 counts group 2 mod 2");
    }
}

/// A bad `KRPHASE_PMC`: one line naming the problem, no counters, the phases still recorded.
fn refused(name: &str, env: &[(&str, &str)], line: &str) {
    let emu = krphase_tests::run_logged(
        name,
        &["saxpy", "--elements", "4096", "--iterations", "2"],
        env,
    );
    let log = std::fs::read_to_string(&emu.log).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("KRPHASE_PMC")).collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains(line), "{}", lines[0]);
    assert!(
        lines[0].ends_with("running without counters"),
        "{}",
        lines[0]
    );
    assert_eq!(truth_records(&emu.truth).0, 0, "nothing counted");
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    assert_eq!(db_counters(&emu.db()).0, 0);
    assert_eq!(
        emu.report_run()["windows"]["replayed"],
        2,
        "the phases go on"
    );
}

#[test]
fn an_unknown_counter_names_the_closest_one() {
    refused(
        "counting-unknown",
        &[("KRPHASE_PMC", "SQ_WAVE;GRBM_COUNT")],
        "counter \"SQ_WAVE\" is not supported on agent 2 (did you mean SQ_WAVES?)",
    );
}

#[test]
fn an_empty_group_and_a_contradicting_pass_count_are_refused() {
    refused(
        "counting-empty",
        &[("KRPHASE_PMC", "SQ_WAVES;;GRBM_COUNT")],
        "group 2 is empty",
    );
    refused(
        "counting-contradiction",
        &[
            ("KRPHASE_PMC", "SQ_WAVES;GRBM_COUNT;SQ_INSTS_VALU"),
            ("KRPHASE_PASSES", "2"),
        ],
        "KRPHASE_PASSES=2, so groups 3 to 3 would never be counted",
    );
}

/// The driver client's record file: one line per record callback.
fn driver_records(path: &Path) -> (usize, PerPass) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut m = PerPass::new();
    let mut n = 0;
    for l in text.lines() {
        n += 1;
        let v: Value = serde_json::from_str(l).unwrap();
        let key = (
            v["dispatch_id"].as_u64().unwrap(),
            v["pass"].as_u64().unwrap(),
        );
        let e = m.entry(key).or_default();
        for (k, x) in v["counters"].as_object().unwrap() {
            e.insert(k.clone(), x.as_f64().unwrap());
        }
    }
    (n, m)
}

const GROUPS: &str = "pmc: SQ_WAVES GRBM_COUNT\npmc: SQ_INSTS_VALU\npmc: GRBM_GUI_ACTIVE";

/// Observe mode: the driver client owns replay and counts; krphase sees its passes.
fn observed(name: &str, extra: &[&str]) {
    let dir = krphase_tests::scratch_dir(&format!("{name}-records"));
    let records = dir.join("driver.jsonl");
    let mut args = vec!["stream", "--elements", "16384", "--iterations", "2"];
    args.extend_from_slice(&["--driver-passes", "3"]);
    args.extend_from_slice(extra);
    let emu = krphase_tests::run_logged(
        name,
        &args,
        &[
            ("ROCPROF_COUNTER_GROUPS", GROUPS),
            ("KRPHASE_EMU_DRIVER_RECORDS", records.to_str().unwrap()),
        ],
    );
    let windows = krphase_tests::executed_passes(&emu.truth);
    assert!(
        !windows.is_empty() && windows.iter().all(|w| w.1 == 3),
        "{windows:?}"
    );
    let (n, got) = driver_records(&records);
    let passes = all_passes(&windows);
    assert_eq!(n, passes.len(), "one record per executed pass");
    assert_eq!(got.keys().copied().collect::<Vec<_>>(), passes);
    assert_eq!(got, truth_records(&emu.truth).1, "the model's values");
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let r = emu.report_run();
    assert_eq!(r["mode"], "observe");
    assert_eq!(
        r["windows"]["replayed"].as_u64().unwrap(),
        windows.len() as u64
    );
    assert_eq!(r["passes_per_window"].as_f64(), Some(3.0));
    assert!(
        r["counters"].as_array().unwrap().is_empty(),
        "krphase only observes"
    );
}

#[test]
fn observe_mode_the_driver_client_counts_one_group_per_pass() {
    observed("counting-observe-last", &[]);
    observed("counting-observe-first", &["--driver-order", "first"]);
}

#[test]
fn the_last_entry_quirk_drops_the_driver_and_the_sdk_finds_it_preloaded() {
    observed("counting-observe-quirk", &["--tool-list-quirk"]);
}

/// The rocprofv3 stand-in adds its counter tool as rocprofv3 adds its own: appended to
/// `ROCP_TOOL_LIBRARIES` (where the SDK's last-entry quirk drops it) and preloaded.
#[test]
fn the_rocprofv3_stand_in_appends_and_preloads_its_counter_tool() {
    let a = krphase_tests::artifacts();
    let dir = krphase_tests::scratch_dir("counting-rocprofv3");
    let (records, truth) = (dir.join("driver.jsonl"), dir.join("truth.jsonl"));
    let o = std::process::Command::new(&a.emu)
        .current_dir(&dir)
        .arg("rocprofv3")
        .args(["--replay-mode", "kernel", "--kernel-replay-beta-enabled"])
        .args(["--pmc", "SQ_WAVES", "GRBM_COUNT", "--pmc", "SQ_INSTS_VALU"])
        .args([
            "-d",
            "out",
            "--",
            "krphase-emu",
            "run",
            "saxpy",
            "--elements",
            "4096",
        ])
        .args(["--iterations", "2", "--tool-list-quirk"])
        .env("PATH", krphase_tests::path_with_artifacts())
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", dir.join("run.krp"))
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env("KRPHASE_EMU_DRIVER_RECORDS", &records)
        .env_remove("KRPHASE_EMU_DRIVER_PASSES")
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run krphase-emu rocprofv3");
    assert!(o.status.success(), "{}", krphase_tests::output_text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("[rocprofiler-sdk-tool] 4 counter records"),
        "{stderr}"
    );
    let windows = krphase_tests::executed_passes(&truth);
    assert_eq!(windows.len(), 2);
    assert!(windows.iter().all(|w| w.1 == 2), "one pass per --pmc group");
    let (n, got) = driver_records(&records);
    assert_eq!(n, 4);
    assert_eq!(got, truth_records(&truth).1);
    assert!(got.values().all(|c| c.len() <= 2));
}
