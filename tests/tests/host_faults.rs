//! The faults an application's life brings, each on the real libkrphase.so under the emulator:
//! output on /dev/full, on a full small file system, into a FIFO nobody reads, into an
//! unwritable directory; 10 000 short-lived threads; fork storms while other threads dispatch;
//! SIGKILL at 20 random points; `exit()` from a worker thread; `abort()`. Each test asserts the
//! application's exit code and what the analyzer recovers, against the emulator's ground truth.
//!
//! "Longest block" is the emulator's own measurement (`--time-callbacks`): the longest single
//! call any application thread made into the tool (a callback, configure/initialize, finalize),
//! and for the fork storm also the longest `fork()` (the tool's atfork handlers run inside it).
//! A time spent in the tool's own atexit handler is not in it; where the process is killed
//! there is no figure. Each test prints one `FAULT` summary line (run with `--nocapture`) and
//! appends it to `test-scratch/fault-summary.txt`.

use krphase_format::block::{self, FRAME_SIZE, tag};
use krphase_format::{Event, FileReader, Header, Trailer};
use krphase_tests::{BoundedRun, artifacts, krphase_db, profile_dir, run_bounded, scratch_dir};
use krphase_windows::{Output, Reconstructor, Window};
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Generous bound on any one emulator run here (a hang fails instead of stalling the suite).
const RUN_BOUND: Duration = Duration::from_secs(120);

/// What a run clears: the tool's and emulator's variables, and the SDK's log level.
const CLEARED_ENV: &[&str] = &["ROCPROFILER_LOG_LEVEL"];

/// `krphase-emu run ARGS` (behind `wrapper`, a command prefix such as `unshare --user`), with
/// the tool loaded, its output at `output`, ground truth in `truth` (if any), working in `dir`.
fn emu_command(
    wrapper: &[&OsStr],
    dir: &Path,
    args: &[&str],
    output: &Path,
    truth: Option<&Path>,
) -> Command {
    let a = artifacts();
    let mut cmd = match wrapper.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(&a.emu);
            c
        }
        None => Command::new(&a.emu),
    };
    cmd.arg("run").args(args).current_dir(dir);
    for k in krphase_tests::TOOL_AND_EMU_ENV.iter().chain(CLEARED_ENV) {
        cmd.env_remove(k);
    }
    cmd.env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", output)
        .env_remove("KRPHASE_EMU_TRUTH");
    if let Some(t) = truth {
        cmd.env("KRPHASE_EMU_TRUTH", t);
    }
    cmd
}

/// One run: how it ended, and the emulator's ground truth.
struct FaultRun {
    run: BoundedRun,
    truth: Vec<Value>,
}

impl FaultRun {
    fn code(&self) -> Option<i32> {
        self.run.status.and_then(|s| s.code())
    }
    fn signal(&self) -> Option<i32> {
        self.run.status.and_then(|s| s.signal())
    }
    /// The last stdout line is `result WORKLOAD ok ...` and the exit code 0.
    fn assert_ok(&self) {
        assert_eq!(self.code(), Some(0), "{}", self.run.text());
        assert!(
            self.run
                .stdout
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("result ") && l.contains(" ok ")),
            "{}",
            self.run.text()
        );
    }
    fn of_type(&self, ty: &str) -> Vec<&Value> {
        self.truth.iter().filter(|v| v["type"] == ty).collect()
    }
    /// The emulator's longest tool call in this process (the last `tool_time` line), in ns.
    fn longest_block_ns(&self) -> Option<u64> {
        let t = self.of_type("tool_time").into_iter().last()?;
        ["max_callback_ns", "max_configure_ns", "max_finalize_ns"]
            .iter()
            .filter_map(|k| t[k].as_u64())
            .max()
    }
    /// Truth windows of process `pid`: dispatch id → executed passes.
    fn windows_of(&self, pid: u32) -> HashMap<u64, u64> {
        self.of_type("window")
            .into_iter()
            .filter(|w| w["pid"].as_u64() == Some(u64::from(pid)))
            .map(|w| (num(&w["dispatch_id"]), num(&w["executed_passes"])))
            .collect()
    }
    fn exit_text(&self) -> String {
        match (self.code(), self.signal()) {
            (Some(c), _) => c.to_string(),
            (None, Some(s)) => format!("signal {s}"),
            _ => "killed at the bound".into(),
        }
    }
}

