//! Closing a recorder's file: every live thread's records, the trailer, and the writer's word
//! on what it wrote, all out of the wait budget (finalize's reserve included).

use super::budget::{self, Use};
use super::slot::{RecordWords, Slot};
use super::writer::{WriterMessage, Written};
use super::{DropTally, Recorder};
use crossbeam_channel::RecvTimeoutError;
use krphase_format::trailer::flags;
use krphase_format::{Trailer, enqueue_pair};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How finalize ended.
pub enum Finished {
    /// The writer wrote the trailer (and flushed it to the file): what it wrote.
    Written(Written),
    /// The file ends without a trailer: the trailer finalize meant to write, why not, and the
    /// records handed to the writer that it did not write.
    NotWritten(Trailer, NotWritten, u64),
}

/// Why the trailer is not in the file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NotWritten {
    /// The writer did not take or write it within the wait budget.
    Budget,
    /// Writing the file failed earlier (said when it happened).
    WriteFailed,
}

impl Recorder {
    /// Flushes every live thread's records, writes the trailer and waits for the writer, all
    /// out of the wait budget. Runs once; later calls return `None` at once.
    pub fn finish(&self, flags: u64) -> Option<Finished> {
        if self.finished.swap(true, Ordering::AcqRel) {
            return None;
        }
        self.recording.store(false, Ordering::Release);
        super::set_recording(false);
        self.closing.store(true, Ordering::SeqCst);
        let mut flags = flags;
        // Hand-overs in progress finish (or count) before the trailer is written.
        if !budget::wait_until(Use::Finalize, Duration::MAX, || {
            self.in_flight.load(Ordering::SeqCst) == 0
        }) {
            flags |= flags::UNFLUSHED;
        }
        if !self.collect_live_slots() {
            flags |= flags::UNFLUSHED;
        }
        if self.stalled.load(Ordering::Acquire) {
            flags |= flags::STALLED;
        }
        let trailer = self.trailer(flags);
        let sent = self.send_bounded(WriterMessage::Finish(trailer), Use::Finalize);
        // A napping writer would see the trailer only at the end of its nap.
        self.wake.wake();
        if sent.is_err() {
            return Some(Finished::NotWritten(
                trailer,
                NotWritten::Budget,
                self.unwritten(),
            ));
        }
        let done = budget::wait(Use::Finalize, Duration::MAX, |t| {
            match self.writer_done.recv_timeout(t) {
                Ok(r) => Some(Some(r)),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(None),
            }
        });
        // The writer, once it has written the trailer, returns; it is not joined (nothing waits
        // on it, and a join in a fork child has been seen to fail with EINVAL).
        Some(match done {
            Some(Some(Ok(w))) => Finished::Written(w),
            Some(Some(Err(_)) | None) => {
                Finished::NotWritten(trailer, NotWritten::WriteFailed, self.unwritten())
            }
            None => Finished::NotWritten(trailer, NotWritten::Budget, self.unwritten()),
        })
    }

    /// Closes every registered slot that is open and sends its records to the writer, then
    /// looks at the closed slots once more for records their threads published meanwhile (see
    /// `slot.rs`); false when some could not be sent within the budget (they are counted).
    fn collect_live_slots(&self) -> bool {
        let slots: Vec<&'static Slot> =
            self.slots.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut all = true;
        let mut taken = Vec::new();
        for slot in slots {
            // A slot that is not open is held: its holder delivers its records (finalize waited
            // for hand-overs in progress), or it is spare.
            if !slot.close() {
                continue;
            }
            let mut v = self.buffer();
            taken.push((slot, slot.read_closed(0, &mut v)));
            all &= self.send_collected(v);
        }
        // A push that was under way when recording stopped publishes after the first look.
        let mut late = self.buffer();
        for (slot, from) in taken {
            slot.read_closed(from, &mut late);
            // An ENQUEUE ENTER whose EXIT had not come: written as it is (see `slot.rs`).
            if let Some([head, ts, d]) = slot.take_pending() {
                late.push(enqueue_pair::enter(head, ts, d).to_words());
            }
        }
        all & self.send_collected(late)
    }

    /// Sends records collected from closed slots; false when they were dropped (counted).
    fn send_collected(&self, v: Vec<RecordWords>) -> bool {
        if v.is_empty() {
            return true;
        }
        let Err(WriterMessage::Records(lost)) =
            self.send_bounded(WriterMessage::Records(v), Use::Finalize)
        else {
            return true;
        };
        let mut t = DropTally::default();
        lost.iter().for_each(|r| t.add(r));
        t.commit(&self.counters);
        false
    }
}
