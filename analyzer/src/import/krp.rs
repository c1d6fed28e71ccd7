//! `krphase import`: phase files (.krp) into the database, one transaction per file.
//!
//! Streams the file through krphase-format's reader and window [`Reconstructor`] and inserts as
//! it goes with cached statements, so memory does not grow with the file. Idempotent by content
//! hash. A truncated file loads every complete block and is marked truncated; a corrupt file, a
//! newer major format or one breaking a reconstruction limit is rejected with one line naming
//! the file and offset, and the transaction is rolled back so nothing of it is stored. A newer
//! minor imports: what the reader skipped (and any dispatch the held-dispatch bound emitted
//! early) is the run's `reader_note`, printed by `krphase import`.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use krphase_format::event::{Event, Notice};
use krphase_format::windows::{
    CounterReading, Decline, Outcome, Output, PlainDispatch, Reconstructor, Source, Window,
};
use krphase_format::{FileReader, Mode};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use sha2::{Digest, Sha256};

use crate::db;

/// What one import did.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub run_id: i64,
    /// The same content was imported before; nothing was added.
    pub already: bool,
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

/// sha256 of a file, streamed.
pub fn file_hash(path: &Path) -> Result<String> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("{}: read error", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("{:x}", h.finalize()))
}

/// Imports one phase file; returns the run id (the existing one when the same content was
/// imported before). `label` names the run for `--label` selectors.
pub fn import_phase_file(conn: &mut Connection, path: &Path, label: Option<&str>) -> Result<i64> {
    Ok(import_file(conn, path, label)?.run_id)
}

/// As [`import_phase_file`], with counts.
///
/// The already-imported check and the inserts are one IMMEDIATE transaction: a process importing
/// the same file at the same time waits for this one and then finds the run, never a duplicate.
pub fn import_file(conn: &mut Connection, path: &Path, label: Option<&str>) -> Result<Imported> {
    let hash = file_hash(path)?;
    // A 16 MiB page cache: inserts append in key order, so a small cache suffices and memory
    // stays flat however large the file.
    conn.execute_batch("PRAGMA cache_size = -16384; PRAGMA temp_store = MEMORY;")?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Some(id) = already_imported(&tx, &hash, label)? {
        tx.commit()?;
        return Ok(Imported {
            run_id: id,
            already: true,
            ..Imported::default()
        });
    }
    let reader = FileReader::open(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let h = reader.header().clone();
    tx.execute(
        "INSERT INTO krphase_run (path, file_hash, label, pid, ppid, host, command, sdk_version,
           format_version, mode, passes, kernel_filter, clock_boottime_ns, clock_realtime_ns,
           imported_at, utc_offset_s)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        params![
            path.display().to_string(),
            hash,
            label,
            h.pid,
            h.ppid,
            h.hostname,
            h.command_line,
            format!(
                "{}.{}.{}",
                h.sdk_version.0, h.sdk_version.1, h.sdk_version.2
            ),
            reader.version().major,
            h.mode.name(),
            h.passes,
            (!h.filter.is_empty()).then_some(h.filter.as_str()),
            h.boottime_ns as i64,
            h.realtime_ns as i64,
            db::now_utc(),
            h.utc_offset_s,
        ],
    )?;
    let run_id = tx.last_insert_rowid();
    // Window ids this transaction will assign start above the current maximum.
    let first_window_id: i64 = tx.query_row(
        "SELECT COALESCE(MAX(id), 0) + 1 FROM krphase_window",
        [],
        |r| r.get(0),
    )?;
    let mut out = Imported {
        run_id,
        ..Imported::default()
    };
    // Decoding and window reconstruction run on a second thread, feeding the inserts here in
    // bounded batches: the two halves of an import cost about the same, and overlap.
    let (decoded, summary) =
        std::thread::scope(|scope| -> Result<(Decoded, db::summary::Builder)> {
            let (tx_batches, rx_batches) = std::sync::mpsc::sync_channel::<Vec<Output>>(8);
            let decoder = scope.spawn(move || decode(reader, &h, tx_batches));
            let mut ins = Inserter::new(&tx, run_id)?;
            for batch in rx_batches {
                for o in batch {
                    ins.output(o, &mut out)?;
                }
            }
            let decoded = decoder
                .join()
                .map_err(|_| anyhow!("{}: the decoder thread panicked", path.display()))?
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            Ok((decoded, ins.summary))
        })?;
    let h = &decoded.header;
    let (mut first, last, mode, layout, trailer) = (
        decoded.first,
        decoded.last,
        decoded.mode,
        decoded.layout,
        decoded.trailer,
    );
    out.events = decoded.events;
    out.truncated = decoded.truncated || trailer.is_none();
    out.note = decoded.note.clone();
    out.drop_note = trailer.map(drop_note).unwrap_or_default();
    // The run spans tool start (the header's clock anchor) to the last record.
    if h.boottime_ns > 0 && first <= last {
        first = first.min(h.boottime_ns);
    }
    let (start, end) = if first <= last {
        (Some(first as i64), Some(last as i64))
    } else {
        (None, None)
    };
    tx.execute(
        "UPDATE krphase_run SET mode = ?1, layout = ?2, \"start\" = ?3, \"end\" = ?4, truncated = ?5,
           events = ?6, trailer_windows = ?7, trailer_declines = ?8, trailer_dispatches = ?9,
           trailer_dropped = ?10,
           window_lo = (SELECT MIN(id) FROM krphase_window WHERE id >= ?12),
           window_hi = (SELECT MAX(id) FROM krphase_window),
           format_minor = ?13, reader_note = ?14, finalize_ns = ?15
         WHERE id = ?11",
        params![
            mode.name(),
            layout,
            start,
            end,
            out.truncated,
            out.events as i64,
            trailer.map(|t| t.windows as i64),
            trailer.map(|t| t.declines as i64),
            trailer.map(|t| t.events_written as i64),
            trailer.map(|t| (t.dropped_dispatch + t.dropped_allocation + t.dropped_window) as i64),
            run_id,
            first_window_id,
            decoded.version.minor,
            out.note,
            trailer.map(|t| t.finalize_ns as i64).filter(|&t| t > 0),
        ],
    )?;
    if let Some(t) = trailer {
        store_drops(&tx, run_id, &t)?;
    }
    // The run's summary, in the same transaction: a run is never stored without one.
    db::summary::store_imported(&tx, run_id, summary)?;
    tx.commit()?;
    Ok(out)
}

