//! The analyzer's answers through the `krphase` binary: whole-run measurements in every answer
//! (benchmark databases new and pre-replay-column, a measurement-only database), the harness's
//! kernel-replay claims checked against phase files written by the real tool under the
//! emulator's rocprofv3 stand-in, and one selection rule across report, compare, export and
//! plot, with `krphase runs` and relabelling.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};
use krphase_tests::{artifacts, krphase_db, krphase_db_ok, output_text, scratch_dir};
use serde_json::Value;

/// A benchmark database built from one of the committed SQL fixtures.
fn benchmark_db(dir: &Path, fixture: &str) -> PathBuf {
    let sql = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/bench")
            .join(fixture),
    )
    .unwrap();
    let p = dir.join(fixture.replace(".sql", ".db"));
    let c = rusqlite::Connection::open(&p).unwrap();
    krphase_analyzer::db::benchmark::enable_dqs(&c).unwrap();
    c.execute_batch(&sql).unwrap();
    p
}

fn json(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

/// The wall-time measurement of a JSON report with this config (`experiment/variant`).
fn measurement<'a>(report: &'a Value, experiment: &str, variant: &str) -> &'a Value {
    labelled(report, None, experiment, variant)
}

/// As [`measurement`], of the rows imported with `label` (any label when `None`).
fn labelled<'a>(
    report: &'a Value,
    label: Option<&str>,
    experiment: &str,
    variant: &str,
) -> &'a Value {
    report["measurements"]
        .as_array()
        .expect("measurements")
        .iter()
        .find(|m| {
            m["experiment"] == experiment
                && m["variant"] == variant
                && m["metric"] == "wall_time"
                && label.is_none_or(|l| m["label"] == l)
        })
        .unwrap_or_else(|| panic!("no {experiment}/{variant} in {report}"))
}

