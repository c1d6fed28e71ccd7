//! Pass fidelity's emulated causes and drive mode's options, end to end through the C ABI: the
//! emulator's `--pass-model` (its `pass_model` truth lines are the ground truth) seen in the
//! `.krp` that libkrphase.so writes — pass GPU times and counter records — and the passes
//! `KRPHASE_PMC_REFERENCE`, `KRPHASE_WARMUP_PASS` and `KRPHASE_VERIFY_PASS` add, told apart by
//! the pass plan note. Plus the refusal when the reference counters do not fit a group.

use krphase_format::{Event, FileReader, NameSpace};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// (dispatch id, pass) → counter name → value.
type PerPass = BTreeMap<(u64, u64), BTreeMap<String, f64>>;

/// The notes of a phase file, in key order.
fn notes(krp: &Path) -> Vec<String> {
    let mut out = BTreeMap::new();
    for e in FileReader::open(krp).expect("open the phase file") {
        if let Event::Name {
            space: NameSpace::Note,
            key,
            name,
        } = e.expect("every record reads")
        {
            out.insert(key, name);
        }
    }
    out.into_values().collect()
}

/// The counter rows of the run's database by (dispatch, pass).
fn db_counters(db: &Path) -> PerPass {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT dispatch_id, pass_index, name, value FROM krphase_counter")
        .unwrap();
    let mut m = PerPass::new();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, f64>(3)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (d, p, name, v) = row.unwrap();
        m.entry((d as u64, p as u64)).or_default().insert(name, v);
    }
    m
}

/// Each replayed window's pass GPU durations, ns, in pass order, by dispatch id.
fn db_pass_gpu(db: &Path) -> BTreeMap<u64, Vec<f64>> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare(
            "SELECT w.dispatch_id, p.gpu_end - p.gpu_start FROM krphase_pass p
             JOIN krphase_window w ON w.id = p.window_id ORDER BY w.dispatch_id, p.pass_index",
        )
        .unwrap();
    let mut m: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let rows = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .unwrap();
    for row in rows {
        let (d, ns) = row.unwrap();
        m.entry(d as u64).or_default().push(ns as f64);
    }
    m
}

/// The emulator's `pass_model` truth lines by (dispatch, pass).
fn truth_passes(truth: &Path) -> BTreeMap<(u64, u64), Value> {
    krphase_tests::read_truth(truth)
        .into_iter()
        .filter(|t| t["type"] == "pass_model")
        .map(|t| {
            let key = (
                t["dispatch_id"].as_u64().unwrap(),
                t["pass"].as_u64().unwrap(),
            );
            (key, t)
        })
        .collect()
}

/// Every counter the tool recorded equals the truth's value for that dispatch and pass.
fn counters_match_truth(got: &PerPass, truth: &BTreeMap<(u64, u64), Value>) {
    assert!(!got.is_empty());
    for (key, counters) in got {
        let t = &truth[key]["counters"];
        for (name, v) in counters {
            assert_eq!(Some(*v), t[name].as_f64(), "{key:?} {name}");
        }
    }
}

const OPTIONS: [(&str, &str); 4] = [
    ("KRPHASE_PMC", "SQ_WAVES;SQ_INSTS_VALU"),
    ("KRPHASE_PMC_REFERENCE", "TCC_HIT,GRBM_GUI_ACTIVE"),
    ("KRPHASE_WARMUP_PASS", "1"),
    ("KRPHASE_VERIFY_PASS", "1"),
];

const PLAN: &str = "pass_plan v1 passes=4 max_passes=2 warmup=1 verify=1 \
                    reference=TCC_HIT,GRBM_GUI_ACTIVE \
                    groups=SQ_WAVES+TCC_HIT+GRBM_GUI_ACTIVE;SQ_INSTS_VALU+TCC_HIT+GRBM_GUI_ACTIVE \
                    roles=w0,c0,c1,v0";

/// The names each pass of a window counted.
fn names(got: &PerPass, d: u64, p: u64) -> Vec<String> {
    got[&(d, p)].keys().cloned().collect()
}

