//! `krphase compare` build against build on the emulator, where the truth is known: the SDK
//! builds of `krphase-emu --sdk-build` measured through `krphase bench --label` (observe mode,
//! rocprofv3 owning replay) and through drive-mode phase files, each comparison's attribution
//! checked against the change in the emulator's per-run phase totals; and two imported
//! benchmark databases with known medians.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use krphase_tests::{
    TOOL_AND_EMU_ENV, artifacts, krphase_db_ok, output_text, path_with_artifacts, read_truth,
    scratch_dir,
};
use serde_json::Value;

/// Elements of the STREAM arrays: small, so the slowest build stays within seconds a run.
const ELEMENTS: &str = "16384";
/// The stack: each switch alone, and all of them together.
const STACK: [&str; 5] = [
    "signal-pool",
    "skip-cu-markers",
    "keep-staging",
    "device-side",
    "signal-pool,skip-cu-markers,keep-staging,device-side",
];
/// The memcpy rate standing for device-local copies, fixed so every build is paced alike
/// (measured at start it would differ from run to run with the machine's load).
const DEVICE_GBPS: &str = "20";

/// Mean per run of each phase total in the truth file's `totals` lines (ns).
fn truth_totals(path: &Path) -> HashMap<String, f64> {
    let totals: Vec<Value> = read_truth(path)
        .into_iter()
        .filter(|v| v["type"] == "totals")
        .collect();
    assert!(!totals.is_empty(), "no totals in {}", path.display());
    let mut sum: HashMap<String, f64> = HashMap::new();
    for t in &totals {
        for (k, v) in t["ns"].as_object().expect("ns") {
            *sum.entry(k.clone()).or_default() += v.as_f64().unwrap();
        }
    }
    // What the SDK's outcome line prints of the snapshot and the restores: each window's time
    // in seconds to 4 decimals. Summed over a run, that rounding can differ from the exact
    // total by more than the tolerance when windows are short, so the log's figures are held
    // to the truth rounded as the SDK rounds it.
    // Observe mode's window is what an observing tool sees of the passes: pass 0's ENQUEUE
    // callback to the last pass's COMPLETE callback (the host's time before the first dispatch
    // and from the completion until PASS EXIT is outside it).
    for w in read_truth(path).iter().filter(|v| v["type"] == "window") {
        for k in ["snapshot", "restore_copy"] {
            let ns = w["phase_ns"][k].as_f64().unwrap_or(0.0);
            *sum.entry(format!("{k} as logged")).or_default() += (ns / 1e5).round() * 1e5;
        }
        let passes = w["passes"].as_array().map_or(&[][..], Vec::as_slice);
        if let (Some(first), Some(last)) = (passes.first(), passes.last()) {
            let (a, b) = (
                first["enqueue_callback"].as_f64(),
                last["complete_callback"].as_f64(),
            );
            *sum.entry("dispatch span".into()).or_default() += b.zip(a).map_or(0.0, |(b, a)| b - a);
        }
    }
    for v in sum.values_mut() {
        *v /= totals.len() as f64;
    }
    sum
}

/// `krphase bench --label BUILD --sdk-build BUILD` of P3 at [`ELEMENTS`], into `dir/bench.db`.
fn bench(dir: &Path, build: &str) {
    let truth = dir.join(format!("truth-{build}.jsonl"));
    let mut cmd = Command::new(&artifacts().krphase);
    for v in TOOL_AND_EMU_ENV {
        cmd.env_remove(v);
    }
    cmd.current_dir(dir)
        .args([
            "--db",
            "bench.db",
            "bench",
            "--label",
            build,
            "--sdk-build",
            build,
        ])
        .args([
            "--rocprofv3",
            "krphase-emu rocprofv3",
            "--repeats",
            "3",
            "--warmup",
            "0",
        ])
        .args(["--groups", "3", "--only", "p3", "--footprints", ELEMENTS])
        .args([
            "--workdir",
            &format!("out-{build}"),
            "--output",
            &format!("{build}.csv"),
        ])
        .args(["--app", "krphase-emu", "run", "stream"])
        .env("PATH", path_with_artifacts())
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env("KRPHASE_EMU_DEVICE_GBPS", DEVICE_GBPS)
        .env_remove("KRPHASE_EMU_SDK_BUILD");
    let o = cmd.output().expect("run krphase bench");
    assert!(o.status.success(), "{}", output_text(&o));
}

