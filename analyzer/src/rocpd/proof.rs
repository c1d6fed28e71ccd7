//! Which imported run a rocpd process is: the same pid on the same host, and time that
//! overlaps (the rocpd process's span, in the SDK's clock = CLOCK_BOOTTIME, against the run's
//! span in the phase file's). A pid is reused across boots and over time, so pid and host alone
//! prove nothing; neither does time alone.

use anyhow::{Result, bail};
use rusqlite::Connection;

/// One process of a rocpd database (a row of its `processes` view).
#[derive(Debug, Clone)]
pub struct Process {
    pub guid: String,
    pub pid: i64,
    pub hostname: String,
    pub start: Option<i64>,
    pub end: Option<i64>,
}

/// The processes of a rocpd database.
pub fn processes(rocpd: &Connection) -> Result<Vec<Process>> {
    let mut st = rocpd
        .prepare("SELECT guid, pid, hostname, start, \"end\" FROM processes ORDER BY guid, pid")?;
    let rows = st.query_map([], |r| {
        Ok(Process {
            guid: r.get(0)?,
            pid: r.get(1)?,
            hostname: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            start: r.get(3)?,
            end: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The run `p` is, or why none is (one line).
pub fn run_of(conn: &Connection, p: &Process) -> Result<i64> {
    let mut st = conn.prepare(
        "SELECT id, \"start\", \"end\" FROM krphase_run WHERE pid = ?1 AND host = ?2 ORDER BY id",
    )?;
    let same: Vec<(i64, Option<i64>, Option<i64>)> = st
        .query_map(rusqlite::params![p.pid, p.hostname], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if same.is_empty() {
        bail!(
            "no imported run is process {} on host {:?} (import its phase file first)",
            p.pid,
            p.hostname
        );
    }
    let (Some(ps), Some(pe)) = (p.start, p.end) else {
        bail!(
            "process {} on {:?} has no start/end in the rocpd database: its time cannot be matched to a run",
            p.pid,
            p.hostname
        );
    };
    let overlapping: Vec<i64> = same
        .iter()
        .filter(|(_, s, e)| matches!((s, e), (Some(s), Some(e)) if *s <= pe && ps <= *e))
        .map(|(id, _, _)| *id)
        .collect();
    match overlapping.as_slice() {
        [id] => Ok(*id),
        [] => bail!(
            "the rocpd database is another process: pid {} on {:?} ran {}..{} ns, which no imported run of that pid overlaps",
            p.pid,
            p.hostname,
            ps,
            pe
        ),
        ids => bail!(
            "process {} on {:?} overlaps several imported runs ({ids:?}); the rocpd database cannot be attached to one",
            p.pid,
            p.hostname
        ),
    }
}
