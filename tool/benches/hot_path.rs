//! Hot-path benchmark (plain loop, `harness = false`): the tool's exported callbacks called
//! through the C ABI with synthetic records, as the SDK would call them.
//!
//! `cargo bench -p krphase-tool --bench hot_path` prints a table:
//! * ns per recorded event (ENQUEUE EXIT: one clock read + one record), median of samples;
//! * ns per COMPLETE record (no clock read);
//! * observe-mode cost per non-replayed dispatch (ENQUEUE ENTER + EXIT + COMPLETE);
//! * writer throughput: events/s sustained from two threads with `KRPHASE_ON_FULL=block`
//!   (no drops), and the process's peak RSS growth;
//! * callgrind instructions per event, when `valgrind` is on PATH (runs this binary under
//!   callgrind twice with different event counts and takes the difference; skipped with
//!   `KRPHASE_BENCH_NO_CALLGRIND=1`). `KRPHASE_BENCH_CALLGRIND_WINDOWS=N` runs N drive-mode windows
//!   and nothing else, for counting a window's instructions under callgrind by hand.

use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, KernelDispatchData, UserData,
    kernel_dispatch_op,
};
use std::time::Instant;

#[path = "../tests/common/mod.rs"]
mod common;
use common::{Cb, Payload};

fn dispatch_record(
    op: i32,
    phase: CallbackPhase,
    data: &mut KernelDispatchData,
) -> CallbackTracingRecord {
    CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 7,
        correlation_id: Default::default(),
        kind: CallbackTracingKind::KERNEL_DISPATCH,
        operation: op,
        phase,
        payload: (data as *mut KernelDispatchData).cast(),
    }
}

struct Driver {
    cb: Cb,
    data: KernelDispatchData,
    ud: UserData,
}

impl Driver {
    fn call(&mut self, op: i32, phase: CallbackPhase) {
        let rec = dispatch_record(op, phase, &mut self.data);
        // SAFETY: the record's payload points to a live KernelDispatchData for the call, as
        // the SDK guarantees; user data is a valid pointer.
        unsafe { (self.cb)(rec, &mut self.ud, std::ptr::null_mut()) };
    }
    fn enqueue_exit(&mut self) {
        self.call(kernel_dispatch_op::ENQUEUE, CallbackPhase::EXIT);
    }
    fn complete(&mut self) {
        self.data.start_timestamp += 10;
        self.data.end_timestamp += 10;
        self.call(kernel_dispatch_op::COMPLETE, CallbackPhase::NONE);
    }
    fn dispatch(&mut self) {
        self.data.dispatch_info.dispatch_id += 1;
        self.call(kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER);
        self.call(kernel_dispatch_op::ENQUEUE, CallbackPhase::EXIT);
        self.complete();
    }
}

/// One drive-mode replay window as the SDK delivers it (Layout B, N = 2): CONFIG ENTER, the
/// pass-count call, per pass PASS ENTER + ENQUEUE ENTER/EXIT + COMPLETE + PASS EXIT and (but
/// after the last pass) the continue call, CONFIG EXIT. Only the tool's callbacks run, so the time is the tool's whole per-window cost.
struct WindowDriver {
    cb: Cb,
    payload: Payload,
    d: Driver,
    id: u64,
}

impl WindowDriver {
    fn replay(&mut self, op: i32, phase: CallbackPhase) {
        common::call(self.cb, op, phase, &mut self.payload);
    }

    fn window(&mut self) {
        self.id += 1;
        self.payload = Payload([0; 32]);
        self.payload.0[0] = 184;
        self.payload.0[5] = self.id;
        self.replay(1, CallbackPhase::ENTER);
        let f = self.payload.0[19];
        assert_ne!(f, 0, "the tool set the pass-count callback");
        let info = common::dispatch_info(self.id);
        let c = self.payload.0[20];
        assert_ne!(c, 0, "the tool set the continue callback");
        type Continue =
            unsafe extern "C" fn(krphase_ffi::KernelDispatchInfo, u64, u64, UserData) -> i32;
        // SAFETY: the slot holds the tool's continue callback of this signature.
        let cont: Continue = unsafe { std::mem::transmute::<usize, Continue>(c as usize) };
        let n = common::call_pass_count(f, self.id);
        self.d.data.dispatch_info.dispatch_id = self.id;
        for i in 0..n {
            self.payload.0[17] = i;
            self.payload.0[18] = n;
            self.payload.0[19] = 0;
            self.payload.0[20] = 0;
            self.replay(2, CallbackPhase::ENTER);
            self.d
                .call(kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER);
            self.d
                .call(kernel_dispatch_op::ENQUEUE, CallbackPhase::EXIT);
            self.d.complete();
            self.payload.0[20] = c;
            self.replay(2, CallbackPhase::EXIT);
            // SAFETY: called as the SDK calls it, never after the last pass of a fixed loop.
            if i + 1 < n && unsafe { cont(info, i, n, UserData::default()) } == 0 {
                break;
            }
        }
        self.replay(1, CallbackPhase::EXIT);
    }
}

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

