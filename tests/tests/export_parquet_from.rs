//! `krphase export parquet --from`: the dataset straight from phase files must hold what the
//! SQLite path (`import`, then `export parquet`) writes from the same files, value for value, as
//! DuckDB reads both (`tests/parquet/compare.py`): every table's schema and every row, the
//! datasets' own ids taken as places in their run. The files cover drive mode with counters
//! (the emulator with `KRPHASE_PMC`), observe mode (the emulator under its rocprofv3 stand-in's
//! counter driver), synthetic rank files on two hosts given as a directory, and a file cut
//! before its trailer; converted by one worker and by three. The bench's checksum mode
//! (`compare.py --checksum`, per-run sums of value hashes) agrees, and both modes see one value
//! changed in one run, the checksums naming the run and the column. Then bad input: a missing
//! path, a file of another kind, a damaged phase file and one file given twice each get one line,
//! and leave the earlier dataset as it was and nothing beside it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};
use krphase_tests::{artifacts, krphase_db_ok, output_text, run_logged, scratch_dir};
use serde_json::Value;

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn krphase(args: &[&str]) -> Output {
    Command::new(&artifacts().krphase)
        .args(args)
        .output()
        .expect("run krphase")
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The inputs, in the order both paths take them: two emulator runs, then a directory of rank
/// files (walked in name order), then a file cut before its trailer.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let drive = run_logged(
        "parquet-from-drive",
        &["saxpy", "--elements", "8192", "--iterations", "5"],
        &[("KRPHASE_PMC", "SQ_WAVES GRBM_COUNT;SQ_INSTS_VALU")],
    );
    let observe = run_logged(
        "parquet-from-observe",
        &[
            "stream",
            "--elements",
            "65536",
            "--iterations",
            "4",
            "--driver-passes",
            "2",
        ],
        &[],
    );
    let ranks = dir.join("ranks");
    std::fs::create_dir_all(&ranks).unwrap();
    for r in 0..4u32 {
        let spec = SynthSpec {
            windows: 120 + 40 * u64::from(r),
            pid: 7000 + r,
            seed: u64::from(r) + 3,
            rank: Some(krphase_format::Rank {
                rank: r,
                world_size: Some(4),
                var: "SLURM_PROCID".into(),
            }),
            hostname: format!("node{}", r / 2),
            ..SynthSpec::default()
        };
        write_synthetic_file(&ranks.join(format!("rank{r}.krp")), &spec).unwrap();
    }
    let cut = dir.join("cut.krp");
    let spec = SynthSpec {
        windows: 90,
        pid: 31,
        seed: 99,
        trailer: false,
        ..SynthSpec::default()
    };
    write_synthetic_file(&cut, &spec).unwrap();
    vec![drive.krp, observe.krp, ranks, cut]
}

/// `tests/parquet/compare.py` with `mode` (`[]` or `["--checksum"]`) over `a` and `b`.
fn compare_in(mode: &[&str], a: &Path, b: &Path) -> Value {
    let o = Command::new("python3")
        .env("PYTHONPATH", krphase_tests::python::ensure())
        .arg(workspace().join("tests/parquet/compare.py"))
        .args(mode)
        .args([a, b])
        .output()
        .expect("run python3");
    assert!(o.status.success(), "compare.py: {}", output_text(&o));
    serde_json::from_slice(&o.stdout).expect("compare.py prints JSON")
}

fn compare(a: &Path, b: &Path) -> Value {
    compare_in(&[], a, b)
}

/// A copy of the dataset `src` at `dst` with one value changed: the `snapshot_bytes` of run 3's
/// first window, one more (written back by DuckDB, its other values as they were).
fn one_value_changed(src: &Path, dst: &Path) {
    let script = r#"
import shutil, sys, duckdb
src, dst = sys.argv[1:]
shutil.copytree(src, dst)
f = dst + "/windows/run=3/part-0.parquet"
duckdb.sql(f"COPY (SELECT * REPLACE (CASE WHEN window_id = (SELECT min(window_id) FROM '{f}') "
           f"THEN snapshot_bytes + 1 ELSE snapshot_bytes END AS snapshot_bytes) FROM '{f}') "
           f"TO '{dst}/changed.parquet' (FORMAT parquet)")
shutil.move(dst + "/changed.parquet", f)
"#;
    let o = Command::new("python3")
        .env("PYTHONPATH", krphase_tests::python::ensure())
        .args(["-c", script])
        .args([src, dst])
        .output()
        .expect("run python3");
    assert!(o.status.success(), "{}", output_text(&o));
}

