//! Sharing the database file with other processes: how long a command waits for another one's
//! write lock, what it says while it waits, and errors that name the database they concern.
//!
//! Writers queue on a busy handler (every transaction is IMMEDIATE, see `db::prepare`), so
//! concurrent imports take turns. A wait that lasts [`FIRST_NOTICE`] prints one line on stderr
//! naming the database, the processes holding locks on it (from `/proc/locks`) and how long it
//! has waited, then one every [`NOTICE_EVERY`]; a command gives up only when one write lock was
//! held for the whole wait, and then says which file and how long it waited.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

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

/// A wait this long prints its first line.
pub const FIRST_NOTICE: Duration = Duration::from_secs(1);
/// Then a line this often.
pub const NOTICE_EVERY: Duration = Duration::from_secs(10);

/// The database the busy handler waits for, named in its lines (the analyzer opens one).
static WAITED_FOR: Mutex<Option<PathBuf>> = Mutex::new(None);

thread_local! {
    /// This thread's current wait: when it began and when it last printed a line.
    static WAIT: Cell<Option<(Instant, Option<Duration>)>> = const { Cell::new(None) };
}

/// Makes `conn` wait for other processes' locks on `path` for [`wait()`], saying so on stderr
/// while it waits.
pub fn wait_on_locks(conn: &Connection, path: &Path) -> rusqlite::Result<()> {
    if path != Path::new(":memory:")
        && let Ok(mut p) = WAITED_FOR.lock()
    {
        *p = Some(path.to_path_buf());
    }
    conn.busy_handler(Some(on_busy))
}

/// Whether a wait at `waited`, whose last line was printed at `printed`, prints one now.
pub fn notice_due(waited: Duration, printed: Option<Duration>) -> bool {
    match printed {
        None => waited >= FIRST_NOTICE,
        Some(at) => waited >= at + NOTICE_EVERY,
    }
}

/// SQLite's busy handler: `tries` is how often it was called for this lock. Sleeps a little
/// (as SQLite's own handler: short at first, then 100 ms), prints the wait's lines, and gives
/// up (false) once the wait is over.
fn on_busy(tries: i32) -> bool {
    const DELAYS_MS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
    let now = Instant::now();
    let (start, printed) = match WAIT.get() {
        Some(w) if tries > 0 => w,
        _ => (now, None),
    };
    let waited = now - start;
    let limit = wait();
    if waited >= limit {
        WAIT.set(None);
        return false;
    }
    let mut printed = printed;
    if notice_due(waited, printed) {
        let path = WAITED_FOR.lock().ok().and_then(|p| p.clone());
        eprintln!("{}", wait_line(path.as_deref(), waited, limit));
        printed = Some(waited);
    }
    WAIT.set(Some((start, printed)));
    let delay = Duration::from_millis(DELAYS_MS[(tries.max(0) as usize).min(DELAYS_MS.len() - 1)]);
    std::thread::sleep(delay.min(limit - waited));
    true
}

/// The line a wait prints: the database, who holds locks on it, how long so far.
fn wait_line(path: Option<&Path>, waited: Duration, limit: Duration) -> String {
    let Some(path) = path else {
        return format!(
            "waiting for another process's lock on the database: {} of {} so far",
            seconds(waited),
            seconds(limit)
        );
    };
    let holders = std::fs::read_to_string("/proc/locks")
        .ok()
        .and_then(|locks| lock_holders(&locks, path, std::process::id()))
        .unwrap_or_default();
    let who = if holders.is_empty() {
        "another process holds its lock (no holder in /proc/locks)".to_string()
    } else {
        let pids: Vec<String> = holders
            .iter()
            .map(|(pid, write)| format!("pid {pid}{}", if *write { " (write)" } else { "" }))
            .collect();
        format!("locked by {}", pids.join(", "))
    };
    format!(
        "waiting for database {}: {who}; waited {} of {} ({WAIT_VAR} sets the wait)",
        path.display(),
        seconds(waited),
        seconds(limit)
    )
}

/// The processes other than `own_pid` holding locks on the file at `path`, from the text of
/// `/proc/locks`, each with whether it holds a write lock, write holders first. `None` when the
/// file cannot be looked at.
pub fn lock_holders(locks: &str, path: &Path, own_pid: u32) -> Option<Vec<(u32, bool)>> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let dev = meta.dev();
    // Linux's dev_t: major in bits 8..20 and 32..44, minor in bits 0..8 and 20..32.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let mut holders: Vec<(u32, bool)> = Vec::new();
    for line in locks.lines() {
        // `1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 1073741825 1073741825`; a waiter's line has
        // `->` after the number and holds nothing.
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || f[1] == "->" {
            continue;
        }
        let mut id = f[5].split(':');
        let (Some(maj), Some(min), Some(ino)) = (id.next(), id.next(), id.next()) else {
            continue;
        };
        let same = u64::from_str_radix(maj, 16).ok() == Some(major)
            && u64::from_str_radix(min, 16).ok() == Some(minor)
            && ino.parse::<u64>().ok() == Some(meta.ino());
        let Ok(pid) = f[4].parse::<u32>() else {
            continue;
        };
        if !same || pid == own_pid {
            continue;
        }
        let write = f[3] == "WRITE";
        match holders.iter_mut().find(|(p, _)| *p == pid) {
            Some(h) => h.1 |= write,
            None => holders.push((pid, write)),
        }
    }
    holders.sort_by_key(|(pid, write)| (!*write, *pid));
    Some(holders)
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

    /// The first line at one second, then one every ten.
    #[test]
    fn lines_at_one_second_then_every_ten() {
        let s = Duration::from_secs_f64;
        assert!(!notice_due(s(0.99), None));
        assert!(notice_due(s(1.0), None));
        assert!(!notice_due(s(10.9), Some(s(1.0))));
        assert!(notice_due(s(11.0), Some(s(1.0))));
        assert!(notice_due(s(21.2), Some(s(11.1))));
    }

    /// `/proc/locks` lines on the file's device and inode count; others, waiters and this
    /// process's own do not; write holders come first.
    #[test]
    fn holders_are_read_from_proc_locks() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.db");
        std::fs::write(&p, b"x").unwrap();
        let m = std::fs::metadata(&p).unwrap();
        let dev = m.dev();
        let (maj, min) = (
            ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
            (dev & 0xff) | ((dev >> 12) & !0xff),
        );
        let id = format!("{maj:02x}:{min:02x}:{}", m.ino());
        let other = format!("{maj:02x}:{min:02x}:{}", m.ino() + 1);
        let locks = format!(
            "1: POSIX  ADVISORY  READ 300 {id} 1073741826 1073742335\n\
             1: -> POSIX  ADVISORY  WRITE 400 {id} 1073741825 1073741825\n\
             2: POSIX  ADVISORY  WRITE 200 {id} 1073741825 1073741825\n\
             2: POSIX  ADVISORY  READ 200 {id} 1073741826 1073742335\n\
             3: POSIX  ADVISORY  WRITE 500 {other} 0 EOF\n\
             4: POSIX  ADVISORY  WRITE 42 {id} 0 EOF\n"
        );
        assert_eq!(
            lock_holders(&locks, &p, 42).unwrap(),
            [(200, true), (300, false)]
        );
        assert_eq!(lock_holders(&locks, &dir.path().join("none"), 42), None);
    }

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
