//! The stored per-run summaries change nothing but speed: `report` and `compare` (JSON and text)
//! from the summaries are byte for byte what they are window by window, on a database that mixes
//! drive and observe mode, an SDK log joined by `import-log`, hand-written SDK rows that make a
//! phase negative, declines, opt-outs and several kernels.

use rusqlite::{Connection, params};

use crate::answers::run_report;
use crate::compare::builds::{CompareWhat, compare_builds, render_csv, render_text};
use crate::compare::markdown::render_markdown;
use crate::db::summary;
use crate::import::krp::import_phase_file;
use crate::import::sdk_log::{Target, import_log_to};
use crate::render::Format;
use crate::report::render;
use crate::synth::{SynthSpec, write_synthetic_file};

/// Three drive-mode synthetic runs a side (`a`: 2 passes, `b`: 3), imported.
fn synthetic_runs(c: &mut Connection, dir: &std::path::Path) {
    for i in 0..6u64 {
        let f = dir.join(format!("s{i}.krp"));
        write_synthetic_file(
            &f,
            &SynthSpec {
                windows: 150 + 10 * i,
                passes: if i < 3 { 2 } else { 3 },
                seed: i + 1,
                pid: 5000 + i as u32,
                ..SynthSpec::default()
            },
        )
        .unwrap();
        let label = if i < 3 { "a" } else { "b" };
        import_phase_file(c, &f, Some(label)).unwrap();
    }
}

/// An SDK log for run 1's first replayed windows, joined by `import-log --force`: outcome lines
/// everywhere, phase lines on every other window, some with a snapshot longer than the
/// pre-pass (a negative drain).
fn join_log(c: &mut Connection, dir: &std::path::Path) {
    let ids: Vec<i64> = c
        .prepare(
            "SELECT dispatch_id FROM krphase_window WHERE run_id = 1 AND outcome = 'replayed'
             ORDER BY id LIMIT 60",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let mut log = String::new();
    for (k, id) in ids.iter().enumerate() {
        log.push_str(&format!(
            "I1129 11:30:43.{:06} 4242 queue_hooks.cpp:512] [kernel-replay] dispatch_id={id} \
             outcome=replayed reason=none requested_passes=2 executed_passes=2 \
             footprint_bytes={} footprint_regions=3 snap_seconds=0.00{:02} \
             restore_seconds=0.0019 reentrancy=0\n",
            k * 10,
            1_000_000 + k * 4096,
            k % 40,
        ));
        if k % 2 == 0 {
            log.push_str(&format!(
                "I1129 11:30:43.{:06} 4242 queue_hooks.cpp:540] kernel replay: dispatch {id} \
                 phases: lock+drain 0.{:03} ms, snapshot {}.{:03} ms (2097152 bytes in 2 \
                 regions), 2 passes 0.950 ms, 1 restores 1.900 ms, window 5.400 ms\n",
                k * 10 + 5,
                k * 7 % 1000,
                k % 3,
                k * 13 % 1000,
            ));
        }
    }
    let p = dir.join("sdk.log");
    std::fs::write(&p, log).unwrap();
    import_log_to(c, &p, Target::Force(1)).unwrap();
}

/// Three observe-mode runs (`obs`), written row by row as an older krphase could have left them,
/// with SDK rows joined: some windows with the SDK's phase line, some with its outcome line only,
/// some with neither; a decline and a plain dispatch.
fn observe_runs(c: &Connection) {
    for run in 0..3i64 {
        let id = 100 + run;
        c.execute(
            "INSERT INTO krphase_run (id, path, file_hash, label, mode, pid, \"start\", \"end\",
               truncated, imported_at)
             VALUES (?1, 'f', ?2, 'obs', 'observe', 7, 0, ?3, 0, 'then')",
            params![id, format!("obs{run}"), 2_000_000 + run * 50_000],
        )
        .unwrap();
        c.execute(
            "INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at)
             VALUES (?1, 'l', ?2, ?3, 'then')",
            params![id, format!("log{run}"), id],
        )
        .unwrap();
        for w in 0..40i64 {
            let wid = id * 1000 + w;
            let start = w * 40_000;
            let kernel = if w % 3 == 0 { "k1" } else { "k2" };
            c.execute(
                "INSERT INTO krphase_window (id, run_id, dispatch_id, kernel, outcome, source,
                   executed_passes, \"start\", \"end\", gpu_ns, restore_ns, restores)
                 VALUES (?1, ?2, ?3, ?4, 'replayed', 'observe', 2, ?5, ?6, ?7, ?8, 1)",
                params![
                    wid,
                    id,
                    w,
                    kernel,
                    start,
                    start + 9_000 + (w * 37 + run * 11) % 700,
                    3_000 + w * 5,
                    2_500 + (w * 13) % 300
                ],
            )
            .unwrap();
            match w % 3 {
                0 => c.execute(
                    "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id,
                       lock_drain_ns, snapshot_ns, window_ns, restore_ns, snap_ns)
                     VALUES (?1, ?1, ?2, ?3, ?4, 500, ?5, 2000, 400)",
                    params![id, wid, w, 1_500 + w * 3, 10_000 + w * 17 + run * 5],
                ),
                1 => c.execute(
                    "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id,
                       restore_ns, snap_ns, footprint_bytes)
                     VALUES (?1, ?1, ?2, ?3, 1900, 300, 65536)",
                    params![id, wid, w],
                ),
                _ => Ok(0),
            }
            .unwrap();
        }
        c.execute(
            "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, source,
               \"start\", \"end\")
             VALUES (?1, 900, 'k1', 'declined', 'untracked_memory', 'observe', 1900000, 1900400)",
            [id],
        )
        .unwrap();
        c.execute(
            "INSERT INTO krphase_dispatch (run_id, dispatch_id, \"start\", \"end\")
             VALUES (?1, 901, 1950000, 1950070)",
            [id],
        )
        .unwrap();
    }
}

