//! `krphase run` end to end, through the built `krphase`, `libkrphase.so` and the emulator: the
//! application's stderr passes through byte for byte (a pipe when krphase's stderr is one, a
//! terminal when it is one), its exit status or its death by a signal comes back, SIGINT and
//! SIGTERM reach it, the run is imported with its SDK log joined and summarized (drive mode on
//! the emulator's STREAM, observe mode under the rocprofv3 stand-in), each rank of a job only
//! writes its files for `krphase import DIR` to merge, and doctor's traps stop the run unless
//! `--force`.
//!
//! The applications are small `sh` scripts around the emulator, so that what they write to
//! stderr is known apart from krphase: the emulator's own stderr goes to a side file the script
//! then copies out, followed by fixed bytes (an escape sequence, a lone `\r`, a byte that is not
//! UTF-8, no final newline).

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use krphase_tests::{TOOL_AND_EMU_ENV, artifacts, output_text, path_with_artifacts, scratch_dir};
use serde_json::Value;

/// The fixed bytes every script writes to stderr last.
const TAIL: &[u8] = b"app: \x1b[31mred\x1b[0m\rover\n\xffnot utf-8, no newline";

/// `printf` text writing [`TAIL`] (octal escapes, as POSIX `printf` reads them).
const TAIL_PRINTF: &str = r"printf 'app: \033[31mred\033[0m\rover\n\377not utf-8, no newline' >&2";

/// STREAM on the emulator, small enough for a loaded machine.
const STREAM: &str = "krphase-emu run stream --elements 65536 --iterations 3";

/// `krphase run ARGS -- sh -c SCRIPT` in `dir`, with a clean tool environment and the built
/// binaries on PATH.
fn krphase_run(dir: &Path, args: &[&str], script: &str) -> Command {
    let mut cmd = Command::new(&artifacts().krphase);
    cmd.current_dir(dir)
        .arg("run")
        .args(args)
        .args(["--", "sh", "-c", script])
        .env("PATH", path_with_artifacts())
        .env("KRPHASE_WAIT_BUDGET_MS", "2000")
        .stdin(Stdio::null());
    for v in TOOL_AND_EMU_ENV {
        if *v != "KRPHASE_WAIT_BUDGET_MS" {
            cmd.env_remove(v);
        }
    }
    for v in [
        "ROCP_TOOL_LIBRARIES",
        "ROCPROFILER_LOG_LEVEL",
        "KRPHASE_OUTPUT",
    ] {
        cmd.env_remove(v);
    }
    for v in RANKS {
        cmd.env_remove(v);
    }
    cmd
}

const RANKS: [&str; 6] = [
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_RANK",
    "SLURM_PROCID",
    "RANK",
];

/// A script running `app` with its stderr kept in `side`, then copying that out and writing
/// [`TAIL`], and exiting with `status`.
fn script(app: &str, side: &Path, status: i32) -> String {
    format!(
        "{app} 2>'{}' || exit 9; cat '{}' >&2; {TAIL_PRINTF}; exit {status}",
        side.display(),
        side.display()
    )
}

/// What the script wrote to stderr: the side file, then [`TAIL`].
fn expected_stderr(side: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(side).expect("the side file");
    bytes.extend_from_slice(TAIL);
    bytes
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

/// `krphase report --format json`'s runs of `db`.
fn report_runs(db: &Path) -> Vec<Value> {
    let out = krphase_tests::krphase_db_ok(db, &["report", "--format", "json"]);
    let v: Value = serde_json::from_str(&out).expect("the report is JSON");
    v["runs"].as_array().expect("runs").clone()
}

/// Checks what a run of the script printed and stored: stderr unchanged (in krphase's stderr,
/// contiguous, and in the kept log exactly), the summary printed, one run with its log joined.
fn assert_passed_through_and_imported(dir: &Path, o: &std::process::Output, side: &Path) {
    let want = expected_stderr(side);
    assert!(
        want.len() > TAIL.len() + 1000,
        "the emulator wrote its SDK log to the side file: {}",
        output_text(o)
    );
    assert!(
        contains(&o.stderr, &want),
        "the application's stderr, byte for byte: {}",
        output_text(o)
    );
    let kept = std::fs::read(dir.join("out/krphase-stderr.log")).expect("the kept log");
    assert_eq!(kept, want, "the kept log is the application's stderr");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("== summary") && stdout.contains("EMULATED"),
        "the summary: {}",
        output_text(o)
    );
    assert!(
        stdout.contains("joined to run 1"),
        "the log joined: {}",
        output_text(o)
    );
    let runs = report_runs(&dir.join("out/krphase.db"));
    assert_eq!(runs.len(), 1, "{}", output_text(o));
    assert_eq!(runs[0]["log_joined"], true, "{}", output_text(o));
}

