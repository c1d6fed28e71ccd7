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

#[cfg(test)]
mod tests {
    use super::*;

    fn with_runs(runs: &[(i64, &str, i64, i64)]) -> Connection {
        let c = crate::db::open_in_memory().unwrap();
        for (i, (pid, host, s, e)) in runs.iter().enumerate() {
            c.execute(
                "INSERT INTO krphase_run (path, file_hash, pid, host, \"start\", \"end\", imported_at)
                 VALUES ('p', ?1, ?2, ?3, ?4, ?5, 'now')",
                rusqlite::params![format!("h{i}"), pid, host, s, e],
            )
            .unwrap();
        }
        c
    }

    fn process(pid: i64, start: i64, end: i64) -> Process {
        Process {
            guid: "g".into(),
            pid,
            hostname: "node".into(),
            start: Some(start),
            end: Some(end),
        }
    }

    #[test]
    fn pid_host_and_overlapping_time_prove_one_run() {
        let c = with_runs(&[
            (7, "node", 100, 200),
            (7, "node", 1_000, 2_000),
            (8, "other", 100, 200),
        ]);
        assert_eq!(run_of(&c, &process(7, 150, 250)).unwrap(), 1);
        assert_eq!(run_of(&c, &process(7, 1_500, 1_600)).unwrap(), 2);
        let reused = run_of(&c, &process(7, 300, 400)).unwrap_err().to_string();
        assert!(reused.contains("is another process"), "{reused}");
        let none = run_of(&c, &process(9, 100, 200)).unwrap_err().to_string();
        assert!(none.contains("no imported run is process 9"), "{none}");
        let other_host = run_of(&c, &process(8, 100, 200)).unwrap_err().to_string();
        assert!(other_host.contains("no imported run"), "{other_host}");
        let both = run_of(&c, &process(7, 150, 1_500)).unwrap_err().to_string();
        assert!(both.contains("several imported runs"), "{both}");
        let mut timeless = process(7, 0, 0);
        timeless.end = None;
        assert!(run_of(&c, &timeless).is_err());
    }
}
