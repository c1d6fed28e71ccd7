//! Whole-process costs on the emulator (plain loop, `harness = false`):
//!
//! * **Window overhead**: the emulator's replay windows (CONFIG ENTER → CONFIG EXIT, from its
//!   ground truth) with libkrphase.so driving replay vs the emulator's bare driver client (a preloaded
//!   library, no counter groups) that only sets the pass count (same N), alternated in one run; the ratio of medians, and the
//!   difference in the CONFIG ENTER → pass-count return span (the tool's per-window callback
//!   work before the pre-pass phases).
//! * **Observe-mode cost per non-replayed dispatch**: wall time of `multi-queue --threads 1`
//!   with the tool in observe mode vs no tool, divided by the dispatch count.
//!
//! Builds `krphase-emu`, `libkrphase.so` and the driver client in the release profile first.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("exe");
    let deps = exe.parent().expect("deps");
    deps.parent().expect("profile").to_path_buf()
}

fn build() -> (PathBuf, PathBuf) {
    let dir = profile_dir();
    let target = dir.parent().expect("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let ws = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace");
    let st = Command::new(cargo)
        .current_dir(ws)
        .args([
            "build",
            "--release",
            "-p",
            "krphase-emu",
            "-p",
            "krphase-tool",
            // The bare driver is a client library `krphase-emu` preloads.
            "-p",
            "krphase-emu-driver",
        ])
        .env("CARGO_TARGET_DIR", target)
        .status()
        .expect("cargo build");
    assert!(st.success());
    let rel = target.join("release");
    (rel.join("krphase-emu"), rel.join("libkrphase.so"))
}

fn windows(truth: &Path) -> Vec<(u64, u64)> {
    std::fs::read_to_string(truth)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "window" && v["outcome"] == "replayed")
        .map(|v| {
            let ce = v["config_enter"].as_u64().unwrap();
            (
                v["config_exit"].as_u64().unwrap() - ce,
                v["pass_count_return"].as_u64().unwrap() - ce,
            )
        })
        .collect()
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (emu, lib) = build();
    let dir = std::env::temp_dir().join(format!("krphase-wo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let n = "2";
    let args = [
        "run",
        "stream",
        "--elements",
        "262144",
        "--iterations",
        "10",
    ];
    let (mut bare, mut tool) = (Vec::new(), Vec::new());
    for round in 0..4 {
        let t1 = dir.join(format!("bare-{round}.jsonl"));
        let st = Command::new(&emu)
            .args(args)
            .args(["--driver-passes", n])
            .env("KRPHASE_EMU_TRUTH", &t1)
            .env_remove("ROCP_TOOL_LIBRARIES")
            .stdout(std::process::Stdio::null())
            .status()
            .expect("emu");
        assert!(st.success());
        bare.extend(windows(&t1));
        let t2 = dir.join(format!("tool-{round}.jsonl"));
        let st = Command::new(&emu)
            .args(args)
            .env("KRPHASE_EMU_TRUTH", &t2)
            .env("ROCP_TOOL_LIBRARIES", &lib)
            .env("KRPHASE_MODE", "drive")
            .env("KRPHASE_PASSES", n)
            .env("KRPHASE_OUTPUT", dir.join("w-%pid%.krp"))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("emu");
        assert!(st.success());
        tool.extend(windows(&t2));
    }
    let mb = median(bare.iter().map(|w| w.0).collect());
    let mt = median(tool.iter().map(|w| w.0).collect());
    let pb = median(bare.iter().map(|w| w.1).collect());
    let pt = median(tool.iter().map(|w| w.1).collect());

    // Observe mode per dispatch.
    let dispatches = 20_000u64;
    let obs_args = [
        "run",
        "multi-queue",
        "--threads",
        "1",
        "--iterations",
        "20000",
        "--elements",
        "64",
    ];
    let (mut t_bare, mut t_tool) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let st = Command::new(&emu)
            .args(obs_args)
            .env_remove("ROCP_TOOL_LIBRARIES")
            .stdout(std::process::Stdio::null())
            .status()
            .expect("emu");
        assert!(st.success());
        t_bare.push(t.elapsed().as_nanos() as u64);
        let t = Instant::now();
        let st = Command::new(&emu)
            .args(obs_args)
            .env("ROCP_TOOL_LIBRARIES", &lib)
            .env("KRPHASE_MODE", "observe")
            .env("KRPHASE_OUTPUT", dir.join("o-%pid%.krp"))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("emu");
        assert!(st.success());
        t_tool.push(t.elapsed().as_nanos() as u64);
    }
    let ob = median(t_bare);
    let ot = median(t_tool);
    println!("| measurement | value | goal |");
    println!("|---|---|---|");
    println!(
        "| window, median CONFIG ENTER→EXIT: bare driver {:.3} ms, krphase drive {:.3} ms ({} / {} windows) | ratio {:.4} ({:+.2} %) | ≤ 0.5 % |",
        mb as f64 / 1e6,
        mt as f64 / 1e6,
        bare.len(),
        tool.len(),
        mt as f64 / mb as f64,
        (mt as f64 / mb as f64 - 1.0) * 100.0
    );
    println!(
        "| CONFIG ENTER → pass-count return, median: bare {pb} ns, krphase {pt} ns | {:+} ns per window | |",
        pt as i64 - pb as i64
    );
    println!(
        "| observe mode, multi-queue 1 thread × {dispatches} dispatches: no tool {:.1} ms, krphase {:.1} ms | {:.0} ns per dispatch | ≤ 100 ns |",
        ob as f64 / 1e6,
        ot as f64 / 1e6,
        (ot as f64 - ob as f64) / dispatches as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
