//! The writer thread: takes batches and slots off the channel, gathers them into EVENTS blocks
//! and writes the file; at the end, the trailer.

use super::observed::Observed;
use super::slot::{RecordWords, SLOT_RECORDS, Slot};
use super::{Recorder, wake};
use crate::output::open::open_output;
use crate::{clock, sys};
use crossbeam_channel::{Receiver, Sender, TryRecvError};
use krphase_format::block::MAX_RECORDS_PER_BLOCK;
use krphase_format::clock::{PAIR_INTERVAL_MS, Pair, pair_when};
use krphase_format::{FileWriter, Header, NameSpace, Record, Trailer};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Bytes the writer gathers before a system call: under load whole blocks go out in ~1 MiB
/// writes; whatever is gathered is written as soon as the channel is idle.
const WRITE_BUFFER: usize = 1 << 20;

/// What the writer reports once the file is open (and its header written), or why not.
pub type Opened = io::Result<PathBuf>;

/// What producers send the writer thread.
pub enum WriterMessage {
    Records(Vec<RecordWords>),
    /// A thread's slot itself and its record count: the writer copies the records out (the
    /// producer does no copy) and recycles the slot.
    Slot(&'static Slot, usize),
    Names(Vec<(NameSpace, u64, String)>),
    Finish(Trailer),
}

pub type OutputFile = FileWriter<BufWriter<File>>;

/// The writer's side of the channels: messages in, emptied buffers back out (emptied slots go
/// back to the recorder's pool).
pub struct WriterChannels {
    pub messages: Receiver<WriterMessage>,
    pub empty_buffers: Sender<Vec<RecordWords>>,
}

/// What the writer wrote, once the trailer is in the file.
#[derive(Clone, Copy, Debug)]
pub struct Written {
    /// The trailer as written (records and blocks filled in).
    pub trailer: Trailer,
    /// Dispatches enqueued or completed more than once (observe mode's replay windows, as the
    /// reader finds them), counted by the writer off the application's threads.
    pub observed_windows: u64,
}

/// The file and the records gathered for its next block; after a write error, the error (and
/// nothing more is written).
struct Output {
    file: OutputFile,
    pending: Vec<RecordWords>,
    failed: Option<io::Error>,
    rec: &'static Recorder,
    observed: Observed,
}

impl Output {
    /// Writes the gathered records as EVENTS blocks.
    fn write_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.pending = self.write(pending);
    }

    /// Writes `records` (unless a write failed before) and returns the vector emptied.
    fn write(&mut self, mut records: Vec<RecordWords>) -> Vec<RecordWords> {
        if !records.is_empty() {
            self.rec.settled(records.len());
            if self.failed.is_some() {
                self.rec.count_drops(&records);
            } else if let Err(e) = self.file.write_words(&records) {
                self.fail(e);
                self.rec.count_drops(&records);
            } else {
                self.observed.add(&records);
            }
        }
        records.clear();
        records
    }

    /// The first write error: said once; recording stops, later records are counted.
    fn fail(&mut self, e: io::Error) {
        if self.failed.is_none() {
            crate::say(&format!(
                "writing {} failed ({e}); recording stops, records are dropped from here on",
                self.rec.file().display()
            ));
            self.rec.stop();
            self.failed = Some(e);
        }
    }

    fn write_names(&mut self, names: &[(NameSpace, u64, String)]) {
        self.write_pending();
        let refs: Vec<(NameSpace, u64, &str)> =
            names.iter().map(|(s, k, n)| (*s, *k, n.as_str())).collect();
        if self.failed.is_none()
            && let Err(e) = self.file.write_names(&refs)
        {
            self.fail(e);
        }
    }

    /// A CLOCK_PAIR record (a TSC-clock file only; nothing when the pair was preempted every
    /// try), after everything gathered so far, as a block of its own: it is not a producer's
    /// record, so it stays out of the hand-over accounting.
    fn write_pair(&mut self, when: u8) {
        if let Some(p) = clock::pair() {
            self.write_pending();
            self.write_clock_pair(p, when);
        }
    }

    fn write_clock_pair(&mut self, p: Pair, when: u8) {
        let r = Record::clock_pair(sys::gettid(), p.tsc, p.ns, p.width, when);
        if self.failed.is_none()
            && let Err(e) = self.file.write_words(&[r.to_words()])
        {
            self.fail(e);
        }
    }

    /// The pairs taken when the clock was chosen, then one now: the file's START pairs, ahead of
    /// every record (a run killed at once still has two).
    fn write_start_pairs(&mut self) {
        for p in clock::start_pairs().into_iter().flatten() {
            self.write_clock_pair(p, pair_when::START);
        }
        self.write_pair(pair_when::START);
    }

    /// The channel is idle: everything gathered goes to the file now.
    fn flush(&mut self) {
        self.write_pending();
        if self.failed.is_none()
            && let Err(e) = self.file.flush()
        {
            self.fail(e);
        }
    }

    fn finish(mut self, trailer: &Trailer) -> io::Result<Written> {
        self.write_pair(pair_when::FINISH);
        self.write_pending();
        if let Some(e) = self.failed {
            return Err(e);
        }
        // What `write_trailer` fills in, kept for the finalize line.
        let t = Trailer {
            blocks: self.file.blocks(),
            events_written: self.file.records(),
            ..*trailer
        };
        // No fsync: the page cache holds a complete file that outlives the process (a SIGKILL
        // loses nothing written), and syncing a large file would outlast finalize's budget.
        self.file.write_trailer(&t)?;
        self.file.flush()?;
        Ok(Written {
            trailer: t,
            observed_windows: self.observed.windows(),
        })
    }
}

