//! `krphase-emu rocprofv3 [options] -- APP ARGS`: a stand-in for rocprofv3 covering what the
//! benchmark harness depends on.
//!
//! - Several `--pmc` groups without kernel replay: application replay, the APP runs once per
//!   group, each run writing under `<d>/pass_<n>` (n from 1) with one group in `ROCPROF_COUNTERS`.
//! - `--replay-mode kernel --kernel-replay-beta-enabled`: one APP run whose internal counter tool
//!   (the emulator's driver client) claims kernel replay with one pass per group:
//!   `KRPHASE_EMU_DRIVER_PASSES=G`, `ROCPROF_KERNEL_REPLAY=1`, `ROCPROF_COUNTER_GROUPS`.
//! - `--kernel-replay-beta-enabled` without `--replay-mode kernel`: as rocprofv3 does from
//!   ROCm's rocprofv3.py @01610ac2 on, application replay (with a warning on stderr; the flag is
//!   only the acknowledgement). `--replay-mode kernel` without the flag is rejected.
//! - `-i FILE` (JSON) with `pmc_groups` and `pmc_group_interval`: the groups rotate across
//!   dispatches in one run (`ROCPROF_COUNTER_GROUPS`, `ROCPROF_COUNTER_GROUPS_INTERVAL`).
//! - `--kernel-include-regex R` -> `KRPHASE_EMU_DRIVER_FILTER` (the driver's include regex).
//! - `-d`, `-o`, `--output-format json|csv`: a small per-run file listing the group each
//!   dispatch was counted with, under the run's output directory; under kernel replay, `json` is
//!   rocprofv3's own JSON layout with each counter record's `replay_pass` ([`json_output`]),
//!   made from the counter tool's buffer as the rocpd database is.
//! - `--output-format rocpd` (kernel replay only): the counter tool writes its records into the
//!   output directory at finalize, and once the APP exited the stand-in turns them into
//!   `<d>/<o>_results.db` (`<pid>_results.db` without `-o`), as rocprofv3's rocpd writer lays
//!   them out ([`rocpd`]).
//!
//! The tool entry: as rocprofv3 appends `librocprofiler-sdk-tool.so` to `ROCP_TOOL_LIBRARIES`
//! and `LD_PRELOAD`, the stand-in appends its counter tool, `libkrphase_emu_driver.so` (a client
//! library of its own, `kernels/emu/driver`), to both under kernel replay, configured through the
//! `KRPHASE_EMU_DRIVER_*` and `ROCPROF_COUNTER_GROUPS` variables. The user's tools (e.g.
//! libkrphase.so) stay first in the list; the SDK's drop-last rule (the emulator's default) drops
//! the driver's entry, and the SDK finds it preloaded. rocprofv3.py (`run()`, @01610ac2) also
//! preloads `librocprofiler-sdk.so`; the emulated SDK is this executable, so there is no such
//! library to preload.

pub mod json_output;
mod options;
mod outputs;
mod plan;
pub mod rocpd;

use options::parse;
use outputs::{dispatches_from_stdout, write_outputs};
use plan::{launches, plan};
use std::process::{Command, Stdio};

/// `ROCP_TOOL_LIBRARIES` and `LD_PRELOAD` with the counter tool appended, as rocprofv3.py's
/// `update_env(..., append=True)` does at @01610ac2 (joined with ':', outer ':' stripped).
fn tool_entry(lib: &str) -> Vec<(String, String)> {
    let append = |k: &str| {
        let old = std::env::var(k).unwrap_or_default();
        let v = format!("{old}:{lib}");
        (k.to_string(), v.trim_matches(':').to_string())
    };
    vec![append("ROCP_TOOL_LIBRARIES"), append("LD_PRELOAD")]
}

/// Writes rocprofv3's JSON from the counter tool's buffer in `dir`, removing the buffer unless
/// the rocpd writer still needs it.
fn write_json(dir: &std::path::Path, name: Option<&str>, keep: bool) -> Result<(), String> {
    let buffer = dir.join(rocpd::BUFFER);
    let text = std::fs::read_to_string(&buffer).map_err(|e| {
        format!(
            "the counter tool left no buffer ({}: {e})",
            buffer.display()
        )
    })?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("the buffer {} is not JSON: {e}", buffer.display()))?;
    json_output::write(dir, name, &doc)?;
    if !keep {
        let _ = std::fs::remove_file(&buffer);
    }
    Ok(())
}

/// Runs the stand-in; returns the process exit code.
pub fn main(args: &[String]) -> i32 {
    let fail = |msg: String, code: i32| {
        eprintln!("rocprofv3: error: {msg}");
        code
    };
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => return fail(e, 2),
    };
    let (collection, warning) = match plan(&o) {
        Ok(p) => p,
        Err(e) => return fail(e, 1),
    };
    if let Some(w) = warning {
        eprintln!("rocprofv3: warning: {w}");
    }
    for launch in launches(&o, &collection) {
        if let Err(e) = std::fs::create_dir_all(&launch.output_path) {
            return fail(
                format!("cannot create {}: {e}", launch.output_path.display()),
                1,
            );
        }
        let out_abs = std::fs::canonicalize(&launch.output_path)
            .unwrap_or_else(|_| launch.output_path.clone());
        let mut env = launch.env.clone();
        let rocpd = o.output_formats.iter().any(|f| f == "rocpd");
        let kernel_replay = matches!(collection, plan::Collection::KernelReplay(_));
        // JSON is the stand-in's default format (`outputs.rs`).
        let json = kernel_replay
            && (o.output_formats.is_empty() || o.output_formats.iter().any(|f| f == "json"));
        if matches!(collection, plan::Collection::KernelReplay(_)) {
            match krphase_emu::driver_client::library_path() {
                Ok(lib) => env.extend(tool_entry(&lib.display().to_string())),
                Err(e) => return fail(e, 1),
            }
            if rocpd || json {
                let buffer = out_abs.join(rocpd::BUFFER).display().to_string();
                env.push(("KRPHASE_EMU_DRIVER_ROCPD".into(), buffer));
            }
        }
        let mut cmd = Command::new(&o.app[0]);
        cmd.args(&o.app[1..])
            .env("ROCPROF_OUTPUT_PATH", &out_abs)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::inherit())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return fail(format!("cannot run {}: {e}", o.app[0]), 1),
        };
        let out = match child.wait_with_output() {
            Ok(o) => o,
            Err(e) => return fail(format!("waiting for {}: {e}", o.app[0]), 1),
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        print!("{stdout}");
        if !out.status.success() {
            use std::os::unix::process::ExitStatusExt;
            let code = out
                .status
                .code()
                .unwrap_or_else(|| 128 + out.status.signal().unwrap_or(0));
            eprintln!("rocprofv3: the application exited with {}", out.status);
            return code;
        }
        let dispatches = dispatches_from_stdout(&stdout).unwrap_or(0);
        if let Err(e) = write_outputs(&o, &collection, &launch, dispatches) {
            return fail(e, 1);
        }
        if json && let Err(e) = write_json(&out_abs, o.output_file.as_deref(), rocpd) {
            return fail(e, 1);
        }
        if rocpd && let Err(e) = rocpd::finish(&out_abs, o.output_file.as_deref()) {
            return fail(e, 1);
        }
    }
    0
}