/// `--from` with `jobs` workers into `out`; its stdout.
fn from(paths: &[PathBuf], out: &Path, jobs: &str) -> String {
    let mut args = vec![
        "export",
        "parquet",
        "-d",
        out.to_str().unwrap(),
        "--jobs",
        jobs,
    ];
    args.push("--from");
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    let o = krphase(&args);
    assert!(o.status.success(), "{}", output_text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_dataset_from_phase_files_equals_the_sqlite_paths() {
    let dir = scratch_dir("export-parquet-from");
    let paths = inputs(&dir);
    let db = dir.join("k.db");
    let mut args: Vec<&str> = vec!["import"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    krphase_db_ok(&db, &args);
    let via_db = dir.join("via-db");
    let printed = krphase_db_ok(&db, &["export", "parquet", "-d", via_db.to_str().unwrap()]);
    for jobs in ["1", "3"] {
        let direct = dir.join(format!("direct-{jobs}"));
        let lines = from(&paths, &direct, jobs);
        // The same lines as the SQLite path's, but for the directory's name.
        assert_eq!(
            lines.replace(direct.to_str().unwrap(), "DS"),
            printed.replace(via_db.to_str().unwrap(), "DS"),
        );
        let c = compare(&via_db, &direct);
        assert_eq!(c["schema_differs"], serde_json::json!([]), "{c}");
        assert_eq!(c["only_in_a"], serde_json::json!({}), "{c}");
        assert_eq!(c["only_in_b"], serde_json::json!({}), "{c}");
        let rows = &c["rows"];
        for t in ["runs", "windows", "passes", "dispatches", "counters"] {
            assert_eq!(rows[t][0], rows[t][1], "{t}: {c}");
            assert!(rows[t][0].as_u64().unwrap() > 0, "{t} has rows: {c}");
        }
        assert_eq!(rows["runs"][0], 7, "{c}");
        // The bench's bounded-memory mode agrees, with the same rows.
        let sums = compare_in(&["--checksum"], &via_db, &direct);
        assert_eq!(sums["schema_differs"], serde_json::json!([]), "{sums}");
        assert_eq!(sums["differs"], serde_json::json!({}), "{sums}");
        assert_eq!(sums["rows"], c["rows"], "{sums}");
        let marker: Value =
            serde_json::from_slice(&std::fs::read(direct.join("_krphase.json")).unwrap()).unwrap();
        assert_eq!(marker["runs"], serde_json::json!([1, 2, 3, 4, 5, 6, 7]));
        assert!(marker["database"].is_null(), "{marker}");
    }
    // One value changed in one run: both modes see it, the checksums name the run and column.
    let changed = dir.join("changed");
    one_value_changed(&dir.join("direct-1"), &changed);
    let c = compare(&via_db, &changed);
    assert_eq!(
        c["only_in_a"]["windows"].as_array().map(Vec::len),
        Some(1),
        "{c}"
    );
    assert_eq!(
        c["only_in_b"]["windows"].as_array().map(Vec::len),
        Some(1),
        "{c}"
    );
    let sums = compare_in(&["--checksum"], &via_db, &changed);
    assert_eq!(
        sums["differs"],
        serde_json::json!({"windows": {"runs": [3], "runs_differing": 1,
                                       "columns": ["row", "snapshot_bytes"]}}),
        "{sums}"
    );
}

/// `--from` that must fail: one line naming the problem, the earlier dataset untouched and
/// nothing left beside it.
fn refused(paths: &[&Path], out: &Path, what: &str) {
    let before = names(out.parent().unwrap());
    let kept = names(out);
    let mut args = vec!["export", "parquet", "-d", out.to_str().unwrap(), "--from"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    let o = krphase(&args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "{what}: {}", output_text(&o));
    assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
    assert!(err.contains(what), "{what}: {err}");
    assert_eq!(names(out.parent().unwrap()), before, "{what}");
    assert_eq!(names(out), kept, "{what}");
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let dir = scratch_dir("export-parquet-from-bad");
    let good = dir.join("good.krp");
    write_synthetic_file(&good, &SynthSpec::default()).unwrap();
    let out = dir.join("out").join("ds");
    from(std::slice::from_ref(&good), &out, "2");
    assert_eq!(names(&out.join("windows")), ["run=1"]);

    refused(&[&good, &dir.join("missing.krp")], &out, "missing.krp");
    let log = dir.join("stderr.log");
    std::fs::write(
        &log,
        "I20251204 10:00:00.000000 1 kernel_replay.cpp:1] [kernel-replay] dispatch_id=1 outcome=replayed\n",
    )
    .unwrap();
    refused(&[&good, &log], &out, "phase files only");
    // A damaged block after good ones: the decoder's error, after the first worker wrote.
    let mut bytes = std::fs::read(&good).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    let damaged = dir.join("damaged.krp");
    std::fs::write(&damaged, bytes).unwrap();
    refused(&[&good, &damaged], &out, "damaged.krp");
    let copy = dir.join("copy.krp");
    std::fs::copy(&good, &copy).unwrap();
    refused(&[&good, &copy], &out, "same content");
}

/// A directory as `krphase run -d DIR` leaves it (a phase file beside its SDK log): the phase file
/// is exported and one line says what was left out; the same log named directly is refused.
#[test]
fn a_directory_gives_its_phase_files_and_says_what_it_left_out() {
    let dir = scratch_dir("export-parquet-from-dir");
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    write_synthetic_file(&run.join("app.krp"), &SynthSpec::default()).unwrap();
    std::fs::write(
        run.join("app.stderr.log"),
        "I20251204 10:00:00.000000 1 kernel_replay.cpp:1] [kernel-replay] dispatch_id=1 outcome=replayed\n",
    )
    .unwrap();
    let out = dir.join("ds");
    let o = krphase(&[
        "export",
        "parquet",
        "-d",
        out.to_str().unwrap(),
        "--from",
        run.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("left out 1 file(s)") && err.contains("app.stderr.log"),
        "{err}"
    );
    assert_eq!(names(&out.join("windows")), ["run=1"]);
}