/// The writer thread: opens the file and writes its header (reporting the outcome on
/// `opened`), then writes until the Finish message.
pub fn run(
    rec: &'static Recorder,
    mut header: Header,
    ch: WriterChannels,
    opened: Sender<Opened>,
) -> io::Result<Written> {
    let file: io::Result<(OutputFile, PathBuf)> = (|| {
        let (f, used) = open_output(&rec.path)?;
        header.output_path = used.display().to_string();
        let mut w = FileWriter::new(BufWriter::with_capacity(WRITE_BUFFER, f), &header)?;
        w.flush()?; // the header is on disk before the first event
        Ok((w, used))
    })();
    match file {
        Ok((w, used)) => {
            rec.opened(used.clone());
            let _ = opened.send(Ok(used));
            writer_loop(w, ch, rec)
        }
        Err(e) => {
            let msg = e.to_string();
            if let Err(unheard) = opened.send(Err(e)) {
                // Configure stopped waiting: say it here.
                crate::say(&format!(
                    "cannot write {}: {msg}; not recording",
                    rec.path.display()
                ));
                drop(unheard);
            }
            rec.stop();
            discard(rec, &ch);
            Err(io::Error::other(msg))
        }
    }
}

/// No file: take messages until Finish, recycling slots.
fn discard(rec: &'static Recorder, ch: &WriterChannels) {
    while let Ok(m) = ch.messages.recv() {
        match m {
            WriterMessage::Slot(slot, _) => {
                slot.clear();
                rec.pool.put(slot);
            }
            WriterMessage::Finish(_) => return,
            _ => {}
        }
    }
}

/// How often the writer adds a calibration pair to a TSC-clock file.
const PAIR_INTERVAL: Duration = Duration::from_millis(PAIR_INTERVAL_MS);

/// Writes a periodic calibration pair when one is due (true when it did).
fn pair_if_due(out: &mut Output, pair_due: &mut Option<Instant>) -> bool {
    let now = Instant::now();
    let Some(due) = pair_due.filter(|&due| now >= due) else {
        return false;
    };
    out.write_pair(pair_when::PERIODIC);
    // On the interval's grid (late wake-ups do not push later pairs back), never in the past.
    let next = due + PAIR_INTERVAL;
    *pair_due = Some(if next > now {
        next
    } else {
        now + PAIR_INTERVAL
    });
    true
}

/// Runs until the Finish message (or until every producer is gone). The writer polls its
/// channel and naps when it is empty (see `wake`): it never blocks on the channel, so a
/// producer's send never has a sleeping receiver to wake. A TSC-clock file gets a calibration
/// pair every [`PAIR_INTERVAL`] whether the writer is busy or idle (a nap is far shorter).
fn writer_loop(
    file: OutputFile,
    ch: WriterChannels,
    rec: &'static Recorder,
) -> io::Result<Written> {
    let mut out = Output {
        file,
        pending: Vec::with_capacity(MAX_RECORDS_PER_BLOCK),
        failed: None,
        rec,
        observed: Observed::default(),
    };
    let mut pair_due = (clock::kind() == krphase_format::header::Clock::Tsc).then(|| {
        out.write_start_pairs();
        Instant::now() + PAIR_INTERVAL
    });
    rec.wake.register();
    let mut nap = wake::MIN_NAP;
    loop {
        match ch.messages.try_recv() {
            Ok(first) => {
                if let Some(t) = drain(&mut out, &ch, rec, first, &mut pair_due) {
                    return out.finish(&t);
                }
                out.flush();
                nap = wake::MIN_NAP;
            }
            Err(TryRecvError::Empty) => {
                if pair_if_due(&mut out, &mut pair_due) {
                    // Idle: the pair goes to the file now, as a batch would.
                    out.flush();
                }
                rec.wake.nap(nap, || !ch.messages.is_empty());
                nap = wake::longer(nap);
            }
            Err(TryRecvError::Disconnected) => break,
        }
    }
    // Every producer is gone without a Finish (cannot happen while the recorder lives).
    out.write_pending();
    Err(out
        .failed
        .unwrap_or_else(|| io::Error::other("the recorder closed without a trailer")))
}

/// Handles `first` and every message already queued after it; the trailer once Finish came.
fn drain(
    out: &mut Output,
    ch: &WriterChannels,
    rec: &'static Recorder,
    first: WriterMessage,
    pair_due: &mut Option<Instant>,
) -> Option<Trailer> {
    let mut msg = Some(first);
    while let Some(m) = msg.take() {
        match m {
            WriterMessage::Records(v) if out.pending.is_empty() && v.len() == SLOT_RECORDS => {
                // A full slot's batch is a block on its own: no copy into `pending`.
                let _ = ch.empty_buffers.try_send(out.write(v));
            }
            WriterMessage::Slot(slot, n) => {
                // SAFETY: a slot on the channel is held (its owner held it before sending it,
                // with its `n` records published), and the writer is its holder now.
                unsafe { slot.read(n, &mut out.pending) };
                slot.clear();
                rec.pool.put(slot);
                if out.pending.len() >= SLOT_RECORDS {
                    out.write_pending();
                }
            }
            WriterMessage::Records(mut v) => {
                out.pending.extend_from_slice(&v);
                v.clear();
                let _ = ch.empty_buffers.try_send(v);
                if out.pending.len() >= MAX_RECORDS_PER_BLOCK {
                    out.write_pending();
                }
            }
            WriterMessage::Names(names) => out.write_names(&names),
            WriterMessage::Finish(t) => return Some(t),
        }
        let _ = pair_if_due(out, pair_due);
        msg = ch.messages.try_recv().ok();
    }
    None
}
