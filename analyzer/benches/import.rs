//! Import and report throughput on synthetic phase files: `cargo bench -p krphase-analyzer
//! --bench import`. For 1 M- and 10 M-event files it prints, as medians of `ROUNDS` rounds that
//! alternate the two:
//!
//! - `krphase import` into a fresh database (a whole process: start, file hash, decoding, window
//!   reconstruction, inserts, per-run summaries, commit), with events/s and peak RSS;
//! - the reference timed in the same run: a bare rusqlite program inserting the very rows that
//!   import stored (summaries included), from memory, into a fresh database with the same schema
//!   and settings (`common/bare_insert.rs`);
//! - their ratio beside the goal (≤ 1.15×), their CPU-time ratio (which other work on the
//!   machine does not move: import's is both its threads), and the file hash alone (in this
//!   process), so a slow hash shows as such.
//!
//! Then 256 rank files (each carrying its rank) in one import, one at a time and decoded in
//! parallel (their ratio), `report --by rank` over them, and `report` on one run of 1 M windows
//! beside its goal (≤ 0.5 s). `KRPHASE_BENCH_QUICK=1` shrinks every size tenfold;
//! `KRPHASE_BENCH_CASES=import,ranks,report` picks cases; `KRPHASE_BENCH_EVENTS=1000000` imports
//! that one size only and `KRPHASE_BENCH_ROUNDS=1` sets the rounds, so that callgrind can count
//! the bare insert of one size (`--toggle-collect='*bare_insert::insert'` on this program; the
//! import's threads counted with `--separate-threads=yes` on `krphase import`).

use std::path::Path;
use std::time::Instant;

use krphase_analyzer::import::krp::file_hash;
use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

mod common;
use common::bare_insert;
use common::{children_cpu_s, krphase, median, rank_files, synthetic_db, thread_cpu_s};

/// Events per replayed 2-pass window in the synthetic files (plus an opt-out every tenth).
const EVENTS_PER_WINDOW: f64 = 17.6;
/// Rounds of each measurement (import and bare insert alternate within a round), unless
/// `KRPHASE_BENCH_ROUNDS` says otherwise.
const ROUNDS: usize = 3;

