//! Pass fidelity end to end: the emulator's pass models (`--pass-model`, its `pass_model` truth
//! lines the ground truth) run under libkrphase.so, imported, and `krphase report` and
//! `krphase compare` asked what they see. The report's ratio of the later passes to pass 0 must
//! match the same ratio computed from the truth's `time_factor`s (median over windows of each
//! window's median later/pass-0 factor) within [`TOLERANCE`]; each injected model must be
//! flagged, the models off and the warm-up pass not; reference counters and the verification
//! pass repeat exactly on a deterministic kernel; rocprofv3's JSON (through the emulator's
//! stand-in, the tool observing) shows the pass-to-pass counter differences.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use krphase_tests::{LoggedRun, artifacts, output_text, read_truth, run_logged, scratch_dir};

/// How far the report's median ratio may be from the truth's: pacing on a loaded two-core
/// machine only adds time, which pulls a ratio toward 1.
const TOLERANCE: f64 = 0.10;

/// The emulator's arguments for a paced run of `windows` saxpy windows under `model`.
fn paced(model: &str, iterations: &str) -> Vec<String> {
    [
        "saxpy",
        "--elements",
        "16384",
        "--iterations",
        iterations,
        "--sdk-build",
        "baseline",
        "--device-gbps",
        "0.5",
        "--restore-order",
        "device",
        "--pass-model",
        model,
    ]
    .map(String::from)
    .to_vec()
}

fn run(name: &str, args: &[String], env: &[(&str, &str)]) -> (LoggedRun, Value) {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let emu = run_logged(name, &a, env);
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let report: Value = serde_json::from_str(&emu.krphase(&["report", "--format", "json"]))
        .expect("the report is JSON");
    (emu, report)
}

/// The one kernel of a report's fidelity section.
fn kernel(report: &Value) -> &Value {
    let ks = report["runs"][0]["fidelity"]["kernels"]
        .as_array()
        .expect("a fidelity section");
    assert_eq!(ks.len(), 1, "{ks:?}");
    &ks[0]
}

/// The truth's ratio, computed as the detector computes the report's: each window's median of
/// time_factor(pass i) / time_factor(first counted pass), then the median over windows.
fn truth_ratio(truth: &Path, first_counted: u64) -> f64 {
    let mut by: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
    for t in read_truth(truth)
        .iter()
        .filter(|t| t["type"] == "pass_model")
    {
        by.entry(t["dispatch_id"].as_u64().unwrap())
            .or_default()
            .insert(
                t["pass"].as_u64().unwrap(),
                t["time_factor"].as_f64().unwrap(),
            );
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let per: Vec<f64> = by
        .values()
        .map(|p| {
            let r = p[&first_counted];
            med(p.range(first_counted + 1..).map(|(_, f)| f / r).collect())
        })
        .collect();
    assert!(!per.is_empty(), "the truth has pass_model lines");
    med(per)
}

fn gpu_ratio(k: &Value) -> f64 {
    k["gpu"]["ratio"]["estimate"].as_f64().expect("a GPU ratio")
}

fn findings(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "pass_fidelity")
        .map(|f| f["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_warm_cache_is_flagged_and_the_warm_up_pass_brings_it_within_the_threshold() {
    let refs = ("KRPHASE_PMC_REFERENCE", "TCC_HIT,TCC_MISS,GRBM_GUI_ACTIVE");
    let (emu, report) = run(
        "fidelity-warm",
        &paced("warm-cache", "8"),
        &[("KRPHASE_PASSES", "3"), refs],
    );
    let k = kernel(&report);
    let want = truth_ratio(&emu.truth, 0);
    assert!(
        (want - 0.70).abs() < 1e-9,
        "the model's 30 % warmth: {want}"
    );
    let got = gpu_ratio(k);
    assert!(
        (got - want).abs() < TOLERANCE,
        "report {got} vs truth {want}"
    );
    assert_eq!(k["flagged"][1], "shift", "{k}");
    assert_eq!(k["gpu"]["ratio"]["n"], 8);
    let f = findings(&report);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].contains("KRPHASE_WARMUP_PASS=1") && !f[0].contains("flush"),
        "{}",
        f[0]
    );
    // The cache counters follow the warmth: TCC_HIT shifts up, past the threshold.
    let hit = k["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "TCC_HIT")
        .expect("TCC_HIT compared across passes");
    assert_eq!(hit["flag"], "shift");

    // The same run with a warm-up pass: every counted pass starts warm, alike within the
    // threshold, and the report says what the warm-up absorbed and what it cost.
    let (emu, report) = run(
        "fidelity-warm-up",
        &paced("warm-cache", "8"),
        &[("KRPHASE_PASSES", "3"), ("KRPHASE_WARMUP_PASS", "1"), refs],
    );
    let k = kernel(&report);
    let want = truth_ratio(&emu.truth, 1);
    assert!((want - 1.0).abs() < 1e-9, "{want}");
    let got = gpu_ratio(k);
    assert!(
        (got - want).abs() < TOLERANCE,
        "report {got} vs truth {want}"
    );
    assert!(k["flagged"].is_null(), "{k}");
    assert!(findings(&report).is_empty());
    for c in k["counters"].as_array().unwrap() {
        assert_eq!(c["exact"], true, "{c}");
    }
    let absorbed = k["warmup"]["ratio"]["estimate"].as_f64().unwrap();
    assert!((absorbed - 0.70).abs() < TOLERANCE, "{absorbed}");
    let f = &report["runs"][0]["fidelity"];
    assert_eq!(f["extra"]["passes"], 8, "one warm-up pass per window");
    assert!(f["extra"]["gpu_ns"].as_i64().unwrap() > 0);
    let text = emu.krphase(&["report"]);
    assert!(
        text.contains("cost of a warm-up pass in every window"),
        "{text}"
    );
    assert!(text.contains("pass fidelity"), "{text}");
}

#[test]
fn an_incomplete_restore_is_flagged_with_the_ratio_the_truth_gives() {
    let (emu, report) = run(
        "fidelity-incomplete",
        &paced("incomplete-restore", "8"),
        &[("KRPHASE_PASSES", "3")],
    );
    let k = kernel(&report);
    let want = truth_ratio(&emu.truth, 0);
    assert!(
        (want - 1.875).abs() < 1e-9,
        "median of 1.5 and 2.25: {want}"
    );
    let got = gpu_ratio(k);
    assert!(
        (got - want).abs() < TOLERANCE * want,
        "report {got} vs truth {want}"
    );
    assert_eq!(k["flagged"][1], "shift");
    assert_eq!(findings(&report).len(), 1);
}

const OPTIONS: [(&str, &str); 3] = [
    ("KRPHASE_PMC", "SQ_WAVES;SQ_INSTS_VALU"),
    ("KRPHASE_PMC_REFERENCE", "TCC_HIT,GRBM_GUI_ACTIVE"),
    ("KRPHASE_VERIFY_PASS", "1"),
];

fn counter<'a>(k: &'a Value, name: &str) -> &'a Value {
    k["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{name} compared across passes: {k}"))
}

