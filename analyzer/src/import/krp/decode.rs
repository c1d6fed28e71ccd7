//! The decoding thread of an import: it reads a phase file's events, reconstructs its windows
//! and hands their rows to the inserting thread in bounded batches, while a thread beside it
//! hashes the file.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::thread::JoinHandle;

use anyhow::{Result, anyhow, bail};
use krphase_format::event::{Event, NameSpace, Notice};
use krphase_format::{FileReader, Mode};
use krphase_windows::{Output, Reconstructor};

use super::hash::file_hash;
use super::rows::{Row, RowMaker};
use crate::db;

/// What a decoding thread learns first: the file's header.
pub(super) struct Opened {
    pub(super) header: krphase_format::Header,
    pub(super) version: krphase_format::FormatVersion,
}

/// A phase file being hashed and decoded on its own thread (named `krphase-decode`), its rows
/// waiting in bounded batches for [`super::import_started`]. Several can be started ahead of the
/// one being inserted: a many-file import decodes in parallel while one connection writes.
pub struct Started {
    pub(super) path: PathBuf,
    pub(super) opened: Receiver<Opened>,
    /// The file's content hash, from a thread of its own (named `krphase-hash`): the inserts
    /// need not wait for it, only the commit does.
    hash: Receiver<Result<String>>,
    pub(super) batches: Receiver<Vec<Row>>,
    /// Emptied batches going back to be refilled (their capacity kept).
    pub(super) done: SyncSender<Vec<Row>>,
    /// The decoding thread (taken when joined), or why it could not start.
    decoder: Option<std::io::Result<JoinHandle<Result<Decoded>>>>,
}

/// Starts hashing and decoding `path` on a thread of its own. Never fails here: an error (the
/// file cannot be read, a bad magic, a corrupt block) is the one [`super::import_started`] returns.
pub fn start(path: &Path) -> Started {
    let (opened_tx, opened) = sync_channel::<Opened>(1);
    let (full, batches) = sync_channel::<Vec<Row>>(BATCHES);
    let (done, empty) = sync_channel::<Vec<Row>>(BATCHES + 1);
    let (hash_tx, hash) = sync_channel::<Result<String>>(1);
    let p = path.to_path_buf();
    // A thread that cannot start drops the sender: `Started::hash` then says so.
    let _ = std::thread::Builder::new()
        .name("krphase-hash".into())
        .spawn(move || {
            let _ = hash_tx.send(file_hash(&p));
        });
    let p = path.to_path_buf();
    let decoder = std::thread::Builder::new()
        .name("krphase-decode".into())
        .spawn(move || {
            let reader = FileReader::open(&p).map_err(|e| anyhow!("{}: {e}", p.display()))?;
            let header = reader.header().clone();
            let version = reader.version();
            let o = Opened {
                header: header.clone(),
                version,
            };
            if opened_tx.send(o).is_err() {
                return Err(anyhow!("{}: import abandoned", p.display()));
            }
            let mut deliver = |batch: Vec<Row>| {
                full.send(batch).ok()?;
                Some(
                    empty
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(BATCH)),
                )
            };
            decode(reader, &header, &mut deliver).map_err(|e| anyhow!("{}: {e}", p.display()))
        });
    Started {
        path: path.to_path_buf(),
        opened,
        hash,
        batches,
        done,
        decoder: Some(decoder),
    }
}

impl Started {
    /// The file's content hash once it is ready; with `wait` false, `None` while it is not.
    pub(super) fn hash(&self, wait: bool) -> Option<Result<String>> {
        let got = if wait {
            self.hash.recv().map_err(|_| TryRecvError::Disconnected)
        } else {
            self.hash.try_recv()
        };
        match got {
            Ok(h) => Some(h),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(anyhow!(
                "{}: the hashing thread ended without a hash",
                self.path.display()
            ))),
        }
    }

    /// Waits for the decoding thread to end; its error, if it had one.
    pub(super) fn join(&mut self) -> Result<Decoded> {
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

/// Decodes `path` on the calling thread, as the decoding thread does: `open` gets the header
/// first, then `each` every row in order; an error from either stops the decoding. For a
/// many-file conversion with a worker per file, where a thread per file would cost more in
/// hand-overs than it overlaps.
pub(super) fn decode_here<S>(
    path: &Path,
    open: impl FnOnce(&krphase_format::Header) -> Result<S>,
    mut each: impl FnMut(&mut S, &Row) -> Result<()>,
) -> Result<(S, Decoded)> {
    let reader = FileReader::open(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let header = reader.header().clone();
    let mut sink = open(&header)?;
    let mut failed = None;
    let mut deliver = |mut batch: Vec<Row>| {
        if let Some(e) = batch.iter().find_map(|r| each(&mut sink, r).err()) {
            failed = Some(e);
            return None;
        }
        batch.clear();
        Some(batch)
    };
    let decoded =
        decode(reader, &header, &mut deliver).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    match failed {
        Some(e) => Err(e),
        None => Ok((sink, decoded)),
    }
}

/// What the decoder thread learned besides the outputs it sent.
pub(super) struct Decoded {
    pub(super) header: krphase_format::Header,
    pub(super) version: krphase_format::FormatVersion,
    /// What the reader skipped and the reconstruction emitted early, in one line.
    pub(super) note: Option<String>,
    pub(super) events: u64,
    pub(super) first: u64,
    pub(super) last: u64,
    pub(super) mode: Mode,
    pub(super) layout: Option<&'static str>,
    pub(super) truncated: bool,
    /// The tool ran drive mode without dispatch tracing (`KRPHASE_GPU_TIMES=0`).
    pub(super) gpu_times_off: bool,
    pub(super) trailer: Option<krphase_format::Trailer>,
    /// The run's summary, gathered from the windows' rows.
    pub(super) summary: db::summary::Builder,
    /// The tool's notes (the note namespace of the string table), in key order: the pass plan.
    pub(super) tool_notes: std::collections::BTreeMap<u64, String>,
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
    deliver: &mut dyn FnMut(Vec<Row>) -> Option<Vec<Row>>,
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
        gpu_times_off: false,
        trailer: None,
        summary: db::summary::Builder::default(),
        tool_notes: Default::default(),
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
                        Notice::GpuTimesOff => d.gpu_times_off = true,
                        Notice::LayoutConfirmed if *a == 1 => d.layout = Some("a"),
                        Notice::LayoutConfirmed if *a == 2 => d.layout = Some("b"),
                        _ => {}
                    }
                }
                if let Event::Name {
                    space: NameSpace::Note,
                    key,
                    name,
                } = ev
                {
                    d.tool_notes.insert(*key, name.clone());
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
            match deliver(std::mem::take(&mut batch)) {
                Some(next) => batch = next,
                None => break,
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