/// The run imported from the same content before, if any; `label` names it when it has none.
fn already_imported(tx: &Transaction<'_>, hash: &str, label: Option<&str>) -> Result<Option<i64>> {
    let id = tx
        .query_row(
            "SELECT id FROM krphase_run WHERE file_hash = ?1",
            [hash],
            |r| r.get::<_, i64>(0),
        )
        .optional()?;
    if let (Some(id), Some(l)) = (id, label) {
        tx.execute(
            "UPDATE krphase_run SET label = ?1 WHERE id = ?2 AND label IS NULL",
            params![l, id],
        )?;
    }
    Ok(id)
}

/// The trailer's drops by kind and the application's wait on the output.
fn store_drops(
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

/// What the decoder thread learned besides the outputs it sent.
struct Decoded {
    header: krphase_format::Header,
    version: krphase_format::FormatVersion,
    /// What the reader skipped and the reconstruction emitted early, in one line.
    note: Option<String>,
    events: u64,
    first: u64,
    last: u64,
    mode: Mode,
    layout: Option<&'static str>,
    truncated: bool,
    trailer: Option<krphase_format::Trailer>,
}

/// Outputs per batch sent to the inserting thread.
const BATCH: usize = 1024;

/// The one-line note of what the reader skipped (a newer minor's additions) and how many
/// dispatches the held-dispatch bound emitted before their records were complete.
fn reader_note(
    version: krphase_format::FormatVersion,
    skipped: &krphase_format::Skipped,
    evicted: u64,
) -> Option<String> {
    let mut parts = Vec::new();
    if !skipped.is_empty() {
        parts.push(format!(
            "format {version} (this reader: {}): skipped {}",
            krphase_format::FORMAT_VERSION,
            skipped.summary()
        ));
    }
    if evicted > 0 {
        parts.push(format!(
            "{evicted} dispatches emitted before their records were complete (held-dispatch limit)"
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Reads every event, reconstructs windows and sends them in batches (kernel names resolved).
/// Stops early, without error, if the receiver has gone (the inserts failed).
fn decode(
    mut reader: FileReader<std::io::BufReader<std::fs::File>>,
    header: &krphase_format::Header,
    tx: std::sync::mpsc::SyncSender<Vec<Output>>,
) -> Result<Decoded> {
    let mut d = Decoded {
        header: header.clone(),
        version: reader.version(),
        note: None,
        events: 0,
        first: u64::MAX,
        last: 0,
        mode: header.mode,
        layout: match header.payload_layout {
            1 => Some("a"),
            2 => Some("b"),
            _ => None,
        },
        truncated: false,
        trailer: None,
    };
    // Events mean what the file's version says (a 1.x file's placements, see for_version).
    let mut rec = Reconstructor::for_version(reader.version());
    let mut batch = Vec::with_capacity(BATCH);
    let named = |rec: &Reconstructor, mut o: Output| -> Output {
        let (name, id) = match &mut o {
            Output::Window(w) => (&mut w.kernel_name, w.kernel_id),
            Output::Decline(x) => (&mut x.kernel_name, x.kernel_id),
            Output::Plain(p) => (&mut p.kernel_name, p.kernel_id),
            Output::Counter(_) => return o,
        };
        if name.is_none() {
            *name = id.and_then(|k| rec.kernel_name(k).map(str::to_string));
        }
        o
    };
    let mut finished = false;
    loop {
        let ev = match reader.next_event() {
            Some(ev) => Some(ev?),
            None => None,
        };
        match &ev {
            Some(ev) => {
                d.events += 1;
                if let Some(t) = timestamp(ev) {
                    d.first = d.first.min(t);
                    d.last = d.last.max(t);
                }
                if let Event::Notice { notice, a, .. } = ev {
                    match notice {
                        Notice::FellBackToObserve => d.mode = Mode::Observe,
                        Notice::LayoutConfirmed if *a == 1 => d.layout = Some("a"),
                        Notice::LayoutConfirmed if *a == 2 => d.layout = Some("b"),
                        _ => {}
                    }
                }
                rec.push_at(ev, reader.last_offset())?;
            }
            None => {
                rec.finish();
                finished = true;
            }
        }
        while let Some(o) = rec.pop() {
            batch.push(named(&rec, o));
        }
        if batch.len() >= BATCH || (finished && !batch.is_empty()) {
            if tx.send(std::mem::take(&mut batch)).is_err() {
                break;
            }
            batch.reserve(BATCH);
        }
        if finished {
            break;
        }
    }
    d.truncated = reader.truncated();
    d.trailer = reader.trailer().copied();
    d.note = reader_note(d.version, reader.skipped(), rec.evicted());
    Ok(d)
}

/// The host or GPU time an event carries, for the run's first/last timestamp (a completion's GPU
/// end, which follows its host time).
fn timestamp(ev: &Event) -> Option<u64> {
    match *ev {
        Event::Complete { gpu_end, .. } | Event::CompleteAt { gpu_end, .. } => Some(gpu_end),
        _ => ev.host_time(),
    }
    .filter(|&t| t > 0)
}

fn i(v: Option<u64>) -> Option<i64> {
    v.map(|x| x as i64)
}

/// Columns of a `krphase_pass` row, and the most rows one INSERT carries.
const PASS_COLUMNS: usize = 12;
const MAX_PASS_ROWS: usize = 8;

/// Cached insert statements for one run.
struct Inserter<'t> {
    run_id: i64,
    window: rusqlite::CachedStatement<'t>,
    /// `passes[n - 1]` inserts n pass rows.
    passes: Vec<rusqlite::CachedStatement<'t>>,
    dispatch: rusqlite::CachedStatement<'t>,
    counter: rusqlite::CachedStatement<'t>,
    conn: &'t Transaction<'t>,
    /// The run's summary, gathered from the rows as they are written.
    summary: db::summary::Builder,
    row: db::phases::WindowRow,
}

impl<'t> Inserter<'t> {
    fn new(tx: &'t Transaction<'t>, run_id: i64) -> Result<Self> {
        Ok(Inserter {
            run_id,
            window: tx.prepare_cached(
                "INSERT INTO krphase_window (run_id, dispatch_id, correlation_id, kernel_id, kernel,
                   agent, queue, thread, outcome, reason, requested_passes, executed_passes,
                   \"start\", \"end\", pass_count_return, first_pass_enter, last_pass_exit,
                   pass_ns, gpu_ns, restore_ns, restores, bytes_estimate, bytes_upper, regions,
                   continue_ns, stuck_ns, source)
                 VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,?27)",
            )?,
            passes: (1..=MAX_PASS_ROWS)
                .map(|n| {
                    let row = format!("({})", ["?"; PASS_COLUMNS].join(","));
                    tx.prepare_cached(&format!(
                        "INSERT INTO krphase_pass (window_id, run_id, pass_index, \"start\", \"end\",
                           gpu_start, gpu_end, restore_start, restore_end, incomplete, continue_ns,
                           complete_host)
                         VALUES {}",
                        vec![row; n].join(",")
                    ))
                })
                .collect::<rusqlite::Result<_>>()?,
            dispatch: tx.prepare_cached(
                "INSERT INTO krphase_dispatch (run_id, dispatch_id, correlation_id, kernel, agent,
                   queue, thread, had_config, \"start\", \"end\", gpu_start, gpu_end)
                 VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
            )?,
            counter: tx.prepare_cached(
                "INSERT INTO krphase_counter (run_id, window_id, dispatch_id, pass_index,
                   counter_id, name, value, instances)
                 VALUES (?1, COALESCE(?2, (SELECT MAX(id) FROM krphase_window
                   WHERE run_id = ?1 AND dispatch_id = ?3)), ?3,?4,?5,?6,?7,?8)",
            )?,
            conn: tx,
            summary: db::summary::Builder::default(),
            row: db::phases::WindowRow::default(),
        })
    }

    /// Adds a window just written to the run's summary.
    fn summarise(&mut self, f: &db::summary::FreshWindow<'_>) {
        db::summary::fill(f, &mut self.row);
        self.summary.add(&self.row);
    }

    /// One counter value; without `window_id`, the run's window of that dispatch (if any).
    fn counter(&mut self, c: &CounterReading, window_id: Option<i64>) -> Result<()> {
        self.counter.execute(params![
            self.run_id,
            window_id,
            c.dispatch_id as i64,
            i64::from(c.pass),
            c.counter as i64,
            c.name,
            c.value.0,
            i64::from(c.instances),
        ])?;
        Ok(())
    }

    fn output(&mut self, o: Output, out: &mut Imported) -> Result<()> {
        match o {
            Output::Window(mut w) => {
                out.windows += 1;
                let kernel = w.kernel_name.take();
                self.window(&w, kernel)?;
                out.counters += w
                    .passes
                    .iter()
                    .map(|p| p.counters.len() as u64)
                    .sum::<u64>();
            }
            Output::Decline(mut d) => {
                out.declines += 1;
                let kernel = d.kernel_name.take();
                self.decline(&d, kernel)?;
            }
            Output::Plain(mut p) => {
                out.dispatches += 1;
                let kernel = p.kernel_name.take();
                self.plain(&p, kernel)?;
            }
            Output::Counter(c) => {
                out.counters += 1;
                self.counter(&c, None)?;
            }
        }
        Ok(())
    }

    fn window(&mut self, w: &Window, kernel: Option<String>) -> Result<()> {
        let sum = |f: &dyn Fn(&krphase_format::windows::Pass) -> Option<u64>| -> Option<i64> {
            let v: Vec<u64> = w.passes.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<u64>() as i64)
        };
        let pass_ns = sum(&|p| Some(p.exit?.saturating_sub(p.enter?)));
        let gpu_ns = sum(&|p| Some(p.gpu_end?.saturating_sub(p.gpu_start?)));
        let restore_ns: u64 = w
            .restores
            .iter()
            .map(|r| r.end.saturating_sub(r.start))
            .sum();
        let phase_ns = |i: &krphase_format::windows::Interval| i.end.saturating_sub(i.start);
        let continues: Vec<u64> = w
            .restores
            .iter()
            .filter_map(|r| r.continue_phase.as_ref().map(phase_ns))
            .collect();
        let continue_ns = (!continues.is_empty()).then(|| continues.iter().sum::<u64>() as i64);
        let stuck_ns = w.stuck.as_ref().map(|s| phase_ns(s) as i64);
        let first_enter = w
            .pre_pass
            .map(|p| p.end)
            .or_else(|| w.passes.first().and_then(|p| p.enter));
        let last_exit = w
            .tail
            .map(|t| t.start)
            .or_else(|| w.passes.last().and_then(|p| p.exit));
        let (outcome, reason) = match w.outcome {
            Outcome::Replayed => ("replayed", "none"),
            // The SDK's reason is only in its log; the view takes it from a joined log line.
            // ... except a stuck pass: the SDK broke the loop inside it.
            Outcome::Declined if w.stuck.is_some() => ("declined", "pass_drain_stuck"),
            Outcome::Declined => ("declined", "unknown"),
        };
        // Observe-mode windows have no CONFIG pair: span the passes instead, to the last
        // completion the host saw (its GPU end in files without COMPLETE_HOST).
        let start = w.config_enter.or_else(|| {
            w.passes
                .first()
                .and_then(|p| p.enqueue_enter.or(p.gpu_start))
        });
        let end = w.config_exit.or_else(|| {
            w.passes
                .last()
                .and_then(|p| p.complete_host.or(p.gpu_end).or(p.exit))
        });
        let source = match w.source {
            Source::Drive => "drive",
            Source::Observe => "observe",
        };
        self.window.execute(params![
            self.run_id,
            w.dispatch_id as i64,
            i(w.correlation_id),
            i(w.kernel_id),
            kernel,
            i(w.agent),
            i(w.queue),
            w.thread,
            outcome,
            reason,
            i(w.requested_passes),
            w.executed_passes as i64,
            i(start),
            i(end),
            i(w.pass_count_return),
            i(first_enter),
            i(last_exit),
            pass_ns,
            gpu_ns,
            (!w.restores.is_empty()).then_some(restore_ns as i64),
            w.restores.len() as i64,
            w.bytes.map(|b| b.classified as i64),
            w.bytes.map(|b| b.upper_bound as i64),
            w.bytes.map(|b| i64::from(b.classified_regions)),
            continue_ns,
            stuck_ns,
            source,
        ])?;
        let window_id = self.conn.last_insert_rowid();
        self.summarise(&db::summary::FreshWindow {
            kernel: kernel.as_deref(),
            outcome,
            reason,
            executed_passes: Some(w.executed_passes as i64),
            start: i(start),
            end: i(end),
            pass_count_return: i(w.pass_count_return),
            first_pass_enter: i(first_enter),
            last_pass_exit: i(last_exit),
            pass_ns,
            gpu_ns,
            restore_ns: (!w.restores.is_empty()).then_some(restore_ns as i64),
            restores: Some(w.restores.len() as i64),
            bytes_estimate: w.bytes.map(|b| b.classified as i64),
            continue_ns,
            stuck_ns,
            source: Some(source),
        });
        // All of a window's passes in one multi-row INSERT (statement overhead dominates).
        for chunk in w.passes.chunks(MAX_PASS_ROWS) {
            let stmt = &mut self.passes[chunk.len() - 1];
            for (k, p) in chunk.iter().enumerate() {
                let r = w.restores.iter().find(|r| r.after_pass == p.index);
                let values: [Option<i64>; PASS_COLUMNS] = [
                    Some(window_id),
                    Some(self.run_id),
                    Some(i64::from(p.index)),
                    i(p.enter),
                    i(p.exit),
                    i(p.gpu_start),
                    i(p.gpu_end),
                    r.map(|r| r.start as i64),
                    r.map(|r| r.end as i64),
                    Some(i64::from(p.incomplete)),
                    r.and_then(|r| r.continue_phase.as_ref().map(|c| phase_ns(c) as i64)),
                    i(p.complete_host),
                ];
                for (c, v) in values.iter().enumerate() {
                    stmt.raw_bind_parameter(k * PASS_COLUMNS + c + 1, v)?;
                }
            }
            stmt.raw_execute()?;
        }
        for c in w.passes.iter().flat_map(|p| &p.counters) {
            self.counter(c, Some(window_id))?;
        }
        Ok(())
    }

    fn decline(&mut self, d: &Decline, kernel: Option<String>) -> Result<()> {
        let reason = serde_json::to_value(d.reason)?
            .as_str()
            .unwrap_or("unknown")
            .to_string();
        self.window.execute(params![
            self.run_id,
            d.dispatch_id as i64,
            None::<i64>,
            i(d.kernel_id),
            kernel,
            None::<i64>,
            None::<i64>,
            d.thread,
            "opt_out",
            reason,
            None::<i64>,
            0i64,
            i(d.config_enter),
            i(d.config_exit),
            None::<i64>,
            None::<i64>,
            None::<i64>,
            None::<i64>,
            None::<i64>,
            None::<i64>,
            0i64,
            None::<i64>,
            None::<i64>,
            None::<i64>,
            None::<i64>,
            None::<i64>,
            "drive",
        ])?;
        self.summarise(&db::summary::FreshWindow {
            kernel: kernel.as_deref(),
            outcome: "opt_out",
            reason: &reason,
            executed_passes: Some(0),
            start: i(d.config_enter),
            end: i(d.config_exit),
            restores: Some(0),
            source: Some("drive"),
            ..db::summary::FreshWindow::default()
        });
        Ok(())
    }

    fn plain(&mut self, p: &PlainDispatch, kernel: Option<String>) -> Result<()> {
        self.dispatch.execute(params![
            self.run_id,
            p.dispatch_id as i64,
            i(p.correlation_id),
            kernel,
            i(p.agent),
            i(p.queue),
            p.thread,
            p.had_config,
            i(p.enqueue_enter),
            i(p.enqueue_exit),
            i(p.gpu_start),
            i(p.gpu_end),
        ])?;
        Ok(())
    }
}

