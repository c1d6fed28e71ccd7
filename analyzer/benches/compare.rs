//! `krphase compare` on synthetic phase-file runs: `cargo bench -p krphase-analyzer --bench
//! compare`. Two labels of 5 runs each, at 20 k and 100 k windows a run; prints the median wall
//! time of several compares and their peak RSS beside the goal (≤ 1 s for 5 × 100 k windows a
//! side; memory that does not grow with the windows of all runs: it holds one run's windows at a
//! time, so 5 × as many windows must not cost 5 × the memory). `KRPHASE_BENCH_QUICK=1` shrinks
//! every size tenfold.

use std::path::Path;

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

mod common;
use common::krphase;

/// Runs per side.
const RUNS: u64 = 5;
/// Timed compares per size.
const REPEATS: usize = 5;

/// A database of `RUNS` runs labelled `a` and as many labelled `b`, `windows` windows each.
fn database(dir: &Path, windows: u64) -> String {
    let db = dir.join(format!("compare-{windows}.db"));
    let db_s = db.to_str().unwrap().to_string();
    for i in 0..2 * RUNS {
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
        krphase(&[
            "--db",
            &db_s,
            "import",
            file.to_str().unwrap(),
            "--label",
            label,
        ]);
        std::fs::remove_file(&file).ok();
    }
    db_s
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let scale = if std::env::var_os("KRPHASE_BENCH_QUICK").is_some() {
        10
    } else {
        1
    };
    let dir = tempfile::tempdir().expect("tempdir");
    // KRPHASE_BENCH_KEEP=DIR keeps the databases there for profiling.
    let keep = std::env::var_os("KRPHASE_BENCH_KEEP").map(std::path::PathBuf::from);
    let dir = keep.as_deref().unwrap_or(dir.path());
    println!(
        "{:<36} {:>14} {:>14} {:>12}   goal",
        "case", "median wall s", "max wall s", "peak RSS"
    );
    for windows in [20_000 / scale, 100_000 / scale] {
        let db = database(dir, windows);
        let (mut walls, mut rss) = (Vec::new(), 0);
        for _ in 0..REPEATS {
            let (w, r) = krphase(&["--db", &db, "compare", "a", "b", "--format", "json"]);
            walls.push(w);
            rss = rss.max(r);
        }
        let max = walls.iter().copied().fold(0.0, f64::max);
        println!(
            "{:<36} {:>14.3} {:>14.3} {:>8} KiB   {}",
            format!("compare {RUNS} x {windows} windows a side"),
            median(&mut walls),
            max,
            rss,
            if windows == 100_000 / scale {
                "<= 1 s"
            } else {
                "(memory reference)"
            }
        );
    }
}
