//! The recorder, the step between the events and the output file: every record a callback makes
//! goes through here. Lock-free thread-local buffers of fixed records. A full buffer is handed
//! over whole (no copy on the recording thread) to one writer thread, which copies it out and
//! puts it back into the recorder's fixed pool; the thread continues in a spare buffer from that
//! pool. Every wait an application thread makes on the writer is charged to the wait budget
//! (`budget`); past it, records are dropped and counted.
//!
//! Hand-over (per full buffer, and at the end of a window while the writer is idle): a
//! compare-exchange on the slot's state, a spare taken from the lock-free pool, a lock-free
//! channel send, and a wake of the writer only when it is parked and the pool runs low (see
//! `wake`). No lock, no allocation, no system call in steady state.
//!
//! Hot path (per event): one relaxed load of the state word (generation and recording flag), a
//! thread-local base with no destructor and no borrow flag, the record's plain stores into the
//! thread's slot and one Release store of the slot's count (all plain `mov`s on x86-64). No
//! lock, no allocation, no system call, no read-modify-write. The count is published so that
//! finalize can collect the records of threads that are still alive (the protocol is in
//! `slot`); the owner takes its slot out of finalize's reach with one compare-exchange per
//! *hand-over*, never per event.
//!
//! `slot` holds a thread's buffer and its publication protocol (written against `sync`'s types
//! so that its loom test can run the same file), `free_slots` where slots come from and the
//! list exited threads leave theirs in, `pool` the recorder's spare buffers, `budget` the wait
//! budget, `thread` the thread-local side (the hot path), `current` the process's current
//! recorder, `writer` the writer thread (`observed` its count of observe-mode windows, `wake`
//! how it waits and is woken), `finish` finalize; this file the [`Recorder`] of one output file
//! and its hand-overs. `handover_delay` (test support only) holds hand-overs on purpose.

mod budget;
mod current;
mod finish;
mod free_slots;
#[cfg(feature = "test-support")]
pub(crate) mod handover_delay;
mod observed;
mod padded;
mod pool;
mod slot;
mod sync;
mod thread;
mod wake;
mod writer;

pub use budget::{Caps, DEFAULT_PROCESS, DEFAULT_THREAD, set_caps, spent_ns as stall_ns};
pub use current::{ForkFactory, OpenFailed, current, forked, install, peek, set_fork_factory};
pub use finish::{Finished, NotWritten};
pub use free_slots::slots_made;
pub use pool::{MAX_SLOTS as MAX_POOL_SLOTS, MIN_SLOTS as MIN_POOL_SLOTS, slots_for as pool_slots};
pub use slot::SLOT_RECORDS;
pub use thread::{
    Flush, Thread, count, flush_current_thread, notice, record, this_thread, with_thread,
};
pub use writer::Written;

use crate::config::OnFull;
use crate::{fork_local, say, sys};
use budget::Use;
use crossbeam_channel::{
    Receiver, RecvTimeoutError, SendTimeoutError, Sender, TrySendError, bounded,
};
use current::set_recording;
use free_slots::give_back;
use krphase_format::enqueue_pair::ENQUEUE_PAIR;
use krphase_format::event::{DropClass, drop_class};
use krphase_format::{Header, NameSpace, Record, Trailer};
use padded::Padded;
use pool::Pool;
use slot::{RecordWords, Slot};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use wake::WriterWake;
use writer::{Opened, WriterChannels, WriterMessage};

/// Messages other than slots the writer's channel holds before producers see it full (record
/// batches off a slot, kernel names, the trailer); it also holds every slot of the pool.
pub const CHANNEL_BATCHES: usize = 64;
/// Longest configure waits (out of the wait budget) for the writer thread to open the file:
/// an open error is then a decline on the spot; an open still blocked (a FIFO without a reader)
/// goes on in the writer thread while the application runs.
const OPEN_WAIT: Duration = Duration::from_millis(50);

fn class_of(w: &RecordWords) -> DropClass {
    if w[0] as u8 == ENQUEUE_PAIR {
        return DropClass::Dispatch;
    }
    drop_class(&Record::from_words(*w))
}