fn driver() -> Driver {
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let mut data = KernelDispatchData {
        size: 152,
        ..Default::default()
    };
    data.dispatch_info.kernel_id = 1;
    data.dispatch_info.agent_id.handle = 2;
    data.dispatch_info.queue_id.handle = 3;
    // GPU timestamps are in the BOOTTIME domain, like the host's: the recorder's buffer-age
    // check compares them.
    data.start_timestamp = krphase::boottime_ns();
    data.end_timestamp = data.start_timestamp + 5;
    Driver {
        cb: cb.expect("callback"),
        data,
        ud: UserData::default(),
    }
}

/// Installs the synthetic tool: drive mode with N = 2, or observe mode; block policy.
fn install(path: &std::path::Path, drive: bool) {
    let vars: &[(&str, &str)] = if drive {
        &[
            ("KRPHASE_MODE", "drive"),
            ("KRPHASE_PASSES", "2"),
            ("KRPHASE_ON_FULL", "block"),
        ]
    } else {
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "block")]
    };
    krphase::test_support::install_synthetic(vars, path).expect("install");
}

fn window_driver() -> WindowDriver {
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    WindowDriver {
        cb: cb.expect("callback"),
        payload: Payload([0; 32]),
        d: driver(),
        id: 0,
    }
}

/// Callgrind child: N drive-mode windows, nothing else.
fn callgrind_windows(path: &std::path::Path, n: usize) {
    install(path, true);
    let mut w = window_driver();
    for _ in 0..n {
        w.window();
    }
    krphase::finalize(0);
}

/// Callgrind child: N events (or whole dispatches), nothing else.
fn callgrind_events(path: &std::path::Path, n: usize) {
    install(path, false);
    let mut d = driver();
    let per_dispatch = std::env::var_os("KRPHASE_BENCH_CALLGRIND_DISPATCH").is_some();
    for _ in 0..n {
        if per_dispatch {
            d.dispatch();
        } else {
            d.enqueue_exit();
        }
    }
    krphase::finalize(0);
}

/// Only the writer measurement (for profiling it).
fn writer_only(path: &std::path::Path) {
    install(path, false);
    let per_thread = 5_000_000usize;
    let secs = two_producers(per_thread);
    println!("{:.1} M events/s", (2 * per_thread) as f64 / secs / 1e6);
}

