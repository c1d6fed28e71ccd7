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

use anyhow::{Context, Result, anyhow, bail};
use krphase_format::event::{Event, Notice};
use krphase_format::windows::{CounterReading, Output, PlainDispatch, Reconstructor};
use krphase_format::{FileReader, Mode};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use sha2::{Digest, Sha256};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::db;

#[path = "krp_rows.rs"]
mod krp_rows;
use krp_rows::WindowRows;

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

/// How a phase file's content is named in `krphase_run.file_hash`: `blake3:` and the BLAKE3
/// digest in hex. Databases made before it hold the bare SHA-256 hex of their files; an import
/// looks for those too ([`already_imported`]), so they keep deduplicating without a rewrite.
const HASH_PREFIX: &str = "blake3:";

/// Streams `path` through `update`.
fn stream(path: &Path, mut update: impl FnMut(&[u8])) -> Result<()> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("{}: read error", path.display()))?;
        if n == 0 {
            return Ok(());
        }
        update(&buf[..n]);
    }
}

/// The content name of a file as new rows store it (BLAKE3: several times SHA-256's speed, so
/// the hash that makes import idempotent costs a few ms even on a 10 M-event file).
pub fn file_hash(path: &Path) -> Result<String> {
    let mut h = blake3::Hasher::new();
    stream(path, |b| {
        h.update(b);
    })?;
    Ok(format!("{HASH_PREFIX}{}", h.finalize().to_hex()))
}

/// The SHA-256 hex of a file, as databases before BLAKE3 named their runs.
fn legacy_hash(path: &Path) -> Result<String> {
    let mut h = Sha256::new();
    stream(path, |b| h.update(b))?;
    Ok(format!("{:x}", h.finalize()))
}

/// Imports one phase file; returns the run id (the existing one when the same content was
/// imported before). `label` names the run for `--label` selectors.
pub fn import_phase_file(conn: &mut Connection, path: &Path, label: Option<&str>) -> Result<i64> {
    Ok(import_file(conn, path, label)?.run_id)
}

/// As [`import_phase_file`], with counts.
pub fn import_file(conn: &mut Connection, path: &Path, label: Option<&str>) -> Result<Imported> {
    import_started(conn, start(path), label)
}

/// What a decoding thread learns first: the file's content hash and its header.
struct Opened {
    hash: String,
    header: krphase_format::Header,
    version: krphase_format::FormatVersion,
}

/// A phase file being hashed and decoded on its own thread (named `krphase-decode`), its rows
/// waiting in bounded batches for [`import_started`]. Several can be started ahead of the one
/// being inserted: a many-file import decodes in parallel while one connection writes.
pub struct Started {
    path: PathBuf,
    opened: Receiver<Opened>,
    batches: Receiver<Vec<Row>>,
    /// Emptied batches going back to be refilled (their capacity kept).
    done: SyncSender<Vec<Row>>,
    /// The decoding thread (taken when joined), or why it could not start.
    decoder: Option<std::io::Result<JoinHandle<Result<Decoded>>>>,
}

/// Starts hashing and decoding `path` on a thread of its own. Never fails here: an error (the
/// file cannot be read, a bad magic, a corrupt block) is the one [`import_started`] returns.
pub fn start(path: &Path) -> Started {
    let (opened_tx, opened) = sync_channel::<Opened>(1);
    let (full, batches) = sync_channel::<Vec<Row>>(BATCHES);
    let (done, empty) = sync_channel::<Vec<Row>>(BATCHES + 1);
    let p = path.to_path_buf();
    let decoder = std::thread::Builder::new()
        .name("krphase-decode".into())
        .spawn(move || {
            let hash = file_hash(&p)?;
            let reader = FileReader::open(&p).map_err(|e| anyhow!("{}: {e}", p.display()))?;
            let header = reader.header().clone();
            let version = reader.version();
            let o = Opened {
                hash,
                header: header.clone(),
                version,
            };
            if opened_tx.send(o).is_err() {
                return Err(anyhow!("{}: import abandoned", p.display()));
            }
            decode(reader, &header, Batches { full, empty })
                .map_err(|e| anyhow!("{}: {e}", p.display()))
        });
    Started {
        path: path.to_path_buf(),
        opened,
        batches,
        done,
        decoder: Some(decoder),
    }
}

impl Started {
    /// Waits for the decoding thread to end; its error, if it had one.
    fn join(&mut self) -> Result<Decoded> {
        let h = match self.decoder.take() {
            Some(Ok(h)) => h,
            Some(Err(e)) => bail!(
                "{}: cannot start a decoding thread: {e}",
                self.path.display()
            ),
            None => bail!(
                "{}: the decoding thread was joined before",
                self.path.display()
            ),
        };
        h.join()
            .map_err(|_| anyhow!("{}: the decoding thread panicked", self.path.display()))?
    }
}