/// Phase files (`*.krp`) under `dir`, recursively (application replay writes `pass_<n>/`),
/// sorted by path.
pub fn phase_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "krp") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report;
    use crate::synth::{SynthSpec, write_synthetic_file};

    fn count(c: &Connection, table: &str) -> i64 {
        c.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn synthetic_file_round_trips_into_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.krp");
        let spec = SynthSpec {
            windows: 200,
            passes: 3,
            ..SynthSpec::default()
        };
        let truth = write_synthetic_file(&f, &spec).unwrap();
        let mut c = db::open(dir.path().join("k.db")).unwrap();
        let r = import_file(&mut c, &f, Some("synthetic")).unwrap();
        assert!(!r.already && !r.truncated);
        assert_eq!((r.windows, r.declines), (truth.windows, truth.opt_outs));
        let rep = report::run_report(&c, r.run_id).unwrap();
        let total = |n: &str| rep.phases.iter().find(|p| p.phase == n).unwrap().total_ns as u64;
        assert_eq!(total("pre-pass"), truth.prepass_ns);
        assert_eq!(total("pass exec"), truth.pass_ns);
        assert_eq!(total("gpu"), truth.gpu_ns);
        assert_eq!(total("restore"), truth.restore_ns);
        assert_eq!(total("tail"), truth.tail_ns);
        assert_eq!(total("window"), truth.window_ns);
        assert_eq!(rep.windows.replayed, truth.windows);
        assert_eq!(rep.declines_by_reason.get("opt_out"), Some(&truth.opt_outs));
        assert_eq!(rep.bytes.snapshot_bytes_total as u64, truth.bytes);
        assert_eq!(count(&c, "krphase_pass") as u64, truth.windows * 3);
        // Same content again: same run, nothing added.
        let again = import_file(&mut c, &f, None).unwrap();
        assert!(again.already);
        assert_eq!(again.run_id, r.run_id);
        assert_eq!(count(&c, "krphase_run"), 1);
    }

    /// The format crate's golden file: one 2-pass window, one opt-out, one plain dispatch, with
    /// known timestamps.
    #[test]
    fn golden_file_imports_with_exact_phases() {
        let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/small.krp");
        let mut c = db::open_in_memory().unwrap();
        let r = import_file(&mut c, &golden, Some("golden")).unwrap();
        assert_eq!(
            (r.windows, r.declines, r.dispatches, r.truncated),
            (1, 1, 1, false)
        );
        let rep = report::run_report(&c, r.run_id).unwrap();
        let total = |n: &str| rep.phases.iter().find(|p| p.phase == n).unwrap().total_ns;
        assert_eq!(total("config"), 1020 - 1000);
        assert_eq!(total("pre-pass"), 2000 - 1020);
        assert_eq!(total("pass exec"), (3000 - 2000) + (4500 - 3500));
        assert_eq!(total("gpu"), (2900 - 2100) + (4400 - 3600));
        assert_eq!(total("restore"), 3500 - 3000);
        assert_eq!(total("tail"), 4600 - 4500);
        assert_eq!(total("window"), 4600 - 1000);
        assert_eq!(rep.declines_by_reason.get("opt_out"), Some(&1));
        assert_eq!(rep.dispatch_tax.plain_enqueue_mean_ns, Some(10.0));
        assert_eq!(rep.bytes.snapshot_bytes_total, 4096);
        assert_eq!(
            rep.dispatches_seen, 2,
            "the opt-out and its run-once are one dispatch"
        );
        let (kernel, queue): (String, i64) = c
            .query_row(
                "SELECT kernel, queue FROM krphase_window WHERE outcome = 'replayed'",
                [],
                |x| Ok((x.get(0)?, x.get(1)?)),
            )
            .unwrap();
        assert_eq!((kernel.as_str(), queue), ("stream_copy", 3));
    }

    #[test]
    fn truncated_file_loads_complete_blocks_and_is_marked() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.krp");
        let spec = SynthSpec {
            windows: 2000,
            ..SynthSpec::default()
        };
        write_synthetic_file(&f, &spec).unwrap();
        let bytes = std::fs::read(&f).unwrap();
        let cut = dir.path().join("cut.krp");
        std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
        let mut c = db::open(dir.path().join("k.db")).unwrap();
        let r = import_file(&mut c, &cut, None).unwrap();
        assert!(r.truncated);
        assert!(r.windows > 100 && r.windows < 2000, "{}", r.windows);
        let t: i64 = c
            .query_row(
                "SELECT truncated FROM krphase_run WHERE id = ?1",
                [r.run_id],
                |x| x.get(0),
            )
            .unwrap();
        assert_eq!(t, 1);
    }

    #[test]
    fn corrupt_inputs_are_rejected_with_the_offset_and_store_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.krp");
        write_synthetic_file(
            &f,
            &SynthSpec {
                windows: 500,
                ..SynthSpec::default()
            },
        )
        .unwrap();
        let good = std::fs::read(&f).unwrap();
        let mut c = db::open(dir.path().join("k.db")).unwrap();

        let mut flipped = good.clone();
        let mid = good.len() / 2;
        flipped[mid] ^= 0xff;
        let bad = dir.path().join("bad.krp");
        std::fs::write(&bad, &flipped).unwrap();
        let e = format!("{:#}", import_file(&mut c, &bad, None).unwrap_err());
        assert!(
            e.contains("bad.krp") && e.contains("offset") && e.contains("checksum"),
            "{e}"
        );

        let mut magic = good.clone();
        magic[0] = b'X';
        std::fs::write(&bad, &magic).unwrap();
        let e = format!("{:#}", import_file(&mut c, &bad, None).unwrap_err());
        assert!(e.contains("offset 0") && e.contains("magic"), "{e}");

        let mut version = good.clone();
        version[4..8].copy_from_slice(&99u32.to_le_bytes());
        std::fs::write(&bad, &version).unwrap();
        let e = format!("{:#}", import_file(&mut c, &bad, None).unwrap_err());
        assert!(
            e.ends_with(
                "bad.krp: offset 4: written by a newer krphase, format 99.0; upgrade krphase"
            ),
            "{e}"
        );

        let e = format!(
            "{:#}",
            import_file(&mut c, &dir.path().join("none.krp"), None).unwrap_err()
        );
        assert!(e.contains("none.krp"), "{e}");

        for t in [
            "krphase_run",
            "krphase_window",
            "krphase_pass",
            "krphase_dispatch",
        ] {
            assert_eq!(count(&c, t), 0, "{t}");
        }
    }
}

#[cfg(test)]
#[path = "krp_continue_tests.rs"]
mod continue_tests;

#[cfg(test)]
#[path = "krp_format_tests.rs"]
mod format_tests;
/// "; N dispatch, N allocation, N window records dropped …" when the trailer counts any record
/// or kernel name dropped, or says the tool's wait budget ran out; else empty.
fn drop_note(t: krphase_format::Trailer) -> String {
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
