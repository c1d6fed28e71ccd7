//! `krphase export perfetto` as Perfetto protobuf, read back by the Perfetto project's own
//! protobuf modules (PyPI `perfetto` on `protobuf`, through `tests/pftrace/decode.py`), never by
//! krphase's code: two demo runs in one trace, counted and timed against the database; and a
//! golden file of a small trace in protobuf text format, so format drift shows in review.
//!
//! The Python packages are pinned in `tests/python-requirements.txt` (`krphase_tests::python`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;
use serde_json::Value;

/// Runs the decoder with `args`; its stdout.
fn decoder(args: &[&std::ffi::OsStr]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("pftrace/decode.py");
    let o = Command::new("python3")
        .arg(&script)
        .args(args)
        .env("PYTHONPATH", krphase_tests::python::ensure())
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", krphase_tests::output_text(&o));
    String::from_utf8(o.stdout).expect("utf-8")
}

/// `krphase export perfetto -o TRACE` of the database `db`; its stdout.
fn export_pftrace(db: &Path, trace: &Path) -> String {
    krphase_tests::krphase_db_ok(
        db,
        &[
            "export".as_ref(),
            "perfetto".as_ref(),
            "-o".as_ref(),
            trace.as_os_str(),
        ],
    )
}

fn decode(trace: &Path) -> Value {
    serde_json::from_str(&decoder(&[trace.as_os_str()])).expect("decoder prints JSON")
}

/// Two demo runs (the filtered STREAM run, whose opt-outs are declines, and saxpy) in a fresh
/// database; returns it.
fn two_demo_runs() -> PathBuf {
    let a = krphase_tests::artifacts();
    let out = krphase_tests::scratch_dir("export-pftrace");
    let o = Command::new(&a.krphase)
        .args(["demo", "--no-build", "-d"])
        .arg(&out)
        .args(["--only", "stream-filtered", "--only", "saxpy"])
        .output()
        .expect("run krphase demo");
    assert!(o.status.success(), "{}", krphase_tests::output_text(&o));
    out.join("krphase.db")
}

/// `sql`'s rows of two integers (NULLs skipped), sorted: a multiset to compare.
fn pairs(c: &Connection, sql: &str, run: i64) -> Vec<(i64, i64)> {
    let mut st = c.prepare(sql).unwrap();
    let mut v: Vec<(i64, i64)> = st
        .query_map([run], |r| {
            Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?))
        })
        .unwrap()
        .filter_map(|r| match r.unwrap() {
            (Some(a), Some(b)) if b >= a => Some((a, b)),
            _ => None,
        })
        .collect();
    v.sort_unstable();
    v
}

/// The decoded trace, indexed by run: each slice's (start, end) by name prefix, on tracks
/// whose parent is the run's process track.
struct RunView<'a> {
    slices: Vec<&'a Value>,
    instants: Vec<&'a Value>,
}

fn span(s: &Value) -> (i64, i64) {
    (s["ts"].as_i64().unwrap(), s["end"].as_i64().unwrap())
}

/// Each slice sits in the slice it belongs to, as a reader pairing a track's begins and ends in
/// time order sees them: the pre-pass's split (lock+drain, snapshot) in a pre-pass, every phase
/// in a window.
fn assert_well_nested(v: &RunView<'_>) {
    // The decoder lists slices in begin order with their depth on the track: a slice's parent is
    // the last one before it on its track one level up.
    let mut open: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for s in &v.slices {
        let name = s["name"].as_str().unwrap_or("");
        let cat = s["cats"][0].as_str().unwrap_or("");
        let depth = s["depth"].as_u64().unwrap() as usize;
        let stack = open.entry(s["track"].as_u64().unwrap()).or_default();
        stack.truncate(depth);
        match stack.last() {
            Some(&parent) if name == "lock+drain" || name == "snapshot" => {
                assert_eq!(parent, "pre-pass", "{name} at {} lies in {parent}", s["ts"]);
            }
            Some(&parent) if cat == "phase" || cat == "pass" || cat == "restore" => {
                assert!(
                    parent.starts_with("window"),
                    "{name} at {} lies in {parent}",
                    s["ts"]
                );
            }
            None => {
                let inner = ["phase", "pass", "continue", "restore"];
                assert!(
                    !inner.contains(&cat),
                    "{name} at {} lies in no window",
                    s["ts"]
                );
            }
            _ => {}
        }
        stack.push(name);
    }
}

fn spans(v: &RunView<'_>, pred: impl Fn(&Value) -> bool) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = v
        .slices
        .iter()
        .filter(|s| pred(s))
        .map(|s| span(s))
        .collect();
    out.sort_unstable();
    out
}

