//! Import of continue decisions and stuck passes: a phase file written through krphase-format's
//! writer with known timestamps, checked through the database, the report and the export.

use std::path::Path;

use krphase_format::event::Decision;
use krphase_format::synthetic::Synthetic;
use krphase_format::{Event, FileWriter, NameSpace, Record, Trailer};
use rusqlite::Connection;

use crate::answers::run_report;
use crate::import::krp::import_file;
use crate::render::Format;
use crate::synth::{SynthSpec, header};
use crate::{db, export, report};

const T: u32 = 7;
const QUEUE: u64 = 3;

/// pass index, incomplete, continue ns, restore start, restore end.
type PassRow = (i64, i64, Option<i64>, Option<i64>, Option<i64>);

/// Dispatches of kernel 1 from thread `T` on queue `QUEUE` of agent 1, payload layout 2.
const S: Synthetic = Synthetic {
    thread: T,
    kernel_id: 1,
    agent: 1,
    queue: QUEUE,
    layout: 2,
};

/// Window 1: three passes with continue calls; continue phases 70 + 50 ns, restores 430 + 450 ns,
/// the stop decision after the last pass falls in the tail. Window 2: pass 1 of 3 never exits
/// (`pass_drain_stuck`), stuck ENTER 12 000 → CONFIG EXIT 60 000; its one continue phase 70 ns.
fn events() -> Vec<Event> {
    let mut e = S.open(1, 1_000, Decision::Replay, 3);
    e.extend(S.pass(1, 0, 3, 2_000, Some(2_500)));
    e.push(S.cont(1, 0, 3, 2_550, 20, true));
    e.extend(S.pass(1, 1, 3, 3_000, Some(3_500)));
    e.push(S.cont(1, 1, 3, 3_540, 10, true));
    e.extend(S.pass(1, 2, 3, 4_000, Some(4_500)));
    e.push(S.cont(1, 2, 3, 4_520, 10, false));
    e.push(S.config_exit(1, 4_600));
    for (s, x) in [(2_100, 2_400), (3_100, 3_400), (4_100, 4_400)] {
        e.push(S.complete(1, s, x));
    }
    e.extend(S.open(2, 10_000, Decision::Replay, 3));
    e.extend(S.pass(2, 0, 3, 11_000, Some(11_500)));
    e.push(S.cont(2, 0, 3, 11_550, 20, true));
    e.push(S.complete(2, 11_100, 11_400));
    e.extend(S.pass(2, 1, 3, 12_000, None));
    e.push(S.config_exit(2, 60_000));
    e
}

fn write(path: &Path) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = FileWriter::new(f, &header(&SynthSpec::default())).unwrap();
    w.write_names(&[(NameSpace::Kernel, 1, "stream_copy")])
        .unwrap();
    let recs: Vec<Record> = events().iter().filter_map(Event::to_record).collect();
    w.write_records(&recs).unwrap();
    w.write_trailer(&Trailer {
        events_written: recs.len() as u64,
        windows: 2,
        finalize_ns: 70_000,
        flags: 1,
        ..Trailer::default()
    })
    .unwrap();
    w.flush().unwrap();
}

fn imported(dir: &Path) -> (Connection, i64) {
    let f = dir.join("c.krp");
    write(&f);
    let mut c = db::open(dir.join("k.db")).unwrap();
    let r = import_file(&mut c, &f, None).unwrap();
    assert_eq!((r.windows, r.declines, r.truncated), (2, 0, false));
    (c, r.run_id)
}