/// A phase or row that must have changed in the direction `sign` (of Δ, or of B/A − 1): "moved"
/// (either form) when three runs a side resolve it, else "not significant" — runs are the unit
/// of evidence, and three runs on a loaded machine may not resolve a change — but never a word
/// for no change, and never the wrong sign.
fn changed(v: &Value, sign: f64) {
    let code = v["verdict_code"].as_str().unwrap();
    assert!(
        ["moved", "moved_within", "not_significant"].contains(&code),
        "{v:#}"
    );
    let d = v["delta_median_ns"]
        .as_f64()
        .or_else(|| v["ratio"].as_f64().map(|r| r - 1.0))
        .unwrap();
    assert!(d * sign > 0.0, "{v:#}");
}

/// A phase that must not have changed: never "moved" beyond the margin.
fn unchanged(v: &Value) {
    assert_ne!(v["verdict_code"], "moved", "{v:#}");
}

fn compare_json(db: &Path, a: &str, b: &str) -> Value {
    serde_json::from_str(&krphase_db_ok(db, &["compare", a, b, "--format", "json"])).unwrap()
}

fn find<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|p| p[key] == name)
        .unwrap_or_else(|| panic!("no {key} {name:?} in {list:#}"))
}

/// A figure and the truth totals it stands for: their sum less the second list's.
type Stands<'a> = (&'a str, &'a [&'a str], &'a [&'a str]);

/// The change from `ta` to `tb` of the truth totals `plus` less `minus`.
fn truth_change(
    ta: &HashMap<String, f64>,
    tb: &HashMap<String, f64>,
    plus: &[&str],
    minus: &[&str],
) -> f64 {
    let truth = |t: &HashMap<String, f64>| -> f64 {
        plus.iter()
            .map(|k| t.get(*k).copied().unwrap_or(0.0))
            .sum::<f64>()
            - minus
                .iter()
                .map(|k| t.get(*k).copied().unwrap_or(0.0))
                .sum::<f64>()
    };
    truth(tb) - truth(ta)
}

/// The attribution's checks against the truth: the unexplained rest, less the change of what it
/// is stated to hold (`unmeasured`: the truth totals no figure measures; none in drive mode),
/// under 10 % of the wall change, and each phase's attributed change within 5 % of the change of
/// its truth total (or, for a phase that barely changed, within 0.5 % of the wall change: both
/// clocks read the same interval, so they can only differ by the boundaries' few microseconds a
/// window).
fn check_against_truth(
    x: &Value,
    ta: &HashMap<String, f64>,
    tb: &HashMap<String, f64>,
    pairs: &[Stands<'_>],
    unmeasured: Stands<'_>,
) {
    let wall = x["wall_change_ns"].as_f64().unwrap();
    let rest = find(&x["parts"], "item", "unexplained rest")["change_ns"]
        .as_f64()
        .unwrap();
    let held = truth_change(ta, tb, unmeasured.1, unmeasured.2);
    assert!(
        (rest - held).abs() < 0.10 * wall.abs(),
        "unexplained rest {rest} ns ({} {held} ns) of a wall change of {wall} ns: {x:#}",
        unmeasured.0
    );
    for (item, plus, minus) in pairs {
        let want = truth_change(ta, tb, plus, minus);
        let got = part_change(&x["parts"], item);
        let tol = (0.05 * want.abs()).max(0.005 * wall.abs());
        assert!(
            (got - want).abs() <= tol,
            "{item}: attributed change {got:.0} ns, truth {want:.0} ns (tolerance {tol:.0})"
        );
    }
}

/// The attributed change of `item`. A joined SDK log that covers every window splits the
/// pre-pass into its drain and snapshot (the attribution shows the parts where they tile the
/// parent on every run), so the pre-pass is then their sum.
fn part_change(parts: &Value, item: &str) -> f64 {
    let has = |n: &str| parts.as_array().unwrap().iter().any(|p| p["item"] == n);
    let change = |n: &str| find(parts, "item", n)["change_ns"].as_f64().unwrap();
    if item == "pre-pass" && !has("pre-pass") && has("drain") && has("snapshot") {
        return change("drain") + change("snapshot");
    }
    change(item)
}

/// The observe-mode parts, from what a published SDK prints and the dispatch callbacks, and the
/// truth totals they stand for: the SDK log's snapshot and restore are its snap time and copy
/// time, each window's rounded to 100 us as the log prints it; the window is the dispatch
/// callbacks' span (pass 0's ENQUEUE to the last COMPLETE), so its rest is that span less the
/// logged restore.
const OBSERVED: &[Stands<'_>] = &[
    ("snapshot", &["snapshot as logged"], &[]),
    ("restore", &["restore_copy as logged"], &[]),
    (
        "pass exec (window rest)",
        &["dispatch span"],
        &["restore_copy as logged"],
    ),
];

/// What the observe-mode attribution's unexplained rest is stated to hold besides noise: every
/// window's time outside the dispatch callbacks' span other than the snapshot (lock, drain and
/// the rest of the pre-pass, CONFIG, the host's wait from the last completion to PASS EXIT, the
/// tail), which the SDK prints no time for.
const OBSERVED_UNMEASURED: Stands<'_> = (
    "outside the passes' span but the snapshot",
    &["window"],
    &["dispatch span", "snapshot as logged"],
);

