//! `krphase export parquet` read by DuckDB (its Python package, `tests/parquet/query.py`): a
//! database of several runs (the emulator in drive mode, in observe mode with its SDK log joined,
//! and synthetic rank files) is exported, and the figures DuckDB computes over all runs at once
//! must equal the SQLite report's, run by run: windows, and per phase the samples, the total, the
//! maximum (exact), the mean and the median and 90th percentile (to the ns). The schema DuckDB
//! sees is checked against `tests/golden/parquet-schema.txt` (`KRPHASE_BLESS=1` rewrites it), and
//! every DuckDB query of `docs/parquet.md` runs as written, and every Spark SQL query there,
//! translated by sqlglot, answers the same. Then the error paths: a re-export
//! replaces the dataset whole, a directory of other files is refused, an unwritable one is one
//! line, and neither leaves anything behind.

use std::path::{Path, PathBuf};
use std::process::Command;

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};
use krphase_tests::{krphase_db, krphase_db_ok, output_text, run_logged};
use serde_json::Value;

/// Synthetic rank files in the database, two a host.
const RANKS: u64 = 4;

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// `python3` with the pinned packages (DuckDB among them) on its path.
fn python() -> Command {
    let mut cmd = Command::new("python3");
    cmd.env("PYTHONPATH", krphase_tests::python::ensure());
    cmd
}

/// A database of six runs: drive and observe mode on the emulator (the observe run's SDK log
/// joined; no rank) and four synthetic rank files of different sizes on two hosts.
fn database(dir: &Path) -> PathBuf {
    let db = dir.join("k.db");
    let drive = run_logged(
        "export-parquet-drive",
        &["saxpy", "--elements", "65536", "--iterations", "8"],
        &[("KRPHASE_PASSES", "3")],
    );
    let observe = run_logged(
        "export-parquet-observe",
        &[
            "stream",
            "--elements",
            "65536",
            "--iterations",
            "6",
            "--driver-passes",
            "2",
        ],
        &[],
    );
    krphase_db_ok(&db, &["import".as_ref(), drive.krp.as_os_str()]);
    krphase_db_ok(&db, &["import".as_ref(), observe.krp.as_os_str()]);
    let joined = krphase_db_ok(&db, &["import-log".as_ref(), observe.log.as_os_str()]);
    assert!(joined.contains("joined to run 2"), "{joined}");
    let ranks: Vec<PathBuf> = (0..RANKS)
        .map(|r| {
            let p = dir.join(format!("rank{r}.krp"));
            write_synthetic_file(
                &p,
                &SynthSpec {
                    windows: 300 + 150 * ((r + 2) % RANKS),
                    pid: 9000 + r as u32,
                    seed: 11 + r,
                    rank: Some(krphase_format::Rank {
                        rank: r as u32,
                        world_size: Some(RANKS as u32),
                        var: "OMPI_COMM_WORLD_RANK".into(),
                    }),
                    hostname: format!("node{}", r / 2),
                    ..SynthSpec::default()
                },
            )
            .unwrap();
            p
        })
        .collect();
    let mut args = vec!["import".as_ref(), "--label".as_ref(), "ranks".as_ref()];
    args.extend(ranks.iter().map(|p| p.as_os_str()));
    krphase_db_ok(&db, &args);
    db
}

fn query(dataset: &Path) -> Value {
    let o = python()
        .arg(workspace().join("tests/parquet/query.py"))
        .arg(dataset)
        .arg(workspace().join("docs/parquet.md"))
        .output()
        .expect("run python3");
    assert!(o.status.success(), "query.py: {}", output_text(&o));
    serde_json::from_slice(&o.stdout).expect("query.py prints JSON")
}

/// `a` and `b` as numbers (or both null) within `tol`.
fn close(a: &Value, b: &Value, tol: f64) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= tol,
        (None, None) => a.is_null() && b.is_null(),
        _ => false,
    }
}

