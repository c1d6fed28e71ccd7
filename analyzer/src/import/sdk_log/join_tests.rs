//! The join's evidence, one piece at a time, on runs written straight into a database and logs
//! in the SDK's real glog format (pthread thread ids, no pid; with and without the year).

use super::glog_prefix::{civil_from_days, days_from_civil};
use super::*;

const S: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;
const ANCHOR_BOOT: i64 = 1_000 * S;
const TID_A: u64 = 140_032_605_917_504;
const TID_B: u64 = 140_032_597_524_800;

/// UTC ns of a civil UTC time.
fn utc(y: i32, mo: u32, d: u32, h: i64, mi: i64, s: i64) -> i64 {
    (days_from_civil(y, mo, d) * 86_400 + (h * 60 + mi) * 60 + s) * S
}

#[derive(Clone)]
struct Run {
    id: i64,
    real: i64,
    offset: Option<i32>,
    passes: i64,
    windows: i64,
    /// BOOTTIME offset of window 1 from the anchor, and between windows.
    first: i64,
    step: i64,
    prepass: i64,
    finalized: bool,
}

impl Run {
    fn new(id: i64, real: i64) -> Run {
        Run {
            id,
            real,
            offset: Some(7200),
            passes: 2,
            windows: 3,
            first: S,
            step: S,
            prepass: 40 * MS,
            finalized: true,
        }
    }
    fn window_start(&self, k: i64) -> i64 {
        ANCHOR_BOOT + self.first + (k - 1) * self.step
    }
    /// A line for window `k` 200 ms into it.
    fn line_at(&self, k: i64) -> i64 {
        self.window_start(k) + 200 * MS
    }
    fn add(&self, c: &Connection) {
        let end = self.window_start(self.windows) + S;
        c.execute(
            "INSERT INTO krphase_run (id, path, file_hash, pid, clock_boottime_ns, clock_realtime_ns,
               utc_offset_s, \"start\", \"end\", finalize_ns, mode, imported_at)
             VALUES (?1, 'p', ?1, 4242, ?2, ?3, ?4, ?2, ?5, ?6, 'drive', 'now')",
            params![
                self.id,
                ANCHOR_BOOT,
                self.real,
                self.offset,
                end,
                self.finalized.then_some(end + 10 * MS)
            ],
        )
        .unwrap();
        for k in 1..=self.windows {
            let start = self.window_start(k);
            c.execute(
                "INSERT INTO krphase_window (run_id, dispatch_id, outcome, requested_passes,
                   executed_passes, \"start\", \"end\", pass_count_return, first_pass_enter, thread)
                 VALUES (?1, ?2, 'replayed', ?3, ?3, ?4, ?5, ?6, ?7, 100)",
                params![
                    self.id,
                    k,
                    self.passes,
                    start,
                    start + 500 * MS,
                    start + 10 * MS,
                    start + 10 * MS + self.prepass
                ],
            )
            .unwrap();
        }
    }
    /// The glog prefix of a line logged at BOOTTIME `boot` of this run, local time at `offset`.
    fn prefix(&self, boot: i64, offset: i64, tid: u64, year: bool) -> String {
        let local_us = (self.real + boot - ANCHOR_BOOT) / 1_000 + offset * 1_000_000;
        let (days, us) = (
            local_us.div_euclid(86_400 * 1_000_000),
            local_us.rem_euclid(86_400 * 1_000_000),
        );
        let (y, m, d) = civil_from_days(days);
        let secs = us / 1_000_000;
        let year = if year {
            format!("{y:04}")
        } else {
            String::new()
        };
        format!(
            "I{year}{m:02}{d:02} {:02}:{:02}:{:02}.{:06} {tid} replay_diagnostics.cpp:88] ",
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            us % 1_000_000
        )
    }
}

/// An outcome line.
fn outcome(prefix: &str, id: i64, outcome: &str, passes: i64, snap: &str) -> String {
    format!(
        "{prefix}[kernel-replay] dispatch_id={id} outcome={outcome} reason=none requested_passes={passes} executed_passes={passes} footprint_bytes=4096 footprint_regions=1 untracked_vmem_bytes=0 untracked_vmem_regions=0 untracked_pool_bytes=0 untracked_pool_regions=0 snap_seconds={snap} restore_seconds=0.0010 reentrancy=0\n"
    )
}

