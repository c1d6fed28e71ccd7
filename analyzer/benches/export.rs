//! `krphase export perfetto` on one run of 1 M windows: `cargo bench -p krphase-analyzer --bench
//! export`. A synthetic phase file (2-pass windows, an opt-out every tenth dispatch) is imported
//! once; then each round exports it as Perfetto protobuf and as Chrome JSON (alternating, whole
//! `krphase` processes). Prints the median wall time of `ROUNDS` rounds, the file size in bytes
//! and peak RSS per format beside the protobuf's goals (≤ 300 MB, ≤ 5 s). `KRPHASE_BENCH_QUICK=1`
//! shrinks the run tenfold.

mod common;
use common::{krphase, median, synthetic_db};

const ROUNDS: usize = 5;
const GOAL_BYTES: u64 = 300_000_000;
const GOAL_S: f64 = 5.0;

fn main() {
    let windows: u64 = if std::env::var_os("KRPHASE_BENCH_QUICK").is_some() {
        100_000
    } else {
        1_000_000
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let db = synthetic_db(dir.path(), "export", windows);
    let db = db.to_str().unwrap();
    let formats = [("pftrace", "t.pftrace"), ("json", "t.json")];
    let mut walls = vec![Vec::new(); formats.len()];
    let mut sizes = vec![0u64; formats.len()];
    let mut rss = vec![0u64; formats.len()];
    for _ in 0..ROUNDS {
        for (i, (format, name)) in formats.iter().enumerate() {
            let out = dir.path().join(name);
            let o = out.to_str().unwrap();
            let (wall, r) = krphase(&[
                "--db", db, "export", "perfetto", "-o", o, "--format", format,
            ]);
            walls[i].push(wall);
            rss[i] = rss[i].max(r);
            sizes[i] = std::fs::metadata(&out).map_or(0, |m| m.len());
            std::fs::remove_file(&out).ok();
        }
    }
    println!(
        "export perfetto, one run of {windows} windows; medians of {ROUNDS} rounds (formats alternate)"
    );
    println!(
        "{:<10} {:>10} {:>16} {:>14}   goal (pftrace)",
        "format", "wall s", "bytes", "peak RSS KiB"
    );
    for (i, (format, _)) in formats.iter().enumerate() {
        let wall = median(walls[i].clone());
        let goal = if i == 0 {
            let met = |ok: bool| if ok { "met" } else { "NOT met" };
            // The goals are for a million windows; a quick run scales them.
            let scale = windows as f64 / 1e6;
            format!(
                "≤ {:.0} MB: {}, ≤ {:.1} s: {}",
                GOAL_BYTES as f64 * scale / 1e6,
                met(sizes[i] as f64 <= GOAL_BYTES as f64 * scale),
                GOAL_S * scale,
                met(wall <= GOAL_S * scale)
            )
        } else {
            format!(
                "({:.1}× the protobuf's time, {:.1}× its size)",
                wall / median(walls[0].clone()),
                sizes[i] as f64 / sizes[0].max(1) as f64
            )
        };
        println!(
            "{format:<10} {wall:>10.2} {:>16} {:>14}   {goal}",
            sizes[i], rss[i]
        );
    }
}
