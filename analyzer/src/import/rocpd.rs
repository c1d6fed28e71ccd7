//! `krphase import-rocpd DB`: a rocprofv3 rocpd database attached to the run it proves (same
//! pid and host, overlapping time: `rocpd::proof`), its kernel names, dispatch records and
//! counter values stored by dispatch id beside the run's windows (`krphase_rocpd_*`).
//!
//! rocpd keeps no pass: its writer makes one dispatch row per dispatch id (the first pass's
//! record) and puts every pass's counter values on it. A dispatch row is attached to the pass
//! whose GPU span holds its start; counter rows stay on the window, numbered per counter in
//! rocpd's row order, never guessed onto passes. Re-importing the same rocpd process replaces
//! its rows with the same rows.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};

use crate::db;
use crate::rocpd::proof::{self, Process};
use crate::rocpd::schema::{self, Checked};

/// One rocpd dispatch row (from the `kernels` view).
struct Dispatch {
    rocpd_id: i64,
    dispatch_id: i64,
    kernel_id: Option<i64>,
    name: Option<String>,
    agent: Option<i64>,
    queue: Option<i64>,
    start: Option<i64>,
    end: Option<i64>,
}

/// One rocpd counter row (from the `pmc_events` view).
struct Counter {
    rocpd_id: i64,
    dispatch_id: i64,
    name: String,
    value: f64,
}

/// What one process's import stored.
pub struct Imported {
    pub run_id: i64,
    pub process: Process,
    pub dispatches: usize,
    pub matched: usize,
    pub counters: usize,
    pub replaced: bool,
}

