//! The recording pipeline: lock-free thread-local buffers of fixed records. A full buffer is
//! handed over whole (no copy on the recording thread) through a bounded channel to one writer
//! thread, which copies it out and recycles it; the thread continues in a spare buffer.
//!
//! Hot path (per event): one relaxed load of the state word (generation and recording flag), a
//! thread-local base with no destructor and no borrow flag, four 64-bit stores into the thread's
//! slot and one store of its length (all plain `mov`s on x86-64). No lock, no allocation, no
//! system call. The slot is shared (as atomics) only so that finalize can collect the records of
//! threads that are still alive; the owner takes its slot's flag with one compare-exchange per
//! *batch*, never per event.
//!
//! `slot` holds a thread's buffer and the pool of empty ones, `thread` the thread-local side
//! (the hot path), `current` the process's current recorder, `writer` the writer thread;
//! this file the [`Recorder`] of one output file.

mod current;
mod slot;
mod thread;
mod writer;

pub use current::{ForkFactory, current, forked, install, peek, set_fork_factory};
pub use slot::SLOT_RECORDS;
pub use thread::{Flush, Thread, count, flush_current_thread, notice, record, with_thread};

use crate::config::OnFull;
use crate::sys;
use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};
use current::set_recording;
use krphase_format::event::{DropClass, drop_class};
use krphase_format::{FileWriter, Header, NameSpace, Record, Trailer};
use slot::{CLOSED, OPEN, RecordWords, SENT, Slot, free_slot, give_back};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use writer::{WriterChannels, WriterMessage, writer_loop};

/// Batches the channel holds before producers see it full.
pub const CHANNEL_BATCHES: usize = 64;
/// Longest a producer waits for the writer (window events, or `KRPHASE_ON_FULL=block`) before
/// dropping and counting, so nothing can hang the application.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes the writer gathers before a system call: under load whole blocks go out in ~1 MiB
/// writes; whatever is gathered is written as soon as the channel is idle.
const WRITE_BUFFER: usize = 1 << 20;
/// finalize's whole budget: flush, trailer, writer join.
pub const FINALIZE_BUDGET: Duration = Duration::from_secs(1);

fn class_of(w: &RecordWords) -> DropClass {
    drop_class(&Record::from_words(*w))
}

/// Counters that end up in the trailer.
#[derive(Default)]
pub struct Counters {
    pub dropped_dispatch: AtomicU64,
    pub dropped_allocation: AtomicU64,
    pub dropped_window: AtomicU64,
    pub windows: AtomicU64,
    pub declines: AtomicU64,
}

/// One output file and its writer thread.
pub struct Recorder {
    to_writer: Sender<WriterMessage>,
    /// Record vectors the writer has emptied, for batches built off a slot.
    empty_buffers: Receiver<Vec<RecordWords>>,
    /// Slots the writer has emptied, for threads handing theirs over.
    empty_slots: Receiver<&'static Slot>,
    writer_done: Receiver<io::Result<()>>,
    on_full: OnFull,
    recording: AtomicBool,
    finished: AtomicBool,
    pub counters: Counters,
    /// Slots of the threads attached to this recorder.
    slots: Mutex<Vec<&'static Slot>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    pub pid: u32,
    pub path: PathBuf,
}