/// Per run: process track named for it, its threads and queues, slices and instants whose
/// timestamps are the database's nanoseconds.
fn check_run(c: &Connection, t: &Value, run: i64) {
    let (pid, label): (i64, String) = c
        .query_row(
            "SELECT pid, label FROM krphase_run WHERE id = ?1",
            [run],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let tracks = t["tracks"].as_array().unwrap();
    let process = tracks
        .iter()
        .find(|k| {
            k["kind"] == "process" && k["name"].as_str().unwrap().contains(&format!("run {run},"))
        })
        .unwrap_or_else(|| panic!("no process track for run {run}: {tracks:?}"));
    let name = process["name"].as_str().unwrap();
    assert!(
        name.contains(&label) && name.contains(&format!("pid {pid}")),
        "{name}"
    );
    assert_eq!(process["pid"], pid);
    let uuid = process["uuid"].as_u64().unwrap();
    let children: BTreeMap<u64, &Value> = tracks
        .iter()
        .filter(|k| k["parent"].as_u64() == Some(uuid))
        .map(|k| (k["uuid"].as_u64().unwrap(), k))
        .collect();
    let kind = |k: &str| children.values().filter(|x| x["kind"] == k).count() as i64;
    let count = |sql: &str| -> i64 { c.query_row(sql, [run], |r| r.get(0)).unwrap() };
    let threads = count(
        "SELECT COUNT(DISTINCT t) FROM (SELECT COALESCE(thread, 0) t FROM krphase_window WHERE run_id = ?1
         UNION ALL SELECT COALESCE(thread, 0) FROM krphase_dispatch WHERE run_id = ?1)",
    );
    let queues = count(
        "SELECT COUNT(DISTINCT q) FROM (SELECT queue q FROM krphase_window WHERE run_id = ?1 AND queue IS NOT NULL
         UNION ALL SELECT queue FROM krphase_dispatch WHERE run_id = ?1 AND queue IS NOT NULL)",
    );
    assert_eq!(kind("thread"), threads, "thread tracks of run {run}");
    assert_eq!(kind("named"), queues, "queue tracks of run {run}");
    assert_eq!(kind("counter"), 2, "counter tracks of run {run}");
    assert!(
        children
            .values()
            .filter(|x| x["kind"] == "thread")
            .all(|x| x["pid"] == pid)
    );
    let mine = |e: &&Value| children.contains_key(&e["track"].as_u64().unwrap());
    let v = RunView {
        slices: t["slices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(mine)
            .collect(),
        instants: t["instants"]
            .as_array()
            .unwrap()
            .iter()
            .filter(mine)
            .collect(),
    };
    assert!(
        v.slices.iter().all(|s| s["args"]["basis"].is_string()),
        "every slice carries its basis"
    );
    let drawn =
        "FROM krphase_window WHERE run_id = ?1 AND (outcome = 'replayed' OR stuck_ns IS NOT NULL)";
    let windows = pairs(c, &format!("SELECT \"start\", \"end\" {drawn}"), run);
    assert!(!windows.is_empty());
    assert_well_nested(&v);
    let prepass = pairs(
        c,
        &format!("SELECT pass_count_return, first_pass_enter {drawn}"),
        run,
    );
    assert_eq!(spans(&v, |s| s["name"] == "pre-pass"), prepass);
    // The snapshot ends where the pre-pass does (the log gives its length, not its place).
    let split = pairs(
        c,
        "SELECT first_pass_enter, first_pass_enter FROM krphase_window w
         WHERE run_id = ?1 AND (outcome = 'replayed' OR stuck_ns IS NOT NULL)
           AND EXISTS (SELECT 1 FROM krphase_window_phase v
                       WHERE v.window_id = w.id AND v.snapshot_ns IS NOT NULL)",
        run,
    );
    let snap_ends: Vec<(i64, i64)> = spans(&v, |s| s["name"] == "snapshot")
        .into_iter()
        .map(|(_, e)| (e, e))
        .collect();
    assert_eq!(snap_ends, split, "each snapshot ends its pre-pass");
    assert_eq!(spans(&v, |s| s["cats"][0] == "window"), windows);
    assert!(
        v.slices
            .iter()
            .filter(|s| s["cats"][0] == "window")
            .all(|s| s["depth"] == 0)
    );
    let config = pairs(
        c,
        &format!("SELECT \"start\", pass_count_return {drawn}"),
        run,
    );
    assert_eq!(spans(&v, |s| s["name"] == "config"), config);
    let tail = pairs(c, &format!("SELECT last_pass_exit, \"end\" {drawn}"), run);
    assert_eq!(spans(&v, |s| s["name"] == "tail"), tail);
    let passes = pairs(
        c,
        "SELECT \"start\", \"end\" FROM krphase_pass WHERE run_id = ?1",
        run,
    );
    assert_eq!(spans(&v, |s| s["cats"][0] == "pass"), passes);
    assert!(
        v.slices
            .iter()
            .filter(|s| s["cats"][0] == "pass")
            .all(|s| s["depth"] == 1)
    );
    let restores = pairs(
        c,
        "SELECT restore_start, restore_end FROM krphase_pass WHERE run_id = ?1",
        run,
    );
    assert_eq!(spans(&v, |s| s["cats"][0] == "restore"), restores);
    let mut gpu = pairs(
        c,
        "SELECT gpu_start, gpu_end FROM krphase_pass WHERE run_id = ?1",
        run,
    );
    gpu.extend(pairs(
        c,
        "SELECT gpu_start, gpu_end FROM krphase_dispatch WHERE run_id = ?1 AND queue IS NOT NULL",
        run,
    ));
    gpu.sort_unstable();
    assert_eq!(spans(&v, |s| s["cats"][0] == "gpu"), gpu);
    let enqueue = pairs(
        c,
        "SELECT \"start\", \"end\" FROM krphase_dispatch WHERE run_id = ?1",
        run,
    );
    assert_eq!(spans(&v, |s| s["cats"][0] == "dispatch"), enqueue);
    check_declines(c, &v, run);
}

