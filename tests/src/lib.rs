//! Helpers shared by the end-to-end tests (and the emulator's self-tests in `kernels/emu/tests/`,
//! whose dev-dependency this is): build the artifacts the tests run (the tool cdylib, the
//! emulator, the probe tool, the analyzer) once per test process and locate them.
//!
//! `cargo test --workspace` does not build cdylibs or other packages' binaries for a test, so the
//! first test that needs them runs `cargo build` in the same profile and target directory: for
//! those packages alone, or for the workspace under `scripts/test` (see `build_scope`). Cargo has
//! released its build lock by the time tests run.

pub mod filters;
pub mod python;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Paths of the built artifacts.
#[derive(Debug, Clone)]
pub struct Artifacts {
    /// `target/<profile>`.
    pub profile_dir: PathBuf,
    /// `krphase-emu`.
    pub emu: PathBuf,
    /// `libkrphase.so`.
    pub tool_lib: PathBuf,
    /// `libkrphase_probe.so`, the conformance probe tool.
    pub probe_lib: PathBuf,
    /// `krphase`, the analyzer.
    pub krphase: PathBuf,
    /// `libkrphase_emu_driver.so`, the rocprofv3 stand-in's counter tool (a client of its own;
    /// `krphase-emu` finds it next to itself).
    pub driver_lib: PathBuf,
}

/// The profile directory the running test binary was built into (`target/debug` for
/// `target/debug/deps/<test>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary has a parent directory");
    if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().expect("deps has a parent").to_path_buf()
    } else {
        deps.to_path_buf()
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// What the artifacts' `cargo build` selects. Under `scripts/test` (`cargo test --workspace`,
/// which sets `KRPHASE_TEST_SCOPE=workspace`) it selects what that command selected, so that
/// cargo resolves the same dependency features and reuses the dependencies it has just built;
/// a narrower selection resolves fewer features and compiles half the dependency graph again
/// (minutes on two cores). Alone (`cargo test -p …`), only the packages whose artifacts the
/// tests run.
fn build_scope() -> Vec<&'static str> {
    if std::env::var("KRPHASE_TEST_SCOPE").is_ok_and(|s| s == "workspace") {
        return vec!["--workspace", "--lib", "--bins", "--tests"];
    }
    let packages = [
        "krphase-tool",
        "krphase-emu",
        "krphase-probe",
        "krphase-emu-driver",
        "krphase-analyzer",
    ];
    packages.iter().flat_map(|p| ["-p", *p]).collect()
}

/// Builds (once per process) and returns the artifacts.
pub fn artifacts() -> &'static Artifacts {
    static ONCE: OnceLock<Artifacts> = OnceLock::new();
    ONCE.get_or_init(|| {
        let profile_dir = profile_dir();
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let target_dir = profile_dir.parent().expect("profile dir has a parent");
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root");
        let mut cmd = Command::new(cargo());
        cmd.current_dir(workspace)
            .arg("build")
            .args(build_scope())
            .env("CARGO_TARGET_DIR", target_dir);
        if release {
            cmd.arg("--release");
        }
        let status = cmd
            .status()
            .expect("run cargo build for the test artifacts");
        assert!(status.success(), "cargo build of the test artifacts failed");
        Artifacts {
            emu: profile_dir.join("krphase-emu"),
            tool_lib: profile_dir.join("libkrphase.so"),
            probe_lib: profile_dir.join("libkrphase_probe.so"),
            krphase: profile_dir.join("krphase"),
            driver_lib: profile_dir.join("libkrphase_emu_driver.so"),
            profile_dir,
        }
    })
}

/// A fresh scratch directory under the target directory (kept for inspection after a failure).
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = profile_dir()
        .join("test-scratch")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// `PATH` with the built binaries first (for launchers that find `krphase-emu` by name).
pub fn path_with_artifacts() -> String {
    let old = std::env::var("PATH").unwrap_or_default();
    format!("{}:{old}", artifacts().profile_dir.display())
}