#[test]
fn a_non_deterministic_kernel_strays_and_the_models_off_repeat_exactly() {
    let (emu, report) = run(
        "fidelity-nondeterministic",
        &paced("nondeterministic", "8"),
        &OPTIONS,
    );
    let k = kernel(&report);
    let want = truth_ratio(&emu.truth, 0);
    let got = gpu_ratio(k);
    assert!(
        (got - want).abs() < TOLERANCE,
        "report {got} vs truth {want}"
    );
    // Counted by group 0 and again by the verification pass: waves are deterministic.
    assert_eq!(counter(k, "SQ_WAVES")["exact"], true);
    let cycles = counter(k, "GRBM_GUI_ACTIVE");
    assert!(!cycles["flag"].is_null(), "{cycles}");
    assert!(!k["flagged"].is_null(), "{k}");
    assert_eq!(findings(&report).len(), 1);

    // The models off: every counter repeats exactly, the passes are alike, nothing flagged.
    let (_, report) = run("fidelity-uniform", &paced("uniform", "8"), &OPTIONS);
    let k = kernel(&report);
    for name in ["SQ_WAVES", "TCC_HIT", "GRBM_GUI_ACTIVE"] {
        let c = counter(k, name);
        assert_eq!(c["exact"], true, "{c}");
        assert_eq!(c["max_rel_diff"], 0.0);
    }
    assert!(k["flagged"].is_null(), "{k}");
    assert!((gpu_ratio(k) - 1.0).abs() < TOLERANCE);
    assert!(findings(&report).is_empty());
    let plan = &report["runs"][0]["fidelity"]["plan"];
    assert_eq!(plan["verify"], true);
    assert_eq!(report["runs"][0]["fidelity"]["extra"]["passes"], 8);
}