/// Drive mode measures every phase: its unexplained rest is only noise.
const NOTHING: Stands<'_> = ("nothing", &[], &[]);

#[test]
fn bench_labels_of_sdk_builds_compare_and_attribute_as_the_truth_says() {
    let _serial = krphase_tests::timing_serial();
    let dir = scratch_dir("compare-builds");
    bench(&dir, "baseline");
    for build in STACK {
        bench(&dir, build);
    }
    let db = dir.join("bench.db");
    let truth = |b: &str| truth_totals(&dir.join(format!("truth-{b}.jsonl")));
    let base = truth("baseline");
    for build in STACK {
        let c = compare_json(&db, "baseline", build);
        let x = &c["details"][0]["attribution"];
        let unavailable = c["details"][0]["phases"]["unavailable"].to_string();
        for phase in [
            "pre-pass: unavailable in observe mode",
            "drain: unavailable",
        ] {
            assert!(unavailable.contains(phase), "{build}: {unavailable}");
        }
        // Attributed only when the wall change is significant over the runs.
        if x.is_null() {
            let why = c["details"][0]["refused"].as_str().unwrap();
            assert!(why.starts_with("wall change not significant"), "{why}");
        } else {
            check_against_truth(x, &base, &truth(build), OBSERVED, OBSERVED_UNMEASURED);
            let rest = find(&x["parts"], "item", "unexplained rest");
            assert!(
                rest["note"]
                    .as_str()
                    .is_some_and(|n| n.contains("lock, drain") && n.contains("drive mode")),
                "{build}: the unexplained rest says what it holds: {rest:#}"
            );
        }
        let row = find(
            &c["rows"]["rows"],
            "variant",
            &format!("elements-{ELEMENTS}"),
        );
        // Every build in the stack speeds the run up. The builds here run one after another
        // (not interleaved), three runs each: the two small effects (signal pool, skipped
        // markers: 14-17 %) are within a loaded machine's drift between benches, so for them
        // only the wrong answer is refused — "moved" slower.
        if ["signal-pool", "skip-cu-markers"].contains(&build) {
            assert!(
                !(row["verdict_code"] == "moved" && row["ratio"].as_f64().unwrap() > 1.0),
                "{build}: {row:#}"
            );
        } else {
            changed(row, -1.0);
        }
    }

    let c = compare_json(&db, "baseline", "keep-staging");
    let row = find(
        &c["rows"]["rows"],
        "variant",
        &format!("elements-{ELEMENTS}"),
    );
    changed(row, -1.0);
    let detail = &c["details"][0];
    let phases = &detail["phases"]["phases"];
    let snap = find(phases, "phase", "snapshot");
    changed(snap, -1.0);
    // The passes' execution on the device, from the dispatch records in process: kept staging
    // changes copies only, and the emulator paces its kernels to their modelled duration, so
    // the passes must pass the equivalence test at the default ±15 % margin (a TOST, not a
    // failed significance test; a sleep's overshoot may still make a tiny shift significant,
    // which the words then show as "moved, within ±15%").
    let gpu = find(phases, "phase", "gpu");
    unchanged(gpu);
    let r = gpu["ratio"].as_f64().unwrap();
    // Inside the margin: three runs a side resolve no finer on a loaded machine.
    assert!((0.85..1.15).contains(&r), "{gpu:#}");
    let attributed = !detail["attribution"].is_null();
    if attributed {
        assert_eq!(detail["attribution"]["parts"][0]["item"], "snapshot");
    }

    // The markdown section names the moved phase, the interval and the attribution.
    let md = krphase_db_ok(
        &db,
        &[
            "compare",
            "baseline",
            "keep-staging",
            "--format",
            "markdown",
        ],
    );
    // The moved phase and the attribution, when the runs resolved them.
    let snap_moved = snap["verdict_code"] == "moved";
    for (want, shown) in [
        ("**snapshot**", snap_moved),
        ("95% interval", true),
        ("| unexplained rest |", attributed),
        ("moved", true),
        ("not measured: pre-pass: unavailable in observe mode", true),
        (
            "unexplained rest: wall change minus every part above",
            attributed,
        ),
    ] {
        if !shown {
            continue;
        }
        assert!(md.contains(want), "{want} missing:\n{md}");
    }
}

