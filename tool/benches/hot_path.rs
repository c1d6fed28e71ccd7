//! Hot-path benchmark (plain loop, `harness = false`): the tool's exported callbacks called
//! through the C ABI with synthetic records, as the SDK calls them, beside references timed in
//! the same run.
//!
//! The tool's code is the test-support build statically linked into this binary (release
//! profile): its thread-locals are reached without the `__tls_get_addr` call a dlopen'ed
//! library makes, so the shipped `.so` pays a little more per callback than what is printed
//! here in ns; the callgrind rows count the same code. One row measures the shipped `.so`
//! itself: its instructions per non-replayed dispatch, loaded by the emulator through the C ABI
//! (built in the release profile first).
//!
//! `cargo bench -p krphase-tool --bench hot_path` prints a table (figure, reference in the same
//! run, goal, met?):
//! * ns per recorded event (ENQUEUE EXIT through drive mode's dispatch callback, which writes
//!   each enqueue callback as a record of its own: one clock read + one record), median of 401 samples
//!   of 2 000 calls, beside the floor (a TSC read + a 32-byte store into a thread-local ring,
//!   [`floor_record`]) and `clock_gettime(CLOCK_BOOTTIME)` alone, with the ratios;
//! * ns per COMPLETE (it reads the clock too: the host time of the completion);
//! * observe-mode cost per non-replayed dispatch (ENQUEUE ENTER + EXIT + COMPLETE, through
//!   observe mode's callback: the ENTER kept pending, one ENQUEUE_PAIR at the EXIT) and the
//!   records it writes, counted in a file written by a child that does nothing else;
//! * writer throughput: records/s from the first record to the trailer on disk, one producer,
//!   `KRPHASE_ON_FULL=block` (no drops), records counted in the file; the writer alone (encode +
//!   checksum + write); the process's peak RSS growth;
//! * callgrind instructions per event, per dispatch and for the floor, when `valgrind` is on
//!   PATH (this binary re-run under callgrind with two counts, the difference taken; skipped
//!   with `KRPHASE_BENCH_NO_CALLGRIND=1`). `KRPHASE_BENCH_CALLGRIND_WINDOWS=N` runs N
//!   drive-mode windows and nothing else, for counting a window's instructions by hand;
//! * the panic boundary's cost: instructions and ns per event of the dispatch callback with
//!   its `catch_unwind` and of the same callback without it;
//! * the load average before and after the run.

use krphase_ffi::UserData;
use std::cell::Cell;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

mod callgrind;
mod drivers;
use drivers::{driver, install, install_with, window_driver};

