//! What a recording thread pays to hand its buffer over (plain loop, `harness = false`), with
//! the tool installed synthetically and its callbacks called through the C ABI:
//!
//! * **system calls** the recording thread makes in steady state (goal: 0), counted by `strace`
//!   on this binary re-run as a child: after a warm-up, the producer marks the start and end of
//!   its steady state with a `getppid` each, and every other system call of that thread between
//!   the marks is counted. Two steady states, paced by spinning on the clock: observe-mode
//!   ENQUEUE EXIT records at 2 M/s (a hand-over every 1 024 records), and drive-mode replay
//!   windows at 10 000 a second (a hand-over at the end of each window while the writer is
//!   idle), 5 000 hand-overs each.
//!   Each is run twice: every system call traced, and `sched_yield` left out of the trace (see
//!   [`strace_run`]). Needs `strace` (`apt-get install strace`); said and skipped when it is
//!   not on PATH.
//! * **slots made mid-run**: 32 KiB buffers allocated after the warm-up (goal: 0).
//! * **ns per hand-over**: the median time of the record that hands the buffer over minus the
//!   median of the records that do not, each record timed alone (`Instant` around one call).
//! * **instructions per hand-over** (callgrind, `flush_thread_buffer` inclusive, per call),
//!   when `valgrind` is on PATH and `KRPHASE_BENCH_NO_CALLGRIND` is unset. The child runs with
//!   the largest pool (1 024 slots, a 10 s wait budget) and fewer hand-overs than that, so no
//!   hand-over waits for the writer, which callgrind's one-thread-at-a-time scheduling starves.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod callgrind;
mod drivers;
use drivers::{driver, install, window_driver};

/// Hand-overs in each steady state.
const HAND_OVERS: usize = 5_000;
const SLOT: usize = 1024;
/// Replay windows a second in the paced steady state.
const WINDOWS_PER_SEC: u64 = 10_000;
/// Records a second in the observe-mode steady state: eight times the busiest demo workload's
/// rate, well within what the writer sustains under `strace`. (Unpaced, the producer outruns a
/// writer that `strace` slows at every system call; that is the writer-behind path, where
/// waiting for a spare slot is allowed to sleep.)
const RECORDS_PER_SEC: u64 = 2_000_000;

fn marker() {
    // SAFETY: getppid has no preconditions; it marks this thread's place in the strace log.
    unsafe { libc::getppid() };
}

fn tid() -> i64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// The strace child: warm-up, marked steady state, finalize. Prints the producer's tid and the
/// slots made during the steady state.
fn strace_child(path: &Path, windows: bool) {
    install(path, windows);
    let h = std::thread::spawn(move || {
        let made;
        if windows {
            let mut w = window_driver();
            for _ in 0..2_000 {
                w.window();
            }
            made = krphase::test_support::slots_made();
            marker();
            let step = Duration::from_nanos(1_000_000_000 / WINDOWS_PER_SEC);
            let start = Instant::now();
            for i in 0..HAND_OVERS as u32 {
                // Paced by spinning on the clock (a sleep would be a system call).
                while start.elapsed() < step * i {
                    std::hint::spin_loop();
                }
                w.window();
            }
        } else {
            let mut d = driver();
            for _ in 0..200 * SLOT {
                d.enqueue_exit();
            }
            made = krphase::test_support::slots_made();
            marker();
            let step = Duration::from_nanos(64_000_000_000 / RECORDS_PER_SEC);
            let start = Instant::now();
            for i in 0..(HAND_OVERS * SLOT / 64) as u32 {
                while start.elapsed() < step * i {
                    std::hint::spin_loop();
                }
                for _ in 0..64 {
                    d.enqueue_exit();
                }
            }
        }
        marker();
        (tid(), krphase::test_support::slots_made() - made)
    });
    let (t, made) = h.join().expect("producer");
    krphase::finalize(0);
    println!("{t} {made}");
}

/// System calls of thread `tid` strictly between its two `getppid` marks, by name.
fn count_between_marks(log: &str, tid: &str) -> Option<Vec<(String, usize)>> {
    let mut inside = false;
    let mut marks = 0;
    let mut by_name = std::collections::BTreeMap::<String, usize>::new();
    for l in log.lines() {
        let Some(rest) = l.strip_prefix(tid).and_then(|r| r.strip_prefix(' ')) else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with("<...") || rest.starts_with("+++") || rest.starts_with("---") {
            continue; // the end of a call already counted, or a signal / exit line
        }
        let name: String = rest.chars().take_while(|c| *c != '(').collect();
        if name == "getppid" {
            marks += 1;
            inside = marks == 1;
            continue;
        }
        if inside {
            *by_name.entry(name).or_default() += 1;
        }
    }
    (marks == 2).then(|| by_name.into_iter().collect())
}

/// The producer's system calls in steady state by name, and the slots made meanwhile.
type StraceRun = (Vec<(String, usize)>, u64);

