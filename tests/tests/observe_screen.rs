//! The observe-mode first screen, from a deterministic run: an observe-mode phase file of saxpy
//! windows of 3 passes (written here, every time chosen) and the SDK log of the same run (its
//! `[kernel-replay]` outcome lines with snap_seconds and restore_seconds, glog-stamped inside
//! each window's slot), imported and joined through the `krphase` binary. The summary screen
//! `krphase report` opens with is checked against `tests/golden/observe-screen.txt`
//! (`KRPHASE_BLESS=1` rewrites it), and its figures against the times written here.

use std::fmt::Write as _;
use std::path::Path;

use krphase_format::event::Event;
use krphase_format::header::Clock;
use krphase_format::{FileWriter, Header, Mode, NameSpace, RECORD_SIZE, Record, Trailer};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
/// The run's clock pair: BOOTTIME at the tool's start, and the UTC time then
/// (2025-11-24 16:00:00 UTC).
const BOOT: u64 = 1_000 * MS;
const REAL: u64 = 1_764_000_000_000_000_000;
const WINDOWS: u64 = 6;
const PASSES: u64 = 3;
const THREAD: u32 = 11;
const KERNEL: u64 = 3;
/// Per pass: enqueue → exit, exit → GPU start, GPU time, GPU end → completion callback.
const ENQUEUE: u64 = 10 * US;
const LAUNCH: u64 = 30 * US;
const GPU: u64 = 1_000 * US;
const HOP: u64 = 20 * US;
/// The SDK's restore between passes (restore_seconds), and the rest of the gap to the next
/// pass's enqueue (the owning tool's PASS callbacks and the SDK's pass preparation).
const RESTORE: u64 = 1_200 * US;
const PREPARE: u64 = 150 * US;
/// The SDK's snapshot before pass 0 (snap_seconds).
const SNAPSHOT: u64 = 2_100 * US;
const FOOTPRINT: u64 = 64 << 20;

/// Start of window `k` (its pass 0's enqueue), BOOTTIME ns.
fn window_start(k: u64) -> u64 {
    BOOT + 10 * MS + k * 20 * MS
}

/// Enqueue of pass `i` of window `k`.
fn enqueue_at(k: u64, i: u64) -> u64 {
    window_start(k) + i * (ENQUEUE + LAUNCH + GPU + HOP + RESTORE + PREPARE)
}

/// The records of the run, in the order a tool with one dispatching thread writes them.
fn events() -> Vec<Event> {
    let mut evs = Vec::new();
    for k in 0..WINDOWS {
        let d = k + 1;
        for i in 0..PASSES {
            let e = enqueue_at(k, i);
            evs.push(Event::EnqueueEnter {
                thread: THREAD,
                ts: e,
                dispatch_id: d,
                kernel_id: KERNEL,
            });
            if k == 0 && i == 0 {
                evs.push(Event::DispatchInfo {
                    thread: THREAD,
                    dispatch_id: d,
                    agent: 1,
                    queue: 2,
                });
            }
            evs.push(Event::EnqueueExit {
                thread: THREAD,
                ts: e + ENQUEUE,
                dispatch_id: d,
                correlation: d,
            });
            let gs = e + ENQUEUE + LAUNCH;
            evs.push(Event::CompleteAt {
                ts: gs + GPU + HOP,
                dispatch_id: d,
                gpu_start: gs,
                gpu_end: gs + GPU,
            });
        }
    }
    evs
}

fn header() -> Header {
    Header {
        tool_version: "observe-screen test".into(),
        pid: 4242,
        ppid: 1,
        hostname: "node".into(),
        command_line: "rocprofv3 --pmc SQ_WAVES -- ./saxpy".into(),
        sdk_version: (1, 4, 1),
        requested_mode: Mode::Observe,
        mode: Mode::Observe,
        payload_layout: 2,
        on_full: 1,
        passes: 0,
        filter: String::new(),
        boottime_ns: BOOT,
        realtime_ns: REAL,
        record_size: RECORD_SIZE as u32,
        replay_kind: 25,
        config_op: 1,
        pass_op: 2,
        output_path: String::new(),
        utc_offset_s: Some(0),
        clock: Clock::Boottime,
        rank: None,
    }
}

fn write_phase_file(path: &Path) -> u64 {
    let f = std::fs::File::create(path).unwrap();
    let mut w = FileWriter::new(f, &header()).unwrap();
    w.write_names(&[(NameSpace::Kernel, KERNEL, "saxpy")])
        .unwrap();
    let records: Vec<Record> = events()
        .iter()
        .map(|e| e.to_record().expect("a record"))
        .collect();
    w.write_records(&records).unwrap();
    let end = enqueue_at(WINDOWS, 0);
    w.write_trailer(&Trailer {
        events_written: w.records(),
        finalize_ns: end,
        flags: 1,
        ..Trailer::default()
    })
    .unwrap();
    w.flush().unwrap();
    end
}