fn num(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Runs `cmd` with the bound and reads the truth file.
fn run_fault(cmd: &mut Command, dir: &Path, truth: Option<&Path>, bound: Duration) -> FaultRun {
    let run = run_bounded(cmd, dir, bound);
    let truth = match truth {
        Some(t) if t.exists() => std::fs::read_to_string(t)
            .expect("truth file")
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
        _ => Vec::new(),
    };
    FaultRun { run, truth }
}

/// What the reader recovered from one `.krp` file.
#[derive(Default)]
struct Recovered {
    header: Header,
    windows: Vec<Window>,
    /// Records read (every event but string-table names).
    records: u64,
    trailer: Option<Trailer>,
    truncated: bool,
}

/// Reads a file to its end with the streaming reader and the window reconstructor; `Err` on
/// any reader error (a corrupt block, a bad magic).
fn recover(path: &Path) -> Result<Recovered, String> {
    let mut r = FileReader::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut d = Recovered {
        header: r.header().clone(),
        ..Recovered::default()
    };
    let mut rc = Reconstructor::new();
    let take = |rc: &mut Reconstructor, d: &mut Recovered| {
        while let Some(o) = rc.pop() {
            if let Output::Window(w) = o {
                d.windows.push(w);
            }
        }
    };
    for e in r.by_ref() {
        let e = e.map_err(|e| format!("{}: {e}", path.display()))?;
        if !matches!(e, Event::Name { .. }) {
            d.records += 1;
        }
        rc.push(&e)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        take(&mut rc, &mut d);
    }
    rc.finish();
    take(&mut rc, &mut d);
    d.trailer = r.trailer().copied();
    d.truncated = r.truncated();
    Ok(d)
}

/// The file's blocks as its bytes frame them, found without the reader: complete blocks whose
/// checksum holds, the records in their EVENTS blocks, whether a trailer is among them, and the
/// bytes after the last complete block.
#[derive(Debug, Default)]
struct RawScan {
    blocks: u64,
    event_records: u64,
    trailer: bool,
    tail_bytes: u64,
}

fn scan(path: &Path) -> RawScan {
    let bytes = std::fs::read(path).expect("read the file");
    let mut s = RawScan::default();
    let mut at = 8; // magic and version
    while at + FRAME_SIZE <= bytes.len() {
        let frame: &[u8; FRAME_SIZE] = bytes[at..at + FRAME_SIZE].try_into().expect("frame");
        let (t, len, crc) = block::parse_frame(frame);
        let end = at + FRAME_SIZE + len;
        if end > bytes.len() {
            break;
        }
        let payload = &bytes[at + FRAME_SIZE..end];
        assert_eq!(
            block::checksum(&frame[..8], payload),
            crc,
            "{}: block at {at} is complete but its checksum fails",
            path.display()
        );
        s.blocks += 1;
        if t == tag::EVENTS {
            s.event_records += krphase_format::events_block::count_records(payload)
                .expect("a well-formed events block");
        }
        s.trailer |= t == tag::TRAILER;
        at = end;
    }
    s.tail_bytes = bytes.len().saturating_sub(at) as u64;
    s
}

/// Every complete block was recovered: the reader read exactly the records the complete
/// EVENTS blocks hold, found the trailer if one is complete, and reports the truncation when
/// bytes of an incomplete block follow.
fn assert_every_complete_block(path: &Path, d: &Recovered) -> RawScan {
    let s = scan(path);
    assert_eq!(d.records, s.event_records, "{}: {s:?}", path.display());
    assert_eq!(d.trailer.is_some(), s.trailer, "{}: {s:?}", path.display());
    assert_eq!(d.truncated, s.tail_bytes > 0, "{}: {s:?}", path.display());
    s
}

/// `krphase import FILE` into a fresh database: its one output line.
fn import_line(dir: &Path, file: &Path) -> String {
    let o = krphase_db(&dir.join("k.db"), &[OsStr::new("import"), file.as_os_str()]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "krphase import {}: {out}{}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    out.trim().to_string()
}

/// The number before `what` in an import line (`... 12 windows, ...`).
fn count_in(line: &str, what: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    words
        .windows(2)
        .find(|w| w[1].trim_end_matches(',') == what)
        .and_then(|w| w[0].parse().ok())
        .unwrap_or_else(|| panic!("no count of {what} in {line:?}"))
}

/// Windows recovered from a cut-short run: each is one the emulator ran (same passes when
/// closed, no more when cut open), except
/// at most `in_flight` whose truth line the process did not live to write.
fn assert_windows_from_truth(d: &Recovered, truth: &HashMap<u64, u64>, in_flight: usize) {
    let mut unknown = 0;
    for w in &d.windows {
        match truth.get(&w.dispatch_id) {
            // A window the process ended inside holds the passes recorded before the end.
            Some(&passes) if w.config_exit.is_none() => {
                assert!(w.executed_passes <= passes, "dispatch {}", w.dispatch_id);
            }
            Some(&passes) => assert_eq!(w.executed_passes, passes, "dispatch {}", w.dispatch_id),
            None => unknown += 1,
        }
    }
    assert!(
        unknown <= in_flight,
        "{unknown} recovered windows are not in the truth ({} recovered, {} in truth)",
        d.windows.len(),
        truth.len()
    );
}

/// The longest tool call of a run, and per class (callback / configure+initialize /
/// finalize).
fn blocks(r: &FaultRun) -> String {
    let Some(t) = r.of_type("tool_time").into_iter().last() else {
        return "n/a".into();
    };
    let get = |k: &str| t[k].as_u64();
    format!(
        "{} (callback {}, configure {}, finalize {})",
        ms(r.longest_block_ns()),
        ms(get("max_callback_ns")),
        ms(get("max_configure_ns")),
        ms(get("max_finalize_ns"))
    )
}

fn ms(ns: Option<u64>) -> String {
    ns.map_or("n/a".into(), |n| format!("{:.2} ms", n as f64 / 1e6))
}

/// Prints the fault's summary line and appends it to `test-scratch/fault-summary.txt`.
fn summary(fault: &str, block: &str, exit: &str, recovered: &str) {
    let line =
        format!("FAULT {fault} | longest block {block} | exit {exit} | recovered {recovered}");
    println!("{line}");
    let path = profile_dir().join("test-scratch").join("fault-summary.txt");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

/// A stream run of about a second, whose output fills more than a small file system.
const STREAM: &[&str] = &[
    "stream",
    "--elements",
    "1024",
    "--iterations",
    "300",
    "--time-callbacks",
];

/// The same workload with a regular output file: its wall time is the baseline for bounds.
fn baseline(name: &str, args: &[&str]) -> (FaultRun, PathBuf) {
    let dir = scratch_dir(name);
    let (out, truth) = (dir.join("run.krp"), dir.join("truth.jsonl"));
    let r = run_fault(
        &mut emu_command(&[], &dir, args, &out, Some(&truth)),
        &dir,
        Some(&truth),
        RUN_BOUND,
    );
    r.assert_ok();
    (r, out)
}

#[test]
fn output_on_dev_full_the_application_finishes_and_succeeds() {
    let dir = scratch_dir("fault-dev-full");
    let truth = dir.join("truth.jsonl");
    let r = run_fault(
        &mut emu_command(&[], &dir, STREAM, Path::new("/dev/full"), Some(&truth)),
        &dir,
        Some(&truth),
        RUN_BOUND,
    );
    r.assert_ok();
    let replayed = r.windows_of(pid_of(&r)).len();
    let said = r
        .run
        .stderr
        .lines()
        .filter(|l| l.starts_with("[krphase]"))
        .count();
    assert!(said <= 3, "the tool said too much: {}", r.run.stderr);
    summary(
        "/dev/full",
        &blocks(&r),
        &r.exit_text(),
        &format!(
            "nothing (every write fails with ENOSPC; the device keeps no bytes); {replayed} windows replayed"
        ),
    );
}

/// The emulator's pid, from its result truth line.
fn pid_of(r: &FaultRun) -> u32 {
    let res = r.of_type("result");
    let p = res
        .first()
        .unwrap_or_else(|| panic!("no result line: {}", r.run.text()));
    num(&p["pid"]) as u32
}

#[test]
fn output_on_a_full_small_file_system_keeps_every_complete_block() {
    let dir = scratch_dir("fault-full-fs");
    let (mnt, saved) = (dir.join("mnt"), dir.join("saved"));
    std::fs::create_dir_all(&mnt).expect("mount point");
    std::fs::create_dir_all(&saved).expect("saved dir");
    let truth = dir.join("truth.jsonl");
    let out = mnt.join("run.krp");
    // A 128 KiB tmpfs in a private mount namespace; the file is copied out before the
    // namespace (and the mount) goes away. Exit 97: mounting was not possible here.
    let script = "mount -t tmpfs -o size=128k krphase-full \"$MNT\" || exit 97; \"$@\"; rc=$?; \
                  cp \"$MNT\"/run.krp \"$SAVED\"/ 2>/dev/null; exit $rc";
    let wrapper: Vec<&OsStr> = [
        "unshare",
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        script,
        "sh",
    ]
    .into_iter()
    .map(OsStr::new)
    .collect();
    let mut cmd = emu_command(&wrapper, &dir, STREAM, &out, Some(&truth));
    cmd.env("MNT", &mnt).env("SAVED", &saved);
    let mut r = run_fault(&mut cmd, &dir, Some(&truth), RUN_BOUND);
    let mut how = "a 128 KiB tmpfs";
    if r.code() == Some(97) {
        println!(
            "mounting a tmpfs is not possible here ({}); falling back to RLIMIT_FSIZE",
            r.run.stderr.trim()
        );
        // Writes past 128 KiB fail with EFBIG (SIGXFSZ ignored, as it survives exec); the
        // truth file would hit the limit too, so this run keeps none.
        how = "RLIMIT_FSIZE 128 KiB";
        let script = "trap '' XFSZ; exec prlimit --fsize=131072:131072 -- \"$@\"";
        let wrapper: Vec<&OsStr> = ["sh", "-c", script, "sh"]
            .into_iter()
            .map(OsStr::new)
            .collect();
        let out = saved.join("run.krp");
        r = run_fault(
            &mut emu_command(&wrapper, &dir, STREAM, &out, None),
            &dir,
            None,
            RUN_BOUND,
        );
    }
    r.assert_ok();
    let file = saved.join("run.krp");
    let d = recover(&file).unwrap_or_else(|e| panic!("{e}\n{}", r.run.text()));
    let s = assert_every_complete_block(&file, &d);
    assert!(
        std::fs::metadata(&file).expect("saved file").len() <= 128 * 1024,
        "the file is larger than the file system"
    );
    let line = import_line(&dir, &file);
    assert_eq!(count_in(&line, "windows"), d.windows.len() as u64, "{line}");
    if d.trailer.is_none() {
        assert!(line.contains("(truncated)"), "{line}");
    }
    if !r.truth.is_empty() {
        assert_windows_from_truth(&d, &r.windows_of(pid_of(&r)), 0);
    }
    summary(
        &format!("full file system ({how})"),
        &blocks(&r),
        &r.exit_text(),
        &format!(
            "{} windows in {} complete blocks, {}",
            d.windows.len(),
            s.blocks,
            if d.trailer.is_some() {
                "with trailer"
            } else {
                "truncated (reported)"
            }
        ),
    );
}

/// `mkfifo PATH`.
fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// The wait budget the FIFO runs set (`KRPHASE_WAIT_BUDGET_MS`): what the tool promises an
/// application waits on its output at most, over the whole run.
const FIFO_WAIT_BUDGET_MS: f64 = 50.0;

/// The longest wait the tool says the application made on its output (its finalize line's
/// "the application waited X ms on the output"; no such clause: it never waited).
fn said_wait_ms(stderr: &str) -> f64 {
    const SAID: &str = "the application waited ";
    stderr
        .lines()
        .filter_map(|l| l.split_once(SAID))
        .map(|(_, rest)| {
            let ms = rest.split(" ms").next().unwrap_or_default();
            ms.parse::<f64>()
                .unwrap_or_else(|e| panic!("a wait of {ms:?} ms: {e}"))
        })
        .fold(0.0, f64::max)
}

/// An output nobody reads costs the application at most the wait budget, in the tool's own
/// account, and the application does all its work and succeeds. Wall time is no evidence on a
/// shared machine (a regular-file run of the same workload took 1 to 5 s under load, the FIFO
/// runs up to twice that): `RUN_BOUND` only turns a hang into a failure.
#[test]
fn output_into_a_fifo_nobody_reads_the_application_waits_at_most_the_budget() {
    let (base, _) = baseline("fault-fifo-base", STREAM);
    let budget = format!("{FIFO_WAIT_BUDGET_MS}");
    // Nobody opens the FIFO at all, then a reader holds it open and never reads (writes block
    // once the pipe buffer is full).
    for held in [false, true] {
        let dir = scratch_dir(if held {
            "fault-fifo-held"
        } else {
            "fault-fifo"
        });
        let fifo = dir.join("out.fifo");
        mkfifo(&fifo);
        // Read and write: opening a FIFO so does not wait for a writer, and keeps a reader.
        let _reader = held.then(|| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&fifo)
                .expect("hold the FIFO open")
        });
        let truth = dir.join("truth.jsonl");
        let mut cmd = emu_command(&[], &dir, STREAM, &fifo, Some(&truth));
        cmd.env("KRPHASE_WAIT_BUDGET_MS", &budget);
        let r = run_fault(&mut cmd, &dir, Some(&truth), RUN_BOUND);
        assert!(
            r.run.status.is_some(),
            "the application hung (killed after {RUN_BOUND:?}; regular file: {:?}):\n{}",
            base.run.wall,
            r.run.text()
        );
        r.assert_ok();
        let replayed = r.windows_of(pid_of(&r)).len();
        assert_eq!(
            replayed,
            base.windows_of(pid_of(&base)).len(),
            "every window replayed, as with a regular file"
        );
        let waited = said_wait_ms(&r.run.stderr);
        assert!(
            r.run.stderr.contains(" ends without its trailer ("),
            "the finalize line says the file has no trailer:\n{}",
            r.run.stderr
        );
        // The finalize line rounds to 0.1 ms.
        assert!(
            waited <= FIFO_WAIT_BUDGET_MS + 0.05,
            "the application waited {waited} ms on the output, over the {FIFO_WAIT_BUDGET_MS} ms \
             budget:\n{}",
            r.run.stderr
        );
        summary(
            if held {
                "FIFO held open, never read"
            } else {
                "FIFO nobody opens"
            },
            &blocks(&r),
            &r.exit_text(),
            &format!(
                "nothing (a pipe keeps no file); {replayed} windows replayed; waited {waited:.1} ms \
                 (budget {FIFO_WAIT_BUDGET_MS} ms); wall {:.2} s vs {:.2} s with a regular file \
                 (whose longest call: {})",
                r.run.wall.as_secs_f64(),
                base.run.wall.as_secs_f64(),
                ms(base.longest_block_ns())
            ),
        );
    }
}

#[test]
fn the_said_wait_is_read_from_the_finalize_line() {
    let err = "[krphase] output x is not keeping up: the application's threads have waited 25.0 \
               ms on it\n[krphase] x ends without its trailer (…): 1500 windows; the application \
               waited 50.0 ms on the output\n";
    assert_eq!(said_wait_ms(err), 50.0);
    assert_eq!(
        said_wait_ms("[krphase] wrote x: 3 windows, 0 dropped\n"),
        0.0
    );
    assert_eq!(
        said_wait_ms(
            "the application waited 0.5 ms on the output\nthe application waited 51.3 ms on the output"
        ),
        51.3
    );
}

#[test]
fn output_into_an_unwritable_directory_declines_with_one_line() {
    let dir = scratch_dir("fault-unwritable");
    let (locked, open) = (dir.join("locked"), dir.join("open"));
    std::fs::create_dir_all(&locked).expect("dir");
    std::fs::create_dir_all(&open).expect("dir");
    let chmod = |p: &Path, mode: &str| {
        assert!(
            Command::new("chmod")
                .arg(mode)
                .arg(p)
                .status()
                .expect("chmod")
                .success()
        );
    };
    chmod(&locked, "0555");
    chmod(&open, "0777");
    // Root writes anywhere; in a user namespace without a mapping this process is nobody,
    // with no capability over files owned by the real root, so the 0555 directory is shut.
    let wrapper: Vec<&OsStr> = ["unshare", "--user"].into_iter().map(OsStr::new).collect();
    let truth = open.join("truth.jsonl");
    let args = [
        "stream",
        "--elements",
        "1024",
        "--iterations",
        "20",
        "--time-callbacks",
    ];
    let r = run_fault(
        &mut emu_command(&wrapper, &dir, &args, &locked.join("run.krp"), Some(&truth)),
        &dir,
        Some(&truth),
        RUN_BOUND,
    );
    chmod(&locked, "0755");
    r.assert_ok();
    let said: Vec<&str> = r
        .run
        .stderr
        .lines()
        .filter(|l| l.starts_with("[krphase]"))
        .collect();
    assert_eq!(said.len(), 1, "{}", r.run.stderr);
    assert!(said[0].contains("not recording"), "{said:?}");
    let files: Vec<_> = std::fs::read_dir(&locked).expect("dir").collect();
    assert!(files.is_empty(), "{files:?}");
    // Declined at configure: nobody drives replay, the application runs on its own.
    assert!(r.windows_of(pid_of(&r)).is_empty());
    summary(
        "unwritable directory",
        &blocks(&r),
        &r.exit_text(),
        &format!("nothing; the tool declined: {}", said[0]),
    );
}

#[test]
fn ten_thousand_short_lived_threads_exact_counts_bounded_memory() {
    let args = [
        "churn",
        "--elements",
        "16",
        "--churn-threads",
        "10000",
        "--threads",
        "64",
        "--time-callbacks",
    ];
    let bare_dir = scratch_dir("fault-churn-bare");
    let bare_truth = bare_dir.join("truth.jsonl");
    let mut bare_cmd = emu_command(
        &[],
        &bare_dir,
        &args,
        &bare_dir.join("x.krp"),
        Some(&bare_truth),
    );
    bare_cmd.env_remove("ROCP_TOOL_LIBRARIES");
    let bare = run_fault(&mut bare_cmd, &bare_dir, Some(&bare_truth), RUN_BOUND);
    bare.assert_ok();

    let dir = scratch_dir("fault-churn");
    let (out, truth) = (dir.join("run.krp"), dir.join("truth.jsonl"));
    let r = run_fault(
        &mut emu_command(&[], &dir, &args, &out, Some(&truth)),
        &dir,
        Some(&truth),
        RUN_BOUND,
    );
    r.assert_ok();
    let d = recover(&out).unwrap_or_else(|e| panic!("{e}"));
    let t = d.trailer.expect("a trailer");
    let truth_windows = r.windows_of(pid_of(&r));
    assert_eq!(truth_windows.len(), 10_000);
    assert_eq!(t.windows, 10_000);
    if t.dropped_window == 0 {
        assert_eq!(d.windows.len(), 10_000, "{t:?}\n{}", r.run.stderr);
        assert_windows_from_truth(&d, &truth_windows, 0);
    } else {
        // A writer slower than 64 threads starting and exiting (an overloaded machine) costs
        // the application at most the wait budget; the rest is dropped, counted and said.
        assert_ne!(
            t.flags & krphase_format::trailer::flags::STALLED,
            0,
            "{t:?}"
        );
        assert!(
            r.run.stderr.contains("is not keeping up"),
            "{}",
            r.run.stderr
        );
        assert!(d.windows.len() <= 10_000);
        for w in &d.windows {
            assert!(
                truth_windows.contains_key(&w.dispatch_id),
                "{}",
                w.dispatch_id
            );
        }
    }
    let rss = |r: &FaultRun| num(&r.of_type("result")[0]["peak_rss_kib"]);
    let (with, without) = (rss(&r), rss(&bare));
    // A buffer kept per thread would be 10 000 x 32 KiB = 312 MiB.
    assert!(
        with.saturating_sub(without) <= 32 * 1024,
        "peak RSS {with} KiB with the tool, {without} KiB without"
    );
    summary(
        "10 000 short-lived threads",
        &blocks(&r),
        &r.exit_text(),
        &format!(
            "{} of 10000 windows, {} window records dropped; peak RSS {} MiB vs {} MiB without the tool",
            d.windows.len(),
            t.dropped_window,
            with / 1024,
            without / 1024
        ),
    );
}

/// The fork storm of one child behaviour: the parent's file its own, each child's file its own,
/// every complete block readable; each file complete unless the tool said its writer ran out of
/// wait budget, and every parent window in the file or counted as dropped.
fn fork_storm(child_does: &str) {
    let dir = scratch_dir(&format!("fault-fork-{child_does}"));
    let truth = dir.join("truth.jsonl");
    let args = [
        "fork",
        "--elements",
        "64",
        "--iterations",
        "30",
        "--threads",
        "4",
        "--children",
        "16",
        "--child-does",
        child_does,
        "--time-callbacks",
    ];
    // A template without %pid%: every process of the run resolves the same path.
    let r = run_fault(
        &mut emu_command(&[], &dir, &args, &dir.join("run.krp"), Some(&truth)),
        &dir,
        Some(&truth),
        RUN_BOUND,
    );
    r.assert_ok();
    let parent = pid_of(&r);
    let fork = r.of_type("fork");
    let children: Vec<u32> = fork[0]["children"]
        .as_array()
        .expect("children")
        .iter()
        .map(|c| {
            assert_eq!(c["end"], "0", "{c}");
            num(&c["pid"]) as u32
        })
        .collect();
    assert_eq!(children.len(), 16);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "krp"))
        .collect();
    files.sort();
    let mut parent_files = 0;
    let mut parent_windows = 0;
    let mut child_pids = Vec::new();
    for f in &files {
        let d = recover(f).unwrap_or_else(|e| panic!("{e}\n{}", r.run.text()));
        assert_every_complete_block(f, &d);
        assert_complete_or_said(f, &d, &r.run.stderr);
        if d.header.pid == parent {
            parent_files += 1;
            parent_windows = d.windows.len();
            assert_windows_counted(f, &d, &r.windows_of(parent));
        } else {
            assert!(
                children.contains(&d.header.pid),
                "{}: pid {}",
                f.display(),
                d.header.pid
            );
            assert_eq!(d.header.ppid, parent, "{}", f.display());
            assert!(d.windows.is_empty(), "a fork child never dispatches");
            assert!(
                !child_pids.contains(&d.header.pid),
                "two files of child {}",
                d.header.pid
            );
            child_pids.push(d.header.pid);
        }
    }
    assert_eq!(parent_files, 1, "the parent's file: {files:?}");
    let longest = [r.longest_block_ns(), fork[0]["max_fork_ns"].as_u64()]
        .into_iter()
        .flatten()
        .max();
    summary(
        &format!("fork storm, 16 children ({child_does}) while 4 threads dispatch"),
        &ms(longest),
        &r.exit_text(),
        &format!(
            "parent: {parent_windows} of {} windows; {} child files, each its own",
            r.windows_of(parent).len(),
            child_pids.len()
        ),
    );
}

