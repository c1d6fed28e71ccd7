//! Sharing the database file with other processes: how long a command waits for another one's
//! write lock, and errors that name the database they concern.
//!
//! Writers queue on SQLite's busy timeout (every transaction is IMMEDIATE, see `db::prepare`), so
//! concurrent imports take turns; a command gives up only when one write lock was held for the
//! whole wait, and then says which file and how long it waited.

use std::path::Path;
use std::time::Duration;

use rusqlite::ErrorCode;

/// The environment variable that sets the wait, in seconds.
pub const WAIT_VAR: &str = "KRPHASE_DB_WAIT_S";

/// The wait when [`WAIT_VAR`] is unset: long enough for another import of a large phase file to
/// finish, short enough that a process stuck holding the lock is reported.
const DEFAULT_WAIT: Duration = Duration::from_secs(120);

/// How long to wait for another process's lock on the database ([`WAIT_VAR`], else two minutes).
/// A value that is not a non-negative number of seconds is ignored.
pub fn wait() -> Duration {
    std::env::var(WAIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(DEFAULT_WAIT, Duration::from_secs_f64)
}

/// `e` with the database `path` named: a lock that outlasted the wait is replaced by one line
/// saying so and how long it waited; any other SQLite error (I/O, disk full, read-only, corrupt) gets the path in front
/// unless its message already names it. Errors that are not SQLite's are returned as they are.
pub fn name_database(e: anyhow::Error, path: &Path) -> anyhow::Error {
    let Some(sqlite) = e.chain().find_map(|c| c.downcast_ref::<rusqlite::Error>()) else {
        return e;
    };
    let shown = path.display().to_string();
    match sqlite.sqlite_error_code() {
        // The whole story in one line; SQLite's own text ("database is locked") adds nothing.
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => anyhow::anyhow!(
            "database {shown} stayed locked by another process for {} ({WAIT_VAR} sets the wait)",
            seconds(wait())
        ),
        _ if format!("{e:#}").contains(&shown) => e,
        _ => e.context(format!("database {shown}")),
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(path: &Path) -> anyhow::Error {
        let a = rusqlite::Connection::open(path).unwrap();
        a.execute_batch("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
            .unwrap();
        let b = rusqlite::Connection::open(path).unwrap();
        b.busy_timeout(Duration::from_millis(10)).unwrap();
        let e = b.execute("INSERT INTO t VALUES (2)", []).unwrap_err();
        drop(a);
        anyhow::Error::new(e).context("x.krp")
    }

    #[test]
    fn a_lock_names_the_database_and_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("shared.db");
        let msg = format!("{:#}", name_database(busy(&p), &p));
        assert!(msg.contains(&format!("database {}", p.display())), "{msg}");
        assert!(msg.contains("stayed locked by another process"), "{msg}");
        assert!(
            msg.contains(WAIT_VAR) && !msg.contains("Error code"),
            "{msg}"
        );
    }

    #[test]
    fn other_sqlite_errors_are_named_once_and_others_untouched() {
        let p = Path::new("some/where.db");
        let e = anyhow::Error::new(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
            None,
        ));
        let msg = format!("{:#}", name_database(e, p));
        assert!(msg.starts_with("database some/where.db: "), "{msg}");
        let named = anyhow::Error::new(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        ))
        .context("cannot write database some/where.db");
        let once = format!("{:#}", name_database(named, p));
        assert_eq!(once.matches("some/where.db").count(), 1, "{once}");
        let plain = anyhow::anyhow!("x.krp: bad magic at offset 0");
        assert_eq!(
            format!("{:#}", name_database(plain, p)),
            "x.krp: bad magic at offset 0"
        );
    }
}
