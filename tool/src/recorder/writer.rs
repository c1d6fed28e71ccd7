//! The writer thread: takes batches and slots off the channel, gathers them into EVENTS blocks
//! and writes the file; at the end, the trailer.

use super::slot::{RecordWords, SLOT_RECORDS, Slot, give_back};
use crossbeam_channel::{Receiver, Sender};
use krphase_format::block::MAX_RECORDS_PER_BLOCK;
use krphase_format::{FileWriter, NameSpace, Trailer};
use std::fs::File;
use std::io::{self, BufWriter};
use std::sync::atomic::Ordering;

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

/// The writer's side of the channels: messages in, emptied buffers and slots back out.
pub struct WriterChannels {
    pub messages: Receiver<WriterMessage>,
    pub empty_buffers: Sender<Vec<RecordWords>>,
    pub empty_slots: Sender<&'static Slot>,
}

/// The file and the records gathered for its next block; after a write error, the error (and
/// nothing more is written).
struct Output {
    file: OutputFile,
    pending: Vec<RecordWords>,
    failed: Option<io::Error>,
}

impl Output {
    /// Writes the gathered records as EVENTS blocks.
    fn write_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        self.pending = self.write(pending);
    }

    /// Writes `records` (unless a write failed before) and returns the vector emptied.
    fn write(&mut self, mut records: Vec<RecordWords>) -> Vec<RecordWords> {
        if !records.is_empty()
            && self.failed.is_none()
            && let Err(e) = self.file.write_words(&records)
        {
            crate::say(&format!("write failed, recording stops: {e}"));
            self.failed = Some(e);
        }
        records.clear();
        records
    }

    fn write_names(&mut self, names: &[(NameSpace, u64, String)]) {
        self.write_pending();
        let refs: Vec<(NameSpace, u64, &str)> =
            names.iter().map(|(s, k, n)| (*s, *k, n.as_str())).collect();
        if self.failed.is_none()
            && let Err(e) = self.file.write_names(&refs)
        {
            self.failed = Some(e);
        }
    }

    /// The channel is idle: everything gathered goes to the file now.
    fn flush(&mut self) {
        self.write_pending();
        if self.failed.is_none()
            && let Err(e) = self.file.flush()
        {
            crate::say(&format!("write failed, recording stops: {e}"));
            self.failed = Some(e);
        }
    }

    fn finish(mut self, trailer: &Trailer) -> io::Result<()> {
        self.write_pending();
        if let Some(e) = self.failed {
            return Err(e);
        }
        self.file.write_trailer(trailer)?;
        // No fsync: the page cache holds a complete file that outlives the process (a SIGKILL
        // loses nothing written), and syncing a large file would outlast finalize's budget.
        self.file.flush()
    }
}

/// Runs until the Finish message (or until every producer is gone).
pub fn writer_loop(file: OutputFile, ch: WriterChannels) -> io::Result<()> {
    let mut out = Output {
        file,
        pending: Vec::with_capacity(MAX_RECORDS_PER_BLOCK),
        failed: None,
    };
    while let Ok(first) = ch.messages.recv() {
        let mut msg = Some(first);
        while let Some(m) = msg.take() {
            match m {
                WriterMessage::Records(v) if out.pending.is_empty() && v.len() == SLOT_RECORDS => {
                    // A full slot's batch is a block on its own: no copy into `pending`.
                    let _ = ch.empty_buffers.try_send(out.write(v));
                }
                WriterMessage::Slot(slot, n) => {
                    slot.read(n, &mut out.pending);
                    slot.len.store(0, Ordering::Release);
                    if let Err(e) = ch.empty_slots.try_send(slot) {
                        give_back(e.into_inner());
                    }
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
                WriterMessage::Finish(t) => return out.finish(&t),
            }
            msg = ch.messages.try_recv().ok();
        }
        out.flush();
    }
    out.write_pending();
    match out.failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
