//! The run's own row: inserted first, found again when the same content was imported before, and
//! completed from the trailer (its drops, and the one-line note of them).

use std::path::Path;

use anyhow::Result;
use rusqlite::{OptionalExtension, Transaction, params};

use super::decode::Opened;
use super::hash::legacy_hash;
use crate::db;

/// `krphase_run.file_hash` of the run being imported until its hash is ready (never committed).
const PENDING_HASH: &str = "pending";

/// Inserts the run's row, named by a placeholder until its content hash is ready (the
/// transaction never commits it so: see `named`); returns its id and the first window id this
/// transaction will assign.
pub(super) fn insert_run(
    tx: &Transaction<'_>,
    path: &Path,
    o: &Opened,
    label: Option<&str>,
) -> Result<(i64, i64)> {
    let h = &o.header;
    tx.execute(
        "INSERT INTO krphase_run (path, file_hash, label, pid, ppid, host, command, sdk_version,
           format_version, mode, passes, kernel_filter, clock_boottime_ns, clock_realtime_ns,
           imported_at, utc_offset_s, rank, world_size, rank_var)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                 ?19)",
        params![
            path.display().to_string(),
            PENDING_HASH,
            label,
            h.pid,
            h.ppid,
            h.hostname,
            h.command_line,
            format!(
                "{}.{}.{}",
                h.sdk_version.0, h.sdk_version.1, h.sdk_version.2
            ),
            o.version.major,
            h.mode.name(),
            h.passes,
            (!h.filter.is_empty()).then_some(h.filter.as_str()),
            h.boottime_ns as i64,
            h.realtime_ns as i64,
            db::now_utc(),
            h.utc_offset_s,
            h.rank.as_ref().map(|r| r.rank),
            h.rank.as_ref().and_then(|r| r.world_size),
            h.rank.as_ref().map(|r| r.var.as_str()),
        ],
    )?;
    let run_id = tx.last_insert_rowid();
    let first_window_id: i64 = tx.query_row(
        "SELECT COALESCE(MAX(id), 0) + 1 FROM krphase_window",
        [],
        |r| r.get(0),
    )?;
    Ok((run_id, first_window_id))
}

/// The run imported from the same content before, if any (named by `hash`, or by the file's
/// SHA-256 when the database holds runs named that way), other than `ours` (the run being
/// imported).
pub(super) fn already_imported(
    tx: &Transaction<'_>,
    path: &Path,
    hash: &str,
    ours: i64,
) -> Result<Option<i64>> {
    let find = |h: &str| {
        tx.query_row(
            "SELECT id FROM krphase_run WHERE file_hash = ?1",
            [h],
            |r| r.get::<_, i64>(0),
        )
        .optional()
    };
    let mut id = find(hash)?;
    if id.is_none() {
        let legacy: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM krphase_run WHERE file_hash NOT LIKE 'blake3:%'
               AND id != ?1)",
            [ours],
            |r| r.get(0),
        )?;
        if legacy {
            id = find(&legacy_hash(path)?)?;
        }
    }
    Ok(id)
}

/// The trailer's drops by kind and the application's wait on the output.
pub(super) fn store_drops(
    tx: &rusqlite::Transaction<'_>,
    run_id: i64,
    t: &krphase_format::Trailer,
) -> Result<()> {
    use krphase_format::trailer::flags;
    tx.execute(
        "UPDATE krphase_run SET dropped_dispatch = ?1, dropped_allocation = ?2,
           dropped_window = ?3, dropped_names = ?4, stall_ns = ?5, stalled = ?6
         WHERE id = ?7",
        params![
            t.dropped_dispatch as i64,
            t.dropped_allocation as i64,
            t.dropped_window as i64,
            t.dropped_names as i64,
            t.stall_ns as i64,
            t.flags & flags::STALLED != 0,
            run_id
        ],
    )?;
    Ok(())
}

/// "; N dispatch, N allocation, N window records dropped …" when the trailer counts any record
/// or kernel name dropped, or says the tool's wait budget ran out; else empty.
pub(super) fn drop_note(t: krphase_format::Trailer) -> String {
    use krphase_format::trailer::flags;
    let stalled = t.flags & flags::STALLED != 0;
    let records = t.dropped_dispatch + t.dropped_allocation + t.dropped_window;
    if !stalled && records == 0 && t.dropped_names == 0 {
        return String::new();
    }
    let mut s = format!(
        "; {} dispatch, {} allocation, {} window records dropped",
        t.dropped_dispatch, t.dropped_allocation, t.dropped_window
    );
    if t.dropped_names > 0 {
        s += &format!(", {} kernel names dropped", t.dropped_names);
    }
    if t.first_drop_ns > 0 {
        let span_ms = t.last_drop_ns.saturating_sub(t.first_drop_ns) as f64 / 1e6;
        s += &format!(" over {span_ms:.1} ms");
    }
    s += &format!(
        " (the application waited {:.1} ms on the tool's output{})",
        t.stall_ns as f64 / 1e6,
        if stalled {
            ", its wait budget ran out"
        } else {
            ""
        }
    );
    s
}