#[test]
fn stream_through_a_pipe_stderr_unchanged_exit_3_log_joined_summary_printed() {
    let dir = scratch_dir("run-e2e-stream");
    let side = dir.join("side.log");
    let o = krphase_run(&dir, &["-d", "out"], &script(STREAM, &side, 3))
        .output()
        .expect("run krphase");
    assert_eq!(o.status.code(), Some(3), "{}", output_text(&o));
    assert_passed_through_and_imported(&dir, &o, &side);
    let runs = report_runs(&dir.join("out/krphase.db"));
    assert_eq!(runs[0]["mode"], "drive", "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("krphase run: out/krphase.db (1 run(s): 1)"),
        "{}",
        output_text(&o)
    );
}

#[test]
fn under_the_rocprofv3_stand_in_observed_joined_and_exit_3() {
    let dir = scratch_dir("run-e2e-rocprofv3");
    let side = dir.join("side.log");
    let o = krphase_run(
        &dir,
        &[
            "--rocprofv3",
            "krphase-emu rocprofv3",
            "--pmc",
            "SQ_WAVES GRBM_COUNT",
            "--pmc",
            "SQ_INSTS_VALU",
            "-d",
            "out",
        ],
        &script(STREAM, &side, 3),
    )
    .output()
    .expect("run krphase");
    assert_eq!(o.status.code(), Some(3), "{}", output_text(&o));
    let want = expected_stderr(&side);
    assert!(contains(&o.stderr, &want), "{}", output_text(&o));
    // rocprofv3 (the stand-in) says the application failed, on the same stderr.
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("rocprofv3: the application exited"),
        "{}",
        output_text(&o)
    );
    let runs = report_runs(&dir.join("out/krphase.db"));
    assert_eq!(runs.len(), 1, "{}", output_text(&o));
    assert_eq!(runs[0]["mode"], "observe", "{}", output_text(&o));
    assert_eq!(runs[0]["log_joined"], true, "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("== summary"),
        "{}",
        output_text(&o)
    );
}

#[test]
fn without_the_sdk_stderr_unchanged_exit_3_and_one_line_saying_no_phase_file() {
    let dir = scratch_dir("run-e2e-plain");
    let o = krphase_run(
        &dir,
        &["-d", "out"],
        &format!("[ -t 2 ] || printf 'stderr is a pipe\\n' >&2; {TAIL_PRINTF}; exit 3"),
    )
    .output()
    .expect("run krphase");
    assert_eq!(o.status.code(), Some(3), "{}", output_text(&o));
    let mut want = b"stderr is a pipe\n".to_vec();
    want.extend_from_slice(TAIL);
    assert!(
        o.stderr.starts_with(&want),
        "the application's stderr first, byte for byte: {}",
        output_text(&o)
    );
    let ours = String::from_utf8_lossy(&o.stderr[want.len()..]).into_owned();
    assert_eq!(
        ours.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "one line of krphase's: {ours:?}"
    );
    assert!(ours.contains("no phase file was written"), "{ours}");
    assert!(!dir.join("out/krphase.db").exists(), "nothing imported");
}

