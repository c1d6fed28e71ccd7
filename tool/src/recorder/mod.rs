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

mod budget;
mod current;
mod open;
mod slot;
mod thread;
mod writer;

pub use budget::{FINALIZE_RESERVE, STALL_BUDGET, spent_ns as stall_ns};
pub use current::{ForkFactory, current, forked, install, peek, set_fork_factory};
pub use slot::{SLOT_RECORDS, slots_made};
pub use thread::{Flush, Thread, count, flush_current_thread, notice, record, with_thread};

use crate::config::OnFull;
use crate::{fork_local, say, sys};
use budget::Use;
use crossbeam_channel::{Receiver, SendTimeoutError, Sender, TrySendError, bounded};
use current::set_recording;
use krphase_format::event::{DropClass, drop_class};
use krphase_format::trailer::flags;
use krphase_format::{Header, NameSpace, Record, Trailer};
use slot::{CLOSED, FLUSHING, OPEN, RecordWords, SENT, Slot, free_slot, give_back};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use writer::{Opened, WriterChannels, WriterMessage};

/// Batches the channel holds before producers see it full.
pub const CHANNEL_BATCHES: usize = 64;
/// Longest configure waits (out of the stall budget) for the writer thread to open the file:
/// an open error is then a decline on the spot; an open still blocked (a FIFO without a reader)
/// goes on in the writer thread while the application runs.
const OPEN_WAIT: Duration = Duration::from_millis(50);

/// Finalize's longest wait on a writer that is busy but not stuck in I/O (a stuck one is bounded
/// by the stall budget).
const FINALIZE_CAP: Duration = Duration::from_secs(1);

/// A system call on the output that lasts longer than this is a stall: waits on it are charged
/// to the stall budget.
const STUCK_AFTER_NS: u64 = 1_000_000;

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
    pub dropped_names: AtomicU64,
    pub bad_payloads: AtomicU64,
    /// BOOTTIME of the first and last drop (0: none).
    first_drop_ns: AtomicU64,
    last_drop_ns: AtomicU64,
}

impl Counters {
    /// Notes that records were dropped now (the lost span in the trailer).
    fn dropped_now(&self) {
        let now = sys::boottime_ns().max(1);
        let _ = self
            .first_drop_ns
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Relaxed);
        self.last_drop_ns.fetch_max(now, Ordering::AcqRel);
    }
}

/// One output file and its writer thread. Recorders live for the process (one per process:
/// the configured one, and a fork child's own).
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
    /// Finalize has begun: hand-overs starting now leave their records to it.
    closing: AtomicBool,
    /// Sends in progress (finalize waits for them before it writes the trailer).
    in_flight: AtomicUsize,
    pub counters: Counters,
    /// The stall budget ran out while this recorder was current (said once).
    stalled: AtomicBool,
    /// Slots of the threads attached to this recorder (locked only in its own process).
    slots: Mutex<Vec<&'static Slot>>,
    pub pid: u32,
    /// The fork depth of the process that made it.
    depth: usize,
    /// The path asked for.
    pub path: PathBuf,
    /// The path the writer opened (differs when that name existed).
    used_path: OnceLock<PathBuf>,
    /// BOOTTIME ns at which the writer entered its current system call on the output (open,
    /// write, flush); 0 when it is in none.
    io_since: AtomicU64,
    /// The writer thread's id (0 until it runs).
    writer_tid: std::sync::atomic::AtomicU32,
}

