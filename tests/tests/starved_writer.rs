//! The tool's writer thread starved of CPU: put at SCHED_IDLE (`chrt --idle`) and on one CPU
//! (`taskset`, i.e. `sched_setaffinity`) beside a busy loop pinned there, while the real
//! libkrphase.so records a STREAM run under the emulator. The writer is runnable and never in
//! I/O, so only a budget charged for every wait bounds the application: the summed wait of
//! its threads, measured in process (the trailer's `stall_ns`), stays within the process cap
//! plus 10 ms, the records that did not fit are dropped and counted by kind, the run says so
//! once, and `krphase import` reports the drops. Once the stall line is out the busy loop ends
//! and the writer gets its policy and CPUs back, so it recovers and writes the trailer that
//! carries the counts.

use krphase_format::FileReader;
use krphase_format::trailer::flags;
use krphase_tests::{TOOL_AND_EMU_ENV, artifacts, krphase_db, scratch_dir};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The tool's default process cap (`KRPHASE_WAIT_BUDGET_MS` unset).
const PROCESS_CAP: Duration = Duration::from_millis(50);
/// The slack the check allows: a slice that wakes late on a loaded machine is charged what it
/// lasted.
const SLACK: Duration = Duration::from_millis(10);
/// A hang guard, no more. A tool that does not charge every wait (the previous one: a wait the
/// writer's state did not bound) is told apart without a clock: while the writer is starved it
/// never spends the budget, so it never says the stall line and drops nothing (each asserted
/// below), and the writer is never fed, so the run crawls into this guard. A run's wall time is
/// no evidence on a shared machine: under two busy loops (load 13) this run was still going at
/// 40 s, its stall line said.
const BOUND: Duration = Duration::from_secs(120);
/// The stall line (once the budget is spent).
const STALL_LINE: &str = "is not keeping up";

/// A busy loop pinned to CPU 0, killed when dropped.
struct Hog(Option<Child>);

impl Hog {
    fn start() -> Hog {
        let c = Command::new("taskset")
            .args(["-c", "0", "yes"])
            .stdout(Stdio::null())
            .spawn()
            .expect("run taskset -c 0 yes");
        Hog(Some(c))
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The id of the tool's writer thread in process `pid`, once it exists.
fn writer_tid(pid: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks.flatten().find_map(|t| {
        let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
        (comm.trim() == "krphase-writer")
            .then(|| t.file_name().to_str()?.parse().ok())
            .flatten()
    })
}

/// Runs `program args` and asserts it succeeded.
fn run_ok(program: &str, args: &[&str]) {
    let o = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Starves thread `tid`: CPU 0 only, SCHED_IDLE.
fn starve(tid: u32) {
    let t = tid.to_string();
    run_ok("taskset", &["-p", "-c", "0", &t]);
    run_ok("chrt", &["--idle", "-p", "0", &t]);
}

/// Gives thread `tid` its normal policy and every CPU back (other work on a shared machine would
/// otherwise still starve a SCHED_IDLE thread).
fn feed(tid: u32) {
    let t = tid.to_string();
    run_ok("chrt", &["--other", "-p", "0", &t]);
    let cpus = format!(
        "0-{}",
        std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
    );
    run_ok("taskset", &["-p", "-c", &cpus, &t]);
}

#[test]
fn a_starved_writer_costs_the_application_at_most_the_wait_budget_and_drops_are_counted() {
    let dir = scratch_dir("fault-starved-writer");
    let out = dir.join("run.krp");
    let err_path = dir.join("stderr.txt");
    let a = artifacts();
    let mut hog = Hog::start();
    let mut cmd = Command::new(&a.emu);
    for k in TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    let mut child = cmd
        .args([
            "run",
            "stream",
            "--elements",
            "1024",
            "--iterations",
            "2500",
        ])
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", &out)
        .env_remove("KRPHASE_EMU_TRUTH")
        .env_remove("ROCPROFILER_LOG_LEVEL")
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("run krphase-emu");
    let t0 = Instant::now();
    let (mut starved, mut stall_seen) = (None, false);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if t0.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        if starved.is_none()
            && let Some(tid) = writer_tid(child.id())
        {
            starve(tid);
            starved = Some(tid);
        }
        if !stall_seen
            && let Some(tid) = starved
            && std::fs::read_to_string(&err_path).is_ok_and(|s| s.contains(STALL_LINE))
        {
            stall_seen = true;
            // The writer gets the CPU back and writes the rest and the trailer.
            hog.stop();
            feed(tid);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    hog.stop();
    let wall = t0.elapsed();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(
        starved.is_some(),
        "the writer thread was never found:\n{stderr}"
    );
    let status = status.unwrap_or_else(|| {
        panic!("the application did not finish within {BOUND:?} with a starved writer:\n{stderr}")
    });
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr.matches(STALL_LINE).count(),
        1,
        "the run says once that it drops:\n{stderr}"
    );
    check_file(&out, &stderr, wall);
}

/// The trailer's wait and drop counts, the finalize line, and what import reports.
fn check_file(out: &Path, stderr: &str, wall: Duration) {
    let mut r = FileReader::open(out).expect("open the phase file");
    for e in r.by_ref() {
        e.expect("every record reads");
    }
    let t = *r.trailer().expect("the trailer (the writer recovered)");
    let waited = Duration::from_nanos(t.stall_ns);
    eprintln!("starved writer: wall {wall:?}, waited {waited:?} in process, {t:?}");
    assert!(
        waited <= PROCESS_CAP + SLACK,
        "the application's threads waited {waited:?} (cap {PROCESS_CAP:?})"
    );
    assert!(waited > Duration::ZERO, "{t:?}");
    assert_ne!(t.flags & flags::STALLED, 0, "{t:?}");
    let dropped = t.dropped_dispatch + t.dropped_allocation + t.dropped_window;
    assert!(dropped > 0, "records that did not fit are counted: {t:?}");
    let finalize = stderr
        .lines()
        .find(|l| l.starts_with("[krphase] wrote "))
        .unwrap_or_else(|| panic!("no finalize line:\n{stderr}"));
    assert!(
        finalize.contains(&format!(
            "{dropped} dropped (dispatch {}, allocation {}, window {})",
            t.dropped_dispatch, t.dropped_allocation, t.dropped_window
        )),
        "{finalize}"
    );
    let db = out.with_extension("db");
    let _ = std::fs::remove_file(&db);
    let o = krphase_db(&db, &[OsStr::new("import"), out.as_os_str()]);
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{line}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        line.contains(&format!(
            "{} dispatch, {} allocation, {} window records dropped",
            t.dropped_dispatch, t.dropped_allocation, t.dropped_window
        )),
        "import reports the drops by kind: {line}"
    );
}