fn read_dispatches(rocpd: &Connection, p: &Process) -> Result<Vec<Dispatch>> {
    let mut st = rocpd.prepare(
        "SELECT id, dispatch_id, kernel_id, name, agent_abs_index, queue_id, start, \"end\"
         FROM kernels WHERE guid = ?1 AND pid = ?2 ORDER BY id",
    )?;
    let rows = st.query_map(params![p.guid, p.pid], |r| {
        Ok(Dispatch {
            rocpd_id: r.get(0)?,
            dispatch_id: r.get(1)?,
            kernel_id: r.get(2)?,
            name: r.get(3)?,
            agent: r.get(4)?,
            queue: r.get(5)?,
            start: r.get(6)?,
            end: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn read_counters(rocpd: &Connection, p: &Process) -> Result<Vec<Counter>> {
    let mut st = rocpd.prepare(
        "SELECT id, dispatch_id, counter_name, counter_value FROM pmc_events
         WHERE guid = ?1 AND pid = ?2 ORDER BY id",
    )?;
    let rows = st.query_map(params![p.guid, p.pid], |r| {
        Ok(Counter {
            rocpd_id: r.get(0)?,
            dispatch_id: r.get(1)?,
            name: r.get(2)?,
            value: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The run's windows by dispatch id.
fn windows(conn: &Connection, run_id: i64) -> Result<HashMap<i64, i64>> {
    let mut st = conn.prepare("SELECT dispatch_id, id FROM krphase_window WHERE run_id = ?1")?;
    let rows = st.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The pass of `window` whose GPU span holds `start`.
fn pass_at(conn: &Connection, window: i64, start: Option<i64>) -> Result<Option<i64>> {
    let Some(t) = start else { return Ok(None) };
    Ok(conn
        .prepare_cached(
            "SELECT pass_index FROM krphase_pass WHERE window_id = ?1
               AND gpu_start <= ?2 AND ?2 <= gpu_end ORDER BY pass_index LIMIT 1",
        )?
        .query_row(params![window, t], |r| r.get(0))
        .optional()?)
}

/// Stores one proven process's rows (replacing an earlier import of the same process).
fn store(
    conn: &mut Connection,
    path: &Path,
    checked: &Checked,
    run_id: i64,
    p: &Process,
    (ds, cs): (&[Dispatch], &[Counter]),
) -> Result<Imported> {
    let tx = conn.transaction()?;
    let replaced = tx.execute(
        "DELETE FROM krphase_rocpd_file WHERE guid = ?1 AND run_id = ?2",
        params![p.guid, run_id],
    )? > 0;
    let by_dispatch = windows(&tx, run_id)?;
    let matched = ds
        .iter()
        .filter(|d| by_dispatch.contains_key(&d.dispatch_id))
        .count();
    tx.execute(
        "INSERT INTO krphase_rocpd_file (run_id, guid, path, schema_version, pid, host, \"start\",
           \"end\", dispatches, matched, counter_rows, imported_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            run_id,
            p.guid,
            path.display().to_string(),
            checked.version,
            p.pid,
            p.hostname,
            p.start,
            p.end,
            ds.len() as i64,
            matched as i64,
            cs.len() as i64,
            db::now_utc()
        ],
    )?;
    let file = tx.last_insert_rowid();
    for d in ds {
        let window = by_dispatch.get(&d.dispatch_id).copied();
        let pass = match window {
            Some(w) => pass_at(&tx, w, d.start)?,
            None => None,
        };
        tx.prepare_cached(
            "INSERT INTO krphase_rocpd_dispatch (rocpd_file_id, run_id, window_id, pass_index,
               rocpd_id, dispatch_id, kernel_id, kernel, agent_abs_index, queue_id, \"start\", \"end\")
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?
        .execute(params![
                file, run_id, window, pass, d.rocpd_id, d.dispatch_id, d.kernel_id, d.name,
                d.agent, d.queue, d.start, d.end
            ])?;
    }
    let mut seen: HashMap<(i64, &str), i64> = HashMap::new();
    for c in cs {
        let n = seen.entry((c.dispatch_id, c.name.as_str())).or_insert(0);
        tx.prepare_cached(
            "INSERT INTO krphase_rocpd_counter (rocpd_file_id, run_id, window_id, rocpd_id,
               dispatch_id, counter, value, occurrence) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            file,
            run_id,
            by_dispatch.get(&c.dispatch_id),
            c.rocpd_id,
            c.dispatch_id,
            c.name,
            c.value,
            *n
        ])?;
        *n += 1;
    }
    tx.commit()?;
    Ok(Imported {
        run_id,
        process: p.clone(),
        dispatches: ds.len(),
        matched,
        counters: cs.len(),
        replaced,
    })
}

/// Imports every process of the rocpd database at `path` that proves an imported run; refuses
/// (storing nothing) when none does.
/// What `import_rocpd` did: the checked database, the processes stored, and why each other
/// process of a multi-process database was left out.
pub struct Outcome {
    pub checked: Checked,
    pub imported: Vec<Imported>,
    pub skipped: Vec<String>,
}

pub fn import_rocpd(conn: &mut Connection, path: &Path) -> Result<Outcome> {
    let (rocpd, checked) = schema::open(path, schema::IMPORT_NEEDS, false)?;
    let procs = proof::processes(&rocpd)
        .with_context(|| format!("{}: cannot read its processes", path.display()))?;
    if procs.is_empty() {
        bail!("{}: the rocpd database has no process", path.display());
    }
    let mut proven = Vec::new();
    let mut skipped = Vec::new();
    for p in &procs {
        match proof::run_of(conn, p) {
            Ok(run) => proven.push((run, p)),
            Err(e) => skipped.push(e.to_string()),
        }
    }
    if proven.is_empty() {
        bail!("{}: {}; nothing stored", path.display(), skipped[0]);
    }
    let mut out = Vec::new();
    for (run, p) in proven {
        let rows = (read_dispatches(&rocpd, p)?, read_counters(&rocpd, p)?);
        out.push(store(conn, path, &checked, run, p, (&rows.0, &rows.1))?);
    }
    Ok(Outcome {
        checked,
        imported: out,
        skipped,
    })
}

/// `krphase import-rocpd DB`: one line per process attached.
pub fn import_rocpd_command(db_path: &Path, file: &Path) -> Result<()> {
    let mut conn = db::open_existing(db_path)?;
    let Outcome {
        checked,
        imported,
        skipped,
    } = import_rocpd(&mut conn, file)?;
    for why in skipped {
        println!("{}: a process left out: {why}", file.display());
    }
    for i in imported {
        println!(
            "{}: rocpd schema {}, process {} on {} is run {}: {} dispatches ({} on its windows), \
             {} counter rows{}{}",
            file.display(),
            checked.version,
            i.process.pid,
            i.process.hostname,
            i.run_id,
            i.dispatches,
            i.matched,
            i.counters,
            if i.replaced {
                "; replaced the earlier import"
            } else {
                ""
            },
            checked.note()
        );
    }
    Ok(())
}