#[test]
fn benchmark_databases_new_and_old_appear_in_report_table_and_json() {
    let dir = scratch_dir("answers-benchmark-db");
    let db = dir.join("k.db");
    let new = benchmark_db(&dir, "benchmark_new.sql");
    let old = benchmark_db(&dir, "benchmark_old.sql");
    let imp = |f: &Path, label: &str| {
        krphase_db_ok(
            &db,
            &[
                OsStr::new("import-benchmark"),
                f.as_os_str(),
                OsStr::new("--label"),
                OsStr::new(label),
            ],
        )
    };
    assert!(imp(&new, "new").contains("4 configs"));
    assert!(imp(&old, "old").contains("1 configs predate the replay columns"));

    // A database of measurements only: report shows them and exits 0.
    let o = krphase_db(&db, &["report", "--format", "json"]);
    assert!(o.status.success(), "{}", output_text(&o));
    let r = json(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(r["runs"], serde_json::json!([]));
    // New: medians of the raw runs, modes and group counts as stored, the seed's projection.
    let replay = measurement(&r, "tool-runtime-overhead", "replay_4_groups");
    assert_eq!(replay["median_s"].as_f64(), Some(2.2));
    assert_eq!(replay["mode"], "kernel-replay");
    assert_eq!(replay["counter_groups"], 4);
    assert_eq!(replay["projected_s"].as_f64(), Some(6.0));
    let speedup = replay["speedup"].as_f64().unwrap();
    assert!((speedup - 6.0 / 2.2).abs() < 1e-9, "{speedup}");
    assert_eq!(replay["median_basis"], "harness");
    assert_eq!(replay["projection_basis"], "estimate");
    let reference = measurement(&r, "tool-runtime-overhead", "counters_only");
    assert_eq!(
        (
            reference["mode"].as_str(),
            reference["counter_groups"].as_i64()
        ),
        (Some("single-pass"), Some(1))
    );
    let app = measurement(&r, "tool-runtime-overhead", "application_replay_4_groups");
    assert_eq!(app["median_s"].as_f64(), Some(6.0));
    assert_eq!(app["mode"], "application-replay");
    // Old: no replay columns, so no mode and no group count, medians as stored.
    let base = labelled(&r, Some("old"), "baseline", "");
    assert_eq!(base["median_s"].as_f64(), Some(2.0));
    assert_eq!(
        labelled(&r, Some("new"), "baseline", "")["median_s"].as_f64(),
        Some(1.1)
    );
    let pmc = r["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["label"] == "old" && m["experiment"] == "tool-runtime-overhead")
        .unwrap();
    assert_eq!(pmc["median_s"].as_f64(), Some(2.6));
    assert!(
        pmc["mode"].is_null() && pmc["counter_groups"].is_null(),
        "{pmc}"
    );
    assert_eq!(
        r["warnings"],
        serde_json::json!([]),
        "nothing claims replay falsely"
    );

    let table = krphase_db_ok(&db, &["report"]);
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    for needle in [
        "whole-run measurements (8)",
        "replay_4_groups",
        "kernel-replay",
        "2.200 s",
        "6.000 s",
        "2.73x",
        "baseline/",
        "2.600 s",
    ] {
        assert!(table.contains(needle), "table lacks {needle:?}:\n{table}");
    }
    // The same rows through a label, and the two sets side by side.
    let only_new = json(&krphase_db_ok(
        &db,
        &["report", "--run", "new", "--format", "json"],
    ));
    assert_eq!(only_new["measurements"].as_array().unwrap().len(), 4);
    let cmp = json(&krphase_db_ok(
        &db,
        &["compare", "old", "new", "--format", "json"],
    ));
    assert_eq!(cmp["rows"]["basis"], "harness");
    // Old: baseline and the PMC config, wall and cpu time; new: four configs, wall time only
    // (its statistics hold no cpu_time); the baselines pair up.
    assert_eq!(cmp["rows"]["rows"].as_array().unwrap().len(), 7);
    let csv = krphase_db_ok(&db, &["report", "--format", "csv"]);
    assert!(
        csv.lines()
            .any(|l| l.starts_with(",new,measurement,") && l.contains(",median_s,2.2,harness")),
        "{csv}"
    );
}

/// The emulator's rocprofv3 stand-in with libkrphase.so preloaded in observe mode, as
/// `krphase bench` runs it; `args` are the rocprofv3 arguments of one CSV row.
fn rocprofv3(dir: &Path, args: &[&str]) -> Output {
    let a = artifacts();
    let o = Command::new(&a.emu)
        .current_dir(dir)
        .arg("rocprofv3")
        .args(args)
        .args(["--", "krphase-emu", "run", "stream", "--elements", "4096"])
        .args(["--iterations", "2"])
        .env("PATH", krphase_tests::path_with_artifacts())
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_MODE", "observe")
        .env_remove("KRPHASE_OUTPUT")
        .env_remove("KRPHASE_EMU_DRIVER_PASSES")
        .env_remove("KRPHASE_EMU_DRIVER_FILTER")
        .output()
        .expect("run krphase-emu rocprofv3");
    assert!(o.status.success(), "{args:?}: {}", output_text(&o));
    o
}

const BETA: &str = "--kernel-replay-beta-enabled";

/// CSV rows (experiment, variant, mode, detail, median, rocprofv3 args) as replay_perf.py writes
/// them with G = 2: the replay flag is the beta flag alone. The P3 row is the control: it asks
/// for kernel replay as current rocprofv3 needs it.
type HarnessRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    f64,
    Vec<&'static str>,
);

fn harness_rows() -> Vec<HarnessRow> {
    let g1 = ["--pmc", "SQ_WAVES", "GRBM_COUNT"];
    let g2 = ["--pmc", "SQ_WAVES", "GRBM_GUI_ACTIVE"];
    let both = [&g1[..], &g2[..]].concat();
    let with = |extra: &[&'static str], dir: &'static str| {
        [
            &both[..],
            extra,
            &["--output-format", "json", "-d", dir, "-o", "out"],
        ]
        .concat()
    };
    vec![
        (
            "P1",
            "application-replay-run-0",
            "single-pass",
            "GRBM_COUNT",
            1.0,
            [
                &g1[..],
                &["--output-format", "json", "-d", "w/p1-base-0", "-o", "out"],
            ]
            .concat(),
        ),
        (
            "P1",
            "application-replay-run-1",
            "single-pass",
            "GRBM_GUI_ACTIVE",
            1.0,
            [
                &g2[..],
                &["--output-format", "json", "-d", "w/p1-base-1", "-o", "out"],
            ]
            .concat(),
        ),
        (
            "P1",
            "replay-all-groups",
            "kernel-replay",
            "2 groups, one run",
            2.08,
            with(&[BETA], "w/p1-replay"),
        ),
        (
            "P2",
            "passes-2",
            "kernel-replay",
            "2 group(s)",
            2.1,
            with(&[BETA], "w/p2-2"),
        ),
        (
            "P3",
            "elements-4096",
            "kernel-replay",
            "4096 elements",
            1.5,
            with(&["--replay-mode", "kernel", BETA], "w/p3-4096"),
        ),
        (
            "P6",
            "replay-active-none-matched",
            "kernel-replay",
            "replay configured, no kernel matches",
            1.1,
            with(
                &[BETA, "--kernel-include-regex", "^__no_such_kernel__$"],
                "w/p6-filtered",
            ),
        ),
    ]
}

/// Writes the rows as replay_perf.py does (Python's csv module: CRLF, quotes around a field
/// with a comma).
fn write_harness_csv(path: &Path, rows: &[HarnessRow]) {
    let quote = |f: &str| {
        if f.contains(',') {
            format!("\"{f}\"")
        } else {
            f.to_string()
        }
    };
    let mut text = krphase_analyzer::import::measurement_csv::COLUMNS.join(",") + "\r\n";
    for (e, v, m, d, median, args) in rows {
        let command = format!("rocprofv3 {} -- krphase-emu run stream", args.join(" "));
        let t = median.to_string();
        let fields = [*e, *v, *m, d, &t, &t, &t, "1000", "1", "0", &command];
        text += &(fields.map(quote).join(",") + "\r\n");
    }
    std::fs::write(path, text).unwrap();
}

fn stderr_warnings(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("krphase: warning: measurement"))
        .map(String::from)
        .collect()
}

#[test]
fn harness_rows_that_never_replayed_are_warned_and_their_speedup_is_invalid() {
    let dir = scratch_dir("answers-harness-claims");
    let rows = harness_rows();
    for (_, variant, _, _, _, args) in &rows {
        let o = rocprofv3(&dir, args);
        let beta_only = args.contains(&BETA) && !args.contains(&"--replay-mode");
        // The stand-in, like current rocprofv3, warns and runs application replay.
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).contains("does not enable kernel replay"),
            beta_only,
            "{variant}: {}",
            output_text(&o)
        );
    }
    let csv = dir.join("replay_perf.csv");
    write_harness_csv(&csv, &rows);
    let db = dir.join("k.db");
    let imp = krphase_db(
        &db,
        &[
            OsStr::new("import-harness"),
            csv.as_os_str(),
            OsStr::new("--workdir"),
            dir.as_os_str(),
        ],
    );
    assert!(imp.status.success(), "{}", output_text(&imp));
    let warned = stderr_warnings(&imp);
    assert_eq!(
        warned.len(),
        3,
        "one per row that should have run kernel replay: {warned:?}"
    );
    assert!(warned[0].contains("P1/replay-all-groups") && warned[1].contains("P2/passes-2"));
    assert!(warned[2].contains("P6/replay-active-none-matched"));
    assert!(
        warned
            .iter()
            .all(|w| w.contains("pass_<n>") && w.contains("application replay")),
        "{warned:?}"
    );

    let o = krphase_db(&db, &["report", "--format", "json"]);
    assert!(o.status.success(), "{}", output_text(&o));
    assert_eq!(
        stderr_warnings(&o),
        warned,
        "report warns the same, once per row"
    );
    let r = json(&String::from_utf8_lossy(&o.stdout));
    let valid = |e: &str, v: &str| measurement(&r, e, v)["valid"].as_bool();
    assert_eq!(valid("P1", "replay-all-groups"), Some(false));
    assert_eq!(valid("P2", "passes-2"), Some(false));
    assert_eq!(
        valid("P3", "elements-4096"),
        Some(true),
        "the control did replay"
    );
    assert_eq!(
        valid("P6", "replay-active-none-matched"),
        Some(false),
        "P6 asked for replay with the beta flag alone: application replay ran"
    );
    assert!(measurement(&r, "P3", "elements-4096")["replay_check"]["windows"].as_i64() > Some(0));
    let p1 = &r["bench"]["p1_speedup"];
    let speedup = p1["speedup_vs_application_replay_factor"].as_f64().unwrap();
    assert!((speedup - 2.0 / 2.08).abs() < 1e-9, "{p1}");
    assert_eq!(p1["speedup_valid"], false, "{p1}");
    assert!(
        p1["speedup_invalid_reason"]
            .as_str()
            .unwrap()
            .contains("replay-all-groups")
    );
    let footprint = &r["bench"]["p3_footprints"][0];
    assert_eq!(footprint["valid"], true, "{footprint}");

    let table = krphase_db_ok(&db, &["report"]);
    assert!(table.contains("speedup 0.96x"), "{table}");
    assert!(table.contains("speedup INVALID: measurement"), "{table}");
    assert!(
        table.contains("passes-2       median 2.100 s INVALID"),
        "{table}"
    );
    // The flag follows the mode in its cell, on the cell's next line when the table is narrow.
    assert!(
        table.contains("kernel-replay !") || table.contains("┆ !"),
        "{table}"
    );
    let csv_out = krphase_db_ok(&db, &["report", "--format", "csv"]);
    assert!(
        csv_out.contains(",bench,P1,speedup_valid,false,"),
        "{csv_out}"
    );

    // Without the phase files, the command is the evidence: the beta flag alone.
    let bare = dir.join("bare.db");
    let imp = krphase_db(
        &bare,
        &[
            OsStr::new("import-harness"),
            csv.as_os_str(),
            OsStr::new("--workdir"),
            dir.join("nowhere").as_os_str(),
        ],
    );
    assert!(imp.status.success(), "{}", output_text(&imp));
    let warned = stderr_warnings(&imp);
    assert_eq!(warned.len(), 3, "P1, P2 and P6: {warned:?}");
    assert!(
        warned
            .iter()
            .all(|w| w.contains("lacks --replay-mode kernel")),
        "{warned:?}"
    );
}

