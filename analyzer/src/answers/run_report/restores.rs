//! Where a run's restores ran: between PASS EXIT and the next PASS ENTER (the published SDK's
//! order), or inside the next pass, after its PASS ENTER, ahead of its kernel (a device-side
//! snapshot's restore, #10916). The `krphase_window_phase` view decides it per window and
//! splits such passes with a joined SDK log; this counts its cases for the report's line.

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::phases::window_range;

/// The SDK log's resolution for `restore_seconds` (4 decimals): the view's threshold, ns.
pub const LOG_RESOLUTION_NS: i64 = 100_000;

/// How a run's drive-mode replayed windows with restores place them.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct RestorePlacement {
    /// Drive-mode replayed windows with at least one restore.
    pub windows: u64,
    /// Of them, windows whose restores ran inside the passes.
    pub in_pass: u64,
    /// ... so said by the order of the callbacks (import).
    pub by_callbacks: u64,
    /// ... so said by the SDK log: its restore seconds exceed the gaps between passes by more
    /// than its resolution (where a log line is joined, it decides).
    pub by_sdk_log: u64,
    /// ... and split: the SDK log's restore seconds taken out of pass exec.
    pub split: u64,
}

impl RestorePlacement {
    /// In-pass windows whose pass exec still holds their restores (no joined log line).
    pub fn unsplit(&self) -> u64 {
        self.in_pass - self.split
    }

    /// The report's line about restores inside passes; `None` when none ran there.
    pub fn line(&self) -> Option<String> {
        if self.in_pass == 0 {
            return None;
        }
        let by = match (self.by_callbacks > 0, self.by_sdk_log > 0) {
            (true, true) => "the order of the callbacks and the SDK log",
            (true, false) => "the order of the callbacks",
            _ => "the SDK log (its restore seconds exceed the gaps between passes)",
        };
        let head = format!(
            "restores ran inside the passes (after PASS ENTER, ahead of the kernel: a \
             device-side snapshot) in {} of {} windows with restores, by {by}",
            self.in_pass, self.windows
        );
        Some(if self.unsplit() == 0 {
            format!(
                "{head}; pass exec excludes them: restore is the SDK log's restore_seconds \
                 (100 us resolution), pass exec the rest"
            )
        } else {
            format!(
                "{head}; pass exec holds the restores of {} windows (no SDK log line to split \
                 them out: join the SDK log with krphase import-log); they are not host work",
                self.unsplit()
            )
        })
    }
}

/// Counts the placements of run `run_id`'s drive-mode replayed windows with restores, by the
/// view's rules (see `db/mod.rs`): one scan of the run's windows and their log lines.
pub fn restore_placement(conn: &Connection, run_id: i64) -> Result<RestorePlacement> {
    let Some((lo, hi)) = window_range(conn, run_id)? else {
        return Ok(RestorePlacement::default());
    };
    let logged = "(l.restore_ns IS NOT NULL AND w.restore_ns IS NOT NULL)";
    let in_pass = format!(
        "(CASE WHEN {logged} THEN l.restore_ns - w.restore_ns > {LOG_RESOLUTION_NS}
               ELSE w.restore_in_pass = 1 END)"
    );
    let sql = format!(
        "SELECT COUNT(*),
                COALESCE(SUM({in_pass}), 0),
                COALESCE(SUM({in_pass} AND w.restore_in_pass = 1), 0),
                COALESCE(SUM({in_pass} AND {logged}), 0),
                COALESCE(SUM({in_pass} AND l.restore_ns IS NOT NULL), 0)
         FROM krphase_window w LEFT JOIN krphase_sdk_log l ON l.window_id = w.id
         WHERE w.id BETWEEN ?2 AND ?3 AND w.run_id = ?1 AND w.outcome = 'replayed'
           AND w.restores > 0
           AND COALESCE(w.source, CASE WHEN w.pass_count_return IS NULL
                                        AND w.first_pass_enter IS NULL
                                       THEN 'observe' ELSE 'drive' END) = 'drive'"
    );
    let r = conn.query_row(&sql, [run_id, lo, hi], |r| {
        Ok(RestorePlacement {
            windows: r.get::<_, i64>(0)? as u64,
            in_pass: r.get::<_, i64>(1)? as u64,
            by_callbacks: r.get::<_, i64>(2)? as u64,
            by_sdk_log: r.get::<_, i64>(3)? as u64,
            split: r.get::<_, i64>(4)? as u64,
        })
    })?;
    Ok(r)
}