impl Recorder {
    /// Creates the file, writes the header and starts the writer thread.
    pub fn create(path: PathBuf, header: &Header, on_full: OnFull) -> io::Result<Arc<Recorder>> {
        let file = File::create(&path)?;
        let mut file = FileWriter::new(BufWriter::with_capacity(WRITE_BUFFER, file), header)?;
        file.flush()?; // the header is on disk before the first event
        let (to_writer, messages) = bounded::<WriterMessage>(CHANNEL_BATCHES);
        let (buffers_tx, empty_buffers) = bounded::<Vec<RecordWords>>(CHANNEL_BATCHES);
        let (slots_tx, empty_slots) = bounded::<&'static Slot>(CHANNEL_BATCHES);
        let (done_tx, writer_done) = bounded(1);
        let channels = WriterChannels {
            messages,
            empty_buffers: buffers_tx,
            empty_slots: slots_tx,
        };
        let handle = std::thread::Builder::new()
            .name("krphase-writer".into())
            .spawn(move || {
                let r = writer_loop(file, channels);
                let _ = done_tx.send(r);
            })?;
        Ok(Arc::new(Recorder {
            to_writer,
            empty_buffers,
            empty_slots,
            writer_done,
            on_full,
            recording: AtomicBool::new(true),
            finished: AtomicBool::new(false),
            counters: Counters::default(),
            slots: Mutex::new(Vec::new()),
            writer: Mutex::new(Some(handle)),
            pid: sys::getpid(),
            path,
        }))
    }

    pub fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    /// Stops recording (after a panic or a write error); finalize still writes the trailer.
    pub fn stop(&self) {
        self.recording.store(false, Ordering::Relaxed);
        set_recording(false);
    }

    /// Registers an attaching thread's slot (finalize collects the registered slots).
    fn adopt_slot(&self, slot: &'static Slot) {
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(slot);
    }