/// Three synthetic runs: two labelled `a`, one `b`; returns (dir, db, files).
fn three_runs(name: &str) -> (PathBuf, PathBuf, Vec<PathBuf>) {
    let dir = scratch_dir(name);
    let db = dir.join("k.db");
    let mut files = Vec::new();
    for (i, (windows, label)) in [(40u64, "a"), (60, "a"), (50, "b")].into_iter().enumerate() {
        let f = dir.join(format!("r{i}.krp"));
        let spec = SynthSpec {
            windows,
            pid: 100 + i as u32,
            seed: i as u64 + 1,
            ..SynthSpec::default()
        };
        write_synthetic_file(&f, &spec).unwrap();
        krphase_db_ok(
            &db,
            &[
                OsStr::new("import"),
                f.as_os_str(),
                OsStr::new("--label"),
                OsStr::new(label),
            ],
        );
        files.push(f);
    }
    (dir, db, files)
}

/// The window count of a plot histogram: the sum of its bins' counts (`lo..hi: count`).
fn histogram_total(svg: &str) -> u64 {
    svg.split("<title>")
        .skip(1)
        .filter_map(|t| {
            t.split("</title>")
                .next()?
                .rsplit(": ")
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

#[test]
fn one_selection_rule_across_report_compare_export_and_plot() {
    let (dir, db, _) = three_runs("answers-selection");
    let runs = json(&krphase_db_ok(&db, &["runs", "--format", "json"]));
    let listed: Vec<(i64, &str, i64, i64)> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["run_id"].as_i64().unwrap(),
                r["label"].as_str().unwrap(),
                r["pid"].as_i64().unwrap(),
                r["windows"].as_i64().unwrap() + r["declines"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed.iter().map(|r| (r.0, r.1, r.2)).collect::<Vec<_>>(),
        vec![(1, "a", 100), (2, "a", 101), (3, "b", 102)]
    );
    // Synthetic files: a tool opt-out (a decline) after every tenth dispatch.
    assert_eq!(
        listed.iter().map(|r| r.3).collect::<Vec<_>>(),
        vec![44, 66, 55]
    );
    let table = krphase_db_ok(&db, &["runs"]);
    for h in [
        "id", "label", "pid", "mode", "windows", "declines", "wall", "file",
    ] {
        assert!(table.contains(h), "{h}: {table}");
    }
    // The terminal's table fits 100 columns; host and import time are in the other formats.
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    assert!(
        table.contains("host and import time: `krphase runs --format csv`"),
        "{table}"
    );
    let md = krphase_db_ok(&db, &["runs", "--format", "markdown"]);
    assert!(md.contains(" host |") && md.contains(" imported |"), "{md}");
    assert_eq!(
        krphase_db_ok(&db, &["runs", "--format", "csv"])
            .lines()
            .count(),
        4
    );

    // report: a label is every run carrying it, each reported.
    let ids = |v: &Value| -> Vec<i64> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].as_i64().unwrap())
            .collect()
    };
    let r = json(&krphase_db_ok(
        &db,
        &["report", "--run", "a", "--format", "json"],
    ));
    assert_eq!(ids(&r), vec![1, 2]);
    let r = json(&krphase_db_ok(
        &db,
        &["report", "--run", "3", "--format", "json"],
    ));
    assert_eq!(ids(&r), vec![3]);
    // compare: a label pools its runs.
    let c = json(&krphase_db_ok(
        &db,
        &["compare", "a", "b", "--format", "json"],
    ));
    assert_eq!(
        (c["runs"]["a_runs"].clone(), c["runs"]["b_runs"].clone()),
        (serde_json::json!([1, 2]), serde_json::json!([3]))
    );
    let replayed: Vec<i64> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["windows"].as_i64().unwrap())
        .collect();
    assert_eq!(
        c["runs"]["a_windows"].as_i64(),
        Some(replayed[0] + replayed[1])
    );
    assert_eq!(c["runs"]["b_windows"].as_i64(), Some(replayed[2]));
    // export: one trace holding every run of the label, a process per run.
    let out = krphase_db_ok(
        &db,
        &[
            OsStr::new("export"),
            OsStr::new("perfetto"),
            OsStr::new("a"),
            OsStr::new("-o"),
            dir.join("t.json").as_os_str(),
        ],
    );
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("of 2 runs (1, 2)"), "{out}");
    let t = json(&std::fs::read_to_string(dir.join("t.json")).unwrap());
    let events = t["traceEvents"].as_array().unwrap();
    let processes: Vec<&Value> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .collect();
    assert_eq!(processes.len(), 2, "one process per run");
    for run in [1, 2] {
        assert!(
            processes.iter().any(|p| p["args"]["name"]
                .as_str()
                .unwrap()
                .contains(&format!("run {run},"))),
            "{processes:?}"
        );
    }
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(!slices.is_empty());
    assert!(
        slices.iter().all(|e| e["args"]["basis"].is_string()),
        "every slice names its basis"
    );
    krphase_db_ok(
        &db,
        &[
            OsStr::new("export"),
            OsStr::new("perfetto"),
            OsStr::new("b"),
            OsStr::new("-o"),
            dir.join("u.json").as_os_str(),
        ],
    );
    assert!(dir.join("u.json").is_file());
    // plot: a label plots all its runs.
    let plots = dir.join("plots");
    krphase_db_ok(
        &db,
        &[
            OsStr::new("plot"),
            OsStr::new("a"),
            OsStr::new("-d"),
            plots.as_os_str(),
        ],
    );
    let hist = std::fs::read_to_string(plots.join("hist-window.svg")).unwrap();
    assert_eq!(histogram_total(&hist), (replayed[0] + replayed[1]) as u64);
}