/// The window child: prints the median ns per drive-mode window and per continue decision.
fn window_child(path: &std::path::Path) {
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
    let dir = std::env::temp_dir().join(format!("krphase-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("bench.krp");
    let count = |v: String| v.parse::<usize>().expect("count");
    let child = if let Ok(n) = std::env::var("KRPHASE_BENCH_CALLGRIND_WINDOWS") {
        callgrind_windows(&path, count(n));
        true
    } else if let Ok(n) = std::env::var("KRPHASE_BENCH_CALLGRIND_EVENTS") {
        callgrind_events(&path, count(n));
        true
    } else if std::env::var_os("KRPHASE_BENCH_WRITER_ONLY").is_some() {
        writer_only(&path);
        true
    } else if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` probing
    } else if std::env::var_os("KRPHASE_BENCH_WINDOW").is_some() {
        window_child(&path);
        true
    } else {
        false
    };
    if !child {
        measure(&dir, &path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The main table.
fn measure(dir: &std::path::Path, path: &std::path::Path) {
    let rss0 = vm_kib("VmRSS:");
    install(path, false);
    let mut d = driver();
    // Warm up: allocate the slot and the buffer pool.
    for _ in 0..200_000 {
        d.enqueue_exit();
    }
    // Many short samples (~0.1 ms each): on a shared machine most of them run without being
    // preempted, so the median is the uncontended cost.
    let clock = median_ns(401, 2_000, || {
        std::hint::black_box(krphase::boottime_ns());
    });
    let event = median_ns(401, 2_000, || d.enqueue_exit());
    let complete = median_ns(401, 2_000, || d.complete());
    let dispatch = median_ns(401, 1_000, || d.dispatch());

    // Writer: two producer threads, block policy, count what reached the file.
    let per_thread = 5_000_000usize;
    let secs = two_producers(per_thread);
    let peak = vm_kib("VmHWM:").saturating_sub(rss0);
    let mut r = krphase_format::FileReader::open(path).expect("read back");
    let n = r.by_ref().count() as u64;
    let tr = *r.trailer().expect("trailer");
    let writer_eps = (2 * per_thread) as f64 / secs;

    // The writer thread's own capacity: encode + checksum + write of 8192-record blocks.
    let raw = {
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
    };

    // A drive-mode window's callbacks, in a child process (drive mode needs its own install).
    let window: Option<(f64, f64)> =
        std::process::Command::new(std::env::current_exe().expect("exe"))
            .env("KRPHASE_BENCH_WINDOW", "1")
            .output()
            .ok()
            .and_then(|o| {
                let s = String::from_utf8_lossy(&o.stdout).into_owned();
                let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
                Some((it.next()??, it.next()??))
            });

    println!("| measurement | value | goal |");
    println!("|---|---|---|");
    println!("| hot path, ENQUEUE EXIT (clock + record), median | {event:.1} ns/event | ≤ 25 ns |");
    println!("| clock_gettime(CLOCK_BOOTTIME) alone, median | {clock:.1} ns | |");
    println!("| COMPLETE record (no clock read), median | {complete:.1} ns/event | |");
    println!(
        "| observe mode, per non-replayed dispatch (3 callbacks, 3 records) | {dispatch:.1} ns | ≤ 100 ns |"
    );
    println!(
        "| writer, 2 producer threads, block policy | {:.1} M events/s ({} events in file, dropped {}) | ≥ 20 M/s, no drops |",
        writer_eps / 1e6,
        n,
        tr.dropped_dispatch + tr.dropped_allocation + tr.dropped_window
    );
    println!(
        "| writer alone (encode + CRC + write, 8192-record blocks) | {:.1} M events/s | ≥ 20 M/s |",
        raw / 1e6
    );
    println!(
        "| peak RSS growth of the process | {:.1} MiB | ≤ 32 MiB |",
        peak as f64 / 1024.0
    );
    if let Some((cb, all)) = callgrind_per_event() {
        println!(
            "| callgrind instructions per event (ENQUEUE EXIT): in the callback / whole process incl. writer | {cb:.1} / {all:.1} | |"
        );
    } else {
        println!("| callgrind instructions per event | (valgrind not found) | |");
    }
    if let Some((w, c)) = window {
        println!(
            "| drive-mode window, every tool callback (N = 2: CONFIG, pass count, 2 × (PASS, ENQUEUE, COMPLETE), continue, CONFIG EXIT; 18 records) | {w:.0} ns per window = {:.3} % of a 1 ms window | ≤ 0.5 % |",
            w / 1e6 * 100.0
        );
        println!("| continue decision alone (2 clock reads, 1 record), median | {c:.1} ns | |");
    }
}

/// Two threads record `per_thread` COMPLETE events each, then the file is finished; returns
/// the wall seconds from the first event to the synced file.
fn two_producers(per_thread: usize) -> f64 {
    let t = Instant::now();
    let hs: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(move || {
                let mut d = driver();
                for _ in 0..per_thread {
                    d.complete();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().expect("producer");
    }
    krphase::finalize(0);
    t.elapsed().as_secs_f64()
}

/// Runs this binary under callgrind with two event counts; returns Ir per event: inside the
/// callback only (the recording thread's cost), and for the whole process (writer included).
fn callgrind_per_event() -> Option<(f64, f64)> {
    if std::env::var_os("KRPHASE_BENCH_NO_CALLGRIND").is_some() {
        return None;
    }
    Some((
        callgrind_diff(Some("--toggle-collect=*tracing_callback*"))?,
        callgrind_diff(None)?,
    ))
}

fn callgrind_diff(extra: Option<&str>) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let run = |n: usize| -> Option<u64> {
        let out = std::env::temp_dir().join(format!("krphase-cg-{}-{n}.out", std::process::id()));
        let st = std::process::Command::new("valgrind")
            .args(["--tool=callgrind", "--quiet"])
            .args(extra)
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&exe)
            .env("KRPHASE_BENCH_CALLGRIND_EVENTS", n.to_string())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        if !st.success() {
            return None;
        }
        let text = std::fs::read_to_string(&out).ok()?;
        let _ = std::fs::remove_file(&out);
        text.lines()
            .find_map(|l| {
                l.strip_prefix("summary: ")
                    .or_else(|| l.strip_prefix("totals: "))
            })
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    let (a, b) = (200_000usize, 400_000usize);
    let ia = run(a)?;
    let ib = run(b)?;
    Some((ib.saturating_sub(ia)) as f64 / (b - a) as f64)
}