/// The run's whole log as its process wrote it (thread `tid`, local time at the run's offset).
fn log_of(r: &Run, tid: u64, year: bool) -> String {
    let off = i64::from(r.offset.unwrap_or(0));
    (1..=r.windows)
        .map(|k| {
            outcome(
                &r.prefix(r.line_at(k), off, tid, year),
                k,
                "replayed",
                r.passes,
                "0.0021",
            )
        })
        .collect()
}

struct Db {
    dir: tempfile::TempDir,
    c: Connection,
}

impl Db {
    fn new(runs: &[&Run]) -> Db {
        let dir = tempfile::tempdir().unwrap();
        let c = db::open(dir.path().join("k.db")).unwrap();
        for r in runs {
            r.add(&c);
        }
        Db { dir, c }
    }
    fn import(&mut self, text: &str, target: Target) -> Result<LogImport> {
        let path = self.dir.path().join("stderr.log");
        std::fs::write(&path, text).unwrap();
        import_log_to(&mut self.c, &path, target)
    }
    fn count(&self, table: &str) -> i64 {
        self.c
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }
    /// Imports, expecting a refusal that names `evidence`, and nothing stored.
    fn refused(&mut self, text: &str, target: Target, evidence: &str) -> String {
        let before = (
            self.count("krphase_log_file"),
            self.count("krphase_sdk_log"),
        );
        let e = format!("{:#}", self.import(text, target).unwrap_err());
        assert!(e.contains(evidence), "{e}");
        assert!(e.contains("nothing stored") && !e.contains('\n'), "{e}");
        assert_eq!(
            (
                self.count("krphase_log_file"),
                self.count("krphase_sdk_log")
            ),
            before,
            "a refusal stores nothing"
        );
        e
    }
}

fn july(h: i64, mi: i64) -> i64 {
    utc(2025, 7, 9, h, mi, 0)
}

#[test]
fn a_log_joins_its_own_run_with_and_without_the_year_and_not_the_other() {
    // Two runs with the same dispatch ids, outcomes and passes, ten minutes apart.
    let (a, b) = (Run::new(1, july(14, 40)), Run::new(2, july(14, 50)));
    for year in [true, false] {
        let mut d = Db::new(&[&a, &b]);
        let r = d.import(&log_of(&b, TID_A, year), Target::Auto).unwrap();
        assert_eq!(
            (r.run_id, r.records, r.joined),
            (Some(2), 3, 3),
            "{}",
            r.run_note
        );
        assert!(r.run_note.contains("joined to run 2 (evidence: 3 stamps inside the run's time span (UTC+02:00), 3 dispatch ids"), "{}", r.run_note);
        let (tid, stamp): (i64, i64) =
            d.c.query_row(
                "SELECT tid, stamp_utc_ns FROM krphase_sdk_log WHERE dispatch_id = 1",
                [],
                |x| Ok((x.get(0)?, x.get(1)?)),
            )
            .unwrap();
        assert_eq!(tid as u64, TID_A);
        assert_eq!(stamp, b.real + b.line_at(1) - ANCHOR_BOOT);
        let (forced, evidence): (i64, String) =
            d.c.query_row("SELECT forced, evidence FROM krphase_log_file", [], |x| {
                Ok((x.get(0)?, x.get(1)?))
            })
            .unwrap();
        assert_eq!(forced, 0);
        assert!(evidence.starts_with("3 stamps"), "{evidence}");
        assert!(
            d.import(&log_of(&b, TID_A, year), Target::Auto)
                .unwrap()
                .already
        );
        assert_eq!(d.count("krphase_sdk_log"), 3);
    }
}