/// One drive-mode run of the emulator under `build`, imported with label `build`.
fn drive_run(db: &Path, dir: &Path, build: &str, i: usize) {
    let (krp, truth) = (
        dir.join(format!("{build}-{i}.krp")),
        dir.join(format!("truth-{build}.jsonl")),
    );
    let a = artifacts();
    let mut cmd = Command::new(&a.emu);
    for v in TOOL_AND_EMU_ENV {
        cmd.env_remove(v);
    }
    let log = dir.join(format!("{build}-{i}.log"));
    cmd.args(["run", "stream", "--elements", "32768"])
        .env("ROCPROFILER_LOG_LEVEL", "info")
        .stderr(std::fs::File::create(&log).expect("create the log"))
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_MODE", "drive")
        .env("KRPHASE_PASSES", "3")
        .env("KRPHASE_OUTPUT", &krp)
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env("KRPHASE_EMU_SDK_BUILD", build)
        .env("KRPHASE_EMU_DEVICE_GBPS", DEVICE_GBPS);
    let o = cmd.output().expect("run the emulator");
    assert!(o.status.success(), "{}", output_text(&o));
    krphase_db_ok(
        db,
        &["import", &krp.display().to_string(), "--label", build],
    );
    // The SDK log splits a device-side build's restores (inside the passes) out of pass exec.
    krphase_db_ok(db, &["import-log", &log.display().to_string()]);
}

/// Drive mode measures each pass in process (PASS ENTER→EXIT, basis M): kept staging changes
/// the copies around the passes, not the passes, so their execution passes the equivalence test
/// while the pre-pass (whose snapshot needs the SDK log to be split out) moves.
fn check_keep_staging_in_process(db: &Path) {
    let c = compare_json(db, "baseline", "keep-staging");
    let phases = &c["runs"]["phases"];
    let pre = find(phases, "phase", "pre-pass");
    changed(pre, -1.0);
    unchanged(find(phases, "phase", "pass exec"));
}