#[test]
fn stderr_stays_a_terminal_when_krphases_is_one() {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let dir = scratch_dir("run-e2e-pty");
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name.as_bytes()))
        .expect("open the pty's slave");
    // Raw output on krphase's own terminal too, so that what arrives is what was written.
    let mut modes = rustix::termios::tcgetattr(&slave).unwrap();
    modes
        .output_modes
        .remove(rustix::termios::OutputModes::OPOST);
    rustix::termios::tcsetattr(&slave, rustix::termios::OptionalActions::Now, &modes).unwrap();
    let mut cmd = krphase_run(
        &dir,
        &["-d", "out"],
        "if [ -t 2 ]; then printf 'stderr is a terminal\\nline two\\n' >&2; \
         else printf 'stderr is a pipe\\n' >&2; fi; exit 4",
    );
    cmd.stdout(Stdio::null()).stderr(Stdio::from(slave));
    let mut child = cmd.spawn().expect("run krphase");
    drop(cmd);
    let mut master = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // The master reads EIO once no process holds the slave.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        got
    });
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    let got = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(4), "{got}");
    assert!(
        got.starts_with("stderr is a terminal\nline two\n"),
        "the application saw a terminal and its bytes came through untranslated: {got:?}"
    );
}

/// Waits for `child`, killing it after `bound` (a hang fails the test).
fn wait_bounded(child: &mut Child, bound: Duration) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > bound {
            let _ = child.kill();
            panic!("krphase run still running after {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn death_by_a_signal_comes_back_as_that_signal() {
    let dir = scratch_dir("run-e2e-signalled");
    let o = krphase_run(&dir, &["-d", "out"], "kill -USR1 $$")
        .output()
        .expect("run krphase");
    assert_eq!(
        o.status.signal(),
        Some(rustix::process::Signal::USR1.as_raw()),
        "{}",
        output_text(&o)
    );
    // A shell sees it as it would the application's own death: 128 + n.
    let krphase = artifacts().krphase.display().to_string();
    let o = Command::new("sh")
        .current_dir(&dir)
        .arg("-c")
        .arg(format!(
            "'{krphase}' run -d out -- sh -c 'kill -USR1 $$'; echo status=$?"
        ))
        .env("PATH", path_with_artifacts())
        .output()
        .unwrap();
    let want = format!("status={}", 128 + rustix::process::Signal::USR1.as_raw());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&want),
        "{}",
        output_text(&o)
    );
}

/// Starts `krphase run` of a script that traps SIGINT and SIGTERM (saying which it got and
/// exiting 7 or 8; never signalled, it ends by itself within a minute), waits for its "ready" line on krphase's stderr, sends `signal` to krphase
/// (never to the application) and returns krphase's exit status and the stderr lines.
fn signalled_after_ready(
    name: &str,
    signal: rustix::process::Signal,
) -> (Option<i32>, Vec<String>) {
    let dir = scratch_dir(name);
    let script = "trap 'echo got INT >&2; exit 7' INT; trap 'echo got TERM >&2; exit 8' TERM; \
                  echo ready >&2; i=0; while [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done";
    let mut cmd = krphase_run(&dir, &["-d", "out"], script);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run krphase");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let lines = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap_or_default();
            if line == "ready" {
                let _ = tx.send(());
            }
            all.push(line);
        }
        all
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the application's ready line");
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, signal).expect("signal krphase");
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    (status.code(), lines.join().unwrap())
}

#[test]
fn sigint_and_sigterm_reach_the_application() {
    let (code, lines) = signalled_after_ready("run-e2e-sigint", rustix::process::Signal::INT);
    assert!(lines.iter().any(|l| l == "got INT"), "{lines:?}");
    assert_eq!(
        code,
        Some(7),
        "krphase ends as the application did: {lines:?}"
    );
    let (code, lines) = signalled_after_ready("run-e2e-sigterm", rustix::process::Signal::TERM);
    assert!(lines.iter().any(|l| l == "got TERM"), "{lines:?}");
    assert_eq!(code, Some(8), "{lines:?}");
}

