//! The shell blocks of docs/benchmarking.md that loop over builds run as written, on the
//! emulator, in a scratch directory: the interleaved stack bench keeps one CSV and one output
//! directory per build (none overwrites another's) and its comparisons answer.

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