/// A label on two runs is refused where one run is needed; relabelling says what it did.
#[test]
fn relabelling_says_so_and_one_run_commands_refuse_a_label_on_several() {
    let (dir, db, files) = three_runs("answers-relabel");
    let ids = |v: &Value| -> Vec<i64> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].as_i64().unwrap())
            .collect()
    };
    // A command that needs one run refuses a label on two, naming them.
    let log = dir.join("empty.log");
    std::fs::write(&log, "nothing\n").unwrap();
    let o = krphase_db(
        &db,
        &[
            OsStr::new("import-log"),
            log.as_os_str(),
            OsStr::new("--run"),
            OsStr::new("a"),
        ],
    );
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("selects 2 runs (1, 2)"),
        "{}",
        output_text(&o)
    );

    // Relabelling: importing the same file with another label says so.
    let o = krphase_db_ok(
        &db,
        &[
            OsStr::new("import"),
            files[2].as_os_str(),
            OsStr::new("--label"),
            OsStr::new("c"),
        ],
    );
    assert!(
        o.contains("already imported as run 3; relabelled from \"b\" to \"c\""),
        "{o}"
    );
    let o = krphase_db_ok(
        &db,
        &[
            OsStr::new("import"),
            files[2].as_os_str(),
            OsStr::new("--label"),
            OsStr::new("c"),
        ],
    );
    assert!(
        o.contains("already imported as run 3, labelled \"c\""),
        "{o}"
    );
    let r = json(&krphase_db_ok(
        &db,
        &["report", "--run", "c", "--format", "json"],
    ));
    assert_eq!(ids(&r), vec![3]);
    assert!(!krphase_db(&db, &["report", "--run", "b"]).status.success());
}