#[test]
fn stamps_outside_the_runs_span_are_refused_and_nothing_is_stored() {
    let (a, b) = (Run::new(1, july(14, 40)), Run::new(2, july(14, 50)));
    let mut d = Db::new(&[&a, &b]);
    let e = d.refused(&log_of(&b, TID_A, true), Target::Run(1), "time span failed");
    assert!(
        e.contains("after its end") && e.contains("UTC+02:00"),
        "{e}"
    );
    // Only the other run in the database: no run is chosen on dispatch ids alone.
    let mut d = Db::new(&[&a]);
    d.refused(&log_of(&b, TID_A, true), Target::Auto, "time span failed");
    // Just inside the tolerance (1 ms + 500 ppm of the time since the anchor) still joins.
    let mut late = a.clone();
    late.windows = 1;
    let end = late.window_start(1) + S + 10 * MS;
    let tol = 1_000_000 + (end - ANCHOR_BOOT) / 1_000_000 * 500;
    let mut d = Db::new(&[&late]);
    let line = outcome(
        &late.prefix(end + tol - 5_000, 7200, TID_A, true),
        1,
        "replayed",
        2,
        "0.0021",
    );
    assert!(d.import(&line, Target::Auto).is_ok());
    let mut d = Db::new(&[&late]);
    let line = outcome(
        &late.prefix(end + tol + 5_000, 7200, TID_A, true),
        1,
        "replayed",
        2,
        "0.0021",
    );
    d.refused(&line, Target::Auto, "time span failed");
}

#[test]
fn without_a_recorded_offset_the_stamps_are_read_as_utc_and_it_says_so() {
    let mut r = Run::new(1, july(14, 40));
    r.offset = None;
    let mut d = Db::new(&[&r]);
    // The process ran at UTC+02:00, but the file did not say: two hours off.
    let local: String = (1..=3)
        .map(|k| {
            outcome(
                &r.prefix(r.line_at(k), 7200, TID_A, true),
                k,
                "replayed",
                2,
                "0.0021",
            )
        })
        .collect();
    let e = d.refused(&local, Target::Auto, "time span failed");
    assert!(e.contains("no UTC offset"), "{e}");
    let ok = d.import(&log_of(&r, TID_A, true), Target::Auto).unwrap();
    assert!(ok.run_note.contains("read as UTC"), "{}", ok.run_note);
}

#[test]
fn the_dispatch_sequence_must_agree_with_the_phase_file() {
    let r = Run::new(1, july(14, 40));
    let p = |k| r.prefix(r.line_at(k), 7200, TID_A, true);
    let mut d = Db::new(&[&r]);
    let passes = format!(
        "{}{}",
        outcome(&p(1), 1, "replayed", 2, "0.0021"),
        outcome(&p(2), 2, "replayed", 3, "0.0021")
    );
    let e = d.refused(&passes, Target::Auto, "dispatch sequence failed");
    assert!(
        e.contains("dispatch 2: the log says 3 requested / 3 executed passes"),
        "{e}"
    );
    let declined = outcome(&p(1), 1, "declined", 2, "0.0000");
    d.refused(
        &declined,
        Target::Auto,
        "the log says declined, run 1's phase file replayed",
    );
    let unknown = outcome(&p(3), 7, "replayed", 2, "0.0021");
    d.refused(
        &unknown,
        Target::Auto,
        "dispatch 7 (replayed) is not in run 1's phase file",
    );
    // Windows 1 and 3 logged, 2 missing.
    let gap = format!(
        "{}{}",
        outcome(&p(1), 1, "replayed", 2, "0.0021"),
        outcome(&p(3), 3, "replayed", 2, "0.0021")
    );
    let e = d.refused(&gap, Target::Auto, "dispatch sequence failed");
    assert!(
        e.contains("1 SDK window(s) between dispatch 1 and 3 with no line in the log (dispatch 2)"),
        "{e}"
    );
}

#[test]
fn each_line_must_fall_between_its_dispatch_and_the_threads_next() {
    let r = Run::new(1, july(14, 40));
    let mut d = Db::new(&[&r]);
    let mut text = log_of(&r, TID_A, true);
    // Dispatch 2's line stamped while window 1 ran: inside the run, outside its slot.
    let early = outcome(
        &r.prefix(r.line_at(1) + MS * 100, 7200, TID_A, true),
        2,
        "replayed",
        2,
        "0.0021",
    );
    text = text.replacen(text.lines().nth(1).unwrap(), early.trim_end(), 1);
    let e = d.refused(&text, Target::Auto, "line timing failed");
    assert!(e.contains("before the dispatch started"), "{e}");
    // Dispatch 1's line stamped after window 2 started.
    let mut text = log_of(&r, TID_A, true);
    let late = outcome(
        &r.prefix(r.line_at(2), 7200, TID_A, true),
        1,
        "replayed",
        2,
        "0.0021",
    );
    text = text.replacen(text.lines().next().unwrap(), late.trim_end(), 1);
    let e = d.refused(&text, Target::Auto, "line timing failed");
    assert!(
        e.contains("after its thread's next dispatch started"),
        "{e}"
    );
}