#[test]
fn continue_phases_and_stuck_passes_reach_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let (c, run) = imported(dir.path());
    let w: (String, String, i64, Option<i64>, i64, Option<i64>) = c
        .query_row(
            "SELECT outcome, reason, executed_passes, continue_ns, restore_ns, stuck_ns
             FROM krphase_window WHERE run_id = ?1 AND dispatch_id = 1",
            [run],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .unwrap();
    assert_eq!(
        w,
        ("replayed".into(), "none".into(), 3, Some(120), 880, None)
    );
    let per_pass: Vec<PassRow> = c
        .prepare(
            "SELECT p.pass_index, p.incomplete, p.continue_ns, p.restore_start, p.restore_end
             FROM krphase_pass p JOIN krphase_window w ON w.id = p.window_id
             WHERE w.dispatch_id = 1 ORDER BY p.pass_index",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        per_pass,
        vec![
            (0, 0, Some(70), Some(2_570), Some(3_000)),
            (1, 0, Some(50), Some(3_550), Some(4_000)),
            (2, 0, None, None, None),
        ]
    );

    let s: (String, String, i64, Option<i64>, Option<i64>) = c
        .query_row(
            "SELECT outcome, reason, executed_passes, stuck_ns, continue_ns
             FROM krphase_window_phase WHERE run_id = ?1 AND dispatch_id = 2",
            [run],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(
        s,
        (
            "declined".into(),
            "pass_drain_stuck".into(),
            1,
            Some(48_000),
            Some(70)
        )
    );
    let incomplete: Vec<(i64, i64)> = c
        .prepare(
            "SELECT p.pass_index, p.incomplete FROM krphase_pass p
             JOIN krphase_window w ON w.id = p.window_id WHERE w.dispatch_id = 2
             ORDER BY p.pass_index",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(incomplete, vec![(0, 0), (1, 1)]);
}

#[test]
fn report_shows_the_continue_phase_and_counts_stuck_windows() {
    let dir = tempfile::tempdir().unwrap();
    let (c, run) = imported(dir.path());
    let rep = run_report(&c, run).unwrap();
    let p = |n: &str| rep.phases.iter().find(|p| p.phase == n).unwrap();
    // Phases cover the replayed window only.
    assert_eq!((p("continue").total_ns, p("continue").samples), (120, 1));
    assert_eq!(p("restore").total_ns, 880);
    assert_eq!(p("tail").total_ns, 100);
    assert_eq!(p("window").total_ns, 3_600);
    assert_eq!(
        (
            rep.windows.replayed,
            rep.windows.declined,
            rep.windows.stuck
        ),
        (1, 1, 1)
    );
    assert_eq!(rep.windows.stuck_ns, 48_000);
    assert_eq!(rep.declines_by_reason.get("pass_drain_stuck"), Some(&1));
    // Per pass index: window 1's three passes and window 2's completed pass 0, not its stuck
    // pass 1 (GPU 300 ns each).
    let per: Vec<(i64, u64, Option<f64>, f64)> = rep
        .gpu
        .per_pass
        .iter()
        .map(|p| (p.pass_index, p.passes, p.host_mean_ns, p.gpu_mean_ns))
        .collect();
    assert_eq!(
        per,
        vec![
            (0, 2, Some(500.0), 300.0),
            (1, 1, Some(500.0), 300.0),
            (2, 1, Some(500.0), 300.0)
        ]
    );

    let json = report::render(std::slice::from_ref(&rep), Format::Json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["runs"][0]["windows"]["stuck"], 1);
    let cont = v["runs"][0]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == "continue")
        .unwrap();
    assert_eq!(cont["total_ns"], 120);
    let table = report::render(std::slice::from_ref(&rep), Format::Table).unwrap();
    assert!(table.contains("continue"), "{table}");
    assert!(table.contains("stuck passes: 1 windows"), "{table}");
    let csv = report::render(std::slice::from_ref(&rep), Format::Csv).unwrap();
    assert!(csv.contains("phase,continue,total_ns,120"), "{csv}");
    assert!(csv.contains("windows,stuck,count,1"), "{csv}");
    let md = report::render(std::slice::from_ref(&rep), Format::Markdown).unwrap();
    assert!(md.contains("| continue"), "{md}");
}

#[test]
fn perfetto_export_nests_continue_before_the_restore() {
    let dir = tempfile::tempdir().unwrap();
    let (c, run) = imported(dir.path());
    let out = dir.path().join("t.json");
    export::perfetto::export(&c, &[run], &out, export::perfetto::TraceFormat::Json).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let slices: Vec<&serde_json::Value> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == i64::from(T))
        .collect();
    let named = |n: &str| -> Vec<(f64, f64)> {
        slices
            .iter()
            .filter(|e| e["name"] == n)
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect()
    };
    let (cont, restore) = (named("continue"), named("restore"));
    // Two in the replayed window, one in the stuck window.
    assert_eq!((cont.len(), restore.len()), (3, 3), "{slices:?}");
    for (c, r) in cont.iter().zip(&restore) {
        // The continue slice ends where its restore starts.
        assert!((c.0 + c.1 - r.0).abs() < 1e-9, "{c:?} {r:?}");
    }
    assert!((cont[0].1 - 0.070).abs() < 1e-9 && (cont[1].1 - 0.050).abs() < 1e-9);
    // The stuck window keeps its slices: pass 0, its continue phase, and the stuck pass 1 up to
    // CONFIG EXIT; plus the decline marker.
    // Timestamps are absolute: the run starts 1 µs after the clock's zero.
    assert_eq!(named("pass 1 (stuck)"), vec![(12.0, 48.0)]);
    assert!((cont[2].0 - 11.5).abs() < 1e-9 && (cont[2].1 - 0.070).abs() < 1e-9);
    let marker = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "i" && e["name"] == "declined: pass_drain_stuck")
        .count();
    assert_eq!(marker, 1);
}
