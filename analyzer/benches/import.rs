//! Import and report throughput on synthetic phase files: `cargo bench -p krphase-analyzer
//! --bench import`. Prints events/s and the importing process's peak RSS for 1 M- and 10 M-event
//! files, and the `report` time on 1 M windows. Goals: ≥ 2 M events/s, memory flat in file size,
//! report ≤ 0.5 s (the compare bench times it beside the window-by-window path).
//! `KRPHASE_BENCH_QUICK=1` shrinks every size tenfold.

use std::path::Path;

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

mod common;
use common::krphase;

/// Events per replayed 2-pass window in the synthetic files (plus an opt-out every tenth).
const EVENTS_PER_WINDOW: f64 = 17.6;

fn import(dir: &Path, events: u64) -> (u64, f64, u64) {
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
    let db = dir.join(format!("{events}.db"));
    let (wall, rss) = krphase(&[
        "--db",
        db.to_str().unwrap(),
        "import",
        file.to_str().unwrap(),
    ]);
    std::fs::remove_file(&file).ok();
    (truth.events, wall, rss)
}

fn main() {
    let scale = if std::env::var_os("KRPHASE_BENCH_QUICK").is_some() {
        10
    } else {
        1
    };
    let dir = tempfile::tempdir().expect("tempdir");
    println!(
        "{:<28} {:>12} {:>10} {:>14} {:>12}",
        "case", "events", "wall s", "events/s", "peak RSS"
    );
    for events in [1_000_000 / scale, 10_000_000 / scale] {
        let (n, wall, rss) = import(dir.path(), events);
        println!(
            "{:<28} {:>12} {:>10.2} {:>14.0} {:>9} KiB",
            format!("import {}M events", events as f64 / 1e6),
            n,
            wall,
            n as f64 / wall,
            rss
        );
    }
    let windows = 1_000_000 / scale;
    let file = dir.path().join("report.krp");
    write_synthetic_file(
        &file,
        &SynthSpec {
            windows,
            ..SynthSpec::default()
        },
    )
    .expect("write");
    let db = dir.path().join("report.db");
    krphase(&[
        "--db",
        db.to_str().unwrap(),
        "import",
        file.to_str().unwrap(),
    ]);
    std::fs::remove_file(&file).ok();
    let db = db.to_str().unwrap();
    for format in ["table", "json"] {
        let (wall, rss) = krphase(&["--db", db, "report", "--format", format]);
        println!(
            "{:<28} {:>12} {:>10.2} {:>14} {:>9} KiB",
            format!("report {format}, {windows} windows"),
            "",
            wall,
            "",
            rss
        );
    }
}