#[test]
fn a_snapshot_longer_than_the_pre_pass_containing_it_rejects_the_join() {
    let r = Run::new(1, july(14, 40));
    let p = |k| r.prefix(r.line_at(k), 7200, TID_A, true);
    let mut d = Db::new(&[&r]);
    // Pre-pass 40 ms; snap_seconds has 100 us resolution, plus 10 us.
    let long = outcome(&p(1), 1, "replayed", 2, "0.0403");
    let e = d.refused(&long, Target::Auto, "physical bounds failed");
    assert!(
        e.contains("snap_seconds 0.040300 s is longer than run 1's pre-pass 0.040000 s"),
        "{e}"
    );
    // A phase line's snapshot wins over snap_seconds, at its own (1 us) resolution.
    let phase = format!(
        "{}{}kernel replay: dispatch 1 phases: lock+drain 1.000 ms, snapshot 40.020 ms (4096 bytes in 1 regions), 2 passes 1.000 ms, 1 restores 1.000 ms, window 50.000 ms\n",
        outcome(&p(1), 1, "replayed", 2, "0.0400"),
        p(1)
    );
    d.refused(&phase, Target::Auto, "snapshot (phase line) 0.040020 s");
    let within = outcome(&p(1), 1, "replayed", 2, "0.0401");
    assert_eq!(d.import(&within, Target::Auto).unwrap().joined, 1);
}

#[test]
fn lines_without_a_glog_stamp_are_refused() {
    let r = Run::new(1, july(14, 40));
    let mut d = Db::new(&[&r]);
    let bare = outcome("", 1, "replayed", 2, "0.0021");
    d.refused(&bare, Target::Auto, "time stamps failed");
    d.refused(&bare, Target::Run(1), "time stamps failed");
}

