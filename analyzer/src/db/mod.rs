//! The analyzer database: rocpd-style `krphase_*` tables (BIGINT nanosecond `start`/`end`,
//! CLOCK_BOOTTIME), a schema version table, idempotent migrations, and the views that derive
//! per-window phases, per-run summaries and the run ↔ whole-run measurement join.

use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

pub mod basis;
pub mod benchmark;
pub mod calendar;
pub mod config_modes;
pub mod counters;
pub mod create;
pub mod emulated;
pub mod json_counters;
pub mod kernel_names;
pub mod launch_times;
pub mod locked;
pub mod measurements;
pub mod phases;
pub mod quantiles;
pub mod runs;
pub mod samples;
pub mod summary;
mod views;

/// Schema version this build writes. Each entry of [`MIGRATIONS`] moves the schema one step.
pub const SCHEMA_VERSION: i64 = 17;

/// Ordered migrations; migration `i` takes the schema from version `i` to `i + 1`.
/// Migrations run in one immediate transaction from the version recorded when it began, so each
/// runs once per database however many processes open it at the same time.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE IF NOT EXISTS krphase_run (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    file_hash TEXT NOT NULL UNIQUE,     -- the phase file's content hash: import is idempotent by content
    label TEXT,
    pid INTEGER, ppid INTEGER, host TEXT, command TEXT,
    sdk_version TEXT, format_version INTEGER,
    mode TEXT, passes INTEGER, layout TEXT, kernel_filter TEXT,
    clock_boottime_ns BIGINT, clock_realtime_ns BIGINT, -- the clock pair taken at tool start
    "start" BIGINT, "end" BIGINT,       -- first and last event timestamp in the file
    truncated INTEGER NOT NULL DEFAULT 0,
    events INTEGER,
    trailer_windows INTEGER, trailer_declines INTEGER, trailer_dispatches INTEGER,
    trailer_dropped INTEGER,
    window_lo INTEGER, window_hi INTEGER, -- the run's contiguous krphase_window id range
    imported_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS krphase_window (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES krphase_run(id) ON DELETE CASCADE,
    dispatch_id BIGINT NOT NULL, correlation_id BIGINT, kernel_id BIGINT, kernel TEXT,
    agent BIGINT, queue BIGINT, thread BIGINT,
    outcome TEXT NOT NULL,              -- replayed | declined (SDK) | opt_out (tool) | ...
    reason TEXT NOT NULL DEFAULT 'none',
    requested_passes INTEGER, executed_passes INTEGER,
    "start" BIGINT, "end" BIGINT,       -- CONFIG ENTER .. CONFIG EXIT
    pass_count_return BIGINT,           -- replay_pass_count returned
    first_pass_enter BIGINT, last_pass_exit BIGINT,
    -- Aggregates over the window's passes, computed once at import (see import.rs):
    pass_ns BIGINT, gpu_ns BIGINT, restore_ns BIGINT, restores INTEGER,
    bytes_estimate BIGINT, bytes_tracked BIGINT, bytes_module BIGINT, bytes_upper BIGINT,
    regions INTEGER
);
CREATE INDEX IF NOT EXISTS krphase_window_run ON krphase_window(run_id, dispatch_id);
CREATE TABLE IF NOT EXISTS krphase_pass (
    window_id INTEGER NOT NULL REFERENCES krphase_window(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    pass_index INTEGER NOT NULL,
    "start" BIGINT, "end" BIGINT,       -- PASS ENTER .. PASS EXIT (host)
    gpu_start BIGINT, gpu_end BIGINT,   -- the pass's kernel on the GPU
    restore_start BIGINT, restore_end BIGINT, -- the restore that follows this pass (PASS EXIT .. next ENTER)
    PRIMARY KEY (window_id, pass_index)
) WITHOUT ROWID; -- clustered by window: a run's passes are one contiguous range
CREATE TABLE IF NOT EXISTS krphase_dispatch (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES krphase_run(id) ON DELETE CASCADE,
    dispatch_id BIGINT, correlation_id BIGINT, kernel TEXT,
    agent BIGINT, queue BIGINT, thread BIGINT,
    had_config INTEGER NOT NULL DEFAULT 0, -- a CONFIG pair (opt-out or SDK decline) preceded it
    "start" BIGINT, "end" BIGINT,       -- enqueue callbacks: the non-replayed dispatch tax
    gpu_start BIGINT, gpu_end BIGINT
);
CREATE INDEX IF NOT EXISTS krphase_dispatch_run ON krphase_dispatch(run_id, dispatch_id);
CREATE TABLE IF NOT EXISTS krphase_log_file (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL, file_hash TEXT NOT NULL,
    run_id INTEGER REFERENCES krphase_run(id) ON DELETE SET NULL,
    lines INTEGER, outcome_lines INTEGER, phase_lines INTEGER, skipped_lines INTEGER,
    joined INTEGER, imported_at TEXT NOT NULL,
    UNIQUE (file_hash, run_id)
);
CREATE TABLE IF NOT EXISTS krphase_sdk_log (
    id INTEGER PRIMARY KEY,
    log_file_id INTEGER NOT NULL REFERENCES krphase_log_file(id) ON DELETE CASCADE,
    run_id INTEGER, window_id INTEGER,  -- joined by pid + dispatch id
    pid INTEGER, dispatch_id BIGINT NOT NULL,
    outcome TEXT, reason TEXT, requested_passes INTEGER, executed_passes INTEGER,
    footprint_bytes BIGINT, footprint_regions INTEGER,
    untracked_vmem_bytes BIGINT, untracked_vmem_regions INTEGER,
    untracked_pool_bytes BIGINT, untracked_pool_regions INTEGER,
    snap_ns BIGINT, restore_ns BIGINT, reentrancy INTEGER,        -- outcome line
    lock_drain_ns BIGINT, snapshot_ns BIGINT, snapshot_bytes BIGINT, snapshot_regions INTEGER,
    passes INTEGER, passes_ns BIGINT, restores INTEGER, restores_ns BIGINT, window_ns BIGINT, -- phase line
    UNIQUE (log_file_id, pid, dispatch_id)
);
CREATE INDEX IF NOT EXISTS krphase_sdk_log_window ON krphase_sdk_log(window_id);
CREATE TABLE IF NOT EXISTS krphase_measurement (
    id INTEGER PRIMARY KEY, source TEXT, experiment TEXT, variant TEXT, mode TEXT,
    detail TEXT, median_s REAL, min_s REAL, max_s REAL, peak_child_rss_kib INTEGER, samples INTEGER,
    failures TEXT, command TEXT, outdir TEXT, label TEXT, imported_at TEXT
);
CREATE TABLE IF NOT EXISTS krphase_measurement_run (
    measurement_id INTEGER, run_id INTEGER, PRIMARY KEY (measurement_id, run_id)
);
"#,
    // 2: the continue phase (PASS EXIT -> replay_continue return; restore_* is now the rest of
    // the gap) and stuck passes (`pass_drain_stuck`). Older rows keep NULL / 0.
    r#"
ALTER TABLE krphase_window ADD COLUMN continue_ns BIGINT;  -- sum of the continue phases
ALTER TABLE krphase_window ADD COLUMN stuck_ns BIGINT;     -- stuck pass ENTER .. CONFIG EXIT
ALTER TABLE krphase_pass ADD COLUMN incomplete INTEGER NOT NULL DEFAULT 0; -- ENTER without EXIT
ALTER TABLE krphase_pass ADD COLUMN continue_ns BIGINT;    -- this PASS EXIT .. continue return
"#,
    // 3: the phase file's format minor (format_version holds its major) and the reader's note
    // of what it skipped (a newer minor's additions) or emitted before it was complete.
    r#"
ALTER TABLE krphase_run ADD COLUMN format_minor INTEGER;
ALTER TABLE krphase_run ADD COLUMN reader_note TEXT;
"#,
    // 4: whole-run measurements carry what the report shows of them: the metric, the counter
    // group count, and the seed's own projection and speedup (benchmark databases' replay view).
    // Older rows keep NULL; the report reads those from `detail` or the command. The views also
    // gained the basis of every phase.
    r#"
ALTER TABLE krphase_measurement ADD COLUMN metric TEXT;           -- wall_time | cpu_time
ALTER TABLE krphase_measurement ADD COLUMN counter_groups INTEGER;
ALTER TABLE krphase_measurement ADD COLUMN projected_s REAL;      -- application_replay_projected
ALTER TABLE krphase_measurement ADD COLUMN speedup REAL;          -- speedup vs application replay
"#,
    // 5: proven log joins. The run's local UTC offset (header; NULL unknown) and finalize time
    // (trailer, BOOTTIME) bound where its SDK log lines can be stamped; a log file row records
    // the evidence its join rests on, and whether it was forced past failed evidence; each log
    // record keeps its line's thread id and UTC stamp.
    r#"
ALTER TABLE krphase_run ADD COLUMN utc_offset_s INTEGER;
ALTER TABLE krphase_run ADD COLUMN finalize_ns BIGINT;
ALTER TABLE krphase_log_file ADD COLUMN forced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE krphase_log_file ADD COLUMN evidence TEXT;
ALTER TABLE krphase_sdk_log ADD COLUMN tid BIGINT;
ALTER TABLE krphase_sdk_log ADD COLUMN stamp_utc_ns BIGINT;
"#,
    // 6: observe mode's figures named for what they are. A window records whether it was driven
    // (PASS callbacks) or observed (dispatch records only); a pass the host time of its
    // COMPLETE callback (format 2.0's COMPLETE_HOST). An observed window's `restore_ns` is the
    // gap from a pass's completion to the next enqueue: the view shows it as `restore_bound_ns`
    // and takes the restore from the SDK's outcome line. Older rows keep NULL (the view infers
    // the source from the missing PASS boundaries).
    r#"
ALTER TABLE krphase_window ADD COLUMN source TEXT;          -- drive | observe
ALTER TABLE krphase_pass ADD COLUMN complete_host BIGINT;   -- host time at the COMPLETE callback
"#,
    // 7: counter values per pass, from the SDK's dispatch counting service (drive mode with
    // KRPHASE_PMC: format 2.0's COUNTER_VALUE). One row per counter of a pass's group, its
    // dimension instances summed by the tool. `window_id` is NULL for a value whose dispatch has
    // no window in the run (a dispatch counted once, or a record whose window was lost).
    r#"
CREATE TABLE IF NOT EXISTS krphase_counter (
    run_id INTEGER NOT NULL REFERENCES krphase_run(id) ON DELETE CASCADE,
    window_id INTEGER REFERENCES krphase_window(id) ON DELETE CASCADE,
    dispatch_id BIGINT NOT NULL,
    pass_index INTEGER NOT NULL,
    counter_id BIGINT NOT NULL,         -- the SDK's counter id
    name TEXT,                          -- from the file's string table (NULL: not named)
    value REAL NOT NULL,                -- summed over the counter's dimension instances
    instances INTEGER NOT NULL          -- instance records summed (saturating at 255)
);
CREATE INDEX IF NOT EXISTS krphase_counter_window ON krphase_counter(window_id, pass_index);
CREATE INDEX IF NOT EXISTS krphase_counter_run ON krphase_counter(run_id, dispatch_id);
"#,
    // 8: build against build. Each successful timed run of a whole-run measurement keeps its
    // value (bench's runs, a benchmark database's metrics rows), so `compare` can put an
    // interval on a ratio of medians; a CSV carries only median, min and max, and keeps none.
    r#"
CREATE TABLE IF NOT EXISTS krphase_measurement_sample (
    measurement_id INTEGER NOT NULL REFERENCES krphase_measurement(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,                 -- the timed run's order within its measurement
    value_s REAL NOT NULL,                -- the row's metric for that run (seconds)
    PRIMARY KEY (measurement_id, seq)
);
"#,
    // 9: what the tool dropped, by kind, and how long the application waited on its output
    // (the trailer's counters; `trailer_dropped` keeps the records' sum). Older rows keep NULL.
    r#"
ALTER TABLE krphase_run ADD COLUMN dropped_dispatch BIGINT;
ALTER TABLE krphase_run ADD COLUMN dropped_allocation BIGINT;
ALTER TABLE krphase_run ADD COLUMN dropped_window BIGINT;
ALTER TABLE krphase_run ADD COLUMN dropped_names BIGINT;
ALTER TABLE krphase_run ADD COLUMN stall_ns BIGINT;          -- the application's wait on the output
ALTER TABLE krphase_run ADD COLUMN stalled INTEGER;          -- the tool's wait budget ran out
"#,
    // 10: the launches behind an imported CSV row. replay_perf.py writes its warm-up launches'
    // output into the timed runs' directory: their phase files are kept apart (never in a
    // statistic), and each linked run may record the timed launch it belongs to (one rocprofv3
    // command: several files under application replay); a run without one is its own launch.
    r#"
CREATE TABLE IF NOT EXISTS krphase_measurement_launch (
    measurement_id INTEGER NOT NULL REFERENCES krphase_measurement(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    launch INTEGER NOT NULL,
    PRIMARY KEY (measurement_id, run_id)
);
-- The modes a benchmark database's config row mixes (NULL: one mode, or not recorded).
ALTER TABLE krphase_measurement ADD COLUMN mixed_modes TEXT;
CREATE TABLE IF NOT EXISTS krphase_measurement_warmup (
    measurement_id INTEGER NOT NULL REFERENCES krphase_measurement(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    PRIMARY KEY (measurement_id, run_id)
);
"#,
    // 11: interleaved builds (`krphase bench --build`). A measurement keeps the order its
    // builds' runs were interleaved in, as text for a reader (and a pull request's provenance),
    // and each timed run its place in that order.
    r#"
ALTER TABLE krphase_measurement ADD COLUMN run_order TEXT;
ALTER TABLE krphase_measurement_sample ADD COLUMN position INTEGER;
"#,
    // 12: per-run summaries (`summary/`): what report and compare print of a run's windows, kept
    // so they need not read every window. A run's `krphase_run_stat` row marks its summary
    // current; its phase and pass rows go with it. The triggers delete a run's summary whenever
    // what it summarises changes after import (the next writer, or a reader falling back to the
    // windows, takes over). Runs already stored are summarised when this migration runs.
    r#"
CREATE TABLE IF NOT EXISTS krphase_run_stat (
    run_id INTEGER PRIMARY KEY REFERENCES krphase_run(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,           -- the summary layout (summary::SUMMARY_VERSION)
    replayed INTEGER NOT NULL, declined INTEGER NOT NULL,
    declined_without_plain INTEGER NOT NULL, -- declines without a plain dispatch of their own
    stuck INTEGER NOT NULL, stuck_ns BIGINT NOT NULL,
    declined_ns BIGINT NOT NULL, opt_out_windows INTEGER NOT NULL, opt_out_ns BIGINT NOT NULL,
    snapshot_bytes BIGINT NOT NULL, restore_bytes BIGINT NOT NULL, log_joined INTEGER NOT NULL,
    executed_passes BIGINT NOT NULL, restores BIGINT NOT NULL,
    observed INTEGER NOT NULL,          -- replayed windows whose window is not in process
    spans INTEGER NOT NULL,             -- ... and that are only the passes' span
    declines_by_reason TEXT NOT NULL,   -- JSON: reason -> windows
    bytes_bases TEXT NOT NULL,          -- JSON: basis -> replayed windows
    plain_all INTEGER NOT NULL, plain_without_config INTEGER NOT NULL,
    plain_without_config_ns BIGINT NOT NULL, plain_timed INTEGER NOT NULL, plain_timed_ns BIGINT
);
CREATE TABLE IF NOT EXISTS krphase_phase_stat (
    run_id INTEGER NOT NULL REFERENCES krphase_run_stat(run_id) ON DELETE CASCADE,
    kernel TEXT,                        -- NULL: every kernel of the run
    phase TEXT NOT NULL,                -- a phase's name, or 'rest' (window minus its phases)
    windows INTEGER NOT NULL,           -- replayed windows carrying the phase
    total_ns BIGINT NOT NULL, positive_ns BIGINT NOT NULL, -- sum; sum clamped at zero
    sum_sq REAL NOT NULL,
    min_ns BIGINT, max_ns BIGINT,
    ranks BLOB NOT NULL,                -- exact order statistics: (rank u64, value i64) LE pairs
    bases TEXT NOT NULL                 -- JSON: basis -> windows
);
CREATE INDEX IF NOT EXISTS krphase_phase_stat_run ON krphase_phase_stat(run_id, kernel, phase);
CREATE TABLE IF NOT EXISTS krphase_pass_stat (
    run_id INTEGER NOT NULL REFERENCES krphase_run_stat(run_id) ON DELETE CASCADE,
    pass_index INTEGER NOT NULL,
    passes INTEGER NOT NULL, host_passes INTEGER NOT NULL, host_ns BIGINT NOT NULL,
    gpu_ns BIGINT NOT NULL,
    PRIMARY KEY (run_id, pass_index)
);
CREATE TRIGGER IF NOT EXISTS krphase_stale_log_insert AFTER INSERT ON krphase_sdk_log
WHEN NEW.window_id IS NOT NULL BEGIN
    DELETE FROM krphase_run_stat WHERE run_id = (SELECT run_id FROM krphase_window WHERE id = NEW.window_id);
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_log_update AFTER UPDATE ON krphase_sdk_log BEGIN
    DELETE FROM krphase_run_stat WHERE run_id IN
        (SELECT run_id FROM krphase_window WHERE id IN (OLD.window_id, NEW.window_id));
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_log_delete AFTER DELETE ON krphase_sdk_log
WHEN OLD.window_id IS NOT NULL BEGIN
    DELETE FROM krphase_run_stat WHERE run_id = (SELECT run_id FROM krphase_window WHERE id = OLD.window_id);
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_window_update AFTER UPDATE ON krphase_window BEGIN
    DELETE FROM krphase_run_stat WHERE run_id IN (OLD.run_id, NEW.run_id);
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_window_delete AFTER DELETE ON krphase_window BEGIN
    DELETE FROM krphase_run_stat WHERE run_id = OLD.run_id;
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_pass_update AFTER UPDATE ON krphase_pass BEGIN
    DELETE FROM krphase_run_stat WHERE run_id IN (OLD.run_id, NEW.run_id);
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_pass_delete AFTER DELETE ON krphase_pass BEGIN
    DELETE FROM krphase_run_stat WHERE run_id = OLD.run_id;
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_dispatch_update AFTER UPDATE ON krphase_dispatch BEGIN
    DELETE FROM krphase_run_stat WHERE run_id IN (OLD.run_id, NEW.run_id);
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_dispatch_delete AFTER DELETE ON krphase_dispatch BEGIN
    DELETE FROM krphase_run_stat WHERE run_id = OLD.run_id;
END;
CREATE TRIGGER IF NOT EXISTS krphase_stale_run_range AFTER UPDATE OF window_lo, window_hi
ON krphase_run BEGIN
    DELETE FROM krphase_run_stat WHERE run_id = NEW.id;
END;
"#,
    // 13: the process's rank in a parallel job (format 3.1 headers): the launcher's rank, the
    // job's size and the variable they came from. NULL: not launched as a rank, or an older file.
    r#"
ALTER TABLE krphase_run ADD COLUMN rank INTEGER;
ALTER TABLE krphase_run ADD COLUMN world_size INTEGER;
ALTER TABLE krphase_run ADD COLUMN rank_var TEXT;
CREATE INDEX IF NOT EXISTS krphase_run_rank ON krphase_run(rank);
"#,
    // 14: a rocprofv3 rocpd database attached to the run it proves (`import-rocpd`): its
    // dispatch rows and counter rows by dispatch id. rocpd keeps no pass number: a dispatch row
    // carries the first pass's record, and a counter collected in several passes has several
    // rows (`occurrence` numbers them in rocpd's row order).
    r#"
CREATE TABLE IF NOT EXISTS krphase_rocpd_file (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES krphase_run(id) ON DELETE CASCADE,
    guid TEXT NOT NULL,                 -- the rocpd process's guid: re-import replaces its rows
    path TEXT NOT NULL, schema_version TEXT NOT NULL,
    pid INTEGER, host TEXT, "start" BIGINT, "end" BIGINT, -- the rocpd process (SDK clock)
    dispatches INTEGER NOT NULL, matched INTEGER NOT NULL, counter_rows INTEGER NOT NULL,
    imported_at TEXT NOT NULL,
    UNIQUE (guid, run_id)
);
CREATE TABLE IF NOT EXISTS krphase_rocpd_dispatch (
    rocpd_file_id INTEGER NOT NULL REFERENCES krphase_rocpd_file(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    window_id INTEGER REFERENCES krphase_window(id) ON DELETE SET NULL, -- by dispatch id
    pass_index INTEGER,                 -- the window's pass whose GPU span holds `start`
    rocpd_id INTEGER,                   -- rocpd_kernel_dispatch.id
    dispatch_id BIGINT NOT NULL, kernel_id BIGINT, kernel TEXT,
    agent_abs_index INTEGER, queue_id INTEGER,
    "start" BIGINT, "end" BIGINT        -- as rocpd has them (SDK clock)
);
CREATE INDEX IF NOT EXISTS krphase_rocpd_dispatch_run ON krphase_rocpd_dispatch(run_id, window_id);
CREATE TABLE IF NOT EXISTS krphase_rocpd_counter (
    rocpd_file_id INTEGER NOT NULL REFERENCES krphase_rocpd_file(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    window_id INTEGER REFERENCES krphase_window(id) ON DELETE SET NULL,
    rocpd_id INTEGER,                   -- rocpd_pmc_event.id
    dispatch_id BIGINT NOT NULL,
    counter TEXT NOT NULL, value REAL NOT NULL,
    occurrence INTEGER NOT NULL         -- 0, 1, ...: this counter's rows for this dispatch
);
CREATE INDEX IF NOT EXISTS krphase_rocpd_counter_run ON krphase_rocpd_counter(run_id, window_id);
"#,
    // 15: where a drive-mode window's restores ran by the order of its callbacks (1: inside the
    // next pass, after its PASS ENTER; 0: between passes; NULL: no restores or no evidence).
    "ALTER TABLE krphase_window ADD COLUMN restore_in_pass INTEGER;",
    // 16: drive mode run without dispatch tracing (`KRPHASE_GPU_TIMES=0`, the file's NOTICE 7):
    // no dispatch records and no GPU times, by request. 0: traced (every older file).
    r#"
ALTER TABLE krphase_run ADD COLUMN gpu_times_off INTEGER NOT NULL DEFAULT 0;
"#,
    // 17: rocprofv3's JSON counters and the tool's notes (`json_counters.rs`).
    json_counters::MIGRATION,
];

/// Opens (creating if needed) and migrates the database at `path`.
///
/// A file that is not SQLite, or a SQLite database that already holds other tables but no
/// krphase schema, is refused with one line and left untouched. Commands that may create the
/// database go through [`create::write_with`], so that a failed one leaves no file behind.
pub fn open(path: impl AsRef<Path>) -> Result<Connection> {
    let path = path.as_ref();
    let mut conn = Connection::open(path)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    prepare(&mut conn, path)?;
    Ok(conn)
}

/// A fresh in-memory database with the schema (tests, synthetic benchmarks).
pub fn open_in_memory() -> Result<Connection> {
    let mut conn = Connection::open_in_memory()?;
    prepare(&mut conn, Path::new(":memory:"))?;
    Ok(conn)
}

/// Opens a database that must already exist and hold the krphase tables (read-only commands).
pub fn open_existing(path: impl AsRef<Path>) -> Result<Connection> {
    let path = path.as_ref();
    if !path.is_file() {
        bail!(
            "database {} does not exist (run `krphase import` first)",
            path.display()
        );
    }
    let mut conn = Connection::open(path)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    locked::wait_on_locks(&conn, path)?;
    if current_version(&conn, path)?.is_none() {
        bail!("database {} has no krphase tables", path.display());
    }
    prepare(&mut conn, path)?;
    Ok(conn)
}

/// The schema version recorded in the database, `None` when it has no krphase schema.
/// Errors when the file is not a SQLite database.
fn current_version(conn: &Connection, path: &Path) -> Result<Option<i64>> {
    let has_table: bool = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'krphase_schema_version'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| not_a_db(e, path))?
        > 0;
    if !has_table {
        return Ok(None);
    }
    let v = conn
        .query_row("SELECT MAX(version) FROM krphase_schema_version", [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .optional()
        .with_context(|| format!("database {}: cannot read schema version", path.display()))?
        .flatten();
    Ok(Some(v.unwrap_or(0)))
}

/// A failure to read the schema: "not a database" when SQLite says so; a lock or I/O error is
/// passed on as what it is (it says nothing about the file's content).
fn not_a_db(e: rusqlite::Error, path: &Path) -> anyhow::Error {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match e.sqlite_error_code() {
        Some(NotADatabase | DatabaseCorrupt) => {
            anyhow::anyhow!("{} is not a usable SQLite database ({e})", path.display())
        }
        _ => anyhow::Error::new(e).context(format!("database {}", path.display())),
    }
}

/// The recorded schema version (0: none yet), refusing someone else's database and one newer
/// than this build.
fn schema_version(conn: &Connection, path: &Path) -> Result<i64> {
    let version = match current_version(conn, path)? {
        Some(v) => v,
        None => {
            let foreign: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'krphase_%' AND name NOT LIKE 'sqlite_%'",
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| not_a_db(e, path))?;
            let ours: i64 = conn.query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'krphase_%'",
                [],
                |r| r.get(0),
            )?;
            if foreign > 0 && ours == 0 {
                bail!(
                    "database {} lacks the krphase tables (it holds other tables; refusing to add ours)",
                    path.display()
                );
            }
            0
        }
    };
    if version > SCHEMA_VERSION {
        bail!(
            "database {} has schema version {version}, newer than this krphase ({SCHEMA_VERSION})",
            path.display()
        );
    }
    Ok(version)
}

/// Sets the connection up for sharing the file with other processes and migrates the schema.
///
/// Every transaction on the connection is IMMEDIATE: it takes the write lock when it begins (a
/// waiter queues on the busy timeout) instead of reading first and failing at once with "database
/// is locked" when it tries to write after another process did.
fn prepare(conn: &mut Connection, path: &Path) -> Result<()> {
    crate::db::kernel_names::register(conn)?;
    locked::wait_on_locks(conn, path)?;
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    if schema_version(conn, path)? == SCHEMA_VERSION && views::views_present(conn)? {
        // Up to date: write nothing, so read-only commands leave the file byte for byte as it
        // was. (A build that changes the views adds a migration, bumping the version.)
        conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        return Ok(());
    }
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    let tx = conn.transaction()?;
    // Read again under the write lock: another process may have migrated since the check above.
    let version = schema_version(&tx, path)?;
    tx.execute_batch("CREATE TABLE IF NOT EXISTS krphase_schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL);")?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)
            .with_context(|| format!("database {}: migration {} failed", path.display(), i + 1))?;
        tx.execute(
            "INSERT INTO krphase_schema_version (version, applied_at) VALUES (?1, ?2)",
            rusqlite::params![i as i64 + 1, now_utc()],
        )?;
    }
    tx.execute_batch(views::VIEWS)?;
    if version < SCHEMA_VERSION {
        // Migrated: summarise the runs stored before (and any a summary change left stale).
        summary::refresh_missing(&tx)
            .with_context(|| format!("database {}: cannot summarise its runs", path.display()))?;
    }
    tx.commit()?;
    Ok(())
}

pub use calendar::now_utc;

#[cfg(test)]
mod tests {
    use super::*;

    fn table_count(c: &Connection) -> i64 {
        c.query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'krphase_%'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    }

    #[test]
    fn open_creates_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.db");
        let n1 = table_count(&open(&p).unwrap());
        let c = open(&p).unwrap();
        assert_eq!(table_count(&c), n1);
        let versions: i64 = c
            .query_row("SELECT COUNT(*) FROM krphase_schema_version", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(versions, SCHEMA_VERSION);
        for t in [
            "krphase_measurement",
            "krphase_measurement_run",
            "krphase_window_phase",
        ] {
            let n: i64 = c
                .query_row(
                    "SELECT COUNT(*) FROM sqlite_master WHERE name = ?1",
                    [t],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "{t}");
        }
    }

    /// A version-1 database (before the continue phase) migrates in place and keeps its rows.
    #[test]
    fn version_1_database_migrates_and_keeps_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v1.db");
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute_batch(
                "CREATE TABLE krphase_schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL);
                 INSERT INTO krphase_schema_version VALUES (1, 'then');
                 INSERT INTO krphase_run (id, path, file_hash, imported_at) VALUES (1, 'p', 'h', 'then');
                 INSERT INTO krphase_window (id, run_id, dispatch_id, outcome, \"start\", \"end\",
                   pass_count_return, restore_ns, restores)
                   VALUES (5, 1, 9, 'replayed', 100, 900, 150, 300, 1);
                 INSERT INTO krphase_pass (window_id, run_id, pass_index, \"start\", \"end\")
                   VALUES (5, 1, 0, 200, 400), (5, 1, 1, 700, 800);",
            )
            .unwrap();
            // The version-1 view, as an old build left it.
            c.execute_batch(
                "CREATE VIEW krphase_window_phase AS SELECT id AS window_id FROM krphase_window;",
            )
            .unwrap();
        }
        let c = open(&p).unwrap();
        let v: i64 = c
            .query_row("SELECT MAX(version) FROM krphase_schema_version", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let row: (i64, i64, Option<i64>, Option<i64>, Option<i64>) = c
            .query_row(
                "SELECT dispatch_id, restore_ns, continue_ns, stuck_ns, window_ns
                 FROM krphase_window_phase WHERE window_id = 5",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .unwrap();
        assert_eq!(row, (9, 300, None, None, Some(800)));
        let passes: Vec<(i64, i64, Option<i64>)> = c
            .prepare(
                "SELECT pass_index, incomplete, continue_ns FROM krphase_pass ORDER BY pass_index",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(passes, vec![(0, 0, None), (1, 0, None)]);
        drop(c);
        // Opening again runs nothing twice.
        let c = open(&p).unwrap();
        let n: i64 = c
            .query_row("SELECT COUNT(*) FROM krphase_schema_version", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(n, SCHEMA_VERSION);
    }

    /// Eight connections open an old (version-1) database and a new one at the same time: each
    /// migration runs once, every open succeeds.
    #[test]
    fn concurrent_opens_migrate_once() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("v1.db");
        {
            let c = Connection::open(&old).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute_batch(
                "CREATE TABLE krphase_schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL);
                 INSERT INTO krphase_schema_version VALUES (1, 'then');",
            )
            .unwrap();
        }
        let new = dir.path().join("new.db");
        for p in [&old, &new] {
            let barrier = std::sync::Barrier::new(8);
            std::thread::scope(|s| {
                let opens: Vec<_> = (0..8)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            open(p).map(|_| ()).map_err(|e| format!("{e:#}"))
                        })
                    })
                    .collect();
                for o in opens {
                    o.join().unwrap().unwrap();
                }
            });
            let versions: Vec<i64> = open(p)
                .unwrap()
                .prepare("SELECT version FROM krphase_schema_version ORDER BY version")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(
                versions,
                (1..=SCHEMA_VERSION).collect::<Vec<_>>(),
                "{}",
                p.display()
            );
        }
    }

    #[test]
    fn not_sqlite_is_refused_and_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.db");
        let text = b"this is not a database at all, just some text that is long enough".repeat(20);
        std::fs::write(&p, &text).unwrap();
        let err = open(&p).unwrap_err().to_string();
        assert!(err.contains("not a usable SQLite database"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), text);
    }

    #[test]
    fn foreign_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.db");
        Connection::open(&p)
            .unwrap()
            .execute_batch("CREATE TABLE other (x INTEGER);")
            .unwrap();
        let before = std::fs::read(&p).unwrap();
        let err = open(&p).unwrap_err().to_string();
        assert!(err.contains("lacks the krphase tables"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), before);
        assert!(open_existing(dir.path().join("missing.db")).is_err());
    }

    #[test]
    fn now_utc_is_iso() {
        let s = now_utc();
        assert_eq!(s.len(), 20);
        assert!(s.ends_with('Z') && s.as_bytes()[10] == b'T');
    }
}
