//! `krphase export rocpd -o DB`: the run's windows, passes and declines written into its rocpd
//! database as krphase's own tables and views, following rocpd's conventions: per-run tables
//! suffixed with the database's uuid and carrying its `guid`, un-suffixed views over them, and
//! data views joining rocpd's `rocpd_kernel_dispatch` and `rocpd_info_kernel_symbol` on
//! `(id, guid)` and dispatch id, so rocpd users find replay costs beside `kernels`.
//!
//! The pass number sits where a proposal for rocpd (not merged in any released schema) puts
//! it: a `replay_pass` column, 0 for the first pass, keyed with the dispatch id. rocpd's own
//! tables are never changed; every object krphase adds is named `krphase_*` and exporting again
//! drops and rebuilds exactly those. The tables have no AUTOINCREMENT, so even SQLite's
//! `sqlite_sequence` rows stay as rocpd wrote them.

use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::{Connection, MAIN_DB, params};

use crate::db;
use crate::rocpd::{proof, schema};

/// The krphase objects in a rocpd database, views before tables (for dropping).
fn own_objects(rocpd: &Connection) -> Result<Vec<(String, String)>> {
    let mut st = rocpd.prepare(
        "SELECT type, name FROM sqlite_master WHERE name LIKE 'krphase\\_%' ESCAPE '\\'
           AND type IN ('view', 'table') ORDER BY type = 'table', name",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The statements creating krphase's tables (suffix `_<uuid>`) and views.
fn schema_sql(uuid: &str, guid: &str) -> String {
    let g = guid.replace('\'', "''");
    format!(
        r#"
CREATE TABLE "krphase_metadata_{uuid}" (id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{g}',
    tag TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE "krphase_replay_window_{uuid}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{g}', pid INTEGER NOT NULL,
    dispatch_id INTEGER NOT NULL, kernel_name TEXT, outcome TEXT NOT NULL, reason TEXT,
    requested_passes INTEGER, executed_passes INTEGER, "start" BIGINT, "end" BIGINT,
    window_ns BIGINT, prepass_ns BIGINT, pass_ns BIGINT, gpu_ns BIGINT, restore_ns BIGINT,
    tail_ns BIGINT, snapshot_bytes BIGINT, window_basis TEXT,
    extdata JSONB NOT NULL DEFAULT '{{}}');
CREATE TABLE "krphase_replay_pass_{uuid}" (
    id INTEGER PRIMARY KEY, guid TEXT NOT NULL DEFAULT '{g}', window_id INTEGER NOT NULL,
    dispatch_id INTEGER NOT NULL, replay_pass INTEGER NOT NULL, "start" BIGINT, "end" BIGINT,
    gpu_start BIGINT, gpu_end BIGINT, restore_start BIGINT, restore_end BIGINT,
    extdata JSONB NOT NULL DEFAULT '{{}}');
CREATE VIEW krphase_metadata AS SELECT * FROM "krphase_metadata_{uuid}";
CREATE VIEW krphase_replay_window AS SELECT * FROM "krphase_replay_window_{uuid}";
CREATE VIEW krphase_replay_pass AS SELECT * FROM "krphase_replay_pass_{uuid}";
CREATE VIEW krphase_replay_windows AS
  SELECT W.id, W.guid, W.pid, W.dispatch_id, K.id AS kernel_dispatch_id, K.kernel_id,
         COALESCE(S.display_name, W.kernel_name) AS name, W.outcome, W.reason,
         W.requested_passes, W.executed_passes, W."start", W."end", W.window_ns, W.prepass_ns,
         W.pass_ns, W.gpu_ns, W.restore_ns, W.tail_ns, W.window_ns - W.gpu_ns AS overhead_ns,
         W.snapshot_bytes, W.window_basis, K."start" AS kernel_start, K."end" AS kernel_end
  FROM krphase_replay_window W
  LEFT JOIN rocpd_kernel_dispatch K ON K.dispatch_id = W.dispatch_id AND K.guid = W.guid
  LEFT JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid;
CREATE VIEW krphase_replay_passes AS
  SELECT P.id, P.guid, P.window_id, P.dispatch_id, P.replay_pass, W.name, W.kernel_dispatch_id,
         P."start", P."end", P."end" - P."start" AS host_ns, P.gpu_start, P.gpu_end,
         P.gpu_end - P.gpu_start AS gpu_ns, P.restore_end - P.restore_start AS restore_ns
  FROM krphase_replay_pass P JOIN krphase_replay_windows W ON W.id = P.window_id AND W.guid = P.guid;
CREATE VIEW krphase_replay_declines AS
  SELECT id, guid, pid, dispatch_id, kernel_dispatch_id, kernel_id, name, outcome, reason,
         "start", "end", window_ns
  FROM krphase_replay_windows WHERE outcome <> 'replayed';
"#
    )
}

/// Copies the run's windows and passes into the tables `schema_sql` made.
fn copy_rows(
    k: &Connection,
    tx: &rusqlite::Transaction,
    run: i64,
    uuid: &str,
    pid: i64,
) -> Result<(usize, usize)> {
    let windows = copy_selected(
        k,
        "SELECT window_id, ?2, dispatch_id, krphase_kernel_name(kernel), outcome, reason, requested_passes,
                executed_passes, \"start\", \"end\", window_ns, prepass_ns, pass_ns, gpu_ns,
                restore_ns, tail_ns, snapshot_bytes, window_basis
         FROM krphase_window_phase WHERE run_id = ?1 ORDER BY window_id",
        &mut tx.prepare(&format!(
            "INSERT INTO \"krphase_replay_window_{uuid}\" (id, pid, dispatch_id, kernel_name,
               outcome, reason, requested_passes, executed_passes, \"start\", \"end\", window_ns,
               prepass_ns, pass_ns, gpu_ns, restore_ns, tail_ns, snapshot_bytes, window_basis)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
        ))?,
        params![run, pid],
    )?;
    let passes = copy_selected(
        k,
        "SELECT p.window_id, w.dispatch_id, p.pass_index, p.\"start\", p.\"end\", p.gpu_start,
                p.gpu_end, p.restore_start, p.restore_end
         FROM krphase_pass p JOIN krphase_window w ON w.id = p.window_id
         WHERE p.run_id = ?1 ORDER BY p.window_id, p.pass_index",
        &mut tx.prepare(&format!(
            "INSERT INTO \"krphase_replay_pass_{uuid}\" (window_id, dispatch_id, replay_pass,
               \"start\", \"end\", gpu_start, gpu_end, restore_start, restore_end)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        ))?,
        params![run],
    )?;
    Ok((windows, passes))
}

/// Inserts each row `select` gives (with `args`) through `insert`, column for parameter; the
/// number of rows.
fn copy_selected(
    k: &Connection,
    select: &str,
    insert: &mut rusqlite::Statement<'_>,
    args: impl rusqlite::Params,
) -> Result<usize> {
    let mut st = k.prepare(select)?;
    let n = st.column_count();
    let mut rows = st.query(args)?;
    let mut count = 0;
    while let Some(r) = rows.next()? {
        let row = (0..n)
            .map(|i| r.get_ref(i).map(rusqlite::types::Value::from))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        insert.execute(rusqlite::params_from_iter(row))?;
        count += 1;
    }
    Ok(count)
}

/// Refuses a file the process cannot write (before SQLite opens it).
fn check_writable(path: &Path) -> Result<()> {
    if !path.is_file() {
        bail!(
            "{}: no such rocpd database (export rocpd writes into an existing one)",
            path.display()
        );
    }
    let marked = std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly());
    if marked {
        // Refused even where this user could write it anyway (root): the file says read-only.
        bail!("{}: read-only file; nothing written", path.display());
    }
    if let Err(e) = std::fs::OpenOptions::new().write(true).open(path) {
        bail!("{}: read-only ({e}); nothing written", path.display());
    }
    Ok(())
}

/// `krphase export rocpd -o DB`: writes the proven run's windows and passes into `output`.
pub fn export_rocpd_command(db_path: &Path, output: &Path) -> Result<()> {
    check_writable(output)?;
    let k = db::open_existing(db_path)?;
    let (mut rocpd, checked) = schema::open(output, schema::EXPORT_NEEDS, true)?;
    if rocpd.is_readonly(MAIN_DB)? {
        bail!("{}: read-only; nothing written", output.display());
    }
    let procs = proof::processes(&rocpd)?;
    let process = procs
        .iter()
        .find(|p| Some(&p.guid) == checked.guid.as_ref())
        .or(procs.first())
        .ok_or_else(|| {
            anyhow::anyhow!("{}: the rocpd database has no process", output.display())
        })?;
    let run = proof::run_of(&k, process)
        .map_err(|e| anyhow::anyhow!("{}: {e}; nothing written", output.display()))?;
    let uuid = checked
        .uuid
        .clone()
        .unwrap_or_else(|| process.guid.replace('-', "_"));
    let tx = rocpd.transaction()?;
    for (kind, name) in own_objects(&tx)? {
        tx.execute_batch(&format!("DROP {} \"{name}\";", kind.to_uppercase()))?;
    }
    tx.execute_batch(&schema_sql(&uuid, &process.guid))?;
    let (windows, passes) = copy_rows(&k, &tx, run, &uuid, process.pid)?;
    // A run from the emulator says so beside its rows.
    let emulated = db::emulated::any_run_emulated(&k, &[run])?.then(|| {
        (
            db::emulated::EMULATED.to_lowercase(),
            db::emulated::NOTE.to_string(),
        )
    });
    for (tag, value) in emulated.into_iter().chain([
        ("krphase_version", env!("CARGO_PKG_VERSION").to_string()),
        ("krphase_run_id", run.to_string()),
        ("rocpd_schema_followed", schema::FOLLOWED_VERSION.to_string()),
        ("replay_pass", "as proposed for rocpd_kernel_dispatch (not merged in any released schema): 0-based pass of a replayed dispatch".into()),
        ("exported_at", db::now_utc()),
    ]
    .map(|(t, v)| (t.to_string(), v))) {
        tx.execute(
            &format!("INSERT INTO \"krphase_metadata_{uuid}\" (tag, value) VALUES (?1, ?2)"),
            params![tag, value],
        )?;
    }
    tx.commit()?;
    println!(
        "{}: run {run} exported beside rocpd schema {}: {windows} windows, {passes} passes \
         (views krphase_replay_windows, krphase_replay_passes, krphase_replay_declines){}",
        output.display(),
        checked.version,
        checked.note()
    );
    Ok(())
}