fn median_ns(samples: usize, per: usize, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per {
                f();
            }
            t.elapsed().as_nanos() as f64 / per as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn vm_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

thread_local! {
    /// The floor's ring: 256 records of 32 bytes and a cursor, const-initialized (no lazy
    /// registration, no destructor), as the tool's own thread buffer.
    static FLOOR_RING: ([Cell<[u64; 4]>; 256], Cell<usize>) =
        const { ([const { Cell::new([0; 4]) }; 256], Cell::new(0)) };
}

/// The floor of a recorded event: one TSC read and one 32-byte store into a thread-local ring.
#[inline(never)]
fn floor_record(a: u64, b: u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc has no preconditions on x86-64.
    let t = unsafe { std::arch::x86_64::_rdtsc() };
    #[cfg(not(target_arch = "x86_64"))]
    let t = krphase::boottime_ns();
    FLOOR_RING.with(|(ring, i)| {
        let k = i.get();
        ring[k & 255].set([t, a, b, k as u64]);
        i.set(k.wrapping_add(1));
    });
}

/// Callgrind child: N drive-mode windows, nothing else.
fn callgrind_windows(path: &Path, n: usize) {
    install(path, true);
    let mut w = window_driver();
    for _ in 0..n {
        w.window();
    }
    krphase::finalize(0);
}

/// Callgrind child: N ENQUEUE EXIT events (through the dispatch callback, or `unguarded`
/// without its panic boundary), N whole dispatches, or N floor records.
fn callgrind_events(path: &Path, what: &str, n: usize) {
    if what == "floor" {
        for i in 0..n as u64 {
            floor_record(i, 7);
        }
        return;
    }
    // Under callgrind the writer runs dozens of times slower than natively and the default
    // pool (64 slots) runs dry: the producer then waits and drops records, which counts the
    // drop policy's work as the hot path's. A pool that outlasts the run (1 024 slots, the most)
    // keeps every hand-over the steady-state one.
    install_with(path, false, &[("KRPHASE_WAIT_BUDGET_MS", "10000")]);
    // One event is an ENQUEUE EXIT written as a record of its own (drive mode's callback);
    // a dispatch is observe mode's (the callback the tool was installed with).
    let mut d = match what {
        "unguarded" => driver().plain(true),
        "dispatch" => driver(),
        "dispatch_unguarded" => driver().unguarded(),
        _ => driver().plain(false),
    };
    for _ in 0..n {
        if what.starts_with("dispatch") {
            d.dispatch();
        } else {
            d.enqueue_exit();
        }
    }
    krphase::finalize(0);
}

/// Child: N observe-mode dispatches and nothing else; prints the records and the file's bytes
/// per dispatch (everything in it: header, frames, names, trailer) found in the file it wrote.
fn count_dispatch_records(path: &Path, n: usize) {
    install(path, false);
    let mut d = driver();
    for _ in 0..n {
        d.dispatch();
    }
    krphase::finalize(0);
    let r = krphase_format::FileReader::open(path).expect("read back");
    let records = r.count();
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    println!("{} {}", records as f64 / n as f64, bytes as f64 / n as f64);
}

/// Only the writer measurement (for profiling it).
fn writer_only(path: &Path) {
    install(path, false);
    let (records, secs, dropped, waited) = one_producer(path, 10_000_000);
    println!(
        "{:.1} M records/s, {dropped} dropped, waited {:.1} ms",
        records as f64 / secs / 1e6,
        waited as f64 / 1e6
    );
}

/// The window child: prints the median ns per drive-mode window and per continue decision.
fn window_child(path: &Path) {
    install(path, true);
    let mut w = window_driver();
    for _ in 0..2_000 {
        w.window();
    }
    let per = median_ns(31, 2_000, || w.window());
    // The continue decision alone (two clock reads and one record), as the SDK calls it.
    let cont = krphase::test_support::synthetic_continue().expect("continue");
    let info = krphase_ffi::KernelDispatchInfo::default();
    // SAFETY: called as the SDK calls it (a fixed loop of 2, after pass 0).
    let one = median_ns(401, 2_000, || unsafe {
        std::hint::black_box(cont(info, 0, 2, UserData::default()));
    });
    krphase::finalize(0);
    println!("{per} {one}");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probing
    }
    let dir = std::env::temp_dir().join(format!("krphase-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("bench.krp");
    let var = |k: &str| std::env::var(k).ok();
    let count = |v: String| v.parse::<usize>().expect("count");
    if let Some(n) = var("KRPHASE_BENCH_CALLGRIND_WINDOWS") {
        callgrind_windows(&path, count(n));
    } else if let Some(n) = var("KRPHASE_BENCH_CALLGRIND_EVENTS") {
        let what = var("KRPHASE_BENCH_CALLGRIND_WHAT").unwrap_or_default();
        callgrind_events(&path, &what, count(n));
    } else if let Some(n) = var("KRPHASE_BENCH_COUNT_DISPATCH") {
        count_dispatch_records(&path, count(n));
    } else if var("KRPHASE_BENCH_WRITER_ONLY").is_some() {
        writer_only(&path);
    } else if var("KRPHASE_BENCH_WINDOW").is_some() {
        window_child(&path);
    } else {
        measure(&dir, &path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs this binary as a child with `env` set; its stdout's numbers.
fn child(env: &[(&str, &str)]) -> Option<Vec<f64>> {
    let o = Command::new(std::env::current_exe().ok()?)
        .envs(env.iter().copied())
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&o.stdout).into_owned();
    s.split_whitespace().map(|x| x.parse().ok()).collect()
}

fn met(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// What the callgrind rows show: the figures, or why there are none.
struct Instructions {
    event_cb: f64,
    event_all: f64,
    /// The event through the dispatch callback without its panic boundary.
    event_unguarded: f64,
    dispatch_cb: f64,
    floor: f64,
}

/// The functions whose instructions count as the callback's: the dispatch callback (guarded or
/// not) and everything it calls.
const CALLBACK: &str = "*tracing::dispatch_callback*";

fn instructions() -> Result<Instructions, String> {
    let cb = Some(CALLBACK);
    Ok(Instructions {
        event_cb: callgrind_diff("event", cb)?,
        event_all: callgrind_diff("event", None)?,
        event_unguarded: callgrind_diff("unguarded", cb)?,
        dispatch_cb: callgrind_diff("dispatch", cb)?,
        floor: callgrind_diff("floor", Some("*floor_record*"))?,
    })
}

/// The load average (1, 5, 15 minutes).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// Instructions per non-replayed dispatch in the shipped `libkrphase.so`'s tracing callback,
/// observe mode, under the emulator (`multi-queue`, one thread), the real C ABI: callgrind
/// totals with the callback's instructions collected, for two dispatch counts, the difference
/// taken.
fn shipped_dispatch_ir(dir: &Path) -> Result<f64, String> {
    callgrind::switched_off()?;
    let (emu, lib) = drivers::release_build();
    let (lib, out) = (lib.display().to_string(), dir.join("so-%pid%.krp"));
    let out = out.display().to_string();
    callgrind::per_unit(2_000, 6_000, |n| {
        let n = n.to_string();
        let args = ["run", "multi-queue", "--threads", "1", "--elements", "64"];
        let args: Vec<&str> = args.into_iter().chain(["--iterations", &n]).collect();
        let envs = [
            ("ROCP_TOOL_LIBRARIES", lib.as_str()),
            ("KRPHASE_MODE", "observe"),
            ("KRPHASE_OUTPUT", out.as_str()),
        ];
        callgrind::total(&emu, &args, &envs, Some(CALLBACK))
    })
}

/// The main table.
fn measure(dir: &Path, path: &Path) {
    let load_before = load();
    let rss0 = vm_kib("VmRSS:");
    install(path, false);
    // Events through drive mode's callback (a record per callback); dispatches through observe
    // mode's, the one installed.
    let mut d = driver().plain(false);
    let mut od = driver();
    // Warm up: the thread's slot, the pool, the caches.
    for _ in 0..200_000 {
        d.enqueue_exit();
    }
    // Many short samples (~0.1 ms each): on a shared machine most of them run without being
    // preempted, so the median is the uncontended cost. The references are interleaved with
    // the tool's figure so that all see the same machine.
    let mut i = 0u64;
    let floor = median_ns(401, 2_000, || {
        i += 1;
        floor_record(i, 7);
    });
    let clock = median_ns(401, 2_000, || {
        std::hint::black_box(krphase::boottime_ns());
    });
    let event = median_ns(401, 2_000, || d.enqueue_exit());
    let floor2 = median_ns(401, 2_000, || {
        i += 1;
        floor_record(i, 7);
    });
    let mut u = driver().plain(true);
    let unguarded = median_ns(401, 2_000, || u.enqueue_exit());
    let event2 = median_ns(401, 2_000, || d.enqueue_exit());
    let event = event.min(event2);
    let complete = median_ns(401, 2_000, || d.complete());
    let dispatch = median_ns(401, 1_000, || od.dispatch());
    let floor = floor.min(floor2);

    let (records, secs, dropped, waited) = one_producer(path, 10_000_000);
    let peak = vm_kib("VmHWM:").saturating_sub(rss0);
    let raw = writer_alone(dir);
    let per_dispatch = child(&[("KRPHASE_BENCH_COUNT_DISPATCH", "100000")]);
    let window = child(&[("KRPHASE_BENCH_WINDOW", "1")]).filter(|v| v.len() == 2);
    let ir = instructions();
    let so_ir = shipped_dispatch_ir(dir);

    println!("| measurement | figure | reference in the same run | goal | met? |");
    println!("|---|---|---|---|---|");
    let (ir_event, ir_dispatch, ir_floor) = match &ir {
        Ok(i) => (
            format!(
                "{:.1} Ir in the callback ({:.1} Ir a record with the writer's share)",
                i.event_cb, i.event_all
            ),
            format!("{:.1} Ir", i.dispatch_cb),
            format!("{:.1} Ir", i.floor),
        ),
        Err(e) => (e.clone(), e.clone(), e.clone()),
    };
    let ir_ok =
        |f: fn(&Instructions) -> f64, goal: f64| ir.as_ref().map(|i| f(i) <= goal).unwrap_or(false);
    println!(
        "| one recorded event (ENQUEUE EXIT: clock + record), median | {event:.1} ns; {ir_event} | floor (TSC read + 32-byte thread-local store) {floor:.1} ns, {ir_floor}: **{:.2}×**; clock_gettime(CLOCK_BOOTTIME) alone {clock:.1} ns ({:.2}× the floor) | ≤ 1.25× the floor; ≤ 60 Ir | {} |",
        event / floor,
        clock / floor,
        met(event <= 1.25 * floor && ir_ok(|i| i.event_cb, 60.0))
    );
    let ir_boundary = match &ir {
        Ok(i) => format!(
            "{:+.1} Ir ({:.1} with, {:.1} without)",
            i.event_cb - i.event_unguarded,
            i.event_cb,
            i.event_unguarded
        ),
        Err(e) => e.clone(),
    };
    println!(
        "| the panic boundary (`catch_unwind`) per event: the dispatch callback with it minus without it | {ir_boundary}; {:+.1} ns | the callback without it: {unguarded:.1} ns | 0 Ir while no panic happens | {} |",
        event - unguarded,
        // Within half an instruction: the two runs' hand-overs may differ by one.
        met(ir
            .as_ref()
            .is_ok_and(|i| i.event_cb <= i.event_unguarded + 0.5))
    );
    println!(
        "| COMPLETE (reads the clock too: the completion's host time), median | {complete:.1} ns | {:.2}× the floor | | |",
        complete / floor
    );
    let recs = match per_dispatch.as_deref() {
        Some([r, b]) => format!("{r:.2} events and {b:.1} bytes"),
        _ => "?".into(),
    };
    println!(
        "| observe mode, per non-replayed dispatch (ENQUEUE ENTER + EXIT + COMPLETE, written as ENQUEUE_PAIR + COMPLETE_AT; {recs} in the file per dispatch), median | {dispatch:.1} ns; {ir_dispatch} | {:.2}× the floor | ≤ 100 ns, ≤ 150 Ir | {} |",
        dispatch / floor,
        met(dispatch <= 100.0 && ir_ok(|i| i.dispatch_cb, 150.0))
    );
    println!(
        "| observe mode, per non-replayed dispatch, the shipped libkrphase.so under the emulator (multi-queue, 1 thread), callgrind in the tool's tracing callback | {} | {:.2}× the floor's instructions | ≤ 150 Ir | {} |",
        so_ir
            .as_ref()
            .map_or_else(|e| e.clone(), |i| format!("{i:.1} Ir")),
        match (&so_ir, &ir) {
            (Ok(s), Ok(i)) => s / i.floor,
            _ => f64::NAN,
        },
        met(so_ir.as_ref().is_ok_and(|i| *i <= 150.0))
    );
    let rate = records as f64 / secs;
    let mib = peak as f64 / 1024.0;
    println!(
        "| writer, 1 producer (COMPLETE records), block policy, first record to trailer on disk | {:.1} M records/s ({records} records in the file, {dropped} dropped, the producer waited {:.1} ms); peak RSS growth {mib:.1} MiB | the writer alone (encode + CRC + write, 8 192-record blocks) {:.1} M records/s | ≥ 20 M records/s, ≤ 32 MiB | {} |",
        rate / 1e6,
        waited as f64 / 1e6,
        raw / 1e6,
        met(rate >= 20e6 && mib <= 32.0 && dropped == 0)
    );
    println!(
        "| load average (1, 5, 15 min) | before: {load_before}; after: {} | | | |",
        load()
    );
    if let Some(w) = window {
        println!(
            "| drive-mode window, every tool callback in process (N = 2), median | {:.0} ns = {:.3} % of a 1 ms window | (whole-process ratio: `window_overhead`) | | |",
            w[0],
            w[0] / 1e6 * 100.0
        );
        println!(
            "| continue decision alone (2 clock reads, 1 record), median | {:.1} ns | {:.2}× the floor | | |",
            w[1],
            w[1] / floor
        );
    }
}

/// The writer's own capacity: encode + checksum + write of 8 192-record blocks.
fn writer_alone(dir: &Path) -> f64 {
    let f = std::fs::File::create(dir.join("raw.krp")).expect("raw file");
    let mut w =
        krphase_format::FileWriter::new(f, &krphase_format::Header::default()).expect("writer");
    let block: Vec<[u64; 4]> = (0..8192u64)
        .map(|i| [12 | (7 << 32), i, i + 1, i + 2])
        .collect();
    let total = 20_000_000usize;
    let t = Instant::now();
    for _ in 0..total / block.len() {
        w.write_words(&block).expect("write");
    }
    w.flush().expect("flush");
    (total / block.len() * block.len()) as f64 / t.elapsed().as_secs_f64()
}

/// One thread makes `calls` COMPLETE callbacks, then the file is finished; returns the records
/// in the file (all of them: the warm-up's and the other rows' too), the wall seconds from the
/// first of these callbacks to the trailer on disk, the records dropped and the ns the
/// application waited on the writer (a loaded machine can starve the writer past the wait
/// budget: then records are dropped, as they are meant to be, and the row says so).
fn one_producer(path: &Path, calls: usize) -> (u64, f64, u64, u64) {
    let t = Instant::now();
    std::thread::spawn(move || {
        let mut d = driver();
        for _ in 0..calls {
            d.complete();
        }
    })
    .join()
    .expect("producer");
    krphase::finalize(0);
    let secs = t.elapsed().as_secs_f64();
    let mut r = krphase_format::FileReader::open(path).expect("read back");
    let n = r.by_ref().count() as u64;
    let tr = *r.trailer().expect("trailer");
    let dropped = tr.dropped_dispatch + tr.dropped_allocation + tr.dropped_window;
    (n, secs, dropped, tr.stall_ns)
}

/// Instructions per one of `what` (this binary re-run under callgrind for 200 000 and 400 000;
/// the difference cancels start-up and finalize).
fn callgrind_diff(what: &str, toggle: Option<&str>) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    callgrind::per_unit(200_000, 400_000, |n| {
        let n = n.to_string();
        let envs = [
            ("KRPHASE_BENCH_CALLGRIND_EVENTS", n.as_str()),
            ("KRPHASE_BENCH_CALLGRIND_WHAT", what),
        ];
        callgrind::total(&exe, &[], &envs, toggle)
    })
}