impl Recorder {
    /// Starts the writer thread, which opens the file (never truncating one; see `open.rs`)
    /// and writes the header. Waits for that at most [`OPEN_WAIT`] out of the stall budget: an
    /// open error within it is returned; an open that takes longer goes on in the writer (an
    /// error then is said there and recording stops).
    pub fn create(
        path: PathBuf,
        header: &Header,
        on_full: OnFull,
    ) -> io::Result<&'static Recorder> {
        let (to_writer, messages) = bounded::<WriterMessage>(CHANNEL_BATCHES);
        let (buffers_tx, empty_buffers) = bounded::<Vec<RecordWords>>(CHANNEL_BATCHES);
        let (slots_tx, empty_slots) = bounded::<&'static Slot>(CHANNEL_BATCHES);
        let (done_tx, writer_done) = bounded(1);
        let (opened_tx, opened) = bounded::<Opened>(1);
        let rec: &'static Recorder = Box::leak(Box::new(Recorder {
            to_writer,
            empty_buffers,
            empty_slots,
            writer_done,
            on_full,
            recording: AtomicBool::new(true),
            finished: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            counters: Counters::default(),
            stalled: AtomicBool::new(false),
            slots: Mutex::new(Vec::new()),
            pid: sys::getpid(),
            depth: fork_local::depth(),
            path,
            used_path: OnceLock::new(),
            io_since: AtomicU64::new(0),
            writer_tid: std::sync::atomic::AtomicU32::new(0),
        }));
        let channels = WriterChannels {
            messages,
            empty_buffers: buffers_tx,
            empty_slots: slots_tx,
        };
        let header = header.clone();
        std::thread::Builder::new()
            .name("krphase-writer".into())
            .spawn(move || {
                rec.writer_tid.store(sys::gettid(), Ordering::Relaxed);
                let r = writer::run(rec, header, channels, opened_tx);
                let _ = done_tx.send(r);
            })?;
        let io = || rec.io_since();
        match budget::wait(Use::Run, OPEN_WAIT, &io, |t| match opened.recv_timeout(t) {
            Ok(o) => Some(Some(o)),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => None,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Some(None),
        }) {
            Some(Some(Err(e))) => Err(e),
            _ => Ok(rec),
        }
    }

    /// The writer opened `used` (called once, by the writer).
    fn opened(&self, used: PathBuf) {
        if used != self.path {
            say(&format!(
                "{} exists; writing {} instead",
                self.path.display(),
                used.display()
            ));
        }
        let _ = self.used_path.set(used);
    }

    /// When the writer entered the system call it is in, if that call has lasted longer than
    /// [`STUCK_AFTER_NS`] (a write into the page cache takes well under that; a write that
    /// lasts longer waits for the device or for a reader).
    /// A writer that is runnable (only waiting for a core on a loaded machine) is not stuck.
    fn io_since(&self) -> Option<u64> {
        let t = self.io_since.load(Ordering::Acquire);
        let long = t != 0 && sys::boottime_ns().saturating_sub(t) > STUCK_AFTER_NS;
        (long && !sys::thread_runnable(self.writer_tid.load(Ordering::Relaxed))).then_some(t)
    }

    /// Runs the writer's system call `f`, marked as I/O for waiting producers.
    fn in_io<R>(&self, f: impl FnOnce() -> R) -> R {
        self.io_since
            .store(sys::boottime_ns().max(1), Ordering::Release);
        let r = f();
        self.io_since.store(0, Ordering::Release);
        r
    }

    /// The file written: the one opened, else the one asked for.
    pub fn file(&self) -> &Path {
        self.used_path.get().unwrap_or(&self.path)
    }

    pub fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    /// Stops recording (after a panic or a write error); finalize still writes the trailer.
    pub fn stop(&self) {
        self.recording.store(false, Ordering::Relaxed);
        set_recording(false);
    }

    /// Whether this recorder belongs to the calling process (not a fork parent's).
    fn is_ours(&self) -> bool {
        self.depth == fork_local::depth()
    }

    /// Registers an attaching thread's slot (finalize collects the registered slots).
    fn adopt_slot(&self, slot: &'static Slot) {
        if self.is_ours() {
            self.slots
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(slot);
        }
    }

    /// Unregisters a detaching thread's slot.
    fn forget_slot(&self, slot: &'static Slot) {
        if self.is_ours() {
            self.slots
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|s| !std::ptr::eq(*s, slot));
        }
    }

    /// An empty slot: one the writer emptied, one an exited thread left, or a new one.
    fn spare_slot(&self) -> &'static Slot {
        let s = self.empty_slots.try_recv().unwrap_or_else(|_| free_slot());
        s.reopen();
        s
    }

    /// Runs `f` as a send in progress, unless finalize has begun (`None`): finalize waits for
    /// sends in progress before it writes the trailer, so none delivers after it.
    fn sending<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let r = (!self.closing.load(Ordering::SeqCst)).then(f);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// Hands a thread's slot holding `n` records to the writer; returns the slot the thread
    /// continues in, or `None` when finalize has begun or closed the slot (it takes the
    /// records).
    fn flush_slot(&self, slot: &'static Slot, n: usize) -> Option<&'static Slot> {
        self.sending(|| {
            slot.state
                .compare_exchange(OPEN, FLUSHING, Ordering::AcqRel, Ordering::Acquire)
                .ok()
                .map(|_| self.hand_over(slot, n))
        })
        .flatten()
    }

    /// Sends `m`, waiting out of the stall budget while the channel is full; gives `m` back
    /// when the budget ran out (said once) or the writer is gone.
    fn send_bounded(&self, m: WriterMessage, u: Use) -> Result<(), WriterMessage> {
        let m = match self.to_writer.try_send(m) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Full(m) | TrySendError::Disconnected(m)) => m,
        };
        let mut m = Some(m);
        let sent = budget::wait(u, Duration::MAX, &|| self.io_since(), |t| {
            let msg = m.take()?;
            match self.to_writer.send_timeout(msg, t) {
                Ok(()) => Some(true),
                Err(SendTimeoutError::Timeout(back)) => {
                    m = Some(back);
                    None
                }
                Err(SendTimeoutError::Disconnected(back)) => {
                    m = Some(back);
                    Some(false)
                }
            }
        });
        match (sent, m) {
            (Some(true), _) | (_, None) => Ok(()),
            (None, Some(back)) => {
                if u == Use::Run {
                    self.note_stall();
                }
                Err(back)
            }
            (Some(false), Some(back)) => Err(back),
        }
    }

    /// The stall budget ran out: say so once.
    fn note_stall(&self) {
        if !self.stalled.swap(true, Ordering::AcqRel) {
            say(&format!(
                "output {} is stalled: the application has waited {} ms on it in total, the tool's limit; from now on records that do not fit are dropped and counted in the trailer",
                self.file().display(),
                (STALL_BUDGET - FINALIZE_RESERVE).as_millis()
            ));
        }
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
        #[cfg(feature = "test-support")]
        crate::handover_delay::wait_if_injected();
        let back = match self.to_writer.try_send(WriterMessage::Slot(slot, n)) {
            Ok(()) => return fresh,
            Err(TrySendError::Full(m)) if self.on_full == OnFull::Block => {
                match self.send_bounded(m, Use::Run) {
                    Ok(()) => return fresh,
                    Err(m) => m,
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
        if recs.is_empty() {
            return;
        }
        let (mut d, mut a, mut w) = (0, 0, 0);
        for r in recs {
            match class_of(r) {
                DropClass::Dispatch => d += 1,
                DropClass::Allocation => a += 1,
                DropClass::Window => w += 1,
            }
        }
        let c = &self.counters;
        c.dropped_dispatch.fetch_add(d, Ordering::Relaxed);
        c.dropped_allocation.fetch_add(a, Ordering::Relaxed);
        c.dropped_window.fetch_add(w, Ordering::Relaxed);
        c.dropped_now();
    }

    /// Sends one batch, applying the drop policy when the writer is behind: dispatch and
    /// allocation records are dropped under `drop` (replay-window records are sorted out only
    /// then, never per event); what is kept waits out of the stall budget, and is dropped and
    /// counted once that is spent.
    fn send_batch(&self, v: Vec<RecordWords>) {
        let mut v = match self.to_writer.try_send(WriterMessage::Records(v)) {
            Ok(()) => return,
            Err(e) => match e.into_inner() {
                WriterMessage::Records(v) => v,
                _ => return,
            },
        };
        if self.on_full == OnFull::Drop {
            let (keep, drop): (Vec<RecordWords>, Vec<RecordWords>) =
                v.iter().partition(|r| class_of(r) == DropClass::Window);
            self.count_drops(&drop);
            if keep.is_empty() {
                return;
            }
            v = keep;
        }
        if let Err(WriterMessage::Records(lost)) =
            self.send_bounded(WriterMessage::Records(v), Use::Run)
        {
            self.count_drops(&lost);
        }
    }

    /// Sends a few records outside any thread buffer (rare; treated as window records).
    pub fn send_records(&self, recs: &[Record]) {
        self.send_words(recs.iter().map(Record::to_words).collect());
    }

    /// [`Recorder::send_records`] of records as words; after finalize began they are counted.
    fn send_words(&self, v: Vec<RecordWords>) {
        let mut v = Some(v);
        let sent = self.sending(|| self.send_batch(v.take().unwrap_or_default()));
        if sent.is_none()
            && let Some(v) = v
        {
            self.count_drops(&v);
        }
    }

    /// Sends string-table entries (rare): waits out of the stall budget; entries that cannot
    /// be sent are counted.
    pub fn send_names(&self, names: Vec<(NameSpace, u64, String)>) {
        if names.is_empty() {
            return;
        }
        let n = names.len() as u64;
        let sent = self
            .sending(|| {
                self.send_bounded(WriterMessage::Names(names), Use::Run)
                    .is_ok()
            })
            .unwrap_or(false);
        if !sent {
            self.counters.dropped_names.fetch_add(n, Ordering::Relaxed);
            self.counters.dropped_now();
        }
    }

    /// Flushes every live thread's records, writes the trailer and waits for the writer, all
    /// out of the stall budget (finalize's reserve included). Runs once; later calls return
    /// at once.
    pub fn finish(&self, flags: u64) {
        if self.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        self.recording.store(false, Ordering::Release);
        set_recording(false);
        self.closing.store(true, Ordering::SeqCst);
        let mut flags = flags;
        // Hand-overs in progress finish (or count) before the trailer is written.
        if !budget::wait_until(Use::Finalize, FINALIZE_CAP, || {
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
        let sent = self
            .send_bounded(WriterMessage::Finish(self.trailer(flags)), Use::Finalize)
            .is_ok();
        let done = budget::wait(
            Use::Finalize,
            FINALIZE_CAP,
            &|| self.io_since(),
            |t| match self.writer_done.recv_timeout(t) {
                Ok(r) => Some(Some(r)),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => None,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Some(None),
            },
        );
        match done {
            // The writer has written the trailer and is returning; it is not joined (nothing
            // waits on it, and a join in a fork child has been seen to fail with EINVAL).
            Some(Some(Ok(()))) if sent => {}
            // A write error was said by the writer when it happened.
            Some(Some(Err(_))) => {}
            _ if self.stalled.load(Ordering::Acquire) => {}
            _ => say(&format!(
                "output {} did not take the trailer within the tool's {} ms limit; the file ends without it (krphase reports it truncated)",
                self.file().display(),
                STALL_BUDGET.as_millis()
            )),
        }
    }

    /// Closes every registered slot and sends its records to the writer; false when some could
    /// not be sent within the budget (they are counted).
    fn collect_live_slots(&self) -> bool {
        let slots: Vec<&'static Slot> =
            self.slots.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut all = true;
        for slot in slots {
            // No hand-over is in progress (finalize waited for them): a slot is OPEN or CLOSED.
            if slot
                .state
                .compare_exchange(OPEN, CLOSED, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            let n = slot.len.load(Ordering::Acquire);
            if n > 0 {
                let mut v = Vec::with_capacity(n);
                slot.read(n, &mut v);
                if let Err(WriterMessage::Records(lost)) =
                    self.send_bounded(WriterMessage::Records(v), Use::Finalize)
                {
                    self.count_drops(&lost);
                    all = false;
                }
            }
        }
        all
    }

    /// The trailer: the counters, the finalize time and `flags`.
    fn trailer(&self, flags: u64) -> Trailer {
        let c = &self.counters;
        Trailer {
            dropped_dispatch: c.dropped_dispatch.load(Ordering::Relaxed),
            dropped_allocation: c.dropped_allocation.load(Ordering::Relaxed),
            dropped_window: c.dropped_window.load(Ordering::Relaxed),
            windows: c.windows.load(Ordering::Relaxed),
            declines: c.declines.load(Ordering::Relaxed),
            finalize_ns: sys::boottime_ns(),
            flags,
            dropped_names: c.dropped_names.load(Ordering::Relaxed),
            bad_payloads: c.bad_payloads.load(Ordering::Relaxed),
            first_drop_ns: c.first_drop_ns.load(Ordering::Relaxed),
            last_drop_ns: c.last_drop_ns.load(Ordering::Relaxed),
            stall_ns: budget::spent_ns(),
            ..Trailer::default()
        }
    }
}
