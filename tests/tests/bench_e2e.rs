//! `krphase bench` end to end on the emulator: the must-show command (trimmed to P1, a
//! small P3, P5 and P6 so it stays fast), checked against the emulator's ground truth; the CSV
//! re-imported through `import-harness`; failure rows; Ctrl-C.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Output};

use krphase_analyzer::db::measurements::Failures;
use krphase_analyzer::import::measurement_csv;
use krphase_tests::{artifacts, output_text, path_with_artifacts, read_truth, scratch_dir};
use rusqlite::Connection;

fn krphase(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(&artifacts().krphase)
        .current_dir(dir)
        .args(args)
        .env("PATH", path_with_artifacts())
        .envs(env.iter().copied())
        .output()
        .expect("run krphase")
}

/// Replayed windows per pid in the ground truth, and the requested passes seen.
fn truth_replayed(path: &Path) -> (HashMap<i64, usize>, HashSet<i64>) {
    let mut per_pid = HashMap::new();
    let mut passes = HashSet::new();
    for v in read_truth(path) {
        if v["type"] == "window" && v["outcome"] == "replayed" {
            *per_pid.entry(v["pid"].as_i64().unwrap()).or_insert(0) += 1;
            passes.insert(v["requested_passes"].as_i64().unwrap());
        }
    }
    (per_pid, passes)
}

fn measurement_id(conn: &Connection, variant: &str) -> i64 {
    conn.query_row(
        "SELECT id FROM krphase_measurement WHERE variant = ?1",
        [variant],
        |r| r.get(0),
    )
    .unwrap_or_else(|e| panic!("measurement {variant}: {e}"))
}