/// Observe mode on the emulator (its driver owns replay), with only the log lines a published
/// SDK prints: every figure names its basis, the restores are inferred from dispatch records,
/// the top-level shares still sum to 100% with the pass execution the tool cannot see left
/// `unattributed`, and what the SDK prints no time for (pre-pass, drain, the whole window) is
/// said to be unavailable, why, and how to get it.
#[test]
fn observe_mode_figures_carry_their_basis_and_shares_still_sum() {
    let emu = krphase_tests::run_logged(
        "answers-observe-basis",
        &[
            "saxpy",
            "--elements",
            "65536",
            "--iterations",
            "4",
            "--driver-passes",
            "3",
        ],
        &[],
    );
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    emu.krphase(&["import-log".as_ref(), emu.log.as_os_str()]);
    let r = emu.report_run();
    assert_eq!(r["mode"], "observe");
    let phase = |n: &str| krphase_tests::report_phase(&r, n);
    // Observe mode: the restore is the SDK's outcome-line figure, the dispatch-record gap its
    // upper bound; the snapshot time is the outcome line's snap_seconds, before the passes'
    // span that stands for the window, so it has no share of it.
    assert_eq!(phase("restore")["basis"], serde_json::json!(["sdk_log"]));
    assert_eq!(
        phase("restore bound")["basis"],
        serde_json::json!(["dispatch"])
    );
    assert_eq!(phase("restore bound")["bound_of"], "restore");
    assert_eq!(phase("snapshot")["basis"], serde_json::json!(["sdk_log"]));
    assert!(phase("snapshot")["share_of_window"].is_null());
    assert_eq!(phase("window")["basis"], serde_json::json!(["dispatch"]));
    for unavailable in ["pre-pass", "drain"] {
        assert_eq!(phase(unavailable)["samples"], 0);
        let why = phase(unavailable)["missing"].as_str().unwrap();
        assert!(
            why.contains("unavailable in observe mode")
                && why.contains("snap_seconds and restore_seconds")
                && why.contains("drive mode measures it"),
            "{unavailable}: {why}"
        );
    }
    assert_eq!(phase("config")["samples"], 0);
    assert!(
        phase("config")["missing"]
            .as_str()
            .unwrap()
            .contains("observe")
    );
    let top: f64 = r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["parent"].is_null() && p["phase"] != "window")
        .filter_map(|p| p["share_of_window"].as_f64())
        .sum();
    assert!((top - 1.0).abs() < 1e-9, "top-level shares sum to {top}");
    assert!(phase("unattributed")["samples"].as_u64() > Some(0));
    let table = emu.krphase(&["report"]);
    for line in [
        "config: observe mode: no CONFIG callback",
        "pre-pass: unavailable in observe mode",
        "window: observe mode: the passes' span",
        "snapshot: no share of window time (it precedes the passes' span)",
    ] {
        assert!(table.contains(line), "{line}: {table}");
    }
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    // The trace names the basis of every slice.
    let trace = emu.dir.join("t.json");
    emu.krphase(&[
        "export".as_ref(),
        "perfetto".as_ref(),
        "1".as_ref(),
        "-o".as_ref(),
        trace.as_os_str(),
    ]);
    let t = json(&std::fs::read_to_string(&trace).unwrap());
    let restores: Vec<&Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "restore bound")
        .collect();
    assert!(!restores.is_empty());
    assert!(restores.iter().all(|e| e["args"]["basis"] == "dispatch"));
}

