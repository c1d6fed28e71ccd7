//! One `krphase import PATH...` for every kind krphase reads, end to end: a directory holding one
//! file of each kind (a phase file, the SDK log, a rocpd database, all three from one run under
//! the rocprofv3 stand-in; replay_perf.py's CSV; a rocprofv3-benchmark database) imports each
//! once, recognized by content whatever its name, and a PNG beside them is skipped with one note
//! line; a PNG named on the command line refuses the whole import in one line that names the
//! kinds, and the database is left as it was.

use std::path::{Path, PathBuf};
use std::process::Command;

use krphase_tests::{artifacts, krphase_db, output_text, scratch_dir};
use rusqlite::Connection;

/// The kinds as the refusal must name them.
const KINDS: [&str; 5] = [
    "phase file",
    "rocpd database",
    "SDK log",
    "replay_perf.py CSV",
    "rocprofv3-benchmark database",
];

/// A directory holding one file of each kind, named so that no name tells the kind, and a PNG.
struct Mixed {
    dir: PathBuf,
    /// phase file, SDK log, rocpd database, replay_perf CSV, benchmark database.
    files: [PathBuf; 5],
    png: PathBuf,
}

/// The phase file, stderr and rocpd database of one STREAM run under the rocprofv3 stand-in
/// (libkrphase.so observing), then the fixtures, all copied into one directory.
fn mixed(name: &str) -> Mixed {
    let a = artifacts();
    let work = scratch_dir(&format!("{name}-run"));
    let log = work.join("stderr.txt");
    let o = Command::new(&a.emu)
        .current_dir(&work)
        .arg("rocprofv3")
        .args(["--replay-mode", "kernel", "--kernel-replay-beta-enabled"])
        .args(["--pmc", "SQ_WAVES", "GRBM_COUNT", "--pmc", "SQ_INSTS_VALU"])
        .args(["-d", "out", "-o", "run", "--output-format", "rocpd", "--"])
        .arg(&a.emu)
        .args(["run", "stream", "--elements", "4096", "--iterations", "2"])
        .env("PATH", krphase_tests::path_with_artifacts())
        .env("ROCP_TOOL_LIBRARIES", format!("{}:", a.tool_lib.display()))
        .env("ROCPROFILER_LOG_LEVEL", "info")
        .env("KRPHASE_MODE", "observe")
        .env("KRPHASE_OUTPUT", work.join("app.krp"))
        .env("KRPHASE_WAIT_BUDGET_MS", "2000")
        .env_remove("KRPHASE_EMU_DRIVER_PASSES")
        .env_remove("KRPHASE_EMU_DRIVER_FILTER")
        .stderr(std::fs::File::create(&log).unwrap())
        .output()
        .expect("run krphase-emu rocprofv3");
    assert!(o.status.success(), "{}", output_text(&o));
    let dir = scratch_dir(name);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/bench");
    let files = [
        dir.join("a"),
        dir.join("b.txt"),
        dir.join("c.bin"),
        dir.join("d.dat"),
        dir.join("e.sqlite"),
    ];
    std::fs::copy(work.join("app.krp"), &files[0]).unwrap();
    std::fs::copy(&log, &files[1]).unwrap();
    std::fs::copy(work.join("out/run_results.db"), &files[2]).unwrap();
    std::fs::copy(fixtures.join("replay_perf.csv"), &files[3]).unwrap();
    let bench = Connection::open(&files[4]).unwrap();
    krphase_analyzer::db::benchmark::enable_dqs(&bench).unwrap();
    bench
        .execute_batch(&std::fs::read_to_string(fixtures.join("benchmark_new.sql")).unwrap())
        .unwrap();
    drop(bench);
    let png = dir.join("plot.png");
    write_png(&png);
    Mixed { dir, files, png }
}

/// A 2x2 grey PNG.
fn write_png(path: &Path) {
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(file, 2, 2);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().unwrap();
    w.write_image_data(&[0, 64, 128, 255]).unwrap();
}

fn count(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_directory_of_every_kind_imports_each_once_and_skips_a_png_in_one_line() {
    let m = mixed("import-any-dir");
    let db = m.dir.parent().unwrap().join("import-any-dir.db");
    let _ = std::fs::remove_file(&db);
    let o = krphase_db(&db, &["import".as_ref(), m.dir.as_os_str()]);
    assert!(o.status.success(), "{}", output_text(&o));
    // Each importer names its file once in what it prints.
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    for f in &m.files {
        let shown = f.display().to_string();
        assert_eq!(
            printed.matches(&shown).count(),
            1,
            "{shown} imported once: {}",
            output_text(&o)
        );
    }
    let stderr = String::from_utf8_lossy(&o.stderr);
    let png_lines: Vec<&str> = stderr.lines().filter(|l| l.contains("plot.png")).collect();
    assert_eq!(png_lines.len(), 1, "{}", output_text(&o));
    assert!(
        png_lines[0].contains("skipped 1 file"),
        "{}",
        output_text(&o)
    );
    // What each kind stored, against what the files hold.
    let c = Connection::open(&db).unwrap();
    assert_eq!(count(&c, "SELECT COUNT(*) FROM krphase_run"), 1);
    assert_eq!(count(&c, "SELECT COUNT(*) FROM krphase_rocpd_file"), 1);
    let rocpd = Connection::open(&m.files[2]).unwrap();
    assert_eq!(
        count(&c, "SELECT COUNT(*) FROM krphase_rocpd_dispatch"),
        count(&rocpd, "SELECT COUNT(*) FROM rocpd_kernel_dispatch"),
        "every rocpd dispatch attached"
    );
    let csv_rows = std::fs::read_to_string(&m.files[3])
        .unwrap()
        .lines()
        .count() as i64
        - 1;
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM krphase_measurement WHERE source = 'replay_perf'"
        ),
        csv_rows
    );
    // One measurement per benchmark config.
    let bench = Connection::open(&m.files[4]).unwrap();
    assert_eq!(
        count(
            &c,
            "SELECT COUNT(*) FROM krphase_measurement WHERE source = 'rocprofv3-benchmark'"
        ),
        count(&bench, "SELECT COUNT(*) FROM benchmark_config")
    );
    let report = krphase_tests::krphase_db_ok(&db, &["report", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(v["runs"][0]["log_joined"], true, "the SDK log joined");
}

#[test]
fn a_png_named_explicitly_is_refused_in_one_line_naming_the_kinds_and_nothing_changes() {
    let m = mixed("import-any-png");
    let db = m.dir.parent().unwrap().join("import-any-png.db");
    let _ = std::fs::remove_file(&db);
    let o = krphase_db(&db, &["import".as_ref(), m.files[3].as_os_str()]);
    assert!(o.status.success(), "{}", output_text(&o));
    let before = std::fs::read(&db).unwrap();
    // With files it reads beside it: the whole import is refused.
    let o = krphase_db(
        &db,
        &[
            "import".as_ref(),
            m.files[0].as_os_str(),
            m.png.as_os_str(),
            m.files[1].as_os_str(),
        ],
    );
    assert!(!o.status.success(), "{}", output_text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("plot.png"), "{stderr}");
    for kind in KINDS {
        assert!(stderr.contains(kind), "names {kind:?}: {stderr}");
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database is unchanged"
    );
}