/// One run of the report against DuckDB's figures of the same run.
fn check_run(report: &Value, duck: &Value) {
    let id = &report["run_id"];
    assert_eq!(duck["replayed"], report["windows"]["replayed"], "run {id}");
    assert_eq!(
        duck["declined"].as_u64().unwrap_or(0),
        report["windows"]["declined"].as_u64().unwrap(),
        "run {id}"
    );
    assert_eq!(duck["hostname"], report["host"], "run {id}");
    // The report names a rank only when the run has one; the dataset's rank is NULL then.
    assert_eq!(duck["rank"], report["rank"]["rank"], "run {id}");
    let mut compared = 0;
    for p in report["phases"].as_array().unwrap() {
        let name = p["phase"].as_str().unwrap();
        if name == "unattributed" {
            // The window minus its phases: no column of its own.
            continue;
        }
        let d = &duck["phases"][name];
        let what = format!("run {id} phase {name}: report {p} duckdb {d}");
        assert_eq!(d["samples"], p["samples"], "{what}");
        if p["samples"].as_u64() == Some(0) {
            continue;
        }
        compared += 1;
        // The report's total is the sum clamped at zero (a phase can measure negative).
        assert_eq!(d["positive_ns"], p["total_ns"], "{what}");
        assert_eq!(d["max_ns"], p["max_ns"], "{what}");
        // The report prints means to 0.01 ns and quantiles to the ns.
        assert!(close(&d["mean_ns"], &p["mean_ns"], 0.005 + 1e-9), "{what}");
        assert!(close(&d["p50_ns"], &p["p50_ns"], 0.5 + 1e-9), "{what}");
        assert!(close(&d["p90_ns"], &p["p90_ns"], 0.5 + 1e-9), "{what}");
        assert!(close(&d["p99_ns"], &p["p99_ns"], 0.5 + 1e-9), "{what}");
    }
    assert!(compared >= 3, "run {id}: only {compared} phases measured");
}

/// The report's cross-rank summary (`report --by rank`) against DuckDB's over the same ranks.
fn check_ranks(db: &Path, q: &Value) {
    let v: Value = serde_json::from_str(&krphase_db_ok(
        db,
        &["report", "--by", "rank", "--format", "json"],
    ))
    .unwrap();
    let c = &v["ranks"];
    let d = &q["cross_rank"];
    assert_eq!(c["ranks"].as_array().unwrap().len() as u64, RANKS, "{c}");
    assert_eq!(c["unranked_runs"], serde_json::json!([1, 2]), "{c}");
    assert_eq!(d["slowest"], c["slowest"], "duckdb {d} report {c}");
    for spread in ["replay", "mean_window"] {
        for f in ["n", "min", "median", "max"] {
            assert!(
                close(&d[spread][f], &c[spread][f], 1e-6),
                "{spread}.{f}: duckdb {d} report {c}"
            );
        }
    }
    for row in c["ranks"].as_array().unwrap() {
        let run = &q["runs"][row["run_id"].to_string()];
        let w = &run["phases"]["window"];
        assert_eq!(run["rank"], row["rank"], "{row}");
        assert_eq!(w["positive_ns"], row["replay_ns"], "{row}");
        assert_eq!(w["max_ns"], row["max_window_ns"], "{row}");
        assert!(
            close(&w["mean_ns"], &row["mean_window_ns"], 0.005 + 1e-9),
            "{row}"
        );
        assert!(
            close(&w["p99_ns"], &row["p99_window_ns"], 0.5 + 1e-9),
            "{row}"
        );
    }
}

/// DuckDB's view of the schema, one `table column TYPE` a line.
fn schema_text(q: &Value) -> String {
    let mut s = String::new();
    for t in [
        "runs",
        "windows",
        "passes",
        "dispatches",
        "measurements",
        "counters",
    ] {
        for c in q["schema"][t].as_array().unwrap() {
            s += &format!(
                "{t} {} {}\n",
                c[0].as_str().unwrap(),
                c[1].as_str().unwrap()
            );
        }
    }
    s
}