#[test]
fn device_side_build_restores_inside_the_passes_and_the_attribution_splits_them_out() {
    let _serial = krphase_tests::timing_serial();
    let dir = scratch_dir("compare-device-side");
    let db = dir.join("k.db");
    // Interleaved, so slow drift in the machine's load falls on every build.
    for i in 0..3 {
        for build in ["baseline", "device-side", "keep-staging"] {
            drive_run(&db, &dir, build, i);
        }
    }
    check_keep_staging_in_process(&db);
    let truth = |b: &str| truth_totals(&dir.join(format!("truth-{b}.jsonl")));
    let (tb, td) = (truth("baseline"), truth("device-side"));
    let c = compare_json(&db, "baseline", "device-side");
    let phases = &c["runs"]["phases"];
    // The device-side restores run inside the passes; the joined log's restore_seconds take
    // them out of pass exec, so the restore is what moved, not the passes.
    let restore = find(phases, "phase", "restore");
    changed(restore, -1.0);
    let x = &c["details"][0]["attribution"];
    if x.is_null() {
        // Three runs a side on a loaded machine may leave the wall change unresolved.
        let why = c["details"][0]["refused"].as_str().unwrap();
        assert!(why.starts_with("wall change not significant"), "{why}");
        return;
    }
    let part = |n: &str| find(&x["parts"], "item", n)["change_ns"].as_f64().unwrap();
    assert!(part("restore") < 0.0, "{x:#}");
    // Restore: the gaps between passes in the baseline (host order), the logged copies inside
    // the passes in the device-side build (its gaps, a few µs, fall to the rest); pass exec:
    // the passes without the restores inside them.
    check_against_truth(
        x,
        &tb,
        &td,
        &[
            ("pre-pass", &["pre_pass"], &[]),
            ("pass exec", &["pass_exec"], &["restore_in_pass"]),
            ("restore", &["restore", "restore_in_pass"], &[]),
            ("continue", &["continue"], &[]),
        ],
        NOTHING,
    );
    let text = krphase_db_ok(&db, &["compare", "baseline", "device-side"]);
    assert!(text.contains("attribution of the wall change"), "{text}");
}

/// A rocprofv3-benchmark database with a single-pass config and a 3-group kernel-replay config,
/// their wall times per run as given (cpu time half of it).
fn benchmark_db(path: &Path, single: &[f64], replay: &[f64]) {
    let app = ["stream".to_string()];
    krphase_analyzer::synth_benchmark::write_benchmark_db(path, &app, single, replay).unwrap();
}

#[test]
fn compare_of_two_imported_benchmark_databases_reports_the_known_ratio_per_config() {
    let dir = scratch_dir("compare-benchmark-db");
    let (old, new) = (dir.join("old.db"), dir.join("new.db"));
    // Medians 1.1 s and 1.5 s; then 0.55 s (0.5x) and 3.0 s (2x).
    benchmark_db(
        &old,
        &[1.0, 1.2, 1.1, 1.05, 1.15],
        &[1.5, 1.4, 1.6, 1.45, 1.55],
    );
    benchmark_db(
        &new,
        &[0.5, 0.6, 0.55, 0.525, 0.575],
        &[3.0, 2.8, 3.2, 2.9, 3.1],
    );
    let db = dir.join("k.db");
    for (f, l) in [(&old, "old"), (&new, "new")] {
        krphase_db_ok(
            &db,
            &["import-benchmark", &f.display().to_string(), "--label", l],
        );
    }
    let c = compare_json(&db, "old", "new");
    let rows = c["rows"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "two configs x wall and cpu time: {c:#}");
    for r in rows {
        let want = if r["mode"] == "kernel-replay" {
            2.0
        } else {
            0.5
        };
        let got = r["ratio"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9, "{r:#}");
        let iv = &r["interval"];
        assert!(
            iv["lo95"].as_f64().unwrap() <= want && want <= iv["hi95"].as_f64().unwrap(),
            "{r:#}"
        );
        assert_eq!(r["verdict"], "moved", "{r:#}");
        assert_eq!(
            (r["a_runs"].as_u64(), r["b_runs"].as_u64()),
            (Some(5), Some(5))
        );
    }
    // No phase files behind a benchmark database: the attribution refuses in one line.
    let d = &c["details"][0];
    assert!(
        d["refused"]
            .as_str()
            .unwrap()
            .contains("no phase files are linked"),
        "{d:#}"
    );
}