/// rocprofv3 (the emulator's stand-in) with kernel replay and JSON output over a warm-cache
/// saxpy, libkrphase.so observing; GRBM_GUI_ACTIVE in both groups.
#[test]
fn rocprofv3_json_shows_the_pass_to_pass_counter_differences_of_an_observed_run() {
    let a = artifacts();
    let dir = scratch_dir("fidelity-rocprofv3-json");
    let mut emu_args = paced("warm-cache", "8");
    emu_args.insert(0, "run".into());
    let o = Command::new(&a.emu)
        .current_dir(&dir)
        .arg("rocprofv3")
        .args(["--replay-mode", "kernel", "--kernel-replay-beta-enabled"])
        .args(["--pmc", "SQ_WAVES", "GRBM_GUI_ACTIVE"])
        .args(["--pmc", "SQ_INSTS_VALU", "GRBM_GUI_ACTIVE"])
        .args(["-d", "out", "-o", "run", "--output-format", "json", "--"])
        .arg(&a.emu)
        .args(&emu_args)
        .env("PATH", krphase_tests::path_with_artifacts())
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_MODE", "observe")
        .env("KRPHASE_EMU_TRUTH", dir.join("truth.jsonl"))
        .env_remove("KRPHASE_OUTPUT")
        .env_remove("KRPHASE_EMU_DRIVER_PASSES")
        .env_remove("KRPHASE_EMU_DRIVER_FILTER")
        .output()
        .expect("run krphase-emu rocprofv3");
    assert!(o.status.success(), "{}", output_text(&o));
    let out = dir.join("out");
    let json = out.join("run_results.json");
    assert!(json.exists());
    assert!(!out.join(".rocprofv3-rocpd-buffer.json").exists());
    let db = dir.join("k.db");
    // Malformed JSON first: one line, nothing created.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"rocprofiler-sdk-tool\": [ {\"metadata\": ").unwrap();
    let krp: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "krp"))
        .collect();
    krphase_tests::krphase_db_ok(&db, &["import".as_ref(), krp[0].as_os_str()]);
    let before = std::fs::read(&db).unwrap();
    let o = krphase_tests::krphase_db(&db, &["import".as_ref(), bad.as_os_str()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not valid JSON") && err.contains("nothing stored"),
        "{err}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing changed");
    let line = krphase_tests::krphase_db_ok(&db, &["import".as_ref(), json.as_os_str()]);
    assert!(line.contains("rocprofv3 JSON"), "{line}");
    assert!(line.contains("(16 on its windows)"), "{line}");
    let report: Value = serde_json::from_str(&krphase_tests::krphase_db_ok(
        &db,
        &["report", "--format", "json"],
    ))
    .unwrap();
    let k = kernel(&report);
    let cycles = counter(k, "GRBM_GUI_ACTIVE");
    assert_eq!(cycles["basis"], "rocprofv3_json");
    assert_eq!(cycles["ratio"]["n"], 8);
    let r = cycles["ratio"]["estimate"].as_f64().unwrap();
    // Cycles follow the 30 % warmth (rounded to whole cycles by the counter model).
    assert!((r - 0.70).abs() < 1e-3, "{r}");
    assert_eq!(cycles["flag"], "shift");
    let text = krphase_tests::krphase_db_ok(&db, &["report"]);
    assert!(text.contains("GRBM_GUI_ACTIVE [J]"), "{text}");
}

#[test]
fn compare_gives_a_build_that_restores_less_a_fidelity_verdict() {
    let labelled = |name: &str, model: &str, label: &str, db: &Path| {
        let (emu, _) = run(name, &paced(model, "6"), &[("KRPHASE_PASSES", "2")]);
        krphase_tests::krphase_db_ok(
            db,
            &[
                "import".as_ref(),
                emu.krp.as_os_str(),
                "--label".as_ref(),
                label.as_ref(),
            ],
        );
    };
    let db = scratch_dir("fidelity-compare").join("k.db");
    for i in 0..3 {
        labelled(&format!("fidelity-cmp-a{i}"), "uniform", "restores", &db);
        labelled(
            &format!("fidelity-cmp-b{i}"),
            "incomplete-restore",
            "leaves-out",
            &db,
        );
    }
    let c: Value = serde_json::from_str(&krphase_tests::krphase_db_ok(
        &db,
        &["compare", "restores", "leaves-out", "--format", "json"],
    ))
    .unwrap();
    let f = c["fidelity"].as_array().expect("a fidelity section");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["verdict"], "differ_more", "{}", f[0]);
    assert_eq!(f[0]["a"].as_array().unwrap().len(), 3);
    // Markdown, whose table cells never wrap.
    let text = krphase_tests::krphase_db_ok(
        &db,
        &["compare", "restores", "leaves-out", "--format", "markdown"],
    );
    assert!(text.contains("fidelity: B's passes differ more"), "{text}");
}

/// One run holding a kernel the model warms and kernels it leaves alike
/// (`--pass-model-kernels`): only the first is flagged.
#[test]
fn in_one_run_only_the_kernel_the_model_warms_is_flagged() {
    let args: Vec<String> = [
        "stream",
        "--elements",
        "16384",
        "--iterations",
        "6",
        "--sdk-build",
        "baseline",
        "--device-gbps",
        "0.5",
        "--restore-order",
        "device",
        "--pass-model",
        "warm-cache",
        "--pass-model-kernels",
        "stream_triad",
    ]
    .map(String::from)
    .to_vec();
    let (_, report) = run("fidelity-one-kernel", &args, &[("KRPHASE_PASSES", "2")]);
    let ks = report["runs"][0]["fidelity"]["kernels"].as_array().unwrap();
    assert!(ks.len() >= 2, "{ks:?}");
    for k in ks {
        let name = k["kernel"].as_str().unwrap();
        let r = gpu_ratio(k);
        if name.contains("triad") {
            assert_eq!(k["flagged"][1], "shift", "{name}: {k}");
            assert!((r - 0.70).abs() < TOLERANCE, "{name}: {r}");
        } else {
            assert!(k["flagged"].is_null(), "{name}: {k}");
            assert!((r - 1.0).abs() < TOLERANCE, "{name}: {r}");
        }
    }
    let f = findings(&report);
    assert_eq!(f.len(), 1);
    assert!(
        f[0].contains("in 1 kernel(s)") && f[0].contains("triad"),
        "{}",
        f[0]
    );
}
