use rusqlite::{Connection, params};

use super::*;
use crate::db::MIGRATIONS;

/// Run `id` with `n` replayed drive-mode windows (two kernels) and a decline, written by hand.
fn run(c: &Connection, id: i64, n: i64) {
    c.execute(
        "INSERT INTO krphase_run (id, path, file_hash, \"start\", \"end\", imported_at)
         VALUES (?1, 'p', ?2, 0, 10000000, 'then')",
        params![id, format!("h{id}")],
    )
    .unwrap();
    for w in 0..n {
        let t = w * 10_000;
        let pre = 1_000 + (w * 7919) % 977;
        c.execute(
            "INSERT INTO krphase_window (id, run_id, dispatch_id, kernel, outcome, executed_passes,
               \"start\", pass_count_return, first_pass_enter, last_pass_exit, \"end\", pass_ns,
               restore_ns, restores, bytes_estimate)
             VALUES (?1, ?2, ?3, ?4, 'replayed', 1, ?5, ?6, ?7, ?8, ?9, 500, 0, 0, 4096)",
            params![
                id * 100_000 + w,
                id,
                w,
                if w % 4 == 0 { "k1" } else { "k2" },
                t,
                t + 100,
                t + 100 + pre,
                t + 600 + pre,
                t + 700 + pre
            ],
        )
        .unwrap();
    }
    c.execute(
        "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, \"start\", \"end\")
         VALUES (?1, 99999, 'k1', 'declined', 'untracked_memory', 1, 2)",
        [id],
    )
    .unwrap();
}

/// A database at schema version 11 (before summaries) holding a run, as an older krphase left it.
fn version_11(path: &std::path::Path) {
    let c = Connection::open(path).unwrap();
    c.execute_batch(
        "CREATE TABLE krphase_schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL);",
    )
    .unwrap();
    for (i, m) in MIGRATIONS[..11].iter().enumerate() {
        c.execute_batch(m).unwrap();
        c.execute(
            "INSERT INTO krphase_schema_version VALUES (?1, 'then')",
            [i as i64 + 1],
        )
        .unwrap();
    }
    run(&c, 1, 301);
}

#[test]
fn migrating_a_version_11_database_summarises_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v11.db");
    version_11(&p);
    let c = crate::db::open(&p).unwrap();
    let s = load(&c, 1).unwrap().expect("summarised by the migration");
    assert_eq!(s, build(&c, 1).unwrap());
    assert_eq!((s.tallies.replayed, s.tallies.declined), (301, 1));
    let window = &s.phases[crate::db::phases::WINDOW];
    assert_eq!(window.windows, 301);
    // Per kernel: k1 has every fourth window; the kernels add up to the run.
    assert_eq!(s.kernels["k1"][crate::db::phases::WINDOW].windows, 76);
    let sum: i64 = s
        .kernels
        .values()
        .map(|k| k[crate::db::phases::WINDOW].total_ns)
        .sum();
    assert_eq!(sum, window.total_ns);
    drop(c);
    // Opening again writes nothing more.
    let c = crate::db::open(&p).unwrap();
    let n: i64 = c
        .query_row("SELECT COUNT(*) FROM krphase_run_stat", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

/// The kept ranks are the sorted values' at those ranks, whatever the order they arrive in.
#[test]
fn kept_ranks_are_the_sorted_values() {
    for n in [1usize, 2, 3, 10, 101, 1000, 4097] {
        let mut v: Vec<i64> = (0..n as i64)
            .map(|i| (i * 7_919 + 13) % 1_009 - 300)
            .collect();
        if n > 100 {
            // Past 2^31 ns (held 8 bytes a value from there on), and below -2^31.
            v[n / 2] = 3_000_000_000;
            v[n / 3] = -3_000_000_000;
        }
        let mut sorted = v.clone();
        sorted.sort_unstable();
        let s = build::tests_summarise(&v);
        assert_eq!(s.windows as usize, n);
        for r in needed_ranks(n) {
            assert_eq!(s.at(r), Some(sorted[r]), "n {n} rank {r}");
        }
        for q in QUANTILES {
            let exact = crate::db::quantiles::interpolated(n, *q, |i| sorted[i] as f64);
            assert_eq!(s.quantile(*q, false), exact, "n {n} q {q}");
        }
        assert_eq!(s.total_ns, sorted.iter().sum::<i64>());
        assert_eq!(s.positive_ns, sorted.iter().map(|x| x.max(&0)).sum::<i64>());
    }
}

/// What a summary summarises changes after import: the triggers drop it, so readers fall back to
/// the windows until a writer summarises the run again.
#[test]
fn a_change_to_what_it_summarises_drops_the_summary() {
    let c = crate::db::open_in_memory().unwrap();
    run(&c, 1, 20);
    run(&c, 2, 20);
    refresh_missing(&c).unwrap();
    let current = |run: i64| present(&c, run).unwrap();
    assert!(current(1) && current(2));
    c.execute(
        "INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at)
         VALUES (1, 'l', 'h', 1, 'now')",
        [],
    )
    .unwrap();
    c.execute(
        "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id, snapshot_ns)
         VALUES (1, 1, 100003, 3, 500)",
        [],
    )
    .unwrap();
    assert!(
        !current(1) && current(2),
        "a joined log line drops its run's summary"
    );
    refresh(&c, 1).unwrap();
    assert!(load(&c, 1).unwrap().unwrap().tallies.log_joined);
    let changes = [
        "UPDATE krphase_sdk_log SET window_id = NULL",
        "UPDATE krphase_window SET \"end\" = \"end\" + 1 WHERE id = 100004",
        "DELETE FROM krphase_window WHERE id = 100005",
        "UPDATE krphase_run SET window_lo = 100001 WHERE id = 1",
    ];
    for sql in changes {
        refresh(&c, 1).unwrap();
        c.execute(sql, []).unwrap();
        assert!(!current(1) && current(2), "{sql}");
    }
    // A relabel changes no figure: the summary stays.
    refresh(&c, 1).unwrap();
    c.execute("UPDATE krphase_run SET label = 'x' WHERE id = 1", [])
        .unwrap();
    assert!(current(1));
    // Deleting the run deletes its summary rows.
    c.execute("DELETE FROM krphase_run WHERE id = 2", [])
        .unwrap();
    let rows: i64 = c
        .query_row(
            "SELECT (SELECT COUNT(*) FROM krphase_phase_stat WHERE run_id = 2)
                  + (SELECT COUNT(*) FROM krphase_run_stat WHERE run_id = 2)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 0);
}

/// A summary of another version, or one missing a rank a printed quantile reads, is not used.
#[test]
fn an_incomplete_or_older_summary_is_not_used() {
    let c = crate::db::open_in_memory().unwrap();
    run(&c, 1, 50);
    refresh(&c, 1).unwrap();
    assert!(present(&c, 1).unwrap());
    c.execute(
        "UPDATE krphase_phase_stat SET ranks = substr(ranks, 17) WHERE kernel IS NULL
           AND phase = 'window'",
        [],
    )
    .unwrap();
    assert!(!present(&c, 1).unwrap(), "a rank missing");
    refresh(&c, 1).unwrap();
    c.execute("UPDATE krphase_run_stat SET version = version - 1", [])
        .unwrap();
    assert!(!present(&c, 1).unwrap(), "an older layout");
}