fn database(dir: &std::path::Path) -> Connection {
    let mut c = crate::db::open(dir.join("k.db")).unwrap();
    synthetic_runs(&mut c, dir);
    join_log(&mut c, dir);
    observe_runs(&c);
    // The observe runs were written around krphase: summarised as a migration would.
    assert_eq!(summary::refresh_missing(&c).unwrap(), 3);
    c
}

/// Every answer whose figures come from the runs' windows, in every format.
fn answers(c: &Connection) -> Vec<String> {
    let runs = crate::db::runs::all_runs(c).unwrap();
    let reports: Vec<_> = runs.iter().map(|&r| run_report(c, r).unwrap()).collect();
    let mut out: Vec<String> = [Format::Json, Format::Table, Format::Csv, Format::Markdown]
        .into_iter()
        .map(|f| render(&reports, f).unwrap())
        .collect();
    for (a, b) in [("a", "b"), ("a", "obs"), ("obs", "b"), ("1", "4")] {
        let cmp = compare_builds(c, a, b, CompareWhat::Runs, 5.0).unwrap();
        out.push(serde_json::to_string_pretty(&cmp).unwrap());
        out.push(render_text(&cmp));
        out.push(render_csv(&cmp).unwrap());
        out.push(render_markdown(&cmp));
    }
    out
}

#[test]
fn summaries_answer_byte_for_byte_as_the_windows_do() {
    let dir = tempfile::tempdir().unwrap();
    let c = database(dir.path());
    let runs = crate::db::runs::all_runs(&c).unwrap();
    assert_eq!(runs.len(), 9);
    for &r in &runs {
        assert!(summary::present(&c, r).unwrap(), "run {r} has a summary");
    }
    // The joined log reached the summaries: run 1 has SDK figures, and a negative drain.
    let s = summary::load(&c, 1).unwrap().unwrap();
    let drain = &s.phases[crate::db::phases::index("drain").unwrap()];
    assert!(drain.windows > 0 && drain.at(0).unwrap() < 0, "{drain:?}");
    assert!(s.tallies.log_joined);
    let stored = answers(&c);
    c.execute("DELETE FROM krphase_run_stat", []).unwrap();
    for &r in &runs {
        assert!(!summary::present(&c, r).unwrap());
    }
    let windows = answers(&c);
    assert_eq!(stored.len(), windows.len());
    for (i, (s, w)) in stored.iter().zip(&windows).enumerate() {
        let first = s.lines().zip(w.lines()).find(|(x, y)| x != y);
        assert!(
            s == w,
            "answer {i}: the summary path differs from the window path, first at {first:?}"
        );
    }
    // The attribution and within-run paths were exercised, not only the tables.
    assert!(stored.iter().any(|s| s.contains("attribution")));
    assert!(stored[0].contains("\"sdk_phase_line\"") && stored[0].contains("\"dispatch\""));
}
