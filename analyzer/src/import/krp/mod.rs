//! `krphase import`: phase files (.krp) into the database, one transaction per file.
//!
//! Streams the file through krphase-format's reader and window `Reconstructor` and inserts as
//! it goes with cached statements, so memory does not grow with the file. Idempotent by content
//! hash. A truncated file loads every complete block and is marked truncated; a corrupt file, a
//! newer major format or one breaking a reconstruction limit is rejected with one line naming
//! the file and offset, and the transaction is rolled back so nothing of it is stored. A newer
//! minor imports: what the reader skipped (and any dispatch the held-dispatch bound emitted
//! early) is the run's `reader_note`, printed by `krphase import`.
//!
//! The work is split by thread: `decode` decodes the file on a thread of its own, shaping the
//! `rows`, and hashes it (`hash`) on another; this module's [`import_started`] inserts the run's
//! row (`run`) and then the rows as they come (`insert`), and names the run by its hash when
//! that is ready (or, finding the content stored before, rolls back). `files` finds the phase
//! files under a directory.

mod decode;
mod files;
mod hash;
mod insert;
mod rows;
mod run;

#[cfg(test)]
mod format_tests;
#[cfg(test)]
mod tables_tests;
#[cfg(test)]
mod tests;

use std::path::Path;

use anyhow::{Result, anyhow};
use rusqlite::{Connection, TransactionBehavior, params};

pub use decode::{Started, start};
pub use files::phase_files;
pub use hash::file_hash;
use insert::Inserter;
pub use rows::{PassValues, Row, WindowRows};
use run::{already_imported, drop_note, insert_run, store_drops};

use crate::db;

/// What one import did.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub run_id: i64,
    /// The same content was imported before; nothing was added.
    pub already: bool,
    /// Records in the file: what the tool's finalize line counts as events (string-table
    /// entries are not records).
    pub events: u64,
    pub windows: u64,
    pub declines: u64,
    pub dispatches: u64,
    /// Counter values (`krphase_counter` rows) of the run.
    pub counters: u64,
    pub truncated: bool,
    /// What the reader skipped or emitted early, in one line (`None`: nothing).
    pub note: Option<String>,
    /// What the trailer says the tool dropped, by kind (empty when nothing).
    pub drop_note: String,
}

/// The connection settings an import runs under (the import benchmark's bare-insert baseline
/// uses the same). A 16 MiB page cache: inserts append in key order, so a small cache suffices
/// and memory stays flat however large the file.
pub const IMPORT_PRAGMAS: &str = "PRAGMA cache_size = -16384; PRAGMA temp_store = MEMORY;";

/// Imports one phase file; returns the run id (the existing one when the same content was
/// imported before). `label` names the run for `--label` selectors.
pub fn import_phase_file(conn: &mut Connection, path: &Path, label: Option<&str>) -> Result<i64> {
    Ok(import_file(conn, path, label)?.run_id)
}

/// As [`import_phase_file`], with counts.
pub fn import_file(conn: &mut Connection, path: &Path, label: Option<&str>) -> Result<Imported> {
    import_started(conn, start(path), label)
}

/// Imports a started phase file: inserts its rows as its thread decodes them, in one
/// transaction, and checks its content was not imported before as soon as the hash (on a thread
/// of its own) is ready; if it was, the transaction is rolled back and the earlier run returned.
/// A fresh import never waits for the hash, and an import of known content stops when it is
/// ready, as it did when the check came first.
///
/// The inserts and the already-imported check are one IMMEDIATE transaction: a process importing
/// the same file at the same time waits for this one and then finds the run, never a duplicate.
pub fn import_started(
    conn: &mut Connection,
    mut s: Started,
    label: Option<&str>,
) -> Result<Imported> {
    let Ok(opened) = s.opened.recv() else {
        return Err(s
            .join()
            .err()
            .unwrap_or_else(|| anyhow!("{}: the decoding thread ended early", s.path.display())));
    };
    let path = s.path.clone();
    let path = path.as_path();
    conn.execute_batch(IMPORT_PRAGMAS)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (run_id, first_window_id) = insert_run(&tx, path, &opened, label)?;
    let mut out = Imported {
        run_id,
        ..Imported::default()
    };
    // Decoding, window reconstruction, row values and the run's summary run on the decoding
    // thread, feeding the inserts here in bounded batches: this thread only binds and steps, the
    // slower half, and the two overlap.
    let mut ins = Inserter::new(&tx, run_id)?;
    let mut hashed = false;
    loop {
        if !hashed && let Some(h) = s.hash(false) {
            if let Some(id) = named(&tx, path, run_id, &h?)? {
                // Rolled back; the decoding thread stops at its next batch, its channel gone.
                drop(ins);
                drop(tx);
                return already(conn, id, label);
            }
            hashed = true;
        }
        let Ok(mut batch) = s.batches.recv() else {
            break;
        };
        for r in &batch {
            ins.row(r, &mut out)?;
        }
        // Back to the decoder, its capacity kept (a full batch is half a MiB).
        batch.clear();
        let _ = s.done.try_send(batch);
    }
    if !hashed {
        let h = s.hash(true).expect("a waited-for hash")?;
        if let Some(id) = named(&tx, path, run_id, &h)? {
            drop(ins);
            drop(tx);
            return already(conn, id, label);
        }
    }
    drop(ins);
    let mut decoded = s.join()?;
    let summary = std::mem::take(&mut decoded.summary);
    let facts = RunFacts::of(&decoded);
    let trailer = facts.trailer;
    out.events = facts.events;
    out.truncated = facts.truncated;
    out.note = facts.note.clone();
    out.drop_note = trailer.map(drop_note).unwrap_or_default();
    tx.execute(
        "UPDATE krphase_run SET mode = ?1, layout = ?2, \"start\" = ?3, \"end\" = ?4, truncated = ?5,
           events = ?6, trailer_windows = ?7, trailer_declines = ?8, trailer_dispatches = ?9,
           trailer_dropped = ?10,
           window_lo = (SELECT MIN(id) FROM krphase_window WHERE id >= ?12),
           window_hi = (SELECT MAX(id) FROM krphase_window),
           format_minor = ?13, reader_note = ?14, finalize_ns = ?15, gpu_times_off = ?16
         WHERE id = ?11",
        params![
            facts.mode.name(),
            facts.layout,
            facts.start,
            facts.end,
            out.truncated,
            out.events as i64,
            trailer.map(|t| t.windows as i64),
            trailer.map(|t| t.declines as i64),
            trailer.map(|t| t.events_written as i64),
            trailer.map(|t| (t.dropped_dispatch + t.dropped_allocation + t.dropped_window) as i64),
            run_id,
            first_window_id,
            facts.version.minor,
            out.note,
            trailer.map(|t| t.finalize_ns as i64).filter(|&t| t > 0),
            decoded.gpu_times_off,
        ],
    )?;
    if let Some(t) = trailer {
        store_drops(&tx, run_id, &t)?;
    }
    if !decoded.tool_notes.is_empty() {
        let notes: Vec<&str> = decoded.tool_notes.values().map(String::as_str).collect();
        tx.execute(
            "UPDATE krphase_run SET tool_notes = ?1 WHERE id = ?2",
            params![notes.join("\n"), run_id],
        )?;
    }
    // The run's summary, in the same transaction: a run is never stored without one.
    db::summary::store_imported(&tx, run_id, summary)?;
    tx.commit()?;
    Ok(out)
}