#[test]
fn two_processes_interleaved_join_each_its_run_or_are_refused() {
    // Two processes at the same time: run 1 with 2 passes, run 2 with 3, windows 50 ms apart.
    let a = Run::new(1, july(14, 40));
    let mut b = Run::new(2, july(14, 40));
    b.passes = 3;
    b.first = S + 50 * MS;
    let mut lines: Vec<(i64, String)> = Vec::new();
    for (r, tid) in [(&a, TID_A), (&b, TID_B)] {
        for k in 1..=r.windows {
            let t = r.line_at(k);
            lines.push((
                t,
                outcome(
                    &r.prefix(t, 7200, tid, true),
                    k,
                    "replayed",
                    r.passes,
                    "0.0021",
                ),
            ));
        }
    }
    lines.sort();
    let text: String = lines.into_iter().map(|(_, l)| l).collect();
    let mut d = Db::new(&[&a, &b]);
    let r = d.import(&text, Target::Auto).unwrap();
    assert_eq!((r.records, r.joined), (6, 6));
    assert!(
        r.run_note.contains("joined to run 1") && r.run_note.contains("joined to run 2"),
        "{}",
        r.run_note
    );
    let per_run: Vec<(i64, i64, i64)> = d
        .c
        .prepare("SELECT run_id, COUNT(*), MIN(tid) FROM krphase_sdk_log GROUP BY run_id ORDER BY run_id")
        .unwrap()
        .query_map([], |x| Ok((x.get(0)?, x.get(1)?, x.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(per_run, vec![(1, 3, TID_A as i64), (2, 3, TID_B as i64)]);
    assert_eq!(d.count("krphase_log_file"), 2);
    // With --run 1 the other process's lines fail the evidence: refused.
    let mut d = Db::new(&[&a, &b]);
    d.refused(&text, Target::Run(1), "dispatch sequence failed");
    // Two identical processes whose windows overlap: the evidence cannot tell them apart.
    let mut twin = a.clone();
    twin.id = 2;
    let mut d = Db::new(&[&a, &twin]);
    let e = d.refused(
        &log_of(&a, TID_A, true),
        Target::Auto,
        "holds for runs 1 and 2 alike",
    );
    assert!(
        e.contains(&format!("thread {TID_A} (3 lines, dispatch 1-3)")),
        "{e}"
    );
    // Two processes sharing a thread id: the repeat of dispatch 1 splits them.
    let mut b2 = b.clone();
    b2.first = S + 3 * S + 500 * MS;
    let text = format!("{}{}", log_of(&a, TID_A, false), log_of(&b2, TID_A, false));
    let mut d = Db::new(&[&a, &b2]);
    let r = d.import(&text, Target::Auto).unwrap();
    assert_eq!((r.records, r.joined), (6, 6), "{}", r.run_note);
}

#[test]
fn a_run_across_new_year_gives_yearless_stamps_the_year_that_fits() {
    let mut r = Run::new(1, utc(2025, 12, 31, 23, 59, 58));
    r.offset = Some(0);
    let mut d = Db::new(&[&r]);
    let text = log_of(&r, TID_A, false);
    assert!(
        text.contains("I1231 23:59:59.2") && text.contains("I0101 00:00:01.2"),
        "{text}"
    );
    let got = d.import(&text, Target::Auto).unwrap();
    assert_eq!(got.joined, 3, "{}", got.run_note);
}

#[test]
fn force_joins_anyway_and_the_join_is_marked() {
    let (a, b) = (Run::new(1, july(14, 40)), Run::new(2, july(14, 50)));
    let mut d = Db::new(&[&a, &b]);
    let r = d
        .import(&log_of(&b, TID_A, true), Target::Force(1))
        .unwrap();
    assert_eq!((r.run_id, r.joined), (Some(1), 3));
    assert!(
        r.run_note
            .contains("joined to run 1 FORCED (evidence failed:")
            && r.run_note.contains("time span failed"),
        "{}",
        r.run_note
    );
    let (forced, evidence): (i64, String) =
        d.c.query_row("SELECT forced, evidence FROM krphase_log_file", [], |x| {
            Ok((x.get(0)?, x.get(1)?))
        })
        .unwrap();
    assert_eq!(forced, 1);
    assert!(
        evidence.starts_with("forced: ") && evidence.contains("time span failed"),
        "{evidence}"
    );
    assert!(
        d.import(&log_of(&b, TID_A, true), Target::Force(9))
            .is_err(),
        "unknown run"
    );
}

#[test]
fn an_unfinalized_run_accepts_lines_past_its_file() {
    let mut r = Run::new(1, july(14, 40));
    r.finalized = false;
    r.windows = 2;
    let mut d = Db::new(&[&r]);
    let mut text = log_of(&r, TID_A, true);
    // The process was killed after dispatch 3's line; the file ends before it.
    let past = r.window_start(2) + 3 * S;
    text.push_str(&outcome(
        &r.prefix(past, 7200, TID_A, true),
        3,
        "replayed",
        2,
        "0.0021",
    ));
    let got = d.import(&text, Target::Auto).unwrap();
    assert_eq!((got.records, got.joined), (3, 2));
    assert!(
        got.run_note
            .contains("1 lines past the end of the unfinalized phase file"),
        "{}",
        got.run_note
    );
}

#[test]
fn a_log_without_replay_lines_is_refused_and_stores_nothing() {
    let r = Run::new(1, july(14, 40));
    let mut d = Db::new(&[&r]);
    let hello = "I0709 16:40:00.000000 1 x.cpp:1] hello\n";
    let e = d.refused(hello, Target::Auto, "no kernel-replay lines in its 1 lines");
    assert!(e.contains("krphase doctor -- "), "{e}");
    d.refused(hello, Target::Run(1), "no kernel-replay lines");
    d.refused("", Target::Auto, "empty file");
    d.refused("\u{0}\u{1}PNG", Target::Auto, "binary data");
    let line = outcome(
        &r.prefix(r.line_at(1), 0, 7, false),
        1,
        "replayed",
        2,
        "0.0021",
    );
    assert!(d.import(&line, Target::Run(7)).is_err(), "unknown run");
}
