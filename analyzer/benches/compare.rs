//! `krphase compare` and `krphase report` on synthetic phase-file runs: `cargo bench -p
//! krphase-analyzer --bench compare`. Each line prints the median wall time of `ROUNDS` runs of
//! the command (a fresh process each), its peak RSS, the goal, and two references timed in the
//! same run on the same windows:
//!
//! - *window by window*: the same command on a copy of the database without its per-run
//!   summaries, so it reads every window through the `krphase_window_phase` view (what krphase did
//!   before it kept summaries; its answer is checked to be the same, byte for byte);
//! - *bare SQL scan*: one aggregate over the same windows' rows in `krphase_window` (no view, no
//!   join), in this process: the least any answer that reads every window must pay.
//!
//! Cases: `compare` of 5 runs a side at 20 k and 100 k windows a run (goal ≤ 1 s at 100 k, with
//! memory that does not grow with windows: both sizes' peak RSS are printed), and `report` on one
//! run of 1 M windows (goal ≤ 0.5 s), with the import time of that run (which gathers the
//! summary from the rows it writes) beside what summarising it through the view would cost.
//! `KRPHASE_BENCH_QUICK=1` shrinks every size tenfold; `KRPHASE_BENCH_KEEP=DIR` keeps the
//! databases there.

use std::path::{Path, PathBuf};
use std::time::Instant;

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

mod common;
use common::krphase;

/// Runs per side.
const RUNS: u64 = 5;
/// Timed runs of each command.
const ROUNDS: usize = 5;

/// Imports `n` synthetic runs of `windows` windows into `db`, labelled `a` and `b` in turn;
/// returns the import wall times.
fn import(dir: &Path, db: &str, n: u64, windows: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let file = dir.join(format!("run-{windows}-{i}.krp"));
            write_synthetic_file(
                &file,
                &SynthSpec {
                    windows,
                    seed: i + 1,
                    pid: 1000 + i as u32,
                    ..SynthSpec::default()
                },
            )
            .expect("write synthetic file");
            let label = if i % 2 == 0 { "a" } else { "b" };
            let f = file.to_str().unwrap();
            let (wall, _) = krphase(&["--db", db, "import", f, "--label", label]);
            std::fs::remove_file(&file).ok();
            wall
        })
        .collect()
}

/// A copy of `db` without per-run summaries: every answer then reads the windows.
fn without_summaries(db: &str) -> String {
    let copy = format!("{db}.windows.db");
    std::fs::copy(db, &copy).expect("copy database");
    let c = rusqlite::Connection::open(&copy).expect("open copy");
    c.execute("DELETE FROM krphase_run_stat", [])
        .expect("drop summaries");
    copy
}

/// One aggregate over every window row of the database, timed in this process (seconds).
fn bare_scan(db: &str) -> f64 {
    let c = rusqlite::Connection::open(db).expect("open");
    let t = Instant::now();
    let _: (i64, Option<i64>, Option<i64>) = c
        .query_row(
            "SELECT COUNT(*), SUM(\"end\" - \"start\"), SUM(first_pass_enter - pass_count_return)
             FROM krphase_window",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("scan");
    t.elapsed().as_secs_f64()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `ROUNDS` runs of krphase with `args` on `db`: median wall, peak RSS, and the last output.
fn timed(db: &str, args: &[&str]) -> (f64, u64, Vec<u8>) {
    let mut full = vec!["--db", db];
    full.extend_from_slice(args);
    let (mut walls, mut rss) = (Vec::new(), 0);
    for _ in 0..ROUNDS {
        let (w, r) = krphase(&full);
        walls.push(w);
        rss = rss.max(r);
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_krphase"))
        .args(&full)
        .output()
        .expect("run krphase");
    (median(&mut walls), rss, out.stdout)
}

/// Times `args` with and without the summaries, checks both answer the same, and prints a line.
fn case(name: &str, db: &str, args: &[&str], goal: &str) {
    let (fast, rss, out) = timed(db, args);
    let slow_db = without_summaries(db);
    let (slow, slow_rss, slow_out) = timed(&slow_db, args);
    assert!(
        out == slow_out,
        "{name}: the answer from the summaries differs from the window-by-window one"
    );
    let mut scans: Vec<f64> = (0..ROUNDS).map(|_| bare_scan(db)).collect();
    println!(
        "{name:<40} {fast:>8.3} s {rss:>9} KiB   {goal:<10} window by window {slow:.3} s \
         ({slow_rss} KiB, {:.0}x), bare SQL scan {:.3} s; same answer",
        slow / fast,
        median(&mut scans)
    );
    std::fs::remove_file(slow_db).ok();
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let scale = if std::env::var_os("KRPHASE_BENCH_QUICK").is_some() {
        10
    } else {
        1
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let keep = std::env::var_os("KRPHASE_BENCH_KEEP").map(PathBuf::from);
    let dir = keep.as_deref().unwrap_or(tmp.path());
    println!("load average before: {}; medians of {ROUNDS} runs", load());
    println!(
        "{:<40} {:>10} {:>13}   {:<10} reference in the same run",
        "case", "median", "peak RSS", "goal"
    );
    for windows in [20_000 / scale, 100_000 / scale] {
        let db = dir.join(format!("compare-{windows}.db"));
        let db = db.to_str().unwrap();
        import(dir, db, 2 * RUNS, windows);
        let goal = if windows == 100_000 / scale {
            "<= 1 s"
        } else {
            "(RSS ref)"
        };
        let name = format!("compare {RUNS} x {windows} windows a side");
        case(&name, db, &["compare", "a", "b", "--format", "json"], goal);
    }
    let windows = 1_000_000 / scale;
    let db = dir.join(format!("report-{windows}.db"));
    let db = db.to_str().unwrap();
    let import_s = import(dir, db, 1, windows)[0];
    let c = rusqlite::Connection::open(db).expect("open");
    let t = Instant::now();
    krphase_analyzer::db::summary::refresh(&c, 1).expect("summarise");
    let summarise_s = t.elapsed().as_secs_f64();
    drop(c);
    println!(
        "{:<40} {import_s:>8.3} s {:>13}   {:<10} summarising it again through the view (not \
         what import does): {summarise_s:.3} s",
        format!("import 1 run of {windows} windows"),
        "",
        "-",
    );
    for format in ["json", "table"] {
        let name = format!("report {format}, {windows} windows");
        case(&name, db, &["report", "--format", format], "<= 0.5 s");
    }
    println!("load average after: {}", load());
}
