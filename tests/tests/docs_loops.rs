//! Shell blocks of the docs run as written, on the emulator, in a scratch directory, with a PATH
//! shim: the interleaved stack bench of docs/benchmarking.md keeps one CSV and one output
//! directory per build (none overwrites another's) and its comparisons answer; the README's
//! observe command (`rocprofv3` a wrapper around the emulator's stand-in, whose SDK follows the
//! real tool-list rules) leaves krphase observing and the driver keeping replay.

use krphase_format::{FileReader, Mode};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// The ```sh block of `doc` whose text contains `marker`.
fn sh_block(doc: &str, marker: &str) -> String {
    doc.split("```sh\n")
        .skip(1)
        .filter_map(|b| b.split_once("\n```").map(|(body, _)| body))
        .find(|b| b.contains(marker))
        .unwrap_or_else(|| panic!("no ```sh block with {marker:?}"))
        .to_string()
}

#[test]
fn the_stack_loop_of_benchmarking_md_runs_as_written_and_keeps_every_build() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/benchmarking.md"),
    )
    .expect("docs/benchmarking.md");
    let block = sh_block(&doc, "--build baseline=baseline");
    let dir = krphase_tests::scratch_dir("docs-stack-loop");
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &block])
        .current_dir(&dir)
        .env("PATH", krphase_tests::path_with_artifacts())
        .env_remove("KRPHASE_EMU_DEVICE_GBPS")
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "the block failed:\n{block}\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for build in ["baseline", "keep-staging", "device-side"] {
        let csv = std::fs::read_to_string(dir.join(format!("replay_perf-{build}.csv")))
            .unwrap_or_else(|e| panic!("{build}'s CSV: {e}"));
        assert!(
            csv.lines().count() >= 2,
            "{build}'s CSV holds no row: {csv}"
        );
        assert!(
            dir.join("replay_perf_out").join(build).is_dir(),
            "{build} has no output directory of its own"
        );
    }
    assert!(stdout.contains("**EMULATED**"), "{stdout}");
    assert!(
        stdout.contains("keep-staging") && stdout.contains("device-side"),
        "{stdout}"
    );
}

/// An executable shell script `path` running `body`.
fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write the script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The README's "Under rocprofv3" block, as written: `$PWD/target/release/libkrphase.so` is a
/// link to the built tool, `rocprofv3` runs `krphase-emu rocprofv3`, `./my_app` runs saxpy
/// (2 dispatches). Without `replay_var`, the application unsets `ROCPROF_KERNEL_REPLAY` (a
/// rocprofv3 that did not export it): krphase must still observe, from the preloaded tool alone.
fn readme_observe(name: &str, replay_var: bool) {
    let a = krphase_tests::artifacts();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("README.md");
    let block = sh_block(&readme, "-o run -- ./my_app");
    let dir = krphase_tests::scratch_dir(name);
    std::fs::create_dir_all(dir.join("target/release")).expect("target/release");
    std::os::unix::fs::symlink(&a.tool_lib, dir.join("target/release/libkrphase.so"))
        .expect("link the tool");
    std::fs::create_dir_all(dir.join("bin")).expect("bin");
    script(
        &dir.join("bin/rocprofv3"),
        "exec krphase-emu rocprofv3 \"$@\"",
    );
    let unset = if replay_var {
        ""
    } else {
        "unset ROCPROF_KERNEL_REPLAY\n"
    };
    script(
        &dir.join("my_app"),
        &format!("{unset}exec krphase-emu run saxpy --elements 4096 --iterations 2 \"$@\""),
    );
    let truth = dir.join("truth.jsonl");
    let mut cmd = Command::new("bash");
    cmd.args(["-euo", "pipefail", "-c", &block])
        .current_dir(&dir);
    for k in krphase_tests::TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    let o = cmd
        .env_remove("ROCP_TOOL_LIBRARIES")
        .env_remove("LD_PRELOAD")
        .env_remove("ROCPROF_KERNEL_REPLAY")
        .env_remove("KRPHASE_OUTPUT")
        .env("PWD", &dir)
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env(
            "PATH",
            format!(
                "{}:{}",
                dir.join("bin").display(),
                krphase_tests::path_with_artifacts()
            ),
        )
        .output()
        .expect("run bash");
    let log = std::fs::read_to_string(dir.join("run.log")).unwrap_or_default();
    assert!(
        o.status.success(),
        "the block failed:\n{block}\n{}\nrun.log:\n{log}",
        krphase_tests::output_text(&o)
    );
    assert!(
        log.contains("[rocprofiler-sdk-tool] 4 counter records"),
        "the driver kept replay and counted 2 groups x 2 dispatches: {log}"
    );
    let krps: Vec<_> = std::fs::read_dir(dir.join("out"))
        .expect("out/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "krp"))
        .collect();
    assert_eq!(krps.len(), 1, "{krps:?}");
    let r = FileReader::open(&krps[0]).expect("open the phase file");
    assert_eq!(
        (r.header().requested_mode, r.header().mode),
        (Mode::Auto, Mode::Observe),
        "krphase observes"
    );
    let windows = krphase_tests::read_truth(&truth)
        .into_iter()
        .filter(|t| t["type"] == "window")
        .map(|t| t["executed_passes"].as_u64())
        .collect::<Vec<_>>();
    assert_eq!(windows, vec![Some(2), Some(2)], "one pass per --pmc group");
}

#[test]
fn the_readme_observe_command_runs_as_written_krphase_observes_the_driver_replays() {
    readme_observe("docs-readme-observe", true);
}

#[test]
fn the_readme_observe_command_observes_also_without_rocprof_kernel_replay() {
    readme_observe("docs-readme-observe-unset", false);
}
