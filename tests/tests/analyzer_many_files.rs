//! `krphase import` of many phase files (one per rank) decodes them in parallel while one
//! connection writes: the database must hold the same rows, in the same order, as importing the
//! files one at a time (`--jobs 1`); a bad file in the middle stops the import there, with the
//! files before it imported and none after it; a file given twice is imported once. Each file
//! carries its launcher rank: `report --by rank` names the slowest rank and the spread.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

const FILES: u64 = 12;
/// The job's size the files announce: rank 12 never wrote a file.
const WORLD: u32 = 13;

fn rank_files(dir: &Path) -> Vec<PathBuf> {
    (0..FILES)
        .map(|rank| {
            let p = dir.join(format!("app-r{rank}.krp"));
            write_synthetic_file(
                &p,
                &SynthSpec {
                    windows: 60 + 20 * rank,
                    pid: 7000 + rank as u32,
                    seed: rank + 1,
                    rank: Some(krphase_format::Rank {
                        rank: rank as u32,
                        world_size: Some(WORLD),
                        var: "OMPI_COMM_WORLD_RANK".into(),
                    }),
                    ..SynthSpec::default()
                },
            )
            .unwrap();
            p
        })
        .collect()
}

fn import(db: &Path, files: &[PathBuf], jobs: &str) -> Output {
    Command::new(&krphase_tests::artifacts().krphase)
        .arg("--db")
        .arg(db)
        .args(["import", "--jobs", jobs])
        .args(files)
        .output()
        .expect("run krphase import")
}

/// Every row of the tables an import fills, in id order, with the import time left out.
fn dump(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut out = Vec::new();
    for (table, order) in [
        ("krphase_run", "id"),
        ("krphase_window", "id"),
        ("krphase_pass", "window_id, pass_index"),
        ("krphase_dispatch", "id"),
        ("krphase_run_stat", "run_id"),
        ("krphase_phase_stat", "run_id, kernel, phase"),
        ("krphase_pass_stat", "run_id, pass_index"),
    ] {
        let mut s = c
            .prepare(&format!("SELECT * FROM {table} ORDER BY {order}"))
            .unwrap();
        let names: Vec<String> = s.column_names().iter().map(|n| n.to_string()).collect();
        let rows = s
            .query_map([], |r| {
                let cells: Vec<String> = (0..names.len())
                    .filter(|&i| names[i] != "imported_at" && names[i] != "computed_at")
                    .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap()))
                    .collect();
                Ok(format!("{table}: {}", cells.join("|")))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

#[test]
fn parallel_import_stores_what_a_serial_one_does() {
    let dir = krphase_tests::scratch_dir("many-files-parallel");
    let files = rank_files(&dir);
    let (serial, parallel) = (dir.join("serial.db"), dir.join("parallel.db"));
    let o = import(&serial, &files, "1");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = import(&parallel, &files, "6");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = String::from_utf8_lossy(&o.stdout);
    assert_eq!(lines.lines().count(), FILES as usize, "{lines}");
    for (k, (line, f)) in lines.lines().zip(&files).enumerate() {
        assert!(
            line.starts_with(&format!("{}: run {}: ", f.display(), k + 1)),
            "{line}"
        );
    }
    let (a, b) = (dump(&serial), dump(&parallel));
    assert!(a.len() > 3000, "{} rows", a.len());
    assert_eq!(
        a, b,
        "the parallel import's rows differ from the serial one's"
    );
}

#[test]
fn a_bad_file_stops_the_import_there_and_a_repeated_file_is_imported_once() {
    let dir = krphase_tests::scratch_dir("many-files-bad");
    let mut files = rank_files(&dir);
    let bad = dir.join("app-bad.krp");
    std::fs::write(&bad, b"not a phase file at all, just text").unwrap();
    files.insert(5, bad.clone());
    files.insert(2, files[0].clone());
    let db = dir.join("k.db");
    let o = import(&db, &files, "4");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let out = String::from_utf8_lossy(&o.stdout);
    // r0 r1 r0 r2 r3 r4, then the bad file.
    assert_eq!(out.lines().count(), 6, "{out}");
    assert!(
        out.lines()
            .nth(2)
            .unwrap()
            .contains("already imported as run 1"),
        "{out}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let runs: i64 = c
        .query_row("SELECT COUNT(*) FROM krphase_run", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        runs, 5,
        "the files before the bad one, the repeated one once"
    );
}

fn krphase(db: &Path, args: &[&str]) -> Output {
    Command::new(&krphase_tests::artifacts().krphase)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run krphase")
}

/// Per run (= rank here): its rank and its replayed windows' time, straight from the tables.
fn replay_by_rank(db: &Path) -> Vec<(i64, i64)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare(
            "SELECT r.rank, SUM(w.\"end\" - w.\"start\") FROM krphase_run r
             JOIN krphase_window w ON w.run_id = r.id AND w.outcome = 'replayed'
             GROUP BY r.id ORDER BY r.rank",
        )
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn report_by_rank_names_the_slowest_rank_the_spread_and_the_missing_rank() {
    let dir = krphase_tests::scratch_dir("many-files-ranks");
    let files = rank_files(&dir);
    let db = dir.join("k.db");
    assert!(import(&db, &files, "3").status.success());
    let truth = replay_by_rank(&db);
    assert_eq!(truth.len(), FILES as usize);
    let slowest = truth.iter().max_by_key(|(_, ns)| *ns).unwrap();
    let mut sorted: Vec<i64> = truth.iter().map(|(_, ns)| *ns).collect();
    sorted.sort_unstable();
    let median = (sorted[5] + sorted[6]) as f64 / 2.0;

    let o = krphase(&db, &["report", "--by", "rank", "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["ranks"];
    assert_eq!(c["world_size"], WORLD);
    assert_eq!(c["missing"], serde_json::json!([12]));
    assert_eq!(c["slowest"], slowest.0);
    assert_eq!(c["replay"]["n"], FILES);
    assert_eq!(c["replay"]["median"].as_f64(), Some(median));
    assert_eq!(c["replay"]["max"].as_f64(), Some(slowest.1 as f64));
    let rows: Vec<(i64, i64)> = c["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["rank"].as_i64().unwrap(),
                r["replay_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, truth, "each rank's replay time is its windows' sum");

    // The terminal report's summary says it in words; the table has a row per rank.
    let o = krphase(&db, &["report", "--by", "rank"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("slowest rank {} (run ", slowest.0)),
        "{text}"
    );
    assert!(
        text.contains("12 ranks (of 13, OMPI_COMM_WORLD_RANK); missing: 12"),
        "{text}"
    );
    // The plain report's summary carries the same lines.
    let plain = krphase(&db, &["report"]);
    assert!(String::from_utf8_lossy(&plain.stdout).contains("slowest rank"));

    // Runs without ranks are refused in one line.
    let unranked = dir.join("unranked.db");
    let f = dir.join("unranked.krp");
    write_synthetic_file(&f, &SynthSpec::default()).unwrap();
    assert!(import(&unranked, &[f], "1").status.success());
    let o = krphase(&unranked, &["report", "--by", "rank"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("0 of the 1 selected runs carry a rank"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