#[test]
fn uniform_passes_repeat_exactly_and_the_options_add_their_passes() {
    let emu = krphase_tests::run_logged(
        "pass-models-uniform",
        &["saxpy", "--elements", "4096", "--iterations", "3"],
        &OPTIONS,
    );
    let windows = krphase_tests::executed_passes(&emu.truth);
    assert_eq!(windows.len(), 3);
    assert!(
        windows.iter().all(|w| w.1 == 4),
        "2 groups + 2: {windows:?}"
    );
    assert_eq!(notes(&emu.krp), [PLAN]);
    assert!(truth_passes(&emu.truth).is_empty(), "uniform writes none");
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let got = db_counters(&emu.db());
    for &(d, _) in &windows {
        let g0 = ["GRBM_GUI_ACTIVE", "SQ_WAVES", "TCC_HIT"];
        assert_eq!(names(&got, d, 0), g0, "the warm-up counts group 0");
        assert_eq!(names(&got, d, 1), g0);
        assert_eq!(
            names(&got, d, 2),
            ["GRBM_GUI_ACTIVE", "SQ_INSTS_VALU", "TCC_HIT"]
        );
        assert_eq!(
            got[&(d, 3)],
            got[&(d, 1)],
            "verification = group 0, exactly"
        );
        for p in 0..4 {
            for r in ["TCC_HIT", "GRBM_GUI_ACTIVE"] {
                assert_eq!(got[&(d, p)][r], got[&(d, 0)][r], "reference {r} pass {p}");
            }
        }
    }
}

#[test]
fn injected_models_make_references_and_the_verification_diverge_as_the_truth_says() {
    for (model, growing) in [("nondeterministic", false), ("incomplete-restore", true)] {
        let emu = krphase_tests::run_logged(
            &format!("pass-models-{model}"),
            &[
                "saxpy",
                "--elements",
                "4096",
                "--iterations",
                "2",
                "--sdk-build",
                "baseline",
                "--device-gbps",
                "4",
                "--pass-model",
                model,
            ],
            &OPTIONS,
        );
        let log = std::fs::read_to_string(&emu.log).unwrap();
        let truth = truth_passes(&emu.truth);
        let windows = krphase_tests::executed_passes(&emu.truth);
        assert_eq!(truth.len(), windows.len() * 4, "one truth line per pass");
        emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
        let got = db_counters(&emu.db());
        counters_match_truth(&got, &truth);
        for &(d, _) in &windows {
            let cycles = |p| got[&(d, p)]["GRBM_GUI_ACTIVE"];
            assert_ne!(cycles(3), cycles(1), "{model}: the verification differs");
            assert_ne!(got[&(d, 3)]["TCC_HIT"], got[&(d, 1)]["TCC_HIT"], "{model}");
            if growing {
                let items: Vec<u64> = (0..4)
                    .map(|p| truth[&(d, p)]["worklist_items"].as_u64().unwrap())
                    .collect();
                assert_eq!(
                    items,
                    [1024, 1536, 2304, 3456],
                    "the list grows 1.5x a pass"
                );
                assert!(
                    (1..4).all(|p| cycles(p) > cycles(p - 1)),
                    "more work each pass"
                );
                assert!(
                    log.contains("untracked_pool_bytes=64 untracked_pool_regions=1"),
                    "the SDK replays the window over the untracked pool: {log}"
                );
            }
        }
    }
}

/// Median of pass `p`'s GPU time over pass 0's across windows.
fn median_ratio(gpu: &BTreeMap<u64, Vec<f64>>, p: usize) -> f64 {
    let mut r: Vec<f64> = gpu.values().map(|v| v[p] / v[0]).collect();
    r.sort_by(f64::total_cmp);
    r[r.len() / 2]
}

