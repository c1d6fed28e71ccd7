//! How closely `krphase-emu --sdk-build` takes the times its cost model gives (plain loop,
//! `harness = false`): STREAM runs of each emulated SDK build with libkrphase.so driving replay
//! (one iteration, two windows of 4 passes, the builds interleaved, `KRPHASE_BENCH_ROUNDS`
//! rounds, default 3), and the copy kinds at this machine's measured memcpy rate.
//!
//! The end-to-end test (`tests/tests/sdk_build.rs`) asserts what holds on any machine: each
//! switch changes only its phase in the model, and every paced phase takes at least its model.
//! The figures here are wall-clock and depend on the machine's load: the typical paced phase at
//! its model, the phases a switch saves measured build against build, pass execution unchanged
//! where no switch touches it, and the copy kinds' rates against those measured on a PCIe Gen5
//! host. Each is printed beside its goal.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

mod drivers;

/// One run's truth lines.
type Truth = Vec<Value>;

const BUILDS: [&str; 7] = [
    "baseline",
    "signal-pool",
    "skip-cu-markers",
    "keep-staging",
    "device-side",
    "signal-pool,keep-staging",
    "signal-pool,skip-cu-markers,keep-staging,device-side",
];

/// `krphase-emu run ARGS` with the tool loaded and `env` set; the truth lines.
fn run(emu: &Path, lib: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Truth {
    let truth = dir.join("truth.jsonl");
    let _ = std::fs::remove_file(&truth);
    let st = Command::new(emu)
        .arg("run")
        .args(args)
        .env("ROCP_TOOL_LIBRARIES", lib)
        .env("KRPHASE_OUTPUT", dir.join("run-%pid%.krp"))
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env_remove("KRPHASE_MODE")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run krphase-emu");
    assert!(st.success(), "krphase-emu {args:?}");
    std::fs::read_to_string(&truth)
        .expect("truth")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn of_type<'a>(t: &'a [Value], ty: &str) -> Vec<&'a Value> {
    t.iter().filter(|v| v["type"] == ty).collect()
}

fn windows(runs: &[Truth]) -> Vec<&Value> {
    runs.iter().flat_map(|t| of_type(t, "window")).collect()
}

/// A phase's total over every run, ns.
fn sum_ns(runs: &[Truth], phase: &str) -> f64 {
    runs.iter()
        .map(|t| of_type(t, "totals")[0]["ns"][phase].as_f64().unwrap_or(0.0))
        .sum()
}

fn span_ns(v: &Value) -> f64 {
    v["end"].as_f64().unwrap() - v["start"].as_f64().unwrap()
}

fn items(w: &Value, part: &str) -> Vec<Value> {
    let v = &w[part];
    v.as_array().cloned().unwrap_or_else(|| vec![v.clone()])
}