/// A file ends with its trailer, or the tool said it ends without one: its writer did not finish
/// within the wait budget (a writer starved of CPU on a loaded machine), the wait the budget
/// bounds, not a hang.
fn assert_complete_or_said(f: &Path, d: &Recovered, stderr: &str) {
    let name = f.file_name().expect("a file name").to_string_lossy();
    if d.trailer.is_some() {
        assert!(!d.truncated, "{} has bytes after its trailer", f.display());
    } else {
        assert!(
            stderr
                .lines()
                .any(|l| l.contains(&*name) && l.contains(" ends without its trailer (")),
            "{} has no trailer and the tool did not say so:\n{stderr}",
            f.display()
        );
    }
}

/// The windows of a file against the truth: each one recovered is one the process ran, with its
/// passes; with a trailer, every window the tool counted is in the file or a record of it was
/// dropped and counted (window records drop only once a wait budget is spent).
fn assert_windows_counted(f: &Path, d: &Recovered, truth: &HashMap<u64, u64>) {
    assert_windows_from_truth(d, truth, 0);
    let Some(t) = d.trailer else { return };
    assert_eq!(t.windows, truth.len() as u64, "{}", f.display());
    let lost = truth.len() - d.windows.len();
    assert!(
        lost as u64 <= t.dropped_window,
        "{}: {lost} windows missing, {t:?}",
        f.display()
    );
    if t.dropped_window > 0 {
        let spent =
            krphase_format::trailer::flags::STALLED | krphase_format::trailer::flags::UNFLUSHED;
        assert_ne!(t.flags & spent, 0, "{}: {t:?}", f.display());
    }
}

