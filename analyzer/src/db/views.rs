//! The analyzer's SQL views, dropped and re-created on every open, and the check that they are
//! all present.

use anyhow::Result;
use rusqlite::Connection;

/// Views are dropped and re-created on every open, so a newer build's definitions always win
/// (an old `CREATE VIEW IF NOT EXISTS` would keep stale ones).
pub(super) const VIEWS: &str = r#"
DROP VIEW IF EXISTS krphase_window_phase;
CREATE VIEW krphase_window_phase AS
SELECT w.id AS window_id, w.run_id, w.dispatch_id, w.kernel, w.agent, w.queue, w.thread,
       w.outcome,
       CASE WHEN w.outcome = 'declined' AND l.reason IS NOT NULL THEN l.reason ELSE w.reason END AS reason,
       w.requested_passes, w.executed_passes,
       w."start", w."end", w.src AS source,
       -- Observe mode (no CONFIG pair: the window spans pass 0's enqueue to the last completion)
       -- takes the SDK's own window, pre-pass and drain from a joined phase line, when present.
       CASE WHEN w.src = 'observe' AND l.window_ns IS NOT NULL THEN l.window_ns
            ELSE w."end" - w."start" END AS window_ns,
       w.pass_count_return - w."start" AS config_ns,
       COALESCE(w.first_pass_enter - w.pass_count_return, l.lock_drain_ns + l.snapshot_ns) AS prepass_ns,
       COALESCE(l.snapshot_ns, l.snap_ns) AS snapshot_ns,
       COALESCE((w.first_pass_enter - w.pass_count_return) - COALESCE(l.snapshot_ns, l.snap_ns),
                l.lock_drain_ns) AS drain_ns,
       -- Restores inside the passes (`restore_placement`): the SDK's restore seconds leave them.
       CASE WHEN (w.src = 'drive' AND CASE WHEN l.restore_ns IS NOT NULL AND w.restore_ns IS NOT NULL THEN l.restore_ns - w.restore_ns > 100000 ELSE w.restore_in_pass = 1 END) AND l.restore_ns IS NOT NULL THEN w.pass_ns - l.restore_ns
            ELSE w.pass_ns END AS pass_ns,
       w.gpu_ns, w.continue_ns,
       -- Drive mode measures the restore (PASS EXIT or continue return to the next PASS ENTER);
       -- observe mode and restores inside the passes, only the SDK's (outcome line, 100 us) ...
       CASE WHEN w.src = 'observe' OR (w.src = 'drive' AND CASE WHEN l.restore_ns IS NOT NULL AND w.restore_ns IS NOT NULL THEN l.restore_ns - w.restore_ns > 100000 ELSE w.restore_in_pass = 1 END) THEN l.restore_ns ELSE w.restore_ns END AS restore_ns,
       -- ... and the gap between dispatch records, an upper bound on it.
       CASE WHEN w.src = 'observe' THEN w.restore_ns END AS restore_bound_ns,
       w.restores,
       -- In the next pass (after PASS ENTER): restore seconds over the gaps + 100 us, or callbacks.
       CASE WHEN (w.src = 'drive' AND CASE WHEN l.restore_ns IS NOT NULL AND w.restore_ns IS NOT NULL THEN l.restore_ns - w.restore_ns > 100000 ELSE w.restore_in_pass = 1 END) THEN 'in_pass'
            WHEN w.src = 'drive' AND w.restores > 0 THEN 'between_passes' END AS restore_placement,
       w."end" - w.last_pass_exit AS tail_ns, w.stuck_ns,
       COALESCE(l.snapshot_bytes, l.footprint_bytes, w.bytes_estimate) AS snapshot_bytes,
       l.id AS sdk_log_id,
       -- The basis of each figure above (db/basis.rs), decided by the same cases as its value.
       -- The phase line's format is the SDK's unpublished one: its figures say so.
       CASE WHEN w.pass_count_return IS NOT NULL THEN 'in_process'
            WHEN w.src = 'observe' AND l.window_ns IS NOT NULL THEN 'sdk_phase_line'
            WHEN w."end" - w."start" IS NOT NULL THEN 'dispatch' END AS window_basis,
       CASE WHEN w.pass_count_return - w."start" IS NOT NULL THEN 'in_process' END AS config_basis,
       CASE WHEN w.first_pass_enter - w.pass_count_return IS NOT NULL THEN 'in_process'
            WHEN l.lock_drain_ns + l.snapshot_ns IS NOT NULL THEN 'sdk_phase_line' END AS prepass_basis,
       CASE WHEN l.snapshot_ns IS NOT NULL THEN 'sdk_phase_line'
            WHEN l.snap_ns IS NOT NULL THEN 'sdk_log' END AS snapshot_basis,
       CASE WHEN (w.first_pass_enter - w.pass_count_return) - COALESCE(l.snapshot_ns, l.snap_ns)
                 IS NOT NULL THEN 'in_process_minus_sdk_log'
            WHEN l.lock_drain_ns IS NOT NULL THEN 'sdk_phase_line' END AS drain_basis,
       CASE WHEN w.pass_ns IS NOT NULL THEN CASE WHEN (w.src = 'drive' AND CASE WHEN l.restore_ns IS NOT NULL AND w.restore_ns IS NOT NULL THEN l.restore_ns - w.restore_ns > 100000 ELSE w.restore_in_pass = 1 END) AND l.restore_ns IS NOT NULL
            THEN 'in_process_minus_sdk_log' ELSE 'in_process' END END AS pass_basis,
       CASE WHEN w.gpu_ns IS NOT NULL THEN 'in_process' END AS gpu_basis,
       CASE WHEN w.continue_ns IS NOT NULL THEN 'in_process' END AS continue_basis,
       CASE WHEN w.src = 'observe' OR (w.src = 'drive' AND CASE WHEN l.restore_ns IS NOT NULL AND w.restore_ns IS NOT NULL THEN l.restore_ns - w.restore_ns > 100000 ELSE w.restore_in_pass = 1 END) THEN CASE WHEN l.restore_ns IS NOT NULL THEN 'sdk_log' END
            WHEN w.restore_ns IS NOT NULL THEN 'in_process' END AS restore_basis,
       CASE WHEN w.src = 'observe' AND w.restore_ns IS NOT NULL THEN 'dispatch' END AS restore_bound_basis,
       CASE WHEN w."end" - w.last_pass_exit IS NOT NULL THEN 'in_process' END AS tail_basis,
       CASE WHEN l.snapshot_bytes IS NOT NULL THEN 'sdk_phase_line'
            WHEN l.footprint_bytes IS NOT NULL THEN 'sdk_log'
            WHEN w.bytes_estimate IS NOT NULL THEN 'estimate' END AS snapshot_bytes_basis
FROM (SELECT *, COALESCE(source, CASE WHEN pass_count_return IS NULL AND first_pass_enter IS NULL
                                      THEN 'observe' ELSE 'drive' END) AS src
      FROM krphase_window) w
LEFT JOIN krphase_sdk_log l ON l.window_id = w.id;

DROP VIEW IF EXISTS krphase_run_summary;
CREATE VIEW krphase_run_summary AS
SELECT r.id AS run_id, r.label, r.pid, r.host, r.mode, r.passes, r.truncated,
       r."end" - r."start" AS wall_ns,
       (SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = r.id AND w.outcome = 'replayed') AS replayed,
       (SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = r.id AND w.outcome <> 'replayed') AS declined,
       (SELECT COUNT(*) FROM krphase_dispatch d WHERE d.run_id = r.id) AS plain_dispatches,
       (SELECT SUM(window_ns) FROM krphase_window_phase v WHERE v.run_id = r.id AND v.outcome = 'replayed') AS replay_window_ns,
       (SELECT SUM(prepass_ns) FROM krphase_window_phase v WHERE v.run_id = r.id) AS prepass_ns,
       (SELECT SUM(pass_ns) FROM krphase_window_phase v WHERE v.run_id = r.id) AS pass_ns,
       (SELECT SUM(continue_ns) FROM krphase_window_phase v WHERE v.run_id = r.id) AS continue_ns,
       (SELECT SUM(restore_ns) FROM krphase_window_phase v WHERE v.run_id = r.id) AS restore_ns,
       (SELECT SUM(tail_ns) FROM krphase_window_phase v WHERE v.run_id = r.id) AS tail_ns,
       (SELECT SUM(snapshot_bytes) FROM krphase_window_phase v WHERE v.run_id = r.id AND v.outcome = 'replayed') AS snapshot_bytes
FROM krphase_run r;

DROP VIEW IF EXISTS krphase_run_measurement;
CREATE VIEW krphase_run_measurement AS
SELECT mr.run_id, m.id AS measurement_id, m.source, m.experiment, m.variant, m.mode, m.detail,
       m.median_s, m.min_s, m.max_s, m.samples, m.failures, m.label AS measurement_label,
       m.metric, m.counter_groups, m.projected_s, m.speedup
FROM krphase_measurement_run mr JOIN krphase_measurement m ON m.id = mr.measurement_id;
"#;

/// Names of the views [`VIEWS`] creates.
const VIEW_NAMES: &[&str] = &[
    "krphase_window_phase",
    "krphase_run_summary",
    "krphase_run_measurement",
];

pub(super) fn views_present(conn: &Connection) -> Result<bool> {
    let mut n = 0;
    for v in VIEW_NAMES {
        n += conn.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = ?1",
            [v],
            |r| r.get::<_, i64>(0),
        )?;
    }
    Ok(n == VIEW_NAMES.len() as i64)
}