/// Imports a started phase file: checks its content was not imported before, then inserts its
/// rows as its thread decodes them, in one transaction.
///
/// The already-imported check and the inserts are one IMMEDIATE transaction: a process importing
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
    if let Some(id) = already_imported(&tx, path, &opened.hash, label)? {
        tx.commit()?;
        return Ok(Imported {
            run_id: id,
            already: true,
            ..Imported::default()
        });
    }
    let (run_id, first_window_id) = insert_run(&tx, path, &opened, label)?;
    let mut out = Imported {
        run_id,
        ..Imported::default()
    };
    // Decoding, window reconstruction, row values and the run's summary run on the decoding
    // thread, feeding the inserts here in bounded batches: this thread only binds and steps, the
    // slower half, and the two overlap.
    let mut ins = Inserter::new(&tx, run_id)?;
    while let Ok(mut batch) = s.batches.recv() {
        for r in &batch {
            ins.row(r, &mut out)?;
        }
        // Back to the decoder, its capacity kept (a full batch is half a MiB).
        batch.clear();
        let _ = s.done.try_send(batch);
    }
    drop(ins);
    let mut decoded = s.join()?;
    let summary = std::mem::take(&mut decoded.summary);
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

/// Inserts the run's row; returns its id and the first window id this transaction will assign.
fn insert_run(
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
            o.hash,
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
/// SHA-256 when the database holds runs named that way); `label` names it when it has none.
fn already_imported(
    tx: &Transaction<'_>,
    path: &Path,
    hash: &str,
    label: Option<&str>,
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
            "SELECT EXISTS (SELECT 1 FROM krphase_run WHERE file_hash NOT LIKE 'blake3:%')",
            [],
            |r| r.get(0),
        )?;
        if legacy {
            id = find(&legacy_hash(path)?)?;
        }
    }
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
    /// The run's summary, gathered from the windows' rows.
    summary: db::summary::Builder,
}

/// The channels between the two threads of an import: batches of rows, and emptied batches
/// going back to be refilled.
struct Batches {
    full: std::sync::mpsc::SyncSender<Vec<Row>>,
    empty: std::sync::mpsc::Receiver<Vec<Row>>,
}

/// Batches in flight to the inserting thread.
const BATCHES: usize = 8;

/// Rows per batch sent to the inserting thread.
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

/// Reads every event, reconstructs windows and sends their rows in batches (kernel names
/// resolved), summarising the run as it goes.
/// Stops early, without error, if the receiver has gone (the inserts failed).
fn decode(
    mut reader: FileReader<std::io::BufReader<std::fs::File>>,
    header: &krphase_format::Header,
    batches: Batches,
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
        summary: db::summary::Builder::default(),
    };
    let mut maker = RowMaker {
        summary: db::summary::Builder::default(),
        scratch: db::phases::WindowRow::default(),
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
                // The tool's count is of records: a string-table entry is not one.
                d.events += u64::from(!matches!(ev, Event::Name { .. }));
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
            batch.push(maker.row(named(&rec, o)));
        }
        if batch.len() >= BATCH || (finished && !batch.is_empty()) {
            let next = batches
                .empty
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH));
            if batches
                .full
                .send(std::mem::replace(&mut batch, next))
                .is_err()
            {
                break;
            }
        }
        if finished {
            break;
        }
    }
    d.truncated = reader.truncated();
    d.trailer = reader.trailer().copied();
    d.note = reader_note(d.version, reader.skipped(), rec.evicted());
    maker.summary.summarise_phases();
    d.summary = maker.summary;
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

/// `a - b` when both are known (SQL's NULL arithmetic).
fn minus(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a? - b?)
}

fn i(v: Option<u64>) -> Option<i64> {
    v.map(|x| x as i64)
}

/// Columns of a `krphase_pass` row, and the most rows one INSERT carries.
const PASS_COLUMNS: usize = 12;
const MAX_PASS_ROWS: usize = 8;

/// What the decoding thread hands the inserting thread: rows ready to bind.
// Rows travel by value in batches that are reused: boxing the large variant would add an
// allocation (and a cross-thread free) per window.
#[allow(clippy::large_enum_variant)]
enum Row {
    /// A window or an opt-out, with the counter values of its passes.
    Window(WindowRows, Vec<CounterReading>),
    Plain(PlainDispatch),
    Counter(CounterReading),
}

/// Turns one reconstructed output into its rows, adding windows to the run's summary.
struct RowMaker {
    summary: db::summary::Builder,
    scratch: db::phases::WindowRow,
}

impl RowMaker {
    fn row(&mut self, o: Output) -> Row {
        let rows = match o {
            Output::Window(mut w) => {
                let kernel = w.kernel_name.take();
                let counters = w
                    .passes
                    .iter_mut()
                    .flat_map(|p| p.counters.drain(..))
                    .collect();
                (WindowRows::window(&w, kernel), counters)
            }
            Output::Decline(mut d) => {
                let kernel = d.kernel_name.take();
                (WindowRows::decline(&d, kernel), Vec::new())
            }
            Output::Plain(p) => {
                let enqueue = minus(i(p.enqueue_exit), i(p.enqueue_enter));
                let seen = self.summary.rows_seen();
                seen.plain(p.dispatch_id as i64, p.had_config, enqueue);
                return Row::Plain(p);
            }
            Output::Counter(c) => return Row::Counter(c),
        };
        let seen = self.summary.rows_seen();
        if rows.0.outcome != "replayed" {
            seen.declined(rows.0.dispatch_id);
        }
        for p in &rows.0.passes {
            seen.pass(
                p[0].unwrap_or(0),
                minus(p[2], p[1]),
                minus(p[4], p[3]),
                p[7] == Some(1),
            );
        }
        db::summary::fill(&rows.0.fresh(), &mut self.scratch);
        self.summary.add(&self.scratch);
        Row::Window(rows.0, rows.1)
    }
}

