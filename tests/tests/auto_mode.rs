//! `KRPHASE_MODE=auto` never lets rocprofv3's tool abort: with rocprofv3's tool library in the
//! process (here the emulator's stand-in for it, `libkrphase_emu_driver.so`, which claims replay
//! and aborts when the claim is refused, as rocprofv3's tool does), krphase observes, whether or
//! not `ROCPROF_KERNEL_REPLAY` is set. krphase is configured first (its `ROCP_TOOL_LIBRARIES`
//! entry comes before the preloaded tool), the order the README's observe command gives.

use krphase_format::{FileReader, Mode};
use krphase_tests::{artifacts, output_text, read_truth, scratch_dir};
use krphase_windows::{Output as Rebuilt, Reconstructor, Source, Window};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The file's requested and chosen modes, and its windows.
fn decode(path: &Path) -> (Mode, Mode, Vec<Window>) {
    let mut r = FileReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (requested, mode) = (r.header().requested_mode, r.header().mode);
    let (mut rc, mut windows) = (Reconstructor::new(), Vec::new());
    let mut take = |rc: &mut Reconstructor| {
        while let Some(o) = rc.pop() {
            if let Rebuilt::Window(w) = o {
                windows.push(w);
            }
        }
    };
    for e in r.by_ref() {
        let e = e.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        rc.push(&e).expect("within the reconstruction limits");
        take(&mut rc);
    }
    rc.finish();
    take(&mut rc);
    (requested, mode, windows)
}

/// saxpy, 2 iterations, the driver preloaded with 3 passes, krphase in auto mode listed first.
fn run(name: &str, replay_var: Option<&str>) -> (Output, PathBuf, Vec<serde_json::Value>) {
    let a = artifacts();
    let dir = scratch_dir(name);
    let (krp, truth) = (dir.join("run.krp"), dir.join("truth.jsonl"));
    let mut cmd = Command::new(&a.emu);
    cmd.current_dir(&dir)
        .args(["run", "saxpy", "--elements", "4096", "--iterations", "2"]);
    for k in krphase_tests::TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    cmd.env("KRPHASE_OUTPUT", &krp)
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("LD_PRELOAD", &a.driver_lib)
        .env("KRPHASE_EMU_DRIVER_PASSES", "3");
    if let Some(v) = replay_var {
        cmd.env("ROCPROF_KERNEL_REPLAY", v);
    }
    let o = cmd.output().expect("run krphase-emu");
    let t = if truth.exists() {
        read_truth(&truth)
    } else {
        Vec::new()
    };
    (o, krp, t)
}

fn check(name: &str, replay_var: Option<&str>) {
    let (o, krp, truth) = run(name, replay_var);
    assert!(o.status.success(), "{name}: {}", output_text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    // The library is said only when it is the only sign that rocprofv3 owns replay.
    let said = stderr.lines().any(|l| {
        l.starts_with("[krphase]")
            && l.contains("rocprofv3's tool library is loaded")
            && l.contains("libkrphase_emu_driver.so")
    });
    assert_eq!(said, replay_var.is_none(), "{name}: {stderr}");
    let (requested, mode, got) = decode(&krp);
    assert_eq!(requested, Mode::Auto);
    assert_eq!(mode, Mode::Observe, "{name}");
    // The driver owned replay: every window the emulator replayed, krphase observed with its 3
    // passes.
    let windows: Vec<_> = truth.iter().filter(|v| v["type"] == "window").collect();
    assert_eq!(windows.len(), 2, "{name}: saxpy's two dispatches replayed");
    assert_eq!(got.len(), windows.len(), "{name}");
    assert!(
        got.iter()
            .all(|w| w.source == Source::Observe && w.executed_passes == 3),
        "{name}"
    );
}

#[test]
fn auto_observes_under_the_preloaded_rocprofv3_tool_without_rocprof_kernel_replay() {
    check("auto-tool-loaded", None);
}

#[test]
fn auto_observes_under_the_preloaded_rocprofv3_tool_with_rocprof_kernel_replay() {
    check("auto-tool-loaded-var", Some("1"));
}

/// Under the `rocprofv3` stand-in (kernel replay, its counter tool appended and preloaded),
/// krphase observes the replay the tool owns.
#[test]
fn auto_observes_under_the_rocprofv3_stand_in() {
    let a = artifacts();
    let dir = scratch_dir("auto-rocprofv3");
    let krp = dir.join("run.krp");
    let mut cmd = Command::new(&a.emu);
    cmd.current_dir(&dir)
        .arg("rocprofv3")
        .args(["--replay-mode", "kernel", "--kernel-replay-beta-enabled"])
        .args([
            "--pmc",
            "SQ_WAVES",
            "--pmc",
            "SQ_INSTS_VALU",
            "-d",
            "out",
            "--",
        ])
        .args(["krphase-emu", "run", "saxpy", "--elements", "4096"])
        .args(["--iterations", "2"]);
    for k in krphase_tests::TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    let o = cmd
        .env("PATH", krphase_tests::path_with_artifacts())
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", &krp)
        .output()
        .expect("run krphase-emu rocprofv3");
    assert!(o.status.success(), "{}", output_text(&o));
    // The stand-in sets ROCPROF_KERNEL_REPLAY, as rocprofv3.py does: nothing to say.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !stderr.contains("[krphase] rocprofv3's tool library"),
        "{stderr}"
    );
    let (requested, mode, got) = decode(&krp);
    assert_eq!((requested, mode), (Mode::Auto, Mode::Observe));
    assert_eq!(got.len(), 2, "saxpy's two dispatches");
    assert!(
        got.iter().all(|w| w.executed_passes == 2),
        "one pass per --pmc group"
    );
}
