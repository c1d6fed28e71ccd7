//! The seed's own files read as they are: a rocprofv3-benchmark database whose kernel-replay
//! config row the seed's hash filled from two rocprofv3 configs (`--replay-mode kernel` and the
//! beta flag alone) is flagged, and a replay_perf.py CSV whose rocprofv3 got `--replay-mode
//! kernel` from a `--rocprofv3` wrapper reports P6's tax. Both through the `krphase` binary.

use std::path::Path;
use std::process::{Command, Output};

use krphase_analyzer::import::measurement_csv;
use krphase_analyzer::synth_benchmark::{SeedSession, write_seed_session};
use krphase_tests::{artifacts, output_text, path_with_artifacts, scratch_dir};

fn krphase(dir: &Path, args: &[&str]) -> Output {
    Command::new(&artifacts().krphase)
        .current_dir(dir)
        .args(args)
        .env("PATH", path_with_artifacts())
        .output()
        .expect("run krphase")
}

/// stdout and stderr of a successful `krphase ARGS`.
fn ok_output(dir: &Path, args: &[&str]) -> (String, String) {
    let o = krphase(dir, args);
    assert!(o.status.success(), "krphase {args:?}: {}", output_text(&o));
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Everything a successful `krphase ARGS` printed.
fn ok(dir: &Path, args: &[&str]) -> String {
    let (out, err) = ok_output(dir, args);
    out + &err
}

/// A successful `krphase ARGS --format json`'s JSON.
fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let (out, _) = ok_output(dir, &[args, &["--format", "json"]].concat());
    serde_json::from_str(&out).expect("JSON on stdout")
}

/// Two sessions of the seed's harness in one database, 3 iterations each: SDK 7.0.0 with
/// `replay_4_groups` alone, SDK 7.1.0 with a beta-flag-only copy of it beside (one row under
/// the seed's hash, 6 runs against the session's 3 baseline runs). Only 7.1.0's kernel-replay
/// rows are invalid, each saying how that was inferred; 7.0.0's stay valid.
#[test]
fn a_benchmark_config_row_filled_by_two_configs_is_flagged() {
    let dir = scratch_dir("seed-benchmark-db");
    let db = dir.join("benchmark.db");
    let app = ["transpose".to_string(), "1".into(), "100".into()];
    for (sdk, mixed, start_s) in [("7.0.0", false, 0), ("7.1.0", true, 3600)] {
        let session = SeedSession {
            sdk_version: sdk,
            iterations: 3,
            beta_only_config: mixed,
            start_s,
        };
        write_seed_session(&db, &app, &session).unwrap();
    }
    let imported = ok(
        &dir,
        &[
            "--db",
            "k.db",
            "import-benchmark",
            "benchmark.db",
            "--label",
            "seed",
        ],
    );
    let json = json(&dir, &["--db", "k.db", "report"]);
    let rows = json["measurements"].as_array().expect("measurements");
    let replay: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|m| m["mode"] == "kernel-replay")
        .collect();
    // wall_time and cpu_time of each session's kernel-replay row.
    assert_eq!(replay.len(), 4, "{json:#}");
    for m in replay {
        let detail = m["detail"].as_str().unwrap();
        let second_session = detail.contains("sdk=2");
        assert_eq!(m["valid"], !second_session, "{m:#}");
        if second_session {
            let why = m["invalid_reason"].as_str().unwrap();
            assert!(
                why.contains("inferred from run counts: 6 runs where the session has 3 baseline")
                    && why.contains("ignores --replay-mode"),
                "{why}"
            );
        } else {
            assert!(m["mixed_modes"].is_null(), "{m:#}");
        }
    }
    assert!(
        imported.contains("inferred from run counts"),
        "the import warns: {imported}"
    );
}

/// `krphase bench --only p6` on the emulator under the rocprofv3 stand-in gives the phase files
/// and a CSV in replay_perf.py's layout; its commands are rewritten to what replay_perf.py
/// records when `--rocprofv3` names a wrapper that adds `--replay-mode kernel` (the seed never
/// writes that flag). Imported with `import-harness`, P6's replay-active row is valid (its 3
/// groups ran in one launch each) and the report gives the tax: (replay active - baseline
/// median) / dispatches, here computed from the CSV and the workload's 50 dispatches per run.
#[test]
fn p6_of_a_harness_run_in_kernel_mode_reports_its_tax() {
    let dir = scratch_dir("seed-p6");
    ok(
        &dir,
        &[
            "bench",
            "--rocprofv3",
            "krphase-emu rocprofv3",
            "--repeats",
            "2",
            "--warmup",
            "0",
            "--groups",
            "3",
            "--only",
            "p6",
            "--db",
            "bench.db",
            "--output",
            "bench.csv",
            "--app",
            "krphase-emu",
            "run",
            "stream",
        ],
    );
    let csv = std::fs::read_to_string(dir.join("bench.csv")).unwrap();
    assert!(csv.contains("krphase-emu rocprofv3 ") && csv.contains(" --replay-mode kernel"));
    let seed_csv = csv
        .replace("krphase-emu rocprofv3 ", "rocprofv3-kernel-mode ")
        .replace(" --replay-mode kernel", "");
    std::fs::write(dir.join("replay_perf.csv"), &seed_csv).unwrap();
    let imported = ok(
        &dir,
        &[
            "--db",
            "seed.db",
            "import-harness",
            "replay_perf.csv",
            "--workdir",
            ".",
        ],
    );
    let report = ok(&dir, &["--db", "seed.db", "report"]);
    assert!(!report.contains("tax INVALID"), "{report}");
    assert!(report.contains("/dispatch over whole runs"), "{report}");
    assert!(
        report.contains("replay configured, inferred"),
        "the basis of the verdict is said: {report}"
    );
    let json = json(&dir, &["--db", "seed.db", "report"]);
    let tax = &json["bench"]["p6_dispatch_tax"];
    assert_eq!(tax["valid"], true, "{tax:#}\n{imported}");
    assert_eq!(tax["dispatches_per_run"], 50.0, "stream: 5 kernels x 10");
    let rows = measurement_csv::read_csv(&dir.join("replay_perf.csv")).unwrap();
    let median = |v: &str| {
        rows.iter()
            .find(|r| r.variant == v)
            .and_then(|r| r.timing)
            .unwrap()
            .median_s
    };
    let expected_ns = (median("replay-active-none-matched") - median("no-replay")) / 50.0 * 1e9;
    let got = tax["whole_run_tax_per_dispatch_ns"].as_f64().unwrap();
    assert!(
        (got - expected_ns).abs() <= 1e-6 * expected_ns.abs().max(1.0),
        "{got} vs {expected_ns}"
    );
}