#[test]
fn each_rank_writes_its_files_and_import_dir_merges_them() {
    let dir = scratch_dir("run-e2e-ranks");
    for rank in ["0", "1"] {
        let o = krphase_run(&dir, &["-d", "out"], STREAM)
            .env("OMPI_COMM_WORLD_RANK", rank)
            .env("OMPI_COMM_WORLD_SIZE", "2")
            .output()
            .expect("run krphase");
        assert!(o.status.success(), "{}", output_text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("rank {rank} (OMPI_COMM_WORLD_RANK)")),
            "{}",
            output_text(&o)
        );
        assert!(
            !dir.join("out/krphase.db").exists(),
            "a rank imports nothing"
        );
    }
    let names = |ext: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("out"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        v.sort();
        v
    };
    let (krps, logs) = (names("krp"), names("log"));
    assert_eq!((krps.len(), logs.len()), (2, 2), "{krps:?} {logs:?}");
    for (k, r) in krps.iter().zip(["-r0.krp", "-r1.krp"]) {
        assert!(k.display().to_string().ends_with(r), "{k:?}");
    }
    let db = dir.join("merged.db");
    krphase_tests::krphase_db_ok(&db, &["import".as_ref(), dir.join("out").as_os_str()]);
    let runs = report_runs(&db);
    assert_eq!(runs.len(), 2);
    let mut ranks: Vec<i64> = runs
        .iter()
        .map(|r| r["rank"]["rank"].as_i64().unwrap())
        .collect();
    ranks.sort();
    assert_eq!(ranks, [0, 1]);
    assert!(runs.iter().all(|r| r["log_joined"] == true), "{runs:?}");
}

#[test]
fn a_doctor_trap_stops_the_run_in_one_line_unless_forced() {
    let dir = scratch_dir("run-e2e-trap");
    let marker = dir.join("ran");
    let app = format!("touch '{}'; exit 5", marker.display());
    let o = krphase_run(&dir, &["-d", "out"], &app)
        .env("KRPHASE_DISABLE", "1")
        .output()
        .expect("run krphase");
    assert_eq!(o.status.code(), Some(125), "{}", output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("KRPHASE_DISABLE") && err.contains("--force"),
        "{err}"
    );
    assert!(!marker.exists(), "the application did not run");
    let o = krphase_run(&dir, &["--force", "-d", "out"], &app)
        .env("KRPHASE_DISABLE", "1")
        .output()
        .expect("run krphase");
    assert_eq!(o.status.code(), Some(5), "{}", output_text(&o));
    assert!(marker.exists(), "forced, the application ran");
}

#[test]
fn a_closed_stdout_does_not_cost_the_applications_exit_status() {
    let dir = scratch_dir("run-e2e-closed-stdout");
    let mut cmd = krphase_run(
        &dir,
        &["-d", "out"],
        &format!("{STREAM} >/dev/null 2>/dev/null; exit 3"),
    );
    // stdout a pipe whose reading end is closed before krphase writes (`krphase run ... | head`).
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run krphase");
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(
        err.contains("krphase run: the application ran, but:") && !err.contains("panicked"),
        "one line says what failed: {err}"
    );
}

#[test]
fn a_log_that_fails_its_join_is_said_and_the_summary_still_follows() {
    let dir = scratch_dir("run-e2e-foreign-log");
    let elsewhere = dir.join("elsewhere.krp");
    // The first STREAM's phase file goes elsewhere and its SDK lines to stderr; the second's
    // phase file is the run's, its SDK lines thrown away: the kept log belongs to no run here.
    let app = format!(
        "KRPHASE_OUTPUT='{}' {STREAM} >/dev/null; {STREAM} >/dev/null 2>/dev/null",
        elsewhere.display()
    );
    let o = krphase_run(&dir, &["-d", "out"], &app)
        .output()
        .expect("run krphase");
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(elsewhere.is_file(), "{}", output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("krphase run: ") && l.contains("not imported"))
        .collect();
    assert_eq!(said.len(), 1, "{}", output_text(&o));
    assert!(
        said[0].contains("krphase-stderr.log"),
        "{}",
        output_text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("== summary"),
        "{}",
        output_text(&o)
    );
    let runs = report_runs(&dir.join("out/krphase.db"));
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["log_joined"], false);
}

#[test]
fn a_process_left_holding_stderr_does_not_hold_the_run() {
    let dir = scratch_dir("run-e2e-left-behind");
    let start = std::time::Instant::now();
    // The background sleep keeps the application's stderr (only) open for 10 s after it exited.
    let o = krphase_run(
        &dir,
        &["-d", "out"],
        "sleep 10 >/dev/null & echo before >&2; exit 6",
    )
    .output()
    .expect("run krphase");
    let took = start.elapsed();
    assert_eq!(o.status.code(), Some(6), "{}", output_text(&o));
    assert!(
        took < Duration::from_secs(9),
        "krphase ended before the left-behind process: {took:?}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("before\n"), "{err}");
    assert!(
        err.contains("a process the application left behind still holds its stderr"),
        "{err}"
    );
}