#[test]
fn a_warm_cache_shortens_later_passes_and_moves_hits_and_cycles_together() {
    // 16 Ki elements (256 KiB of STREAM traffic) well inside the default 256 MiB cache, device
    // restores: pass 1 and 2 run at 0.70x pass 0. At 0.5 GB/s a kernel is paced to ~34 ms, far
    // above what the CPU body and this machine's scheduling add.
    let emu = krphase_tests::run_logged(
        "pass-models-warm",
        &[
            "stream",
            "--elements",
            "16384",
            "--iterations",
            "2",
            "--sdk-build",
            "baseline",
            "--device-gbps",
            "0.5",
            "--restore-order",
            "device",
            "--pass-model",
            "warm-cache",
        ],
        &[
            ("KRPHASE_PASSES", "3"),
            ("KRPHASE_PMC_REFERENCE", "TCC_HIT,TCC_MISS,GRBM_GUI_ACTIVE"),
        ],
    );
    let truth = truth_passes(&emu.truth);
    for ((_, p), t) in &truth {
        let want = if *p == 0 { 1.0 } else { 0.7 };
        assert!(
            (t["time_factor"].as_f64().unwrap() - want).abs() < 1e-9,
            "{t}"
        );
        assert_eq!(t["restore"], "device");
    }
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let got = db_counters(&emu.db());
    counters_match_truth(&got, &truth);
    for (&(d, p), c) in &got {
        if p > 0 {
            let cold = &got[&(d, 0)];
            assert!(c["TCC_HIT"] > cold["TCC_HIT"] && c["TCC_MISS"] < cold["TCC_MISS"]);
            assert!(
                c["GRBM_GUI_ACTIVE"] < cold["GRBM_GUI_ACTIVE"],
                "cycles follow time"
            );
        }
    }
    // The pass times in the file: a loose band around the modelled 0.70 (pacing only adds).
    let gpu = db_pass_gpu(&emu.db());
    assert_eq!(gpu.len(), 10);
    for p in [1, 2] {
        let r = median_ratio(&gpu, p);
        eprintln!("warm cache: median pass {p} / pass 0 GPU time over 10 windows = {r:.3}");
        assert!((0.6..0.8).contains(&r), "pass {p} / pass 0 = {r}");
    }
}

#[test]
fn far_above_the_cache_and_with_host_restores_the_passes_warm_less() {
    let run = |name: &str, extra: &[&str]| {
        let mut args = vec![
            "stream",
            "--elements",
            "4096",
            "--iterations",
            "1",
            "--sdk-build",
            "baseline",
            "--device-gbps",
            "8",
            "--pass-model",
            "warm-cache",
        ];
        args.extend_from_slice(extra);
        let emu = krphase_tests::run_logged(name, &args, &[("KRPHASE_PASSES", "2")]);
        let t = truth_passes(&emu.truth);
        assert_eq!(t.len(), 10);
        t.values()
            .filter(|t| t["pass"] == 1)
            .map(|t| t["time_factor"].as_f64().unwrap())
            .collect::<Vec<f64>>()
    };
    // 64 KiB of traffic against a 4 KiB cache: (4/64)^2 of it stays.
    let far = run(
        "pass-models-far",
        &["--cache-bytes", "4096", "--restore-order", "device"],
    );
    assert!(far.iter().all(|f| *f > 0.998 && *f < 1.0), "{far:?}");
    let host = run("pass-models-host", &[]);
    assert!(host.iter().all(|f| (f - 0.85).abs() < 1e-9), "{host:?}");
}