/// A child's exit status, stdout and stderr, for assertion messages.
pub fn output_text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs the analyzer as `krphase --db DB ARGS...`.
pub fn krphase_db<S: AsRef<OsStr>>(db: &Path, args: &[S]) -> Output {
    Command::new(&artifacts().krphase)
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run krphase")
}

/// The emulator's ground truth (`KRPHASE_EMU_TRUTH`): one JSON value per line. Panics when the
/// file is missing or a line is not JSON.
pub fn read_truth(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("truth file {}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).expect("truth lines are JSON"))
        .collect()
}

/// (dispatch id, executed passes) of the truth's replayed windows.
pub fn executed_passes(truth: &Path) -> Vec<(u64, u64)> {
    read_truth(truth)
        .iter()
        .filter(|t| t["type"] == "window" && t["outcome"] == "replayed")
        .map(|t| {
            (
                t["dispatch_id"].as_u64().unwrap(),
                t["executed_passes"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// [`read_truth`] for a run that may have failed before the emulator opened the truth file:
/// no file reads as no lines.
pub fn read_truth_if_any(path: &Path) -> Vec<serde_json::Value> {
    if path.exists() {
        read_truth(path)
    } else {
        Vec::new()
    }
}

/// Files of one emulator run made by [`run_logged`], all in its scratch directory.
pub struct LoggedRun {
    /// The scratch directory.
    pub dir: PathBuf,
    /// The tool's phase file (`KRPHASE_OUTPUT`).
    pub krp: PathBuf,
    /// The emulator's stderr with the SDK log at `ROCPROFILER_LOG_LEVEL=info`.
    pub log: PathBuf,
    /// The emulator's ground truth (`KRPHASE_EMU_TRUTH`).
    pub truth: PathBuf,
}

/// Runs `krphase-emu run ARGS` with the tool loaded, its SDK log captured, ground truth on,
/// `KRPHASE_MODE` unset, a wait budget of 2 s and `env` added; panics unless the emulator
/// succeeds.
pub fn run_logged(name: &str, args: &[&str], env: &[(&str, &str)]) -> LoggedRun {
    let a = artifacts();
    let dir = scratch_dir(name);
    let (krp, log, truth) = (
        dir.join("run.krp"),
        dir.join("stderr.log"),
        dir.join("truth.jsonl"),
    );
    let mut cmd = Command::new(&a.emu);
    cmd.arg("run")
        .args(args)
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", &krp)
        .env("ROCPROFILER_LOG_LEVEL", "info")
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env_remove("KRPHASE_MODE")
        // These runs check what the file holds, not the wait budget (its own tests do): a
        // writer starved of CPU on a loaded test machine must not cut a short run's file. A
        // caller's `env` still overrides it.
        .env("KRPHASE_WAIT_BUDGET_MS", "2000")
        .stderr(std::fs::File::create(&log).expect("create the log file"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("run the emulator");
    assert!(o.status.success(), "{}", output_text(&o));
    LoggedRun {
        dir,
        krp,
        log,
        truth,
    }
}

/// Runs `krphase --db DB ARGS...`, panics unless it succeeds, and returns its stdout.
pub fn krphase_db_ok<S: AsRef<OsStr> + std::fmt::Debug>(db: &Path, args: &[S]) -> String {
    let o = krphase_db(db, args);
    assert!(o.status.success(), "{args:?}: {}", output_text(&o));
    String::from_utf8(o.stdout).expect("krphase prints UTF-8")
}

impl LoggedRun {
    /// The analyzer database of this run (`DIR/k.db`).
    pub fn db(&self) -> PathBuf {
        self.dir.join("k.db")
    }

    /// `krphase --db DIR/k.db ARGS...`, checked; returns its stdout.
    pub fn krphase<S: AsRef<OsStr> + std::fmt::Debug>(&self, args: &[S]) -> String {
        krphase_db_ok(&self.db(), args)
    }

    /// The first run of `krphase report --format json`.
    pub fn report_run(&self) -> serde_json::Value {
        let report: serde_json::Value =
            serde_json::from_str(&self.krphase(&["report", "--format", "json"]))
                .expect("the report is JSON");
        report["runs"][0].clone()
    }
}

/// The row of phase `name` in a report run's `phases`; panics when it is missing.
pub fn report_phase<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    run["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .find(|p| p["phase"] == name)
        .unwrap_or_else(|| panic!("no phase {name} in the report"))
}

/// A child process run by [`run_bounded`]: how it ended and how long it took.
pub struct BoundedRun {
    /// `None` when it was still running at the bound and was killed.
    pub status: Option<std::process::ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub wall: std::time::Duration,
}

impl BoundedRun {
    /// Status, stdout and stderr, for assertion messages.
    pub fn text(&self) -> String {
        format!(
            "status {:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.wall, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` with stdout and stderr captured in files under `dir`, killing it (SIGKILL) if it
/// has not ended within `bound`, so a hang fails the test instead of stalling the suite.
pub fn run_bounded(cmd: &mut Command, dir: &Path, bound: std::time::Duration) -> BoundedRun {
    let (out, err) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out).expect("create stdout file"))
        .stderr(std::fs::File::create(&err).expect("create stderr file"))
        .spawn()
        .expect("spawn the child");
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the child") {
            break Some(s);
        }
        if start.elapsed() >= bound {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let wall = start.elapsed();
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    BoundedRun {
        status,
        stdout: read(&out),
        stderr: read(&err),
        wall,
    }
}

/// The tool's and the emulator's variables a developer's shell might set; end-to-end runs clear
/// them so that only what a test sets applies.
pub const TOOL_AND_EMU_ENV: &[&str] = &[
    "KRPHASE_MODE",
    "KRPHASE_PASSES",
    "KRPHASE_MAX_PASSES",
    "KRPHASE_KERNEL_FILTER",
    "KRPHASE_KERNEL_EXCLUDE",
    "KRPHASE_TRUNCATE_KERNELS",
    "KRPHASE_MANGLED_KERNELS",
    "ROCPROF_KERNEL_FILTER_INCLUDE_REGEX",
    "ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX",
    "ROCPROF_TRUNCATE_KERNELS",
    "ROCPROF_DEMANGLE_KERNELS",
    "KRPHASE_PAYLOAD_LAYOUT",
    "KRPHASE_ON_FULL",
    "KRPHASE_WAIT_BUDGET_MS",
    "KRPHASE_THREAD_WAIT_BUDGET_MS",
    "KRPHASE_DISABLE",
    "KRPHASE_CLOCK",
    "KRPHASE_GPU_TIMES",
    "ROCPROF_KERNEL_REPLAY",
    "ROCPROF_OUTPUT_PATH",
    "KRPHASE_EMU_DRIVER_PASSES",
    "KRPHASE_EMU_DRIVER_ORDER",
    "KRPHASE_EMU_DRIVER_FILTER",
    "KRPHASE_EMU_DRIVER_RECORDS",
    "KRPHASE_EMU_DRIVER_LIBRARY",
    "KRPHASE_PMC",
    "ROCPROF_COUNTER_GROUPS",
    "LD_PRELOAD",
    "KRPHASE_EMU_SDK_BUILD",
    "KRPHASE_EMU_DEVICE_GBPS",
    "KRPHASE_EMU_DISPATCH_TRACING_US",
];

/// Tests that time emulated phases take this lock, so that the tests of one binary (which the
/// harness runs in parallel) do not load the machine for each other.
static TIMING_SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds [`TIMING_SERIAL`] for the rest of the calling test (a panicking test poisons nothing).
pub fn timing_serial() -> std::sync::MutexGuard<'static, ()> {
    TIMING_SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