/// Declines: one instant each at the window's start, named with its reason.
fn check_declines(c: &Connection, v: &RunView<'_>, run: i64) {
    let mut st = c
        .prepare(
            "SELECT w.\"start\", v.reason FROM krphase_window w JOIN krphase_window_phase v
             ON v.window_id = w.id WHERE w.run_id = ?1 AND w.outcome <> 'replayed'
             AND w.\"start\" IS NOT NULL ORDER BY 1, 2",
        )
        .unwrap();
    let want: Vec<(i64, String)> = st
        .query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut got: Vec<(i64, String)> = v
        .instants
        .iter()
        .map(|i| {
            let reason = i["args"]["reason"].as_str().unwrap().to_string();
            assert_eq!(i["name"], format!("declined: {reason}"));
            (i["ts"].as_i64().unwrap(), reason)
        })
        .collect();
    got.sort();
    assert_eq!(got, want, "declines of run {run}");
}

/// Flows: one per pass with a GPU slice, from the host pass slice to that GPU slice.
fn check_flows(c: &Connection, t: &Value, runs: &[i64]) {
    let slices = t["slices"].as_array().unwrap();
    let flows = t["flows"].as_array().unwrap();
    let mut want = 0;
    for &run in runs {
        want += c
            .query_row(
                "SELECT COUNT(*) FROM krphase_pass p JOIN krphase_window w ON w.id = p.window_id
                 WHERE p.run_id = ?1 AND w.queue IS NOT NULL AND p.gpu_end >= p.gpu_start
                   AND p.\"end\" >= p.\"start\"",
                [run],
                |r| r.get::<_, i64>(0),
            )
            .unwrap();
    }
    assert_eq!(
        flows.len() as i64,
        want,
        "one flow per pass with a GPU slice"
    );
    for f in flows {
        let (from, to) = (
            &slices[f["from"].as_u64().unwrap() as usize],
            &slices[f["to"].as_u64().unwrap() as usize],
        );
        assert_eq!(
            (from["cats"][0].as_str(), to["cats"][0].as_str()),
            (Some("pass"), Some("gpu"))
        );
        let (n, k) = (from["name"].as_str().unwrap(), to["name"].as_str().unwrap());
        assert!(k.ends_with(n), "flow {n} → {k}");
    }
}

/// Counters: the snapshot's bytes once per window that has them (and back to 0), and the
/// windows in flight, which never go below 0 and end at 0.
fn check_counters(c: &Connection, t: &Value, runs: &[i64]) {
    let counters = t["counters"].as_array().unwrap();
    let mut bytes: Vec<i64> = Vec::new();
    let tracks = t["tracks"].as_array().unwrap();
    let named = |n: &str| -> Vec<u64> {
        tracks
            .iter()
            .filter(|k| k["kind"] == "counter" && k["name"] == n)
            .map(|k| k["uuid"].as_u64().unwrap())
            .collect()
    };
    let (b, f) = (named("snapshot bytes"), named("windows in flight"));
    assert_eq!((b.len(), f.len()), (runs.len(), runs.len()));
    for x in counters {
        let track = x["track"].as_u64().unwrap();
        let v = x["value"].as_i64().unwrap();
        if b.contains(&track) && v != 0 {
            bytes.push(v);
        }
        if f.contains(&track) {
            assert!(v >= 0, "{x}");
        }
    }
    bytes.sort_unstable();
    let mut want: Vec<i64> = Vec::new();
    for &run in runs {
        let mut st = c
            .prepare(
                "SELECT v.snapshot_bytes FROM krphase_window w JOIN krphase_window_phase v ON v.window_id = w.id
                 WHERE w.run_id = ?1 AND (w.outcome = 'replayed' OR w.stuck_ns IS NOT NULL)
                   AND v.snapshot_bytes > 0 AND w.first_pass_enter >= w.pass_count_return",
            )
            .unwrap();
        want.extend(
            st.query_map([run], |r| r.get::<_, i64>(0))
                .unwrap()
                .map(Result::unwrap),
        );
    }
    want.sort_unstable();
    assert!(!want.is_empty());
    assert_eq!(bytes, want, "snapshot bytes on the counter track");
    for uuid in f {
        let mut vals: Vec<(i64, i64)> = counters
            .iter()
            .filter(|x| x["track"].as_u64() == Some(uuid))
            .map(|x| (x["ts"].as_i64().unwrap(), x["value"].as_i64().unwrap()))
            .collect();
        vals.sort_unstable();
        assert_eq!(vals.last().map(|x| x.1), Some(0), "in flight ends at 0");
        assert!(vals.iter().any(|x| x.1 >= 1));
    }
}