/// One saxpy run under `krphase-emu rocprofv3` (kernel replay of two counter groups; the tool
/// observes) with the SDK's INFO log on stderr, imported and joined under `label` (its files
/// named for `label` and `run`).
fn rocprofv3_observed_run(dir: &Path, db: &Path, label: &str, run: usize, elements: &str) {
    let a = artifacts();
    let name = format!("{label}-{run}");
    let out = dir.join(&name);
    let log = dir.join(format!("{name}.log"));
    let o = Command::new(&a.emu)
        .current_dir(dir)
        .args(["rocprofv3", "--pmc", "SQ_WAVES", "--pmc", "GRBM_COUNT"])
        .args([
            "--replay-mode",
            "kernel",
            "--kernel-replay-beta-enabled",
            "-d",
        ])
        .arg(&out)
        .arg("--")
        .arg(&a.emu)
        // A 1 GB/s emulated link: the copies, which the footprint sets, then outweigh a loaded
        // machine's run-to-run noise (runs of a few ms once differed by 16 ms between repeats).
        .args(["run", "saxpy", "--elements", elements, "--iterations", "4"])
        .args(["--link-gbps", "1"])
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("ROCPROFILER_LOG_LEVEL", "info")
        .env("KRPHASE_OUTPUT", dir.join(format!("{name}.krp")))
        .env_remove("KRPHASE_MODE")
        .env_remove("KRPHASE_EMU_TRUTH")
        .stderr(std::fs::File::create(&log).unwrap())
        .output()
        .expect("run the rocprofv3 stand-in");
    assert!(o.status.success(), "{}", output_text(&o));
    let krp = dir.join(format!("{name}.krp"));
    krphase_db_ok(
        db,
        &[
            OsStr::new("import"),
            krp.as_os_str(),
            OsStr::new("--label"),
            OsStr::new(label),
        ],
    );
    krphase_db_ok(db, &[OsStr::new("import-log"), log.as_os_str()]);
}