#[test]
fn reference_counters_that_do_not_fit_are_refused_in_one_line() {
    let emu = krphase_tests::run_logged(
        "pass-models-refused",
        &["saxpy", "--elements", "4096", "--iterations", "2"],
        &[
            ("KRPHASE_PMC", "GRBM_COUNT SQ_WAVES;SQ_INSTS_VALU"),
            ("KRPHASE_PMC_REFERENCE", "GRBM_GUI_ACTIVE GRBM_SPI_BUSY"),
        ],
    );
    let log = std::fs::read_to_string(&emu.log).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("KRPHASE_PMC")).collect();
    assert_eq!(lines.len(), 1, "{log}");
    for part in [
        "ERROR_EXCEEDS_HW_LIMIT",
        "the reference counters do not fit beside this group",
        "running without counters",
    ] {
        assert!(lines[0].contains(part), "{}", lines[0]);
    }
    let n = notes(&emu.krp);
    assert_eq!(n.len(), 2, "{n:?}");
    assert!(n[0].starts_with("pass_plan v1 passes=2 "), "{}", n[0]);
    assert!(n[1].starts_with("counters_refused v1 reason=KRPHASE_PMC: creating the config"));
    let counted = krphase_tests::read_truth(&emu.truth)
        .iter()
        .filter(|t| t["type"] == "counter_record")
        .count();
    assert_eq!(counted, 0, "nothing counted");
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    assert!(db_counters(&emu.db()).is_empty());
    assert_eq!(
        emu.report_run()["windows"]["replayed"],
        2,
        "the phases go on"
    );
}

#[test]
fn the_warm_up_pass_leaves_the_counted_passes_alike_under_a_warm_cache() {
    let emu = krphase_tests::run_logged(
        "pass-models-warmup",
        &[
            "stream",
            "--elements",
            "4096",
            "--iterations",
            "1",
            "--sdk-build",
            "baseline",
            "--device-gbps",
            "8",
            "--pass-model",
            "warm-cache",
        ],
        &[
            ("KRPHASE_PMC", "SQ_WAVES;SQ_INSTS_VALU"),
            ("KRPHASE_PMC_REFERENCE", "TCC_HIT,GRBM_GUI_ACTIVE"),
            ("KRPHASE_WARMUP_PASS", "1"),
        ],
    );
    let n = notes(&emu.krp);
    assert!(n[0].ends_with(" roles=w0,c0,c1"), "{n:?}");
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let got = db_counters(&emu.db());
    counters_match_truth(&got, &truth_passes(&emu.truth));
    let windows = krphase_tests::executed_passes(&emu.truth);
    assert_eq!(windows.len(), 5);
    for &(d, passes) in &windows {
        assert_eq!(passes, 3);
        for r in ["TCC_HIT", "GRBM_GUI_ACTIVE"] {
            let v = |p| got[&(d, p)][r];
            assert_eq!(v(1), v(2), "{r}: the counted passes both start warm");
            assert_ne!(v(0), v(1), "{r}: the warm-up alone started cold");
        }
    }
}

#[test]
fn a_model_limited_to_one_kernel_leaves_the_others_alike() {
    let emu = krphase_tests::run_logged(
        "pass-models-one-kernel",
        &[
            "stream",
            "--elements",
            "4096",
            "--iterations",
            "2",
            "--sdk-build",
            "baseline",
            "--device-gbps",
            "8",
            "--pass-model",
            "nondeterministic",
            "--pass-model-kernels",
            "stream_triad",
        ],
        &[
            ("KRPHASE_PASSES", "3"),
            ("KRPHASE_PMC_REFERENCE", "GRBM_GUI_ACTIVE"),
        ],
    );
    let truth = truth_passes(&emu.truth);
    assert_eq!(
        truth.len(),
        10 * 3,
        "a line for every pass, modelled or not"
    );
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let got = db_counters(&emu.db());
    counters_match_truth(&got, &truth);
    let triad = krphase_kernels::kernel_id("stream_triad").unwrap();
    let mut seen = (0, 0);
    for (&(d, p), t) in &truth {
        let modelled = t["kernel_id"].as_u64() == Some(triad);
        assert_eq!(
            t["model"],
            if modelled {
                "nondeterministic"
            } else {
                "uniform"
            }
        );
        if p == 0 {
            let v = |p| got[&(d, p)]["GRBM_GUI_ACTIVE"];
            let alike = v(0) == v(1) && v(1) == v(2);
            assert_eq!(alike, !modelled, "dispatch {d}: {} {} {}", v(0), v(1), v(2));
            if modelled { seen.0 += 1 } else { seen.1 += 1 }
        }
    }
    assert_eq!(seen, (2, 8), "two triad windows, eight others");
}