/// Runs the strace child; the producer's system calls by name and the slots made. With
/// `all`, every system call of every thread stops under strace, which slows a writer that
/// yields while it spins for work so much that it seldom parks (and so is seldom woken); without
/// it, `sched_yield` is left out of the trace by a seccomp filter and does not stop, so the
/// threads wait as they would untraced (the producer's own yields are then not counted).
fn strace_run(windows: bool, all: bool) -> Result<StraceRun, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let log = std::env::temp_dir().join(format!("krphase-strace-{}.log", std::process::id()));
    let filter: &[&str] = if all {
        &[]
    } else {
        &["--seccomp-bpf", "-e", "trace=!sched_yield"]
    };
    let out = Command::new("strace")
        .args(filter)
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(&exe)
        .env(
            "KRPHASE_BENCH_STRACE",
            if windows { "windows" } else { "events" },
        )
        .output()
        .map_err(|e| format!("strace not found ({e}): apt-get install strace"))?;
    let text = std::fs::read_to_string(&log).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&log);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut it = stdout.split_whitespace();
    let (tid, made) = (
        it.next().ok_or("no tid from the child")?.to_owned(),
        it.next().and_then(|m| m.parse().ok()).unwrap_or(u64::MAX),
    );
    let calls = count_between_marks(&text, &tid).ok_or("marks not found in the strace log")?;
    Ok((calls, made))
}

/// The median of `v` (sorted in place).
fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64
}

/// ns of a hand-over: each record timed alone; the hand-over records (every 1 024th) against
/// the others.
fn handover_ns(path: &Path) -> (f64, f64) {
    install(path, false);
    let mut d = driver();
    for _ in 0..200 * SLOT {
        d.enqueue_exit();
    }
    let (mut hand, mut plain) = (Vec::new(), Vec::new());
    for i in 0..2_000 * SLOT {
        let t = Instant::now();
        d.enqueue_exit();
        let ns = t.elapsed().as_nanos() as u64;
        if i % SLOT == SLOT - 1 {
            hand.push(ns);
        } else if i % 64 == 0 {
            plain.push(ns);
        }
    }
    krphase::finalize(0);
    let (h, p) = (median(&mut hand), median(&mut plain));
    (h - p, p)
}

/// Callgrind child: `n` ENQUEUE EXIT records after a warm-up.
fn callgrind_child(path: &Path, n: usize) {
    let vars = [
        ("KRPHASE_MODE", "observe"),
        ("KRPHASE_ON_FULL", "block"),
        ("KRPHASE_WAIT_BUDGET_MS", "10000"),
    ];
    krphase::test_support::install_synthetic(&vars, path).expect("install");
    let mut d = driver();
    for _ in 0..n {
        d.enqueue_exit();
    }
    krphase::finalize(0);
}

/// Instructions per hand-over: `flush_thread_buffer` inclusive, over two runs of different
/// lengths (the difference cancels start-up and finalize).
fn handover_ir() -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    callgrind::per_unit(100, 900, |hand_overs| {
        let n = (hand_overs * SLOT).to_string();
        callgrind::total(
            &exe,
            &[],
            &[("KRPHASE_BENCH_CALLGRIND_EVENTS", &n)],
            Some("*flush_thread_buffer*"),
        )
    })
}

fn syscall_row(what: &str, r: &Result<StraceRun, String>) {
    match r {
        Ok((calls, made)) => {
            let n: usize = calls.iter().map(|(_, c)| c).sum();
            let names: Vec<String> = calls.iter().map(|(k, c)| format!("{k} {c}")).collect();
            println!(
                "| recording thread's system calls in steady state, {what}, {HAND_OVERS} hand-overs | {n} ({}) | 0 | {} |",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                },
                if n == 0 { "met" } else { "NOT met" }
            );
            println!(
                "| 32 KiB slots made after the warm-up, {what} | {made} | 0 | {} |",
                if *made == 0 { "met" } else { "NOT met" }
            );
        }
        Err(e) => println!("| recording thread's system calls, {what} | not measured: {e} | 0 | |"),
    }
}

fn measure(path: &Path) {
    let runs: Vec<(String, _)> = [(false, true), (true, true), (false, false), (true, false)]
        .into_iter()
        .map(|(windows, all)| {
            let what = if windows {
                format!("drive-mode windows at {WINDOWS_PER_SEC}/s")
            } else {
                format!(
                    "ENQUEUE EXIT records at {} M/s",
                    RECORDS_PER_SEC / 1_000_000
                )
            };
            let how = if all {
                "every call traced"
            } else {
                "sched_yield untraced"
            };
            (format!("{what}, {how}"), strace_run(windows, all))
        })
        .collect();
    let (ns, plain) = handover_ns(path);
    let ir = handover_ir();
    println!("| measurement | value | goal or reference | met? |");
    println!("|---|---|---|---|");
    for (what, r) in &runs {
        syscall_row(what, r);
    }
    println!(
        "| one hand-over, median, beyond a record's own cost | {ns:.0} ns | a record without a hand-over {plain:.0} ns (timer included), same run | |"
    );
    match ir {
        Ok(ir) => println!(
            "| one hand-over, callgrind (flush_thread_buffer inclusive) | {ir:.0} Ir | | |"
        ),
        Err(e) => println!("| one hand-over, callgrind | not measured: {e} | | |"),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probing
    }
    let dir = std::env::temp_dir().join(format!("krphase-bench-h-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("bench.krp");
    if let Ok(m) = std::env::var("KRPHASE_BENCH_STRACE") {
        strace_child(&path, m == "windows");
    } else if let Ok(n) = std::env::var("KRPHASE_BENCH_CALLGRIND_EVENTS") {
        callgrind_child(&path, n.parse().expect("count"));
    } else {
        measure(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