    /// Unregisters a detaching thread's slot.
    fn forget_slot(&self, slot: &'static Slot) {
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|s| !std::ptr::eq(*s, slot));
    }

    /// An empty slot: one the writer emptied, one an exited thread left, or a new one.
    fn spare_slot(&self) -> &'static Slot {
        let s = self.empty_slots.try_recv().unwrap_or_else(|_| free_slot());
        s.reopen();
        s
    }

    /// Hands a thread's slot holding `n` records to the writer and returns the slot the
    /// thread continues in. Called with `slot` in state FLUSHING.
    fn hand_over(&self, slot: &'static Slot, n: usize) -> &'static Slot {
        let fresh = self.spare_slot();
        {
            let mut g = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            match g.iter_mut().find(|s| std::ptr::eq(**s, slot)) {
                Some(e) => *e = fresh,
                None => g.push(fresh),
            }
        }
        slot.state.store(SENT, Ordering::Release);
        let back = match self.to_writer.try_send(WriterMessage::Slot(slot, n)) {
            Ok(()) => return fresh,
            Err(TrySendError::Full(m)) if self.on_full == OnFull::Block => {
                match self.to_writer.send_timeout(m, SEND_TIMEOUT) {
                    Ok(()) => return fresh,
                    Err(e) => e.into_inner(),
                }
            }
            Err(e) => e.into_inner(),
        };
        // The writer is behind (or gone): copy the records out and apply the drop policy.
        if let WriterMessage::Slot(slot, n) = back {
            let mut v = self.buffer();
            slot.read(n, &mut v);
            slot.len.store(0, Ordering::Release);
            give_back(slot);
            self.send_batch(v);
        }
        fresh
    }

    fn buffer(&self) -> Vec<RecordWords> {
        self.empty_buffers
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(SLOT_RECORDS))
    }

    fn count_drops(&self, recs: &[RecordWords]) {
        let (mut d, mut a, mut w) = (0, 0, 0);
        for r in recs {
            match class_of(r) {
                DropClass::Dispatch => d += 1,
                DropClass::Allocation => a += 1,
                DropClass::Window => w += 1,
            }
        }
        self.counters
            .dropped_dispatch
            .fetch_add(d, Ordering::Relaxed);
        self.counters
            .dropped_allocation
            .fetch_add(a, Ordering::Relaxed);
        self.counters.dropped_window.fetch_add(w, Ordering::Relaxed);
    }

    /// Sends one batch, applying the drop policy when the writer is behind (replay-window
    /// records are kept: sorted out only then, never per event).
    fn send_batch(&self, mut v: Vec<RecordWords>) {
        match self.to_writer.try_send(WriterMessage::Records(v)) {
            Ok(()) => {}
            Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(WriterMessage::Records(back))) => {
                v = back;
                if self.on_full == OnFull::Drop {
                    // Keep the window events, drop the rest.
                    let (keep, drop): (Vec<RecordWords>, Vec<RecordWords>) =
                        v.iter().partition(|r| class_of(r) == DropClass::Window);
                    self.count_drops(&drop);
                    if keep.is_empty() {
                        return;
                    }
                    v = keep;
                }
                if let Err(e) = self
                    .to_writer
                    .send_timeout(WriterMessage::Records(v), SEND_TIMEOUT)
                    && let WriterMessage::Records(lost) = e.into_inner()
                {
                    self.count_drops(&lost);
                }
            }
            Err(TrySendError::Full(_)) => {}
        }
    }

    /// Sends a few records outside any thread buffer (rare; treated as window records).
    pub fn send_records(&self, recs: &[Record]) {
        self.send_batch(recs.iter().map(Record::to_words).collect());
    }

    /// Sends string-table entries (rare; waits for the writer, bounded).
    pub fn send_names(&self, names: Vec<(NameSpace, u64, String)>) {
        if !names.is_empty() {
            let _ = self
                .to_writer
                .send_timeout(WriterMessage::Names(names), SEND_TIMEOUT);
        }
    }

    /// Flushes every live thread's records, writes the trailer and joins the writer, all within
    /// [`FINALIZE_BUDGET`]. Runs once; later calls return at once.
    pub fn finish(&self, flags: u64) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        let deadline = Instant::now() + FINALIZE_BUDGET;
        self.recording.store(false, Ordering::Release);
        set_recording(false);
        self.collect_live_slots(deadline);
        let left = deadline.saturating_duration_since(Instant::now());
        let sent = self
            .to_writer
            .send_timeout(WriterMessage::Finish(self.trailer(flags)), left)
            .is_ok();
        let left = deadline.saturating_duration_since(Instant::now());
        match self.writer_done.recv_timeout(left) {
            Ok(Ok(())) if sent => {
                // The writer has synced the file and is returning; it is not joined (a join in
                // a fork child has been seen to fail with EINVAL, and nothing waits on it).
                if let Ok(mut g) = self.writer.lock() {
                    g.take();
                }
            }
            Ok(Err(e)) => crate::say(&format!("writing {} failed: {e}", self.path.display())),
            _ => {
                crate::say(&format!(
                    "the writer did not finish {} within {} ms; the file may lack its trailer",
                    self.path.display(),
                    FINALIZE_BUDGET.as_millis()
                ));
            }
        }
    }

    /// Closes every registered slot and sends its records to the writer.
    fn collect_live_slots(&self, deadline: Instant) {
        let slots: Vec<&'static Slot> =
            self.slots.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for slot in slots {
            // Wait (bounded) for an owner that is handing a batch over right now.
            loop {
                match slot
                    .state
                    .compare_exchange(OPEN, CLOSED, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) | Err(CLOSED) | Err(SENT) => break,
                    Err(_) if Instant::now() < deadline => std::thread::yield_now(),
                    Err(_) => break,
                }
            }
            if slot.state.load(Ordering::Acquire) != CLOSED {
                continue;
            }
            let n = slot.len.load(Ordering::Acquire);
            if n > 0 {
                let mut v = Vec::with_capacity(n);
                slot.read(n, &mut v);
                let left = deadline.saturating_duration_since(Instant::now());
                let _ = self.to_writer.send_timeout(WriterMessage::Records(v), left);
            }
        }
    }

    /// The trailer: the counters, the finalize time and `flags`.
    fn trailer(&self, flags: u64) -> Trailer {
        Trailer {
            dropped_dispatch: self.counters.dropped_dispatch.load(Ordering::Relaxed),
            dropped_allocation: self.counters.dropped_allocation.load(Ordering::Relaxed),
            dropped_window: self.counters.dropped_window.load(Ordering::Relaxed),
            windows: self.counters.windows.load(Ordering::Relaxed),
            declines: self.counters.declines.load(Ordering::Relaxed),
            finalize_ns: sys::boottime_ns(),
            flags,
            ..Trailer::default()
        }
    }
}