/// Dropped records counted by kind, added to the counters at once.
#[derive(Default)]
struct DropTally {
    dispatch: u64,
    allocation: u64,
    window: u64,
}

impl DropTally {
    fn add(&mut self, r: &RecordWords) {
        if r[0] as u8 == ENQUEUE_PAIR {
            // The pair's two events, ENQUEUE ENTER and EXIT.
            self.dispatch += 2;
            return;
        }
        match class_of(r) {
            DropClass::Dispatch => self.dispatch += 1,
            DropClass::Allocation => self.allocation += 1,
            DropClass::Window => self.window += 1,
        }
    }

    fn commit(self, c: &Counters) {
        if self.dispatch + self.allocation + self.window == 0 {
            return;
        }
        c.dropped_dispatch
            .fetch_add(self.dispatch, Ordering::Relaxed);
        c.dropped_allocation
            .fetch_add(self.allocation, Ordering::Relaxed);
        c.dropped_window.fetch_add(self.window, Ordering::Relaxed);
        c.dropped_now();
    }
}

/// Counters that end up in the trailer. Those written in steady state (a window's end on the
/// application's threads, a hand-over, the writer's progress) each have cache lines of their
/// own: the threads that write them never share a line.
#[derive(Default)]
pub struct Counters {
    pub dropped_dispatch: AtomicU64,
    pub dropped_allocation: AtomicU64,
    pub dropped_window: AtomicU64,
    pub windows: Padded<AtomicU64>,
    pub declines: Padded<AtomicU64>,
    pub dropped_names: AtomicU64,
    pub bad_payloads: AtomicU64,
    /// BOOTTIME of the first and last drop (0: none).
    first_drop_ns: AtomicU64,
    last_drop_ns: AtomicU64,
    /// Records handed to the writer, and those it has written or counted as dropped: the
    /// difference never reached the file when it ends without its trailer.
    handed: Padded<AtomicU64>,
    settled: Padded<AtomicU64>,
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
    /// Spare slots for threads handing theirs over (the writer puts them back).
    pool: Pool,
    /// Where the writer naps; producers wake it only when the pool runs low.
    wake: WriterWake,
    writer_done: Receiver<io::Result<Written>>,
    on_full: OnFull,
    recording: AtomicBool,
    finished: AtomicBool,
    /// Finalize has begun: hand-overs starting now leave their records to it.
    closing: AtomicBool,
    /// Sends in progress (finalize waits for them before it writes the trailer).
    in_flight: AtomicUsize,
    pub counters: Counters,
    /// The wait budget ran out while this recorder was current (said once).
    stalled: AtomicBool,
    /// Every slot a thread of this recorder may be writing into: the pool's, and each
    /// attaching thread's. Slots circulate between threads, the writer and the pool, so the
    /// list only grows (bounded by the slots made); finalize closes the ones still open. Locked
    /// only in its own process, at a thread's attach and at finalize (never at a hand-over, never
    /// across a wait).
    slots: Mutex<Vec<&'static Slot>>,
    pub pid: u32,
    /// The fork depth of the process that made it.
    depth: usize,
    /// The path asked for.
    pub path: PathBuf,
    /// The path the writer opened (differs when that name existed).
    used_path: OnceLock<PathBuf>,
}

/// A recorder whose writer thread has started and is opening the file.
pub struct Starting {
    pub rec: &'static Recorder,
    opened: Receiver<Opened>,
}

impl Starting {
    /// Waits at most [`OPEN_WAIT`], out of the wait budget, for the writer to open the file: an
    /// open error within it is returned; an open that takes longer goes on in the writer (an
    /// error then is said there and recording stops).
    pub fn wait_open(self) -> io::Result<&'static Recorder> {
        let r = budget::wait(Use::Run, OPEN_WAIT, |t| match self.opened.recv_timeout(t) {
            Ok(o) => Some(Some(o)),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(None),
        });
        match r {
            Some(Some(Err(e))) => Err(e),
            _ => Ok(self.rec),
        }
    }
}