/// Names the run being imported `hash` (its content), unless a run of that content is stored
/// already: then that run's id.
fn named(
    tx: &rusqlite::Transaction<'_>,
    path: &Path,
    run_id: i64,
    hash: &str,
) -> Result<Option<i64>> {
    if let Some(id) = already_imported(tx, path, hash, run_id)? {
        return Ok(Some(id));
    }
    tx.execute(
        "UPDATE krphase_run SET file_hash = ?1 WHERE id = ?2",
        params![hash, run_id],
    )?;
    Ok(None)
}

/// The answer for content imported before (the transaction that began importing it again was
/// rolled back): the earlier run, labelled `label` when it has no label.
fn already(conn: &mut Connection, id: i64, label: Option<&str>) -> Result<Imported> {
    if let Some(l) = label {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "UPDATE krphase_run SET label = ?1 WHERE id = ?2 AND label IS NULL",
            params![l, id],
        )?;
        tx.commit()?;
    }
    Ok(Imported {
        run_id: id,
        already: true,
        ..Imported::default()
    })
}

/// Decodes a phase file as `import` does (the same rows in the same order) without a database
/// and on the calling thread: `open` makes a sink from the file's header, `each` gets every row,
/// then this returns the sink, the file's content hash and what it says about its run. An error
/// from either stops the decoding.
pub fn decode_file<S>(
    path: &Path,
    open: impl FnOnce(&krphase_format::Header) -> Result<S>,
    each: impl FnMut(&mut S, &Row) -> Result<()>,
) -> Result<(S, String, RunFacts)> {
    let (sink, decoded) = decode::decode_here(path, open, each)?;
    let hash = hash::file_hash(path)?;
    Ok((sink, hash, RunFacts::of(&decoded)))
}

/// What a decoded phase file says about its run, as `import` stores it in `krphase_run` (and
/// `export parquet --from` writes it without a database).
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub header: krphase_format::Header,
    pub version: krphase_format::FormatVersion,
    /// The mode in effect at the end (a fall-back NOTICE turns drive into observe).
    pub mode: krphase_format::Mode,
    pub layout: Option<&'static str>,
    /// Tool start (the header's clock anchor) or the first record, whichever is earlier, to the
    /// last record (BOOTTIME ns); `None` without records.
    pub start: Option<i64>,
    pub end: Option<i64>,
    /// No trailer, or the reader stopped at an incomplete block.
    pub truncated: bool,
    pub events: u64,
    pub trailer: Option<krphase_format::Trailer>,
    pub note: Option<String>,
}

impl RunFacts {
    fn of(d: &decode::Decoded) -> RunFacts {
        let (mut first, last) = (d.first, d.last);
        // The run spans tool start (the header's clock anchor) to the last record.
        if d.header.boottime_ns > 0 && first <= last {
            first = first.min(d.header.boottime_ns);
        }
        let (start, end) = if first <= last {
            (Some(first as i64), Some(last as i64))
        } else {
            (None, None)
        };
        RunFacts {
            header: d.header.clone(),
            version: d.version,
            mode: d.mode,
            layout: d.layout,
            start,
            end,
            truncated: d.truncated || d.trailer.is_none(),
            events: d.events,
            trailer: d.trailer,
            note: d.note.clone(),
        }
    }
}