/// (pid, replayed windows in the phase file) of every run linked to a measurement.
fn linked_runs(conn: &Connection, measurement: i64) -> Vec<(i64, usize)> {
    let mut stmt = conn
        .prepare(
            "SELECT r.pid, (SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = r.id AND \
             w.outcome = 'replayed') FROM krphase_measurement_run mr JOIN krphase_run r ON r.id \
             = mr.run_id WHERE mr.measurement_id = ?1 ORDER BY r.pid",
        )
        .unwrap();
    stmt.query_map([measurement], |r| {
        Ok((r.get(0)?, r.get::<_, i64>(1)? as usize))
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

#[test]
// One end-to-end scenario checked step by step; splitting it would scatter its assertions.
#[allow(clippy::too_many_lines)]
fn bench_must_show_trimmed_agrees_with_ground_truth() {
    let dir = scratch_dir("bench-e2e");
    let truth = dir.join("truth.jsonl");
    let truth_s = truth.display().to_string();
    let o = krphase(
        &dir,
        &[
            "bench",
            "--rocprofv3",
            "krphase-emu rocprofv3",
            "--repeats",
            "2",
            "--warmup",
            "1",
            "--groups",
            "3",
            "--only",
            "p1",
            "p3",
            "p5",
            "p6",
            "--footprints",
            "8192",
            "--db",
            "bench.db",
            "--output",
            "bench.csv",
            "--app",
            "krphase-emu",
            "run",
            "stream",
        ],
        &[("KRPHASE_EMU_TRUTH", &truth_s)],
    );
    assert!(o.status.success(), "{}", output_text(&o));

    // The CSV: replay_perf.py's header, one row per measurement, every run successful.
    let csv = std::fs::read_to_string(dir.join("bench.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        measurement_csv::COLUMNS.join(",")
    );
    let rows = measurement_csv::read_csv(&dir.join("bench.csv")).unwrap();
    let variants: Vec<&str> = rows.iter().map(|r| r.variant.as_str()).collect();
    assert_eq!(
        variants,
        [
            "application-replay-run-0",
            "application-replay-run-1",
            "application-replay-run-2",
            "application-replay-all-groups",
            "multiplexed-all-groups",
            "replay-all-groups",
            "elements-8192",
            "drain-share",
            "no-replay",
            "replay-active-none-matched",
            "krphase-off",
            "krphase-drive-untraced",
            "krphase-drive-traced",
        ]
    );
    for r in &rows {
        assert_eq!(r.samples, 2, "{r:?}");
        assert_eq!(r.failures, Failures::Count(0), "{r:?}");
    }
    let total = &rows[3];
    let sum: f64 = rows[..3].iter().map(|r| r.timing.unwrap().median_s).sum();
    assert!((total.timing.unwrap().median_s - sum).abs() < 1e-9);

    // The database: each measurement's timed runs linked, windows as the emulator had them.
    let conn = Connection::open(dir.join("bench.db")).unwrap();
    let (truth_windows, truth_passes) = truth_replayed(&truth);
    assert_eq!(
        truth_passes,
        HashSet::from([3]),
        "every replay had G = 3 passes"
    );
    for (variant, runs, replayed) in [
        ("application-replay-run-0", 2, false),
        ("multiplexed-all-groups", 2, false),
        ("replay-all-groups", 2, true),
        ("elements-8192", 2, true),
        ("drain-share", 2, true),
        ("no-replay", 2, false),
        ("replay-active-none-matched", 2, false),
    ] {
        let linked = linked_runs(&conn, measurement_id(&conn, variant));
        assert_eq!(linked.len(), runs, "{variant}: {linked:?}");
        for (pid, windows) in linked {
            let expected = truth_windows.get(&pid).copied().unwrap_or(0);
            assert_eq!(windows, expected, "{variant} pid {pid}");
            assert_eq!(
                windows > 0,
                replayed,
                "{variant} pid {pid}: {windows} windows"
            );
        }
    }
    let derived = linked_runs(
        &conn,
        measurement_id(&conn, "application-replay-all-groups"),
    );
    assert_eq!(derived.len(), 6, "the total links the single-group runs");

    // P5 and P6 in the summary (bench's stdout and `krphase report`).
    let s = krphase_analyzer::bench::summary::summarize(&conn)
        .unwrap()
        .unwrap();
    // P5 under rocprofv3 (observe mode): the SDK prints no drain time, so no window carries
    // one, and the summary says why and how to get it instead of a share.
    let drain = s.drain.expect("P5 measured");
    assert!(
        drain.windows > 0 && drain.windows_with_drain == 0,
        "{drain:?}"
    );
    assert_eq!((drain.share, drain.prepass_share), (None, None));
    let why = drain.unavailable.as_deref().unwrap_or_default();
    assert!(
        why.contains("snap_seconds and restore_seconds") && why.contains("drive mode"),
        "{why}"
    );
    let tax = s.tax.expect("P6 measured");
    let dispatches = tax.dispatches_per_run.unwrap();
    assert_eq!(dispatches, 50.0, "stream: 5 kernels x 10 iterations");
    assert!(tax.whole_run_tax_per_dispatch_s.is_some());
    let f = &s.footprints[0];
    assert_eq!(
        f.sdk_bytes_per_window.map(|b| b > 8192.0 * 3.0 * 8.0),
        Some(true),
        "{f:?}"
    );
    let report = krphase(&dir, &["--db", "bench.db", "report"], &[]);
    assert!(report.status.success(), "{}", output_text(&report));
    let out = String::from_utf8_lossy(&report.stdout);
    assert!(out.contains("P5  drain share of window"), "{out}");
    assert!(out.contains("drain unavailable: observe mode"), "{out}");
    assert!(out.contains("P6  non-replayed dispatch tax"), "{out}");
    assert!(tax.in_process_tax_per_dispatch_ns.is_some(), "{tax:?}");
    assert!(drain.median_window_share.is_none(), "{drain:?}");
    // The JSON report carries the same P5/P6 figures, units in the field names.
    let json = krphase(
        &dir,
        &["--db", "bench.db", "report", "--format", "json"],
        &[],
    );
    assert!(json.status.success(), "{}", output_text(&json));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let b = &v["bench"];
    // JSON text need not round-trip an f64 to the last bit: compare to 1e-9 relative.
    let near = |got: Option<f64>, want: Option<f64>, what: &str| match (got, want) {
        (Some(g), Some(w)) => assert!(
            (g - w).abs() <= 1e-9 * w.abs().max(1.0),
            "{what}: {g} vs {w}"
        ),
        _ => assert_eq!(got, want, "{what}"),
    };
    assert!(b["p5_drain"]["drain_share_of_window_fraction"].is_null());
    assert_eq!(b["p5_drain"]["unavailable"].as_str(), Some(why));
    near(
        b["p6_dispatch_tax"]["dispatches_per_run"].as_f64(),
        Some(50.0),
        "dispatches per run",
    );
    near(
        b["p6_dispatch_tax"]["in_process_tax_per_dispatch_ns"].as_f64(),
        tax.in_process_tax_per_dispatch_ns,
        "in-process tax",
    );
    assert!(b["p6_dispatch_tax"]["whole_run_tax_per_dispatch_ns"].is_number());
    let experiments: Vec<&str> = b["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["experiment"].as_str().unwrap())
        .collect();
    assert_eq!(experiments, ["P1", "P3", "P5", "P6"]);

    // The CSV re-imported as replay_perf output: rows linked to the same phase files.
    let imp = krphase(
        &dir,
        &[
            "--db",
            "imported.db",
            "import-harness",
            "bench.csv",
            "--workdir",
            ".",
        ],
        &[],
    );
    assert!(imp.status.success(), "{}", output_text(&imp));
    let conn2 = Connection::open(dir.join("imported.db")).unwrap();
    let linked: i64 = conn2
        .query_row("SELECT COUNT(*) FROM krphase_measurement_run", [], |r| {
            r.get(0)
        })
        .unwrap();
    // 9 rows with an output directory x 2 timed runs, P6's two drive rows x 2 (the tool-off
    // row writes no phase file), and the total row linked to the 3 single-group measurements'
    // runs.
    assert_eq!(linked, 18 + 4 + 6, "{}", output_text(&imp));
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn always_failing_measurements_are_still_rows() {
    let dir = scratch_dir("bench-fail");
    let o = krphase(
        &dir,
        &[
            "bench",
            "--rocprofv3",
            "false",
            "--no-tool",
            "--repeats",
            "2",
            "--warmup",
            "0",
            "--only",
            "p6",
            "--output",
            "f.csv",
            "--app",
            "true",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", output_text(&o));
    let rows = measurement_csv::read_csv(&dir.join("f.csv")).unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!((r.samples, r.failures, r.timing), (0, Failures::All, None));
    }
    let missing = krphase(
        &dir,
        &[
            "bench",
            "--rocprofv3",
            "/no/such/rocprofv3",
            "--app",
            "true",
        ],
        &[],
    );
    assert_eq!(missing.status.code(), Some(2), "{}", output_text(&missing));
}

#[test]
fn ctrl_c_writes_the_finished_rows_and_exits_non_zero() {
    let dir = scratch_dir("bench-ctrlc");
    let fifo = dir.join("started");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // The fake launcher finishes the baseline at once and blocks in the filtered measurement
    // after telling the test (through the FIFO) that it is running.
    let launcher = dir.join("fake-rocprofv3");
    write_script(
        &launcher,
        &format!(
            "case \"$*\" in *p6-filtered*) echo running > '{}'; exec sleep 60;; esac\nexit 0",
            fifo.display()
        ),
    );
    let mut cmd = Command::new(&artifacts().krphase);
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let child = cmd
        .current_dir(&dir)
        .args(["bench", "--rocprofv3"])
        .arg(&launcher)
        .args([
            "--no-tool",
            "--repeats",
            "1",
            "--warmup",
            "0",
            "--only",
            "p6",
            "--output",
            "c.csv",
            "--app",
            "true",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Blocks until the launcher of the second measurement is running.
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(&fifo).unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "running");
    // Ctrl-C at a terminal signals the whole foreground process group.
    let pgid = format!("-{}", child.id());
    assert!(
        Command::new("kill")
            .args(["-INT", "--", &pgid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", output_text(&out));
    let rows = measurement_csv::read_csv(&dir.join("c.csv")).unwrap();
    let variants: Vec<String> = rows.into_iter().map(|r| r.variant).collect();
    assert_eq!(variants, vec!["no-replay".to_string()]);
}
