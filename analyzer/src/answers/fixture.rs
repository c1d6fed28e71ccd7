//! A run every answer's tests can read: two replayed 2-pass windows and one decline, all times
//! known, and one plain dispatch.

use rusqlite::{Connection, params};

/// A run with two replayed 2-pass windows and one decline, all times known.
pub fn fixture() -> Connection {
    let c = crate::db::open_in_memory().unwrap();
    c.execute(
        "INSERT INTO krphase_run (id, path, file_hash, label, pid, \"start\", \"end\", truncated, imported_at)
         VALUES (1, 'f', 'h', 'x', 10, 0, 1000000, 0, 'now')",
        [],
    )
    .unwrap();
    // window: start, pcr, first enter, last exit, end, pass, gpu, restore, restores, bytes
    let ws: [[i64; 10]; 2] = [
        [1000, 1100, 2100, 4100, 4200, 1500, 1000, 500, 1, 1_000_000],
        [
            10000, 10100, 12100, 15100, 15300, 2000, 1200, 1000, 1, 1_000_000,
        ],
    ];
    for (i, w) in ws.iter().enumerate() {
        c.execute(
            "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, executed_passes,
               \"start\", pass_count_return, first_pass_enter, last_pass_exit, \"end\",
               pass_ns, gpu_ns, restore_ns, restores, bytes_estimate)
             VALUES (1, ?1, 'k', 'replayed', 'none', 2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![i as i64 + 1, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9]],
        )
        .unwrap();
    }
    c.execute(
        "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, \"start\", \"end\")
         VALUES (1, 3, 'k', 'declined', 'untracked_memory', 20000, 20400)",
        [],
    )
    .unwrap();
    c.execute(
        "INSERT INTO krphase_dispatch (run_id, dispatch_id, \"start\", \"end\") VALUES (1, 4, 30000, 30050)",
        [],
    )
    .unwrap();
    c
}