fn rounds() -> usize {
    std::env::var("KRPHASE_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|&r| r > 0)
        .unwrap_or(ROUNDS)
}
/// Import's goal against the bare insert of the same rows.
const GOAL_RATIO: f64 = 1.15;
/// `report`'s goal on 1 M windows, seconds.
const GOAL_REPORT_S: f64 = 0.5;

fn synthetic(dir: &Path, events: u64) -> (std::path::PathBuf, u64) {
    let windows = (events as f64 / EVENTS_PER_WINDOW).round() as u64;
    let file = dir.join(format!("{events}.krp"));
    let truth = write_synthetic_file(
        &file,
        &SynthSpec {
            windows,
            ..SynthSpec::default()
        },
    )
    .expect("write synthetic file");
    (file, truth.events)
}

/// One size: import and bare insert alternated `rounds()` times; prints the rows.
fn import_case(dir: &Path, events: u64) {
    let (file, n) = synthetic(dir, events);
    let f = file.to_str().unwrap();
    let (mut import_s, mut bare_s, mut hash_s, mut rss) = (vec![], vec![], vec![], 0);
    let (mut import_cpu, mut bare_cpu) = (vec![], vec![]);
    let mut rows = None;
    for round in 0..rounds() {
        let db = dir.join(format!("{events}-{round}.db"));
        let cpu = children_cpu_s();
        let (wall, r) = krphase(&["--db", db.to_str().unwrap(), "import", f]);
        import_cpu.push(children_cpu_s() - cpu);
        import_s.push(wall);
        rss = rss.max(r);
        let tables = rows.get_or_insert_with(|| bare_insert::load(&db));
        let bare_db = dir.join(format!("{events}-{round}-bare.db"));
        let cpu = thread_cpu_s();
        bare_s.push(bare_insert::insert(&bare_db, tables));
        bare_cpu.push(thread_cpu_s() - cpu);
        let t = Instant::now();
        file_hash(&file).expect("hash");
        hash_s.push(t.elapsed().as_secs_f64());
        for d in [db, bare_db] {
            std::fs::remove_file(&d).ok();
        }
    }
    let (imp, bare, hash) = (median(import_s), median(bare_s), median(hash_s));
    let (imp_cpu, bare_cpu) = (median(import_cpu), median(bare_cpu));
    let stored = rows.as_deref().map_or(0, bare_insert::count);
    let label = format!("{}M events", events as f64 / 1e6);
    println!(
        "{:<34} {:>9.2} s {:>12.0} ev/s {:>9} KiB peak",
        format!("import {label}"),
        imp,
        n as f64 / imp,
        rss
    );
    println!(
        "{:<34} {:>9.2} s {:>12} rows",
        format!("  bare insert, same {label} rows"),
        bare,
        stored
    );
    println!(
        "{:<34} {:>9.3} s",
        format!(
            "  file hash alone ({} MB)",
            file.metadata().map_or(0, |m| m.len()) >> 20
        ),
        hash
    );
    let ratio = imp / bare;
    println!(
        "{:<34} {:>9.2} ×  goal ≤ {GOAL_RATIO}×: {}",
        "  import / bare insert, wall",
        ratio,
        if ratio <= GOAL_RATIO {
            "met"
        } else {
            "NOT met"
        }
    );
    // CPU time does not depend on what else the machine runs; import's is both its threads.
    println!(
        "{:<34} {:>9.2} ×  ({imp_cpu:.2} s / {bare_cpu:.2} s)",
        "  import / bare insert, CPU",
        imp_cpu / bare_cpu
    );
    std::fs::remove_file(&file).ok();
}

/// `RANKS` rank files in one `krphase import`, one at a time (`--jobs 1`) and decoded in
/// parallel (the default: one per core), alternated.
fn ranks_case(dir: &Path, ranks: u64, windows: u64) {
    let files = rank_files(dir, ranks, windows, true);
    let (mut serial, mut parallel) = (vec![], vec![]);
    for round in 0..rounds() {
        for (jobs, walls) in [(Some("1"), &mut serial), (None, &mut parallel)] {
            let db = dir.join(format!("ranks-{round}-{}.db", jobs.unwrap_or("n")));
            let mut args = vec!["--db", db.to_str().unwrap(), "import"];
            if let Some(j) = jobs {
                args.extend(["--jobs", j]);
            }
            args.extend(files.iter().map(String::as_str));
            walls.push(krphase(&args).0);
            if round > 0 || jobs.is_some() {
                std::fs::remove_file(&db).ok();
            }
        }
    }
    let (s, p) = (median(serial), median(parallel));
    println!(
        "{:<34} {:>9.2} s  parallel {p:.2} s: {:.2}× ({} cores)",
        format!("import {ranks} rank files, --jobs 1"),
        s,
        s / p,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    for f in files {
        std::fs::remove_file(f).ok();
    }
    let db = dir.join("ranks-0-n.db");
    let walls: Vec<f64> = (0..rounds())
        .map(|_| krphase(&["--db", db.to_str().unwrap(), "report", "--by", "rank"]).0)
        .collect();
    println!(
        "{:<34} {:>9.3} s",
        format!("report --by rank, {ranks} ranks"),
        median(walls)
    );
    std::fs::remove_file(&db).ok();
}

fn report_case(dir: &Path, windows: u64) {
    let db = synthetic_db(dir, "report", windows);
    let db = db.to_str().unwrap();
    for format in ["table", "json"] {
        let walls: Vec<f64> = (0..rounds())
            .map(|_| krphase(&["--db", db, "report", "--format", format]).0)
            .collect();
        let wall = median(walls);
        println!(
            "{:<34} {:>9.3} s  goal ≤ {GOAL_REPORT_S} s: {}",
            format!("report {format}, {windows} windows"),
            wall,
            if wall <= GOAL_REPORT_S {
                "met"
            } else {
                "NOT met"
            }
        );
    }
}

fn main() {
    let scale = if std::env::var_os("KRPHASE_BENCH_QUICK").is_some() {
        10
    } else {
        1
    };
    let dir = tempfile::tempdir().expect("tempdir");
    println!(
        "medians of {} rounds; import and its bare reference alternate in each round",
        rounds()
    );
    // KRPHASE_BENCH_CASES=ranks,report runs only those cases (default: every case).
    let cases = std::env::var("KRPHASE_BENCH_CASES").unwrap_or_default();
    let on = |c: &str| cases.is_empty() || cases.split(',').any(|x| x == c);
    if on("import") {
        let sizes = match std::env::var("KRPHASE_BENCH_EVENTS").map(|e| e.parse::<u64>()) {
            Ok(Ok(events)) => vec![events],
            _ => vec![1_000_000 / scale, 10_000_000 / scale],
        };
        for events in sizes {
            import_case(dir.path(), events);
        }
    }
    if on("ranks") {
        ranks_case(dir.path(), 256, 2_000 / scale);
    }
    if on("report") {
        report_case(dir.path(), 1_000_000 / scale);
    }
}