/// Civil date of days since 1970-01-01 (H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// glog's prefix for a line logged at BOOTTIME `t` (UTC, the run's offset is 0).
fn glog_prefix(t: u64) -> String {
    let utc_us = ((REAL + (t - BOOT)) / 1_000) as i64;
    let (secs, us) = (utc_us.div_euclid(1_000_000), utc_us.rem_euclid(1_000_000));
    let (y, mo, d) = civil(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "I{y:04}{mo:02}{d:02} {:02}:{:02}:{:02}.{us:06} 140032605917504 kernel_replay.cpp:412] ",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// The SDK's log: one outcome line per window, after its last pass completed.
fn write_log(path: &Path) {
    let mut s = String::new();
    for k in 0..WINDOWS {
        let at = enqueue_at(k, PASSES - 1) + ENQUEUE + LAUNCH + GPU + HOP + 100 * US;
        let _ = writeln!(
            s,
            "{}[kernel-replay] dispatch_id={} outcome=replayed reason=none requested_passes={PASSES} \
             executed_passes={PASSES} footprint_bytes={FOOTPRINT} footprint_regions=3 \
             untracked_vmem_bytes=0 untracked_vmem_regions=0 untracked_pool_bytes=0 \
             untracked_pool_regions=0 snap_seconds={:.4} restore_seconds={:.4} reentrancy=0",
            glog_prefix(at),
            k + 1,
            SNAPSHOT as f64 / 1e9,
            // The outcome line's restore_seconds is the window's total over its restores.
            ((PASSES - 1) * RESTORE) as f64 / 1e9,
        );
    }
    std::fs::write(path, s).unwrap();
}

/// The summary screen `krphase report` opens with (up to the findings).
fn screen(report: &str) -> String {
    report
        .lines()
        .take_while(|l| !l.starts_with("== findings"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[test]
fn observe_screen_matches_its_golden_and_the_written_times() {
    let dir = krphase_tests::scratch_dir("observe-screen");
    let db = dir.join("k.db");
    let krp = dir.join("run.krp");
    let log = dir.join("sdk.log");
    write_phase_file(&krp);
    write_log(&log);
    krphase_tests::krphase_db_ok(&db, &["import".as_ref(), krp.as_os_str()]);
    let joined = krphase_tests::krphase_db_ok(&db, &["import-log".as_ref(), log.as_os_str()]);
    assert!(joined.contains("joined to run 1"), "{joined}");
    // The figures, against the times written above.
    let json: serde_json::Value = serde_json::from_str(&krphase_tests::krphase_db_ok(
        &db,
        &["report", "--format", "json"],
    ))
    .expect("report JSON");
    let phases = json["summary"]["phases"].as_array().expect("pooled phases");
    let phase = |name: &str| {
        phases
            .iter()
            .find(|p| p["phase"] == name)
            .unwrap_or_else(|| panic!("no pooled {name}: {phases:#?}"))
    };
    let n = WINDOWS as i64;
    let passes = PASSES as i64;
    let span = (passes - 1) * (ENQUEUE + LAUNCH + GPU + HOP + RESTORE + PREPARE) as i64
        + (ENQUEUE + LAUNCH + GPU + HOP) as i64;
    assert_eq!(json["summary"]["replay_ns"].as_i64(), Some(n * span));
    let gpu = phase("gpu");
    assert_eq!(gpu["total_ns"].as_i64(), Some(n * passes * GPU as i64));
    assert!(gpu["parent"].is_null(), "no pass exec to be part of: {gpu}");
    assert_eq!(gpu["parent_untimed"], "pass exec");
    let restore = phase("restore");
    assert_eq!(
        restore["total_ns"].as_i64(),
        Some(n * (passes - 1) * RESTORE as i64)
    );
    let snapshot = phase("snapshot");
    assert_eq!(snapshot["total_ns"].as_i64(), Some(n * SNAPSHOT as i64));
    assert_eq!(snapshot["outside_window"], true);
    assert!(snapshot["share_of_replay"].is_null());
    // The rest: each pass's enqueue to its kernel's start and its kernel's end to its completion,
    // and the preparation beside each restore.
    let rest = phase("unattributed");
    let host_side = passes * (ENQUEUE + LAUNCH + HOP) as i64 + (passes - 1) * PREPARE as i64;
    assert_eq!(rest["total_ns"].as_i64(), Some(n * host_side));
    let shares: f64 = phases
        .iter()
        .filter(|p| p["parent"].is_null() && p["outside_window"] == false)
        .map(|p| p["share_of_replay"].as_f64().expect("a share"))
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "shares add to {shares}");
    assert!(
        phases
            .iter()
            .all(|p| { p["parent"].is_null() || phases.iter().any(|q| q["phase"] == p["parent"]) })
    );
    // The run's own table (and CSV, from the same rows): gpu a row of its own, out of the rest.
    let run_phases = json["runs"][0]["phases"]
        .as_array()
        .expect("the run's phases");
    let run_phase = |name: &str| {
        run_phases
            .iter()
            .find(|p| p["phase"] == name)
            .unwrap_or_else(|| panic!("no run phase {name}: {run_phases:#?}"))
    };
    assert!(run_phase("gpu")["parent"].is_null(), "{}", run_phase("gpu"));
    let run_rest = run_phase("unattributed");
    assert_eq!(run_rest["total_ns"].as_i64(), Some(n * host_side));
    // Window by window too: every window's rest is its host side (quantiles are per window).
    assert_eq!(run_rest["p50_ns"].as_i64(), Some(host_side), "{run_rest}");
    assert_eq!(run_rest["max_ns"].as_i64(), Some(host_side), "{run_rest}");
    let csv = krphase_tests::krphase_db_ok(&db, &["report", "--format", "csv"]);
    assert!(csv.contains("phase,gpu,parent,,"), "{csv}");

    let report = krphase_tests::krphase_db_ok(&db, &["report"]);
    let text = screen(&report);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let golden = root.join("golden/observe-screen.txt");
    if std::env::var_os("KRPHASE_BLESS").is_some() {
        std::fs::write(&golden, &text).unwrap();
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with KRPHASE_BLESS=1)", golden.display()));
    assert!(
        text == want,
        "the observe screen differs from {} (bless with KRPHASE_BLESS=1):\n{text}",
        golden.display()
    );
}
