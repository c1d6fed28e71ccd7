//! `krphase-emu --sdk-build`: each switch changes only the phase its upstream change changes,
//! the device-side restore sits inside PASS ENTER→EXIT, short device memory falls back or
//! declines, the switches compose, and the copy kinds keep the ratios measured on a real PCIe
//! Gen5 host. Every run loads the real libkrphase.so (drive mode, or observe mode under the
//! emulator's driver) and is checked against the emulator's truth file.
//!
//! What a phase costs is checked in the build's cost model, which the truth file carries (each
//! copy's `model_ns`, each window's `drain_signal_model_ns` and `kernel_model_ns`), and against
//! the clock only as a floor: the emulator paces each phase to its model, and a paced phase can
//! come in late on a loaded machine but never early. How close the measured phases come to their
//! models, and the build-to-build wall-clock ratios, are figures of the `sdk_builds` bench of
//! `krphase-tool`, printed beside their goals.

use krphase_tests::{read_truth, run_logged};
use serde_json::Value;
use std::collections::BTreeMap;

/// The fixed memcpy rate the phase tests run at: it keeps the slow-down factor (and so the
/// modelled durations) the same in every run, and small enough that a run takes about a second.
/// The ratio test below uses the measured rate instead.
const FAST_DEVICE_GBPS: &str = "20";
/// The kernels the tool replays in a phase-test run (one STREAM iteration), one window each.
/// Searched on the demangled name, as rocprofv3 searches it (`stream_copy(double const*, …)`).
const REPLAYED: &str = r"^stream_(copy|triad)\(";
const WINDOWS: usize = 2;
/// Passes per window (so three restores).
const PASSES: &str = "4";
/// Elements per STREAM array (2 MiB).
const ELEMENTS: u64 = 262_144;

/// One run's truth lines.
type Truth = Vec<Value>;

/// A STREAM run (one iteration; two windows of 4 passes) under `build`.
fn run_build(name: &str, build: &str, extra: &[&str]) -> Truth {
    let elements = ELEMENTS.to_string();
    let mut args = vec![
        "stream",
        "--elements",
        &elements,
        "--iterations",
        "1",
        "--sdk-build",
        build,
        "--device-gbps",
        FAST_DEVICE_GBPS,
    ];
    args.extend_from_slice(extra);
    let env = [
        ("KRPHASE_PASSES", PASSES),
        ("KRPHASE_KERNEL_FILTER", REPLAYED),
    ];
    let run = run_logged(name, &args, &env);
    let stderr = std::fs::read_to_string(&run.log).expect("the run's stderr");
    assert!(
        stderr.contains("the emulated device runs") && stderr.contains("x slower than a GPU"),
        "the slow-down factor is printed at start:\n{stderr}"
    );
    read_truth(&run.truth)
}

fn of_type<'a>(truth: &'a [Value], t: &str) -> Vec<&'a Value> {
    truth.iter().filter(|v| v["type"] == t).collect()
}

fn totals(truth: &[Value]) -> &Value {
    let t = of_type(truth, "totals");
    assert_eq!(t.len(), 1, "one totals line");
    t[0]
}

/// A phase's total over one run, ns.
fn total_ns(truth: &[Value], phase: &str) -> f64 {
    totals(truth)["ns"][phase].as_f64().unwrap_or(0.0)
}

/// A phase's total, summed over every run of a build.
fn sum_ns(runs: &[Truth], phase: &str) -> f64 {
    runs.iter().map(|t| total_ns(t, phase)).sum()
}

/// Every window of a build's runs.
fn windows(runs: &[Truth]) -> Vec<&Value> {
    runs.iter().flat_map(|t| of_type(t, "window")).collect()
}

/// The snapshot, or the restores, of a window: the items that carry copies.
fn items(w: &Value, part: &str) -> Vec<Value> {
    let v = &w[part];
    v.as_array().cloned().unwrap_or_else(|| vec![v.clone()])
}