#[test]
fn duckdb_reads_across_runs_what_the_report_says_run_by_run() {
    let dir = krphase_tests::scratch_dir("export-parquet");
    let db = database(&dir);
    let dataset = dir.join("krphase-parquet");
    let out = krphase_db_ok(&db, &["export", "parquet", "-d", dataset.to_str().unwrap()]);
    assert!(out.contains("windows: "), "{out}");
    let report: Value =
        serde_json::from_str(&krphase_db_ok(&db, &["report", "--format", "json"])).unwrap();
    let q = query(&dataset);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    let mut modes = std::collections::BTreeSet::new();
    for r in runs {
        let id = r["run_id"].to_string();
        check_run(r, &q["runs"][&id]);
        modes.insert(r["mode"].as_str().unwrap().to_string());
    }
    assert_eq!(modes.len(), 2, "drive and observe: {modes:?}");
    // Cross-run: every replayed window once, and the passes' GPU time is the report's.
    let total: u64 = runs
        .iter()
        .map(|r| r["windows"]["replayed"].as_u64().unwrap())
        .sum();
    let duck_total: u64 = q["runs"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["replayed"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(duck_total, total);
    check_ranks(&db, &q);
    // The documented queries ran, each answering something.
    let docs = q["docs"].as_array().unwrap();
    assert!(docs.len() >= 3, "{docs:?}");
    for d in docs {
        assert!(
            !d["rows"].as_array().unwrap().is_empty(),
            "no rows: {}",
            d["sql"]
        );
    }
    check_spark_docs(&q);
    let golden = workspace().join("tests/golden/parquet-schema.txt");
    let schema = schema_text(&q);
    if std::env::var_os("KRPHASE_BLESS").is_some() {
        std::fs::write(&golden, &schema).unwrap();
    }
    assert_eq!(
        schema,
        std::fs::read_to_string(&golden).unwrap_or_default(),
        "the dataset's schema changed: if that is meant, bump DATASET_VERSION, update \
         docs/parquet.md and rewrite {} with KRPHASE_BLESS=1",
        golden.display()
    );
}

/// Each Spark SQL query of the documentation, translated to DuckDB by sqlglot, answers what the
/// DuckDB query beside it answers: the same rows (in any order, as ties may order differently),
/// the numbers to a relative 1e-9.
fn check_spark_docs(q: &Value) {
    let (duck, spark) = (
        q["docs"].as_array().unwrap(),
        q["spark_docs"].as_array().unwrap(),
    );
    assert_eq!(
        duck.len(),
        spark.len(),
        "one Spark query beside each DuckDB query"
    );
    for (d, s) in duck.iter().zip(spark) {
        let (mut a, mut b) = (rows(&d["rows"]), rows(&s["rows"]));
        a.sort_by(|x, y| x.partial_cmp(y).unwrap());
        b.sort_by(|x, y| x.partial_cmp(y).unwrap());
        let same = a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(u, v)| cell_eq(u, v)));
        assert!(
            same,
            "the Spark query\n{}\n(as DuckDB: {})\nanswers {b:?}, the DuckDB query {a:?}",
            s["spark"], s["duckdb"]
        );
    }
}

/// A result's rows, each cell a number where it reads as one.
fn rows(v: &Value) -> Vec<Vec<Cell>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let t = c.as_str().unwrap_or_default();
                    t.parse::<f64>()
                        .map_or_else(|_| Cell::Text(t.to_string()), Cell::Num)
                })
                .collect()
        })
        .collect()
}

#[derive(Debug, PartialEq, PartialOrd)]
enum Cell {
    Num(f64),
    Text(String),
}

fn cell_eq(a: &Cell, b: &Cell) -> bool {
    match (a, b) {
        (Cell::Num(x), Cell::Num(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
        _ => a == b,
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_re_export_replaces_the_dataset_and_bad_directories_change_nothing() {
    let dir = krphase_tests::scratch_dir("export-parquet-replace");
    let db = dir.join("k.db");
    for r in 0..3u64 {
        let p = dir.join(format!("r{r}.krp"));
        write_synthetic_file(
            &p,
            &SynthSpec {
                windows: 40,
                pid: 100 + r as u32,
                seed: r,
                ..SynthSpec::default()
            },
        )
        .unwrap();
        krphase_db_ok(&db, &["import".as_ref(), p.as_os_str()]);
    }
    let out = dir.join("out");
    let ds = out.join("ds");
    krphase_db_ok(&db, &["export", "parquet", "-d", ds.to_str().unwrap()]);
    assert_eq!(names(&ds.join("windows")), ["run=1", "run=2", "run=3"]);
    krphase_db_ok(&db, &["export", "parquet", "2", "-d", ds.to_str().unwrap()]);
    assert_eq!(names(&ds.join("windows")), ["run=2"]);
    assert_eq!(names(&out), ["ds"], "nothing left beside the dataset");

    // A directory of someone else's files is refused and left as it was.
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("notes.txt"), "mine").unwrap();
    let o = krphase_db(&db, &["export", "parquet", "-d", home.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("refusing to replace"), "{err}");
    assert_eq!(names(&home), ["notes.txt"]);

    // A directory that cannot be created (its parent is a file): one line, nothing written.
    let file = dir.join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let before = names(&dir);
    let o = krphase_db(
        &db,
        &["export", "parquet", "-d", file.join("ds").to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("cannot create"), "{err}");
    assert_eq!(names(&dir), before);
}