#[test]
fn fork_storm_children_that_exit() {
    fork_storm("exit");
}

#[test]
fn fork_storm_children_that_exec() {
    fork_storm("exec");
}

#[test]
fn fork_storm_children_that_reach_the_tool_then_exit() {
    fork_storm("alloc-exit");
}

/// A small deterministic generator for the kill points (the seed is printed).
struct Lcg(u64);

impl Lcg {
    fn next_unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One SIGKILL at `after`: what the file holds.
fn kill_at(i: usize, after: Duration) -> (usize, bool) {
    let dir = scratch_dir(&format!("fault-sigkill-{i}"));
    let (out, truth) = (dir.join("run.krp"), dir.join("truth.jsonl"));
    // STREAM's run, made too long to end before the kill.
    let mut args = STREAM.to_vec();
    args[4] = "1000000";
    let r = run_fault(
        &mut emu_command(&[], &dir, &args, &out, Some(&truth)),
        &dir,
        Some(&truth),
        after,
    );
    if r.run.status.is_some() {
        r.assert_ok(); // it finished before the kill point
    }
    let len = std::fs::metadata(&out).map_or(0, |m| m.len());
    if len < 8 {
        return (0, r.run.status.is_some()); // killed before the header reached the file
    }
    let d = match recover(&out) {
        Ok(d) => d,
        Err(e) if e.contains("before the header is complete") => return (0, false),
        Err(e) => panic!("kill point {i} ({after:?}): {e}"),
    };
    assert_every_complete_block(&out, &d);
    let line = import_line(&dir, &out);
    assert_eq!(count_in(&line, "windows"), d.windows.len() as u64, "{line}");
    assert_eq!(d.trailer.is_none(), line.contains("(truncated)"), "{line}");
    // The truth's pid: the header's (the run may have died before its result line).
    assert_windows_from_truth(&d, &r.windows_of(d.header.pid), 1);
    (d.windows.len(), r.run.status.is_some())
}

#[test]
fn sigkill_at_twenty_random_points_every_complete_block_is_recovered() {
    let (base, _) = baseline("fault-sigkill-base", STREAM);
    let seed = std::env::var("KRPHASE_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("kill points from seed {seed} (KRPHASE_FAULT_SEED)");
    let mut rng = Lcg(seed);
    let (mut windows, mut finished) = (Vec::new(), 0);
    for i in 0..20 {
        let after = base.run.wall.mul_f64(0.02 + 0.96 * rng.next_unit());
        let (w, done) = kill_at(i, after);
        windows.push(w);
        finished += usize::from(done);
    }
    summary(
        "SIGKILL at 20 random points",
        "n/a (killed)",
        "signal 9",
        &format!(
            "every complete block of each file (windows per run {windows:?}; {finished} runs ended before their kill point); truncation reported"
        ),
    );
}

/// `exit-worker` ending with `how`: the exit code and what the file recovers.
fn worker_ends(how: &str) -> (FaultRun, Recovered) {
    let dir = scratch_dir(&format!("fault-worker-{how}"));
    let (out, truth) = (dir.join("run.krp"), dir.join("truth.jsonl"));
    let args = [
        "exit-worker",
        "--elements",
        "64",
        "--iterations",
        "1000000",
        "--threads",
        "4",
        "--exit-after",
        "30",
        "--exit-how",
        how,
        "--exit-code",
        "3",
        "--time-callbacks",
    ];
    let r = run_fault(
        &mut emu_command(&[], &dir, &args, &out, Some(&truth)),
        &dir,
        Some(&truth),
        RUN_BOUND,
    );
    let exit = r.of_type("exit");
    assert_eq!(
        exit.len(),
        1,
        "the worker ended the process: {}",
        r.run.text()
    );
    let pid = num(&exit[0]["pid"]) as u32;
    let d = recover(&out).unwrap_or_else(|e| panic!("{e}\n{}", r.run.text()));
    assert_eq!(d.header.pid, pid);
    assert_every_complete_block(&out, &d);
    let line = import_line(&dir, &out);
    assert_eq!(count_in(&line, "windows"), d.windows.len() as u64, "{line}");
    assert_eq!(d.trailer.is_none(), line.contains("(truncated)"), "{line}");
    // Up to one window per dispatching thread may have ended after its truth line could be
    // written.
    assert_windows_from_truth(&d, &r.windows_of(pid), 4);
    (r, d)
}

#[test]
fn exit_from_a_worker_thread_while_others_dispatch() {
    let (r, d) = worker_ends("exit");
    assert_eq!(r.code(), Some(3), "{}", r.run.text());
    // exit() runs the SDK's atexit finalization, which calls the tool's finalize: the file
    // is closed with a trailer whose counts cover what it holds.
    let t = d.trailer.expect("exit() closes the file with a trailer");
    assert!(!d.truncated);
    // The trailer counts a window at its CONFIG EXIT; a window that was still open when the
    // process ended is recovered (without its end) but not counted.
    let closed = d.windows.iter().filter(|w| w.config_exit.is_some()).count() as u64;
    assert!(t.windows >= closed, "{t:?} vs {closed} closed windows");
    assert!(
        t.windows + 4 >= d.windows.len() as u64,
        "{t:?} vs {}",
        d.windows.len()
    );
    assert!(d.windows.len() >= 30, "the worker's 30 windows at least");
    summary(
        "exit() from a worker while 3 threads dispatch",
        &blocks(&r),
        &r.exit_text(),
        &format!(
            "{} windows, trailer (windows {})",
            d.windows.len(),
            t.windows
        ),
    );
}

#[test]
fn abort_from_a_worker_thread_while_others_dispatch() {
    let (r, d) = worker_ends("abort");
    assert_eq!(r.signal(), Some(libc_sigabrt()), "{}", r.run.text());
    assert!(d.trailer.is_none(), "abort() runs no handler: no trailer");
    summary(
        "abort() from a worker while 3 threads dispatch",
        &blocks(&r),
        &r.exit_text(),
        &format!(
            "{} windows in every complete block; truncated (reported)",
            d.windows.len()
        ),
    );
}

/// SIGABRT's number on Linux.
fn libc_sigabrt() -> i32 {
    6
}