#[test]
fn pftrace_of_two_demo_runs_reads_back_as_the_database_holds_them() {
    let db = two_demo_runs();
    let c = Connection::open(&db).unwrap();
    let runs: Vec<i64> = c
        .prepare("SELECT id FROM krphase_run ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs.len(), 2);
    let trace = db.with_file_name("two.pftrace");
    let out = export_pftrace(&db, &trace);
    assert!(
        out.contains("Perfetto protobuf") && out.contains("of 2 runs"),
        "{out}"
    );
    let t = decode(&trace);
    assert_eq!(
        t["clocks"],
        serde_json::json!([6]),
        "every timestamp is CLOCK_BOOTTIME"
    );
    assert_eq!(t["unclosed"], 0);
    assert_eq!(t["events_on_unknown_tracks"], 0);
    for &run in &runs {
        check_run(&c, &t, run);
    }
    check_flows(&c, &t, &runs);
    check_counters(&c, &t, &runs);
}

/// A small trace (the small golden phase file's run) in protobuf text format, every field one
/// Perfetto's schema names: `KRPHASE_BLESS=1` rewrites the golden file.
#[test]
fn pftrace_of_the_small_golden_run_matches_its_golden_text() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = krphase_tests::scratch_dir("export-pftrace-golden");
    let db = dir.join("k.db");
    krphase_tests::krphase_db_ok(
        &db,
        &["import".as_ref(), root.join("golden/small.krp").as_os_str()],
    );
    let trace = dir.join("small.pftrace");
    export_pftrace(&db, &trace);
    let text = decoder(&["--text".as_ref(), trace.as_os_str()]);
    let unknown: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert!(
        unknown.is_empty(),
        "fields Perfetto's schema does not name: {unknown:?}"
    );
    let golden = root.join("golden/pftrace/small.txt");
    if std::env::var_os("KRPHASE_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &text).unwrap();
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with KRPHASE_BLESS=1)", golden.display()));
    assert!(
        text == want,
        "the trace differs from {} (bless with KRPHASE_BLESS=1):\n{text}",
        golden.display()
    );
}

/// A trace of many windows (a synthetic run of 20,000 3-pass windows with its opt-outs and plain
/// dispatches, then the small golden run: 570,039 packets over several compressed bundles and
/// reading batches) decodes to the very packets of the golden digest, which the export wrote
/// before its speed-up (one compressor reset per bundle, names made once per kernel, kernel
/// names formatted outside SQL): a faster export must not change what the trace holds.
/// `KRPHASE_BLESS=1` rewrites the digest.
#[test]
fn pftrace_of_a_large_synthetic_run_decodes_to_the_golden_packets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = krphase_tests::scratch_dir("export-pftrace-digest");
    let db = dir.join("k.db");
    let synth = dir.join("synthetic.krp");
    let o = Command::new(&krphase_tests::artifacts().krphase)
        .args(["gen-synthetic", "--windows", "20000", "--passes", "3", "-o"])
        .arg(&synth)
        .output()
        .expect("run krphase gen-synthetic");
    assert!(o.status.success(), "{}", krphase_tests::output_text(&o));
    let small = root.join("golden/small.krp");
    krphase_tests::krphase_db_ok(
        &db,
        &["import".as_ref(), synth.as_os_str(), small.as_os_str()],
    );
    let trace = dir.join("synthetic.pftrace");
    export_pftrace(&db, &trace);
    let digest = decoder(&["--digest".as_ref(), trace.as_os_str()]);
    let golden = root.join("golden/pftrace/synthetic.digest");
    if std::env::var_os("KRPHASE_BLESS").is_some() {
        std::fs::write(&golden, &digest).unwrap();
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with KRPHASE_BLESS=1)", golden.display()));
    assert_eq!(
        digest,
        want,
        "the trace's packets differ from {} (bless with KRPHASE_BLESS=1)",
        golden.display()
    );
}