impl Recorder {
    /// [`Recorder::start`] then [`Starting::wait_open`].
    pub fn create(
        path: PathBuf,
        header: &Header,
        on_full: OnFull,
    ) -> io::Result<&'static Recorder> {
        Self::start(path, header, on_full)?.wait_open()
    }

    /// Makes the recorder and its pool of spare slots (sized for the wait budget in effect) and
    /// starts the writer thread, which opens the file (never truncating one; see
    /// `output/open.rs`) and writes the header. Does not wait.
    pub fn start(path: PathBuf, header: &Header, on_full: OnFull) -> io::Result<Starting> {
        let pool = Pool::new(pool::slots_for(budget::Caps::current().process));
        let registered = pool.slots();
        let (to_writer, messages) = bounded::<WriterMessage>(pool.size() + CHANNEL_BATCHES);
        let (buffers_tx, empty_buffers) = bounded::<Vec<RecordWords>>(CHANNEL_BATCHES);
        let (done_tx, writer_done) = bounded(1);
        let (opened_tx, opened) = bounded::<Opened>(1);
        let rec: &'static Recorder = Box::leak(Box::new(Recorder {
            to_writer,
            empty_buffers,
            pool,
            wake: WriterWake::default(),
            writer_done,
            on_full,
            recording: AtomicBool::new(true),
            finished: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            counters: Counters::default(),
            stalled: AtomicBool::new(false),
            slots: Mutex::new(registered),
            pid: sys::getpid(),
            depth: fork_local::depth(),
            path,
            used_path: OnceLock::new(),
        }));
        let channels = WriterChannels {
            messages,
            empty_buffers: buffers_tx,
        };
        let header = header.clone();
        std::thread::Builder::new()
            .name("krphase-writer".into())
            .spawn(move || {
                let r = writer::run(rec, header, channels, opened_tx);
                let _ = done_tx.send(r);
            })?;
        Ok(Starting { rec, opened })
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

    /// Whether the writer has nothing queued: a partly filled slot is then worth handing over
    /// at once (the end of a window reaches the file promptly); while it is behind, records
    /// wait in their thread's slot, so the pool is spent on full slots.
    fn writer_idle(&self) -> bool {
        self.to_writer.is_empty()
    }

    /// Registers an attaching thread's slot unless it is already (finalize collects the
    /// registered slots that are still open); false once finalize is collecting (a slot
    /// registered after its look would never be read: the thread does not attach, and its
    /// record is counted).
    fn adopt_slot(&self, slot: &'static Slot) -> bool {
        if self.is_ours() {
            let mut g = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            // Under the lock finalize takes to list the slots, after it set `closing`.
            if self.closing.load(Ordering::SeqCst) {
                return false;
            }
            if !g.iter().any(|s| std::ptr::eq(*s, slot)) {
                g.push(slot);
            }
        }
        true
    }

    /// Counts `w` as dropped when finalize has begun (a record that reaches no slot finalize
    /// collects: before the trailer is composed it is in the trailer's counts); false otherwise
    /// (recording was stopped, not finalized).
    fn count_after_finalize(&self, w: &RecordWords) -> bool {
        if !self.finished.load(Ordering::SeqCst) {
            return false;
        }
        let mut t = DropTally::default();
        t.add(w);
        t.commit(&self.counters);
        true
    }

    /// Counts one record that no slot could take as dropped.
    fn count_dropped(&self, w: &RecordWords) {
        let mut t = DropTally::default();
        t.add(w);
        t.commit(&self.counters);
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
    /// continues in (a spare, or the same one with what it kept), or `None` when finalize has
    /// begun or closed the slot (it takes the records).
    fn flush_slot(&self, slot: &'static Slot, n: usize) -> Option<&'static Slot> {
        self.sending(|| slot.hold().then(|| self.hand_over(slot, n)))
            .flatten()
    }

    /// A leaving thread's slot holding `n` records goes to the writer as it is (the writer puts
    /// it into the pool, or the list of free slots when the pool is full); true when it went,
    /// false when finalize had begun or closed it (it takes the records). When the channel is
    /// full it waits out of the wait budget, then drops and counts the records.
    fn retire_slot(&self, slot: &'static Slot, n: usize) -> bool {
        self.sending(|| {
            if !slot.hold() {
                return false;
            }
            match self.send_bounded(WriterMessage::Slot(slot, n), Use::Run) {
                Ok(()) => self.handed(n),
                Err(m) => {
                    if let WriterMessage::Slot(s, n) = m {
                        self.drop_from(s, n, |_| false);
                        give_back(s);
                    }
                }
            }
            true
        })
        .unwrap_or(false)
    }

    /// Hands a thread's slot holding `n` records (held) to the writer and returns the slot the
    /// thread continues in, open: a spare from the pool (empty), or, when the writer is a whole
    /// pool behind and the budget is spent (or, under `drop`, the slot still has room after its
    /// dispatch and allocation records were dropped), the same slot with what it kept.
    fn hand_over(&self, slot: &'static Slot, n: usize) -> &'static Slot {
        // A slot at most half full is handed over early (the end of a window, or its age) only
        // while at least half the pool is spare: a writer that falls behind leaves the pool
        // to full slots.
        if n <= SLOT_RECORDS / 2 && self.pool.spare() < self.pool.size() / 2 {
            slot.open();
            return slot;
        }
        let (fresh, n) = match self.pool.try_take() {
            Some(f) => (f, n),
            None => match self.behind(slot, n) {
                Some(f) => f,
                None => {
                    slot.open();
                    return slot;
                }
            },
        };
        // Registered already: every pool slot is, and so is every slot the writer puts back.
        fresh.reopen();
        #[cfg(feature = "test-support")]
        handover_delay::wait_if_injected();
        // The channel is full only when the writer is behind on slots and batches together
        // (threads' own slots travel beside the pool's): then the send waits out of the wait
        // budget like any other, and a slot dropped past it is a stall, said and flagged.
        match self.send_bounded(WriterMessage::Slot(slot, n), Use::Run) {
            Ok(()) => self.handed(n),
            // What comes back is the slot sent.
            Err(m) => {
                if let WriterMessage::Slot(s, n) = m {
                    self.drop_from(s, n, |_| false);
                    self.pool.put(s);
                }
            }
        }
        if self.pool_low() {
            self.wake.wake();
        }
        fresh
    }

    /// The pool is under its low-water mark (a quarter spare): a parked writer is worth a
    /// system call to wake now rather than at the end of its nap.
    fn pool_low(&self) -> bool {
        self.pool.spare() < self.pool.size() / 4
    }

    /// The pool is empty: the writer has not emptied a slot for as long as the pool lasts (the
    /// slot is more than half full: a fuller one is kept, see [`Recorder::hand_over`]). Under
    /// `drop` the slot's dispatch and allocation records are dropped (counted) first, and the
    /// thread goes on in the same slot while it is at most half full of what it kept (`None`).
    /// Otherwise it waits out of the wait budget for a spare slot (with the records to send);
    /// when the budget is spent, the slot's records are dropped and counted (`None`, the slot
    /// empty).
    fn behind(&self, slot: &'static Slot, n: usize) -> Option<(&'static Slot, usize)> {
        let mut n = n;
        if self.on_full == OnFull::Drop {
            n = self.drop_from(slot, n, |w| class_of(w) == DropClass::Window);
            if n <= SLOT_RECORDS / 2 {
                return None;
            }
        }
        self.wake.wake();
        if let Some(f) = budget::wait(Use::Run, Duration::MAX, |t| self.pool.take_within(t)) {
            return Some((f, n));
        }
        self.note_stall();
        self.drop_from(slot, n, |_| false);
        None
    }

    /// Sends `m`, waiting out of the wait budget while the channel is full; gives `m` back
    /// when the budget ran out (said once, during the run) or the writer is gone.
    fn send_bounded(&self, m: WriterMessage, u: Use) -> Result<(), WriterMessage> {
        let m = match self.to_writer.try_send(m) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Disconnected(m)) => return Err(m),
            Err(TrySendError::Full(m)) => m,
        };
        self.wake.wake();
        let mut m = Some(m);
        let sent = budget::wait(u, Duration::MAX, |t| {
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

    /// The wait budget ran out: say so once.
    fn note_stall(&self) {
        if !self.stalled.swap(true, Ordering::AcqRel) {
            let c = budget::Caps::current();
            say(&format!(
                "output {} is not keeping up: the application's threads have waited {:.1} ms on it and reached the tool's limit ({} ms a thread, {} ms a process); from now on records that do not fit are dropped and counted",
                self.file().display(),
                budget::spent_ns() as f64 / 1e6,
                c.thread.as_millis(),
                c.process.as_millis()
            ));
        }
    }

    fn buffer(&self) -> Vec<RecordWords> {
        self.empty_buffers
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(SLOT_RECORDS))
    }

    fn count_drops(&self, recs: &[RecordWords]) {
        let mut t = DropTally::default();
        recs.iter().for_each(|r| t.add(r));
        t.commit(&self.counters);
    }

    /// Keeps the first `n` records of a slot the caller holds that `keep` holds for and counts
    /// the others as dropped; returns the number kept.
    fn drop_from(&self, slot: &Slot, n: usize, keep: impl Fn(&RecordWords) -> bool) -> usize {
        let mut t = DropTally::default();
        // SAFETY: every caller holds the slot (a hand-over's, or one the channel gave back),
        // whose owner published its records before holding it.
        let kept = unsafe { slot.retain(n, keep, |r| t.add(r)) };
        t.commit(&self.counters);
        kept
    }

    /// Sends one batch, applying the drop policy when the channel is full: dispatch and
    /// allocation records are dropped under `drop`; what is kept waits out of the wait budget,
    /// and is dropped and counted once that is spent.
    fn send_batch(&self, v: Vec<RecordWords>, u: Use) -> bool {
        let n = v.len();
        let mut v = match self.to_writer.try_send(WriterMessage::Records(v)) {
            Ok(()) => {
                self.handed(n);
                return true;
            }
            Err(e) => match e.into_inner() {
                WriterMessage::Records(v) => v,
                _ => return false,
            },
        };
        if self.on_full == OnFull::Drop {
            let (keep, drop): (Vec<RecordWords>, Vec<RecordWords>) =
                v.iter().partition(|r| class_of(r) == DropClass::Window);
            self.count_drops(&drop);
            if keep.is_empty() {
                return false;
            }
            v = keep;
        }
        let n = v.len();
        match self.send_bounded(WriterMessage::Records(v), u) {
            Ok(()) => {
                self.handed(n);
                true
            }
            Err(WriterMessage::Records(lost)) => {
                self.count_drops(&lost);
                false
            }
            Err(_) => false,
        }
    }

    /// Sends a few records outside any thread buffer (rare; treated as window records).
    pub fn send_records(&self, recs: &[Record]) {
        self.send_words(recs.iter().map(Record::to_words).collect());
    }

    /// [`Recorder::send_records`] of records as words; after finalize began they are counted.
    fn send_words(&self, v: Vec<RecordWords>) {
        let mut v = Some(v);
        let sent = self.sending(|| self.send_batch(v.take().unwrap_or_default(), Use::Run));
        if sent.is_none()
            && let Some(v) = v
        {
            self.count_drops(&v);
        }
    }

    /// Sends string-table entries (rare): waits out of the wait budget; entries that cannot
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

    fn handed(&self, n: usize) {
        self.counters.handed.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// The writer wrote (or counted as dropped) `n` records.
    fn settled(&self, n: usize) {
        self.counters.settled.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Records handed to the writer that it has neither written nor counted as dropped (all of
    /// them are in the file once the trailer is).
    pub fn unwritten(&self) -> u64 {
        let c = &self.counters;
        let settled = c.settled.load(Ordering::Acquire);
        c.handed.load(Ordering::Acquire).saturating_sub(settled)
    }

    /// The trailer: the counters, the finalize time and `flags`.
    fn trailer(&self, flags: u64) -> Trailer {
        // Read before the counters: a record counted before this time is in them.
        let finalize_ns = sys::boottime_ns();
        let c = &self.counters;
        Trailer {
            dropped_dispatch: c.dropped_dispatch.load(Ordering::Relaxed),
            dropped_allocation: c.dropped_allocation.load(Ordering::Relaxed),
            dropped_window: c.dropped_window.load(Ordering::Relaxed),
            windows: c.windows.load(Ordering::Relaxed),
            declines: c.declines.load(Ordering::Relaxed),
            finalize_ns,
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
