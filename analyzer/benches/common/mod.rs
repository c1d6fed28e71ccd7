//! What the analyzer's benchmarks share: running the built `krphase` and reading the peak RSS
//! it reports, a database of one synthetic run, and the median.

/// The reference the import bench times beside `krphase import` (only that bench uses it).
#[allow(dead_code)]
pub mod bare_insert;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

/// `DIR/NAME.db` holding one synthetic run of `windows` windows (its phase file written,
/// imported and removed).
#[allow(dead_code)]
pub fn synthetic_db(dir: &Path, name: &str, windows: u64) -> PathBuf {
    let file = dir.join(format!("{name}.krp"));
    write_synthetic_file(
        &file,
        &SynthSpec {
            windows,
            ..SynthSpec::default()
        },
    )
    .expect("write synthetic file");
    let db = dir.join(format!("{name}.db"));
    krphase(&[
        "--db",
        db.to_str().unwrap(),
        "import",
        file.to_str().unwrap(),
    ]);
    std::fs::remove_file(&file).ok();
    db
}

/// `ranks` synthetic phase files `DIR/rank-R.krp` of `windows` windows each, one process per
/// rank (pid 10 000 + R), each stating its rank of `ranks` in its header when `ranked`; their
/// paths.
#[allow(dead_code)]
pub fn rank_files(dir: &Path, ranks: u64, windows: u64, ranked: bool) -> Vec<String> {
    (0..ranks)
        .map(|r| {
            let f = dir.join(format!("rank-{r}.krp"));
            let rank = ranked.then(|| krphase_format::Rank {
                rank: r as u32,
                world_size: Some(ranks as u32),
                var: "OMPI_COMM_WORLD_RANK".into(),
            });
            write_synthetic_file(
                &f,
                &SynthSpec {
                    windows,
                    pid: 10_000 + r as u32,
                    seed: r + 1,
                    rank,
                    ..SynthSpec::default()
                },
            )
            .expect("write rank file");
            f.display().to_string()
        })
        .collect()
}

/// The median of `v` (the upper middle of an even count).
#[allow(dead_code)]
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs krphase with `args`; returns wall seconds and the peak RSS it reported (KiB).
pub fn krphase(args: &[&str]) -> (f64, u64) {
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_krphase"))
        .args(args)
        .env("KRPHASE_PEAK_RSS", "1")
        .output()
        .expect("run krphase");
    let wall = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "krphase {args:?}: {err}");
    let rss = err
        .lines()
        .find_map(|l| l.strip_prefix("krphase: peak RSS "))
        .and_then(|v| v.trim_end_matches(" KiB").parse().ok())
        .unwrap_or(0);
    (wall, rss)
}

/// CPU seconds (user + system) in `/proc/<what>/stat`'s fields from `first` (the 14th field is
/// utime; the 16th, cutime), at the kernel's clock-tick resolution.
fn proc_cpu_s(what: &str, first: usize) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{what}/stat")).unwrap_or_default();
    // The command name may hold spaces; the fields after it are plain numbers.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // Fields after the name start at the 3rd; ticks are 100 a second on Linux.
    let at = |n: usize| f.get(n - 3).copied().unwrap_or(0.0);
    (at(first) + at(first + 1)) / 100.0
}

/// CPU seconds of this process's waited-for children so far.
#[allow(dead_code)]
pub fn children_cpu_s() -> f64 {
    proc_cpu_s("self", 16)
}

/// CPU seconds of the calling thread so far.
#[allow(dead_code)]
pub fn thread_cpu_s() -> f64 {
    proc_cpu_s("thread-self", 14)
}