fn item_model_ns(item: &Value) -> f64 {
    item["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["model_ns"].as_f64().unwrap())
        .sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Paced work of (model, measured) ns: the median of measured ÷ model and of the overshoot.
/// Goal: the median at the model (≤ 1.15×, or ≤ 3 ms over for short items).
fn at_model(items: &[(f64, f64)]) -> (f64, f64, bool) {
    let ratio = median(items.iter().map(|&(m, g)| g / m).collect());
    let over = median(items.iter().map(|&(m, g)| g - m).collect());
    (ratio, over, ratio <= 1.15 || over <= 3e6)
}

fn copy_items(runs: &[Truth]) -> Vec<(f64, f64)> {
    windows(runs)
        .iter()
        .flat_map(|w| {
            let mut v = items(w, "snapshot");
            v.extend(items(w, "restores"));
            v
        })
        .map(|i| (item_model_ns(&i), span_ns(&i)))
        .collect()
}

fn kernel_items(runs: &[Truth]) -> Vec<(f64, f64)> {
    windows(runs)
        .iter()
        .flat_map(|w| {
            let each = w["kernel_model_ns"].as_f64().unwrap();
            w["passes"].as_array().unwrap().iter().map(move |p| {
                let got = p["gpu_end"].as_f64().unwrap() - p["gpu_start"].as_f64().unwrap();
                (each, got)
            })
        })
        .collect()
}

/// Pass execution: per kernel the fastest PASS ENTER→EXIT less any restore inside it, summed
/// over the kernels (the fastest pass of runs spread over time is what a pass itself costs).
fn pass_ns(runs: &[Truth]) -> f64 {
    let mut by_kernel: BTreeMap<String, f64> = BTreeMap::new();
    for w in windows(runs) {
        let restores = w["restores"].as_array().unwrap();
        for p in w["passes"].as_array().unwrap() {
            let index = p["index"].as_u64().unwrap();
            let inside: f64 = restores
                .iter()
                .filter(|r| r["in_pass"] == true && r["after_pass"].as_u64().unwrap() + 1 == index)
                .map(span_ns)
                .sum();
            let pass = p["exit"].as_f64().unwrap() - p["enter"].as_f64().unwrap() - inside;
            let fastest = by_kernel
                .entry(w["kernel"].as_str().unwrap().to_string())
                .or_insert(f64::MAX);
            *fastest = fastest.min(pass);
        }
    }
    by_kernel.values().sum()
}

fn row(what: &str, figure: String, goal: &str, met: bool) {
    println!(
        "| {what} | {figure} | {goal} | {} |",
        if met { "met" } else { "NOT met" }
    );
}

fn model_rows(builds: &[&str], runs: &[Vec<Truth>]) {
    for (b, r) in builds.iter().zip(runs) {
        for (what, items) in [("copies", copy_items(r)), ("kernels", kernel_items(r))] {
            let (ratio, over, met) = at_model(&items);
            let figure = format!("median {ratio:.3}× its model, {:.2} ms over", over / 1e6);
            row(
                &format!("{b}: {what}"),
                figure,
                "≤ 1.15× or ≤ 3 ms over",
                met,
            );
        }
    }
}

/// The phases each switch saves, build against baseline, and pass execution where no switch
/// touches it.
fn switch_rows(runs: &[Vec<Truth>]) {
    let base = &runs[0];
    let signal = sum_ns(base, "drain_signal");
    let model: f64 = windows(base)
        .iter()
        .map(|w| w["drain_signal_model_ns"].as_f64().unwrap())
        .sum();
    let n = windows(base).len() as f64;
    let figure = format!("{:.2} ms vs a model of {:.2} ms", signal / 1e6, model / 1e6);
    let met = signal <= 1.15 * model + 3e6 * n;
    row(
        "baseline: drain-signal creations",
        figure,
        "≤ 1.15× + 3 ms each",
        met,
    );
    let moved = sum_ns(base, "lock_drain") - sum_ns(&runs[1], "lock_drain");
    let r = moved / signal;
    let figure = format!("{r:.2} of the signal's cost");
    row(
        "signal-pool: lock+drain saved",
        figure,
        "0.3 – 1.1",
        r > 0.3 && r < 1.1,
    );
    let ratio = |i: usize, phase: &str| sum_ns(&runs[i], phase) / sum_ns(base, phase);
    // Each saving as a ratio to the baseline, and the factor it must at least save.
    for (what, r, goal, factor) in [
        (
            "keep-staging: snapshot",
            ratio(3, "snapshot"),
            "< 0.33",
            3.0,
        ),
        (
            "keep-staging: restore copies",
            ratio(3, "restore_copy"),
            "< 0.67",
            1.5,
        ),
        (
            "device-side: restore gap",
            ratio(4, "restore"),
            "< 0.05",
            20.0,
        ),
        ("device-side: snapshot", ratio(4, "snapshot"), "< 0.1", 10.0),
    ] {
        row(
            what,
            format!("{r:.3}× the baseline's"),
            goal,
            r * factor < 1.0,
        );
    }
    let r = pass_ns(&runs[4]) / pass_ns(base);
    let figure = format!("{r:.3}× the baseline's");
    row(
        "device-side: pass less its restore",
        figure,
        "≤ 1.15",
        r <= 1.15,
    );
    let w = |i: usize| sum_ns(&runs[i], "window") / 1e6;
    let figure = format!("{:.1} → {:.1} → {:.1} ms", w(0), w(5), w(6));
    let met = w(6) < w(5) && w(5) < w(0);
    row(
        "windows: baseline → two switches → all",
        figure,
        "decreasing",
        met,
    );
    for i in [1, 2, 3, 5] {
        let r = pass_ns(&runs[i]) / pass_ns(base);
        let what = format!("{}: pass execution", BUILDS[i]);
        row(
            &what,
            format!("{r:.3}× the baseline's"),
            "within ±15 %",
            (r - 1.0).abs() <= 0.15,
        );
    }
}

/// The measured rate (GB/s) of a copy kind at `bytes`, log-log between the sizes measured on
/// the PCIe Gen5 host (1, 8, 64, 512 MiB, 2 GiB).
fn measured_at(kind: &str, bytes: f64) -> f64 {
    let rates: [f64; 5] = match kind {
        "d2h_fresh_pageable" => [1.5, 1.6, 1.5, 1.6, 1.6],
        "d2h_pinned" => [33.5, 50.8, 54.2, 55.2, 55.3],
        "h2d_pageable" => [7.7, 7.3, 7.2, 8.6, 8.5],
        "h2d_pinned" => [23.1, 47.6, 54.4, 55.3, 55.4],
        "d2d" => [54.0, 356.0, 974.0, 1832.0, 2074.0],
        other => panic!("unknown copy kind {other}"),
    };
    let sizes = [20.0, 23.0, 26.0, 29.0, 31.0];
    let x = bytes.log2().clamp(sizes[0], sizes[4]);
    let i = (0..4).find(|&i| x <= sizes[i + 1]).unwrap();
    let f = (x - sizes[i]) / (sizes[i + 1] - sizes[i]);
    (rates[i].ln() + f * (rates[i + 1].ln() - rates[i].ln())).exp()
}

/// Each copy kind's GPU-scale rate (the copy's measured span ÷ the slow-down factor) against
/// the rate measured on the PCIe Gen5 host, at this machine's measured memcpy rate.
fn copy_kind_rows(emu: &Path, lib: &Path, dir: &Path) {
    let array = 131072.0 * 8.0;
    for build in ["baseline", "keep-staging", "device-side"] {
        let args = [
            "stream",
            "--elements",
            "131072",
            "--iterations",
            "1",
            "--sdk-build",
            build,
            "--cu-markers",
            "1",
            "--driver-passes",
            "2",
            "--driver-filter",
            "^stream_copy$",
        ];
        let t = run(emu, lib, dir, &args, &[]);
        let s = of_type(&t, "sdk_build")[0]["slowdown"].as_f64().unwrap();
        let w = of_type(&t, "window")[0];
        let restores = w["restores"].as_array().unwrap().iter();
        for (part, c) in
            std::iter::once(("snapshot", &w["snapshot"])).chain(restores.map(|r| ("restore", r)))
        {
            let kind = c["copies"][0]["kind"].as_str().unwrap();
            let small_ns = if kind == "d2d" { 0.0 } else { 2.0 * 6.5e3 };
            let want_ns = if kind == "d2d" {
                3.0 * array / measured_at(kind, 3.0 * array)
            } else {
                3.0 * array / measured_at(kind, array)
            } + small_ns;
            let r = want_ns / (span_ns(c) / s);
            let what = format!("{build}: {part} ({kind}) rate");
            let figure = format!("{r:.2}× the measured rate");
            row(&what, figure, "within 2×", (0.5..=2.0).contains(&r));
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probing
    }
    let (emu, lib) = drivers::release_build();
    let dir = std::env::temp_dir().join(format!("krphase-sdk-builds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let rounds: usize = std::env::var("KRPHASE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut runs: Vec<Vec<Truth>> = vec![Vec::new(); BUILDS.len()];
    for _ in 0..rounds {
        for (i, b) in BUILDS.iter().enumerate() {
            let args = [
                "stream",
                "--elements",
                "262144",
                "--iterations",
                "1",
                "--sdk-build",
                b,
                "--device-gbps",
                "20",
            ];
            let env = [
                ("KRPHASE_PASSES", "4"),
                ("KRPHASE_KERNEL_FILTER", "^stream_(copy|triad)$"),
            ];
            runs[i].push(run(&emu, &lib, &dir, &args, &env));
        }
    }
    println!("| measurement ({rounds} rounds) | figure | goal | met? |");
    println!("|---|---|---|---|");
    model_rows(&BUILDS, &runs);
    switch_rows(&runs);
    copy_kind_rows(&emu, &lib, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}