/// The modelled duration of one snapshot or restore (the sum of its copies' models), ns.
fn item_model_ns(item: &Value) -> f64 {
    item["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["model_ns"].as_f64().unwrap())
        .sum()
}

fn span_ns(v: &Value) -> f64 {
    v["end"].as_f64().unwrap() - v["start"].as_f64().unwrap()
}

/// The modelled duration of every snapshot (or restore) of a build's runs, ns.
fn model_ns(runs: &[Truth], part: &str) -> f64 {
    windows(runs)
        .iter()
        .flat_map(|w| items(w, part))
        .map(|i| item_model_ns(&i))
        .sum()
}

/// The drain-signal creations the build's model charges, over all its windows, ns.
fn signal_model_ns(runs: &[Truth]) -> f64 {
    windows(runs)
        .iter()
        .map(|w| w["drain_signal_model_ns"].as_f64().unwrap_or(0.0))
        .sum()
}

/// What the build's model charges a window's snapshot, restores and drain signal, over all runs.
fn modelled_window_ns(runs: &[Truth]) -> f64 {
    model_ns(runs, "snapshot") + model_ns(runs, "restores") + signal_model_ns(runs)
}

/// `b` is within ±`margin` of `a`.
fn within(a: f64, b: f64, margin: f64) -> bool {
    (b / a - 1.0).abs() <= margin
}

/// A paced phase of `model` ns took at least that (pacing is a floor: a sleep only overshoots,
/// however late a loaded machine wakes the thread; the 1 % is the two clocks' rates).
fn reaches(model: f64, got: f64) -> bool {
    got >= 0.99 * model
}

fn assert_all_replayed(truth: &[Value]) {
    let w = of_type(truth, "window");
    assert_eq!(w.len(), WINDOWS, "one window per replayed kernel");
    assert!(w.iter().all(|w| w["outcome"] == "replayed"), "{w:?}");
}

fn slowdown(truth: &[Value]) -> f64 {
    of_type(truth, "sdk_build")[0]["slowdown"].as_f64().unwrap()
}

/// The copy kinds of a run's first window's snapshot or restores.
fn kinds(t: &[Value], part: &str) -> Vec<String> {
    items(of_type(t, "window")[0], part)
        .iter()
        .flat_map(|x| x["copies"].as_array().unwrap().clone())
        .map(|c| c["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Each restore of `window` lies inside the PASS ENTER→EXIT of the pass after it.
fn restores_inside_passes(window: &Value) -> bool {
    let passes = window["passes"].as_array().unwrap();
    let restores = window["restores"].as_array().unwrap();
    !restores.is_empty()
        && restores.iter().all(|r| {
            let next = &passes[r["after_pass"].as_u64().unwrap() as usize + 1];
            r["in_pass"] == true
                && next["enter"].as_u64().unwrap() <= r["start"].as_u64().unwrap()
                && r["end"].as_u64().unwrap() <= next["exit"].as_u64().unwrap()
        })
}

/// The build's model charges no drain-signal creation (pooled or reused signals).
fn no_drain_signal(runs: &[Truth]) -> bool {
    windows(runs)
        .iter()
        .all(|w| w["drain_signal_model_ns"].as_f64().unwrap_or(0.0) == 0.0)
}

/// Every snapshot and restore took at least its modelled time.
fn copies_reach_their_models(runs: &[Truth]) -> bool {
    windows(runs).iter().all(|w| {
        ["snapshot", "restores"]
            .iter()
            .flat_map(|part| items(w, part))
            .all(|i| reaches(item_model_ns(&i), span_ns(&i)))
    })
}

/// Every pass's kernel ran for at least its modelled duration (the window's `kernel_model_ns`).
fn kernels_reach_their_model(runs: &[Truth]) -> bool {
    windows(runs).iter().all(|w| {
        let each = w["kernel_model_ns"].as_f64().expect("a paced kernel");
        w["passes"].as_array().unwrap().iter().all(|p| {
            let got = p["gpu_end"].as_f64().unwrap() - p["gpu_start"].as_f64().unwrap();
            reaches(each, got)
        })
    })
}

/// The kernel model of each replayed kernel: the emulator paces streaming kernels, so no build's
/// copies can change them.
fn kernel_models(runs: &[Truth]) -> BTreeMap<String, f64> {
    windows(runs)
        .iter()
        .map(|w| {
            let k = w["kernel"].as_str().unwrap().to_string();
            (k, w["kernel_model_ns"].as_f64().expect("a paced kernel"))
        })
        .collect()
}

/// Nothing runs inside a build's passes but the kernel: no restore in a pass, and each kernel's
/// model as in the baseline.
fn assert_passes_untouched(base: &[Truth], other: &[Truth], what: &str) {
    assert_eq!(sum_ns(other, "restore_in_pass"), 0.0, "{what}");
    assert!(windows(other).iter().all(|w| {
        w["restores"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["in_pass"] == false)
    }));
    assert_eq!(kernel_models(base), kernel_models(other), "{what}");
}

/// One drain-signal creation per window, ~200 µs each at GPU scale, over all runs of a build.
fn signal_model(runs: &[Truth]) -> f64 {
    200e3 * slowdown(&runs[0]) * (WINDOWS * runs.len()) as f64
}

/// Each window's drain-signal creation, paced to its model, took at least that.
fn signals_reach_their_model(runs: &[Truth]) -> bool {
    windows(runs).iter().all(|w| {
        reaches(
            w["drain_signal_model_ns"].as_f64().unwrap(),
            span_ns(&w["drain_signal"]),
        )
    })
}

fn check_signal_pool(base: &[Truth], pool: &[Truth]) {
    assert!(
        within(signal_model(base), signal_model_ns(base), 1e-6),
        "a signal per window"
    );
    assert!(signals_reach_their_model(base));
    assert!(no_drain_signal(pool), "pooled: no creation cost");
    assert_eq!(model_ns(base, "snapshot"), model_ns(pool, "snapshot"));
    assert_eq!(model_ns(base, "restores"), model_ns(pool, "restores"));
    assert!(copies_reach_their_models(pool));
}

fn check_skip_markers(base: &[Truth], skip: &[Truth]) {
    let snap = |t: &[Value]| of_type(t, "window")[0]["snapshot"].clone();
    let (b, s) = (snap(&base[0]), snap(&skip[0]));
    let count = |v: &Value, k: &str| v[k].as_u64().unwrap();
    assert_eq!(count(&b, "regions"), count(&s, "regions") + 8, "8 markers");
    assert_eq!(count(&b, "bytes"), count(&s, "bytes") + 8, "1 byte each");
    // 8 small copies fewer per snapshot and per restore, 6.5 µs each at GPU scale.
    let copies = (WINDOWS * base.len()) as f64;
    let per_copy = 8.0 * 6.5e3 * slowdown(&base[0]) * copies;
    let moved = model_ns(base, "snapshot") - model_ns(skip, "snapshot");
    assert!(
        within(per_copy, moved, 0.01),
        "snapshot moved {moved} ns, markers {per_copy}"
    );
    let moved = model_ns(base, "restores") - model_ns(skip, "restores");
    assert!(
        within(3.0 * per_copy, moved, 0.01),
        "restores moved {moved} ns"
    );
    assert!(copies_reach_their_models(skip));
    assert_eq!(signal_model_ns(base), signal_model_ns(skip));
    assert!(signals_reach_their_model(skip));
}

fn check_keep_staging(base: &[Truth], kept: &[Truth]) {
    assert_eq!(kinds(&base[0], "snapshot"), ["d2h_fresh_pageable"]);
    assert_eq!(kinds(&kept[0], "snapshot"), ["d2h_pinned"]);
    assert_eq!(kinds(&base[0], "restores"), ["h2d_pageable"; 3]);
    assert_eq!(kinds(&kept[0], "restores"), ["h2d_pinned"; 3]);
    let (sb, sk) = (model_ns(base, "snapshot"), model_ns(kept, "snapshot"));
    assert!(sk < sb / 3.0, "snapshot {sb} → {sk} ns");
    let (rb, rk) = (model_ns(base, "restores"), model_ns(kept, "restores"));
    assert!(
        rk < rb / 1.5,
        "pinned staging speeds restores: {rb} → {rk} ns"
    );
    assert!(copies_reach_their_models(kept));
    assert_eq!(signal_model_ns(base), signal_model_ns(kept));
    assert!(signals_reach_their_model(kept));
    // The staging pool removes work, not bytes.
    assert_eq!(
        totals(&base[0])["snapshot_bytes"],
        totals(&kept[0])["snapshot_bytes"]
    );
}

/// Each pass that holds a restore lasted at least that restore's model.
fn passes_hold_their_restores(runs: &[Truth]) -> bool {
    windows(runs).iter().all(|w| {
        let passes = w["passes"].as_array().unwrap();
        w["restores"].as_array().unwrap().iter().all(|r| {
            let next = &passes[r["after_pass"].as_u64().unwrap() as usize + 1];
            let pass = next["exit"].as_f64().unwrap() - next["enter"].as_f64().unwrap();
            reaches(item_model_ns(r), pass)
        })
    })
}

fn check_device_side(base: &[Truth], dev: &[Truth]) {
    for w in windows(dev) {
        assert!(restores_inside_passes(w), "{w}");
        let snap = &w["snapshot"];
        assert_eq!(snap["gpu_local_regions"], snap["regions"]);
        assert_eq!(snap["copies"][0]["kind"], "d2d");
    }
    assert!(!windows(base).iter().any(|w| restores_inside_passes(w)));
    // The restore left the gap between passes and went into the passes.
    assert_eq!(sum_ns(dev, "restore_in_pass"), sum_ns(dev, "restore_copy"));
    assert_eq!(sum_ns(base, "restore_in_pass"), 0.0);
    assert!(passes_hold_their_restores(dev));
    assert!(no_drain_signal(dev), "signal reuse");
    let (sb, sd) = (model_ns(base, "snapshot"), model_ns(dev, "snapshot"));
    assert!(sd < sb / 10.0, "snapshot {sb} → {sd} ns");
    assert!(copies_reach_their_models(dev));
}

fn check_combination(base: &[Truth], two: &[Truth], every: &[Truth]) {
    // Two host-side switches: each one's phase moves as it does alone, the rest stays.
    assert!(no_drain_signal(two));
    assert_eq!(kinds(&two[0], "snapshot"), ["d2h_pinned"]);
    assert!(copies_reach_their_models(two));
    let base_regions = of_type(&base[0], "window")[0]["snapshot"]["regions"]
        .as_u64()
        .unwrap();
    for w in windows(every) {
        assert_eq!(w["snapshot"]["regions"].as_u64().unwrap(), base_regions - 8);
        assert!(restores_inside_passes(w));
    }
    assert!(no_drain_signal(every));
    assert!(copies_reach_their_models(every));
    let (b, t, e) = (
        modelled_window_ns(base),
        modelled_window_ns(two),
        modelled_window_ns(every),
    );
    assert!(e < t && t < b, "modelled windows: {b} → {t} → {e} ns");
}

/// Each switch against the baseline, alone and combined; one run of each build, one at a time.
#[test]
fn each_switch_changes_only_its_phase_and_the_switches_compose() {
    let _serial = krphase_tests::timing_serial();
    let builds = [
        "baseline",
        "signal-pool",
        "skip-cu-markers",
        "keep-staging",
        "device-side",
        "signal-pool,keep-staging",
        "signal-pool,skip-cu-markers,keep-staging,device-side",
    ];
    let runs: Vec<Vec<Truth>> = builds
        .iter()
        .map(|b| {
            let t = run_build(&format!("build-{b}"), b, &[]);
            assert_all_replayed(&t);
            assert_eq!(of_type(&t, "sdk_build")[0]["build"], *b);
            vec![t]
        })
        .collect();
    let base = &runs[0];
    assert!(copies_reach_their_models(base));
    for (b, r) in builds.iter().zip(&runs) {
        assert!(
            kernels_reach_their_model(r),
            "{b}: a kernel under its model"
        );
    }
    check_signal_pool(base, &runs[1]);
    check_skip_markers(base, &runs[2]);
    check_keep_staging(base, &runs[3]);
    check_device_side(base, &runs[4]);
    check_combination(base, &runs[5], &runs[6]);
    // Pass execution is untouched in every build that changes only host-side copies or the
    // drain: nothing but the kernel runs in its passes, and the kernels' models are the
    // baseline's.
    for i in [1, 2, 3, 5] {
        assert_passes_untouched(base, &runs[i], builds[i]);
    }
}

#[test]
fn device_side_falls_back_to_host_staging_or_declines_when_device_memory_is_short() {
    let _serial = krphase_tests::timing_serial();
    // Three arrays plus room for one more and a half: one array gets GPU-local backing.
    let array = ELEMENTS * 8;
    let memory = (3 * array + array + array / 2 + 4096).to_string();
    let fb = run_build(
        "build-device-fallback",
        "device-side",
        &["--device-memory", &memory],
    );
    assert_all_replayed(&fb);
    for w in of_type(&fb, "window") {
        let copies = w["snapshot"]["copies"].as_array().unwrap();
        let host: Vec<_> = copies.iter().filter(|c| c["kind"] != "d2d").collect();
        assert_eq!(host.len(), 1, "{copies:?}");
        assert_eq!(host[0]["kind"], "d2h_fresh_pageable");
        assert_eq!(host[0]["regions"], 2);
        assert_eq!(host[0]["bytes"].as_u64().unwrap(), 2 * array);
        assert!(restores_inside_passes(w));
    }
    let dec = run_build(
        "build-device-decline",
        "device-side",
        &["--device-memory", &memory, "--device-fallback", "decline"],
    );
    let w = of_type(&dec, "window");
    assert_eq!(w.len(), WINDOWS);
    for w in &w {
        assert_eq!(w["outcome"], "declined");
        assert_eq!(w["reason"], "snapshot_failed");
        assert_eq!(w["executed_passes"], 0);
    }
    assert_eq!(totals(&dec)["by_reason"]["snapshot_failed"], WINDOWS);
}

/// §17's copy rates (GB/s) measured on a PCIe Gen5 host at 1, 8, 64, 512 MiB and 2 GiB.
fn measured_gbps(kind: &str) -> [f64; 5] {
    match kind {
        "d2h_fresh_pageable" => [1.5, 1.6, 1.5, 1.6, 1.6],
        "d2h_pinned" => [33.5, 50.8, 54.2, 55.2, 55.3],
        "h2d_pageable" => [7.7, 7.3, 7.2, 8.6, 8.5],
        "h2d_pinned" => [23.1, 47.6, 54.4, 55.3, 55.4],
        "d2d" => [54.0, 356.0, 974.0, 1832.0, 2074.0],
        other => panic!("unknown copy kind {other}"),
    }
}

/// The measured rate at `bytes`, interpolated log-log between the measured sizes.
fn measured_at(kind: &str, bytes: f64) -> f64 {
    let sizes = [20.0, 23.0, 26.0, 29.0, 31.0]; // log2 of the measured sizes
    let rates = measured_gbps(kind);
    let x = bytes.log2().clamp(sizes[0], sizes[4]);
    let i = (0..4).find(|&i| x <= sizes[i + 1]).unwrap();
    let f = (x - sizes[i]) / (sizes[i + 1] - sizes[i]);
    (rates[i].ln() + f * (rates[i + 1].ln() - rates[i].ln())).exp()
}

/// What the measurements say one copy of `regions` 1 MiB arrays takes, at GPU scale, ns: per
/// region at the 1 MiB rate for host copies, one batch for blits.
fn measured_ns(kind: &str, regions: u64, array: f64) -> f64 {
    if kind == "d2d" {
        regions as f64 * array / measured_at(kind, regions as f64 * array)
    } else {
        regions as f64 * array / measured_at(kind, array)
    }
}

/// The kinds of copy run at GPU-scale rates (the copy's model divided by the run's slow-down
/// factor) within 2× of those measured on the PCIe Gen5 host, and so do the ratios between
/// kinds; each copy, paced to its model, took at least that. Runs at this machine's measured
/// memcpy rate, as an unconfigured run does.
#[test]
fn copy_kinds_follow_the_measured_ratios_within_2x() {
    let _serial = krphase_tests::timing_serial();
    let array = 131072.0 * 8.0; // 1 MiB per STREAM array
    let mut rates: Vec<(String, f64, f64)> = Vec::new(); // kind, emulated, measured (GB/s)
    for build in ["baseline", "keep-staging", "device-side"] {
        let args = [
            "stream",
            "--elements",
            "131072",
            "--iterations",
            "1",
            "--sdk-build",
            build,
            "--cu-markers",
            "1",
            "--driver-passes",
            "2",
            "--driver-filter",
            r"^stream_copy\(",
        ];
        let run = run_logged(&format!("build-ratio-{build}"), &args, &[]);
        let truth = read_truth(&run.truth);
        let s = slowdown(&truth);
        let w = of_type(&truth, "window");
        assert_eq!(w.len(), 1, "one replayed window (stream_copy)");
        let copies = std::iter::once(&w[0]["snapshot"]).chain(w[0]["restores"].as_array().unwrap());
        for c in copies {
            let parts = c["copies"].as_array().unwrap();
            assert_eq!(parts.len(), 1, "one kind per copy: {c}");
            let kind = parts[0]["kind"].as_str().unwrap().to_string();
            // The copy's model at GPU scale; the copy itself, paced to it, took at least that.
            let model = parts[0]["model_ns"].as_f64().unwrap();
            assert!(reaches(model, span_ns(c)), "{c}");
            let gpu_ns = model / s;
            // Three 1 MiB arrays and two small regions (the counter, one marker), each small
            // copy 6.5 µs as measured per small region (blits: all in the one batch).
            let small_ns = if kind == "d2d" { 0.0 } else { 2.0 * 6.5e3 };
            let want_ns = measured_ns(&kind, 3, array) + small_ns;
            let bytes = 3.0 * array;
            rates.push((kind, bytes / gpu_ns, bytes / want_ns));
        }
    }
    eprintln!("rates (kind, emulated GB/s, measured GB/s): {rates:?}");
    for (kind, emulated, measured) in &rates {
        let r = emulated / measured;
        assert!(
            (0.5..=2.0).contains(&r),
            "{kind}: {emulated:.1} GB/s emulated vs {measured:.1} measured"
        );
    }
    for (a, b) in rates.iter().flat_map(|a| rates.iter().map(move |b| (a, b))) {
        let r = (a.1 / b.1) / (a.2 / b.2);
        assert!(
            (0.5..=2.0).contains(&r),
            "{} : {} ratio off by {r:.2}",
            a.0,
            b.0
        );
    }
    let kinds: std::collections::BTreeSet<_> = rates.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(kinds.len(), 5, "every kind of copy seen: {kinds:?}");
}

#[test]
fn bad_build_lists_and_options_get_one_line_and_change_nothing() {
    let _serial = krphase_tests::timing_serial();
    let a = krphase_tests::artifacts();
    for (args, needle) in [
        (vec!["--sdk-build", "fast"], "unknown switch"),
        (
            vec!["--sdk-build", "baseline,keep-staging"],
            "cannot be combined",
        ),
        (vec!["--device-memory", "10"], "need --sdk-build"),
        (
            vec!["--sdk-build", "baseline", "--link-gbps", "4"],
            "--link-gbps",
        ),
        (
            vec![
                "--sdk-build",
                "keep-staging",
                "--device-fallback",
                "decline",
            ],
            "device-side",
        ),
        (
            vec!["--sdk-build", "device-side", "--restore-order", "host"],
            "contradicts",
        ),
        (
            vec!["--sdk-build", "baseline", "--device-gbps", "0"],
            "device-local rate",
        ),
    ] {
        let dir = krphase_tests::scratch_dir("build-bad");
        let truth = dir.join("truth.jsonl");
        let o = std::process::Command::new(&a.emu)
            .args(["run", "saxpy"])
            .args(&args)
            .env("KRPHASE_EMU_TRUTH", &truth)
            .env_remove("ROCP_TOOL_LIBRARIES")
            .output()
            .expect("run the emulator");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!truth.exists(), "{args:?}: nothing written");
    }
}

/// `KRPHASE_EMU_SDK_BUILD` and `KRPHASE_EMU_DEVICE_GBPS` stand for the options (how a launcher
/// that only passes the environment through, such as `krphase bench`, selects a build); the
/// command line wins.
#[test]
fn the_build_and_the_rate_can_come_from_the_environment() {
    let _serial = krphase_tests::timing_serial();
    let a = krphase_tests::artifacts();
    for (args, build) in [
        (vec![], "keep-staging"),
        (vec!["--sdk-build", "signal-pool"], "signal-pool"),
    ] {
        let dir = krphase_tests::scratch_dir("build-env");
        let truth = dir.join("truth.jsonl");
        let o = std::process::Command::new(&a.emu)
            .args(["run", "saxpy", "--iterations", "1", "--elements", "64"])
            .args(&args)
            .env("KRPHASE_EMU_TRUTH", &truth)
            .env("KRPHASE_EMU_SDK_BUILD", "keep-staging")
            .env("KRPHASE_EMU_DEVICE_GBPS", "3")
            .env_remove("ROCP_TOOL_LIBRARIES")
            .output()
            .expect("run the emulator");
        assert!(o.status.success(), "{}", krphase_tests::output_text(&o));
        let t = read_truth(&truth);
        let b = of_type(&t, "sdk_build")[0];
        assert_eq!(b["build"], build);
        assert_eq!(b["device_gbps_measured"], false);
        assert!((b["slowdown"].as_f64().unwrap() - 2074.0 / 3.0).abs() < 1e-6);
        assert_eq!(of_type(&t, "totals").len(), 1);
    }
}