/// Cached insert statements for one run.
struct Inserter<'t> {
    run_id: i64,
    window: rusqlite::CachedStatement<'t>,
    /// `passes[n - 1]` inserts n pass rows.
    passes: Vec<rusqlite::CachedStatement<'t>>,
    dispatch: rusqlite::CachedStatement<'t>,
    counter: rusqlite::CachedStatement<'t>,
    conn: &'t Transaction<'t>,
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
        })
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

    fn row(&mut self, r: &Row, out: &mut Imported) -> Result<()> {
        match r {
            Row::Window(w, counters) => {
                if w.outcome == "opt_out" {
                    out.declines += 1;
                } else {
                    out.windows += 1;
                }
                out.counters += counters.len() as u64;
                let window_id = self.window(w)?;
                for c in counters {
                    self.counter(c, Some(window_id))?;
                }
            }
            Row::Plain(p) => {
                out.dispatches += 1;
                self.plain(p)?;
            }
            Row::Counter(c) => {
                out.counters += 1;
                self.counter(c, None)?;
            }
        }
        Ok(())
    }

    /// Inserts a window row and its passes (in multi-row INSERTs: statement overhead
    /// dominates); returns the window's id.
    fn window(&mut self, w: &WindowRows) -> Result<i64> {
        self.window.execute(params![
            self.run_id,
            w.dispatch_id,
            w.correlation_id,
            w.kernel_id,
            w.kernel,
            w.agent,
            w.queue,
            w.thread,
            w.outcome,
            w.reason.as_ref(),
            w.requested_passes,
            w.executed_passes,
            w.start,
            w.end,
            w.pass_count_return,
            w.first_pass_enter,
            w.last_pass_exit,
            w.pass_ns,
            w.gpu_ns,
            w.restore_ns,
            w.restores,
            w.bytes_estimate,
            w.bytes_upper,
            w.regions,
            w.continue_ns,
            w.stuck_ns,
            w.source,
        ])?;
        let window_id = self.conn.last_insert_rowid();
        for chunk in w.passes.chunks(MAX_PASS_ROWS) {
            let stmt = &mut self.passes[chunk.len() - 1];
            for (k, values) in chunk.iter().enumerate() {
                let at = k * PASS_COLUMNS;
                stmt.raw_bind_parameter(at + 1, window_id)?;
                stmt.raw_bind_parameter(at + 2, self.run_id)?;
                for (c, v) in values.iter().enumerate() {
                    stmt.raw_bind_parameter(at + c + 3, v)?;
                }
            }
            stmt.raw_execute()?;
        }
        Ok(window_id)
    }

    fn plain(&mut self, p: &PlainDispatch) -> Result<()> {
        self.dispatch.execute(params![
            self.run_id,
            p.dispatch_id as i64,
            i(p.correlation_id),
            p.kernel_name,
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
        assert_eq!(r.events, truth.events, "the records the writer wrote");
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

    /// A run an older krphase imported is named by the file's SHA-256: importing that file again
    /// finds it, and a different file is still imported.
    #[test]
    fn runs_named_by_sha256_still_deduplicate() {
        let dir = tempfile::tempdir().unwrap();
        let (f, g) = (dir.path().join("f.krp"), dir.path().join("g.krp"));
        write_synthetic_file(
            &f,
            &SynthSpec {
                windows: 20,
                ..SynthSpec::default()
            },
        )
        .unwrap();
        write_synthetic_file(
            &g,
            &SynthSpec {
                windows: 20,
                seed: 2,
                ..SynthSpec::default()
            },
        )
        .unwrap();
        let mut c = db::open_in_memory().unwrap();
        let first = import_file(&mut c, &f, None).unwrap();
        let stored: String = c
            .query_row("SELECT file_hash FROM krphase_run", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, file_hash(&f).unwrap());
        assert!(stored.starts_with("blake3:") && stored.len() == 7 + 64);
        c.execute(
            "UPDATE krphase_run SET file_hash = ?1",
            [legacy_hash(&f).unwrap()],
        )
        .unwrap();
        let again = import_file(&mut c, &f, Some("old")).unwrap();
        assert!(again.already, "the SHA-256-named run is found");
        assert_eq!(again.run_id, first.run_id);
        assert!(!import_file(&mut c, &g, None).unwrap().already);
        assert_eq!(count(&c, "krphase_run"), 2);
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
