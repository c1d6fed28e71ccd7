//! The run's own row: what the report shows of it (label, process, mode, wall time, rank), what
//! the tool dropped, and whether a log joined to its windows was forced past failed evidence.

use anyhow::{Result, bail};
use rusqlite::{Connection, OptionalExtension};

use super::{Drops, RankOf};

/// The `krphase_run` columns a report shows.
pub(super) struct RunInfo {
    pub(super) label: Option<String>,
    pub(super) pid: Option<i64>,
    pub(super) host: Option<String>,
    pub(super) command: Option<String>,
    pub(super) mode: Option<String>,
    pub(super) passes: Option<i64>,
    pub(super) truncated: bool,
    pub(super) wall_ns: Option<i64>,
    pub(super) rank: Option<RankOf>,
    pub(super) gpu_times_off: bool,
}

pub(super) fn run_info(conn: &Connection, run_id: i64) -> Result<RunInfo> {
    let info = conn
        .query_row(
            "SELECT label, pid, host, command, mode, passes, truncated, \"end\" - \"start\",
                    rank, world_size, rank_var, gpu_times_off
             FROM krphase_run WHERE id = ?1",
            [run_id],
            |r| {
                Ok(RunInfo {
                    label: r.get(0)?,
                    pid: r.get(1)?,
                    host: r.get(2)?,
                    command: r.get(3)?,
                    mode: r.get(4)?,
                    passes: r.get(5)?,
                    truncated: r.get::<_, i64>(6)? != 0,
                    wall_ns: r.get(7)?,
                    rank: r.get::<_, Option<i64>>(8)?.map(|rank| RankOf {
                        rank,
                        world_size: r.get(9).ok().flatten(),
                        var: r.get(10).ok().flatten(),
                    }),
                    gpu_times_off: r.get::<_, i64>(11)? != 0,
                })
            },
        )
        .optional()?;
    match info {
        Some(i) => Ok(i),
        None => bail!("unknown run id {run_id}"),
    }
}

pub(super) fn drops(conn: &Connection, run_id: i64) -> Result<Option<Drops>> {
    let d = conn.query_row(
        "SELECT dropped_dispatch, dropped_allocation, dropped_window, dropped_names, stall_ns,
                stalled
         FROM krphase_run WHERE id = ?1",
        [run_id],
        |r| {
            let n = |i: usize| -> rusqlite::Result<Option<u64>> {
                Ok(r.get::<_, Option<i64>>(i)?.map(|v| v.max(0) as u64))
            };
            Ok(n(0)?.map(|dispatch| -> rusqlite::Result<Drops> {
                Ok(Drops {
                    dispatch,
                    allocation: n(1)?.unwrap_or(0),
                    window: n(2)?.unwrap_or(0),
                    names: n(3)?.unwrap_or(0),
                    stall_ns: n(4)?.unwrap_or(0),
                    stalled: r.get::<_, Option<i64>>(5)?.unwrap_or(0) != 0,
                })
            }))
        },
    )?;
    Ok(d.transpose()?)
}

/// Whether a log joined to one of the run's windows was forced past failed evidence.
pub(super) fn log_join_forced(conn: &Connection, run_id: i64) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM krphase_sdk_log l JOIN krphase_log_file f ON f.id = l.log_file_id
           WHERE l.run_id = ?1 AND l.window_id IS NOT NULL AND f.forced <> 0)",
        [run_id],
        |r| r.get(0),
    )?)
}