/// Under rocprofv3's stand-in, with only the lines a published SDK prints: the report and
/// compare say which figures are unavailable (pre-pass, drain), why (the SDK prints only
/// snap_seconds and restore_seconds) and how to get them (drive mode); the window is named the
/// passes' span; the attribution takes the SDK's snapshot as a part and states what its
/// unexplained rest holds.
#[test]
fn observe_mode_under_rocprofv3_says_what_is_unavailable_and_what_the_rest_holds() {
    let dir = scratch_dir("answers-rocprofv3-unavailable");
    let db = dir.join("k.db");
    // Three runs a side: the attribution splits only a wall change its runs show is real.
    for run in 1..=3 {
        rocprofv3_observed_run(&dir, &db, "small", run, "16384");
        rocprofv3_observed_run(&dir, &db, "large", run, "1048576");
    }
    let report = krphase_db_ok(&db, &["report", "--run", "small"]);
    for want in [
        "mode observe",
        "pre-pass: unavailable in observe mode",
        "drain: unavailable in observe mode",
        "snap_seconds and restore_seconds",
        "drive mode measures it",
        "window: observe mode: the passes' span",
    ] {
        assert!(report.contains(want), "{want}: {report}");
    }
    let text = krphase_db_ok(&db, &["compare", "small", "large"]);
    for want in [
        "not measured on either side, and why:",
        "pre-pass: unavailable in observe mode",
        "window: observe mode: the passes' span",
        "unexplained rest: wall change minus every part above",
        "lock, drain",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let c = json(&krphase_db_ok(
        &db,
        &["compare", "small", "large", "--format", "json"],
    ));
    let x = &c["details"][0]["attribution"];
    let part = |n: &str| {
        x["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["item"] == n)
            .unwrap_or_else(|| panic!("no part {n}: {x:#}"))
    };
    assert_eq!(part("snapshot")["basis"], serde_json::json!(["sdk_log"]));
    assert!(
        part("snapshot")["change_ns"].as_f64().unwrap() > 0.0,
        "a larger footprint"
    );
    assert!(
        part("unexplained rest")["note"]
            .as_str()
            .unwrap()
            .contains("Observe mode cannot split these out of what the SDK prints")
    );
    assert!(
        x["parts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["item"] != "drain" && p["item"] != "pre-pass"),
        "no part from a figure the SDK does not print: {x:#}"
    );
}
