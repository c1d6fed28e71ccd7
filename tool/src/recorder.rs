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

use crate::config::OnFull;
use crate::sys;
use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};
use krphase_format::event::{DropClass, drop_class};
use krphase_format::{FileWriter, Header, NameSpace, Record, Trailer};
use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Records per thread-local slot (32 KiB of records).
pub const SLOT_RECORDS: usize = 1024;
/// Batches the channel holds before producers see it full.
pub const CHANNEL_BATCHES: usize = 64;
/// A partly filled slot older than this is sent at its thread's next event.
const FLUSH_AGE_NS: u64 = 50_000_000;
/// Longest a producer waits for the writer (window events, or `KRPHASE_ON_FULL=block`) before
/// dropping and counting, so nothing can hang the application.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes the writer gathers before a system call: under load whole blocks go out in ~1 MiB
/// writes; whatever is gathered is written as soon as the channel is idle.
const WRITE_BUFFER: usize = 1 << 20;
/// finalize's whole budget: flush, trailer, writer join.
pub const FINALIZE_BUDGET: Duration = Duration::from_secs(1);

/// A record as its four words ([`Record::to_words`]): what buffers and batches hold.
type Words = [u64; 4];

fn class_of(w: &Words) -> DropClass {
    drop_class(&Record::from_words(*w))
}

/// Slot states. OPEN: its thread appends. FLUSHING: its thread is handing it over (finalize
/// waits). SENT: on its way to the writer, which copies it out and recycles it (finalize skips
/// it: the writer writes it before the trailer). CLOSED: finalize took its records.
const OPEN: u8 = 0;
const FLUSHING: u8 = 1;
const CLOSED: u8 = 2;
const SENT: u8 = 3;

/// One thread's buffer. Only its owner appends; finalize reads it after closing it. A slot lives
/// for the process (an exiting thread returns it for reuse), so the owner holds `&'static Slot`.
pub struct Slot {
    words: Box<[[AtomicU64; 4]; SLOT_RECORDS]>,
    len: AtomicUsize,
    state: AtomicU8,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            // Built on the heap (a 32 KiB array on an application thread's stack is avoided).
            words: (0..SLOT_RECORDS)
                .map(|_| Default::default())
                .collect::<Box<[[AtomicU64; 4]]>>()
                .try_into()
                .unwrap_or_else(|_| unreachable!("SLOT_RECORDS elements")),
            len: AtomicUsize::new(0),
            state: AtomicU8::new(OPEN),
        }
    }

    fn read(&self, n: usize, out: &mut Vec<Words>) {
        out.extend(self.words[..n].iter().map(|w| {
            [
                w[0].load(Ordering::Relaxed),
                w[1].load(Ordering::Relaxed),
                w[2].load(Ordering::Relaxed),
                w[3].load(Ordering::Relaxed),
            ]
        }));
    }
}

enum Msg {
    Records(Vec<Words>),
    /// A thread's buffer itself and its record count: the writer copies the records out (the
    /// producer does no copy) and recycles the slot.
    Slot(&'static Slot, usize),
    Names(Vec<(NameSpace, u64, String)>),
    Finish(Trailer),
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
    tx: Sender<Msg>,
    pool_rx: Receiver<Vec<Words>>,
    /// Slots the writer has emptied, for threads handing theirs over.
    spare_rx: Receiver<&'static Slot>,
    done_rx: Receiver<io::Result<()>>,
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
        let mut writer = FileWriter::new(BufWriter::with_capacity(WRITE_BUFFER, file), header)?;
        writer.flush()?; // the header is on disk before the first event
        let (tx, rx) = bounded::<Msg>(CHANNEL_BATCHES);
        let (pool_tx, pool_rx) = bounded::<Vec<Words>>(CHANNEL_BATCHES);
        let (spare_tx, spare_rx) = bounded::<&'static Slot>(CHANNEL_BATCHES);
        let (done_tx, done_rx) = bounded(1);
        let handle = std::thread::Builder::new()
            .name("krphase-writer".into())
            .spawn(move || {
                let r = writer_loop(writer, rx, pool_tx, spare_tx);
                let _ = done_tx.send(r);
            })?;
        Ok(Arc::new(Recorder {
            tx,
            pool_rx,
            spare_rx,
            done_rx,
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

    /// An empty slot: one the writer emptied, one an exited thread left, or a new one.
    fn spare_slot(&self) -> &'static Slot {
        let s = self.spare_rx.try_recv().unwrap_or_else(|_| free_slot());
        s.len.store(0, Ordering::Release);
        s.state.store(OPEN, Ordering::Release);
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
        let back = match self.tx.try_send(Msg::Slot(slot, n)) {
            Ok(()) => return fresh,
            Err(TrySendError::Full(m)) if self.on_full == OnFull::Block => {
                match self.tx.send_timeout(m, SEND_TIMEOUT) {
                    Ok(()) => return fresh,
                    Err(e) => e.into_inner(),
                }
            }
            Err(e) => e.into_inner(),
        };
        // The writer is behind (or gone): copy the records out and apply the drop policy.
        if let Msg::Slot(slot, n) = back {
            let mut v = self.buffer();
            slot.read(n, &mut v);
            slot.len.store(0, Ordering::Release);
            give_back(slot);
            self.send_batch(v);
        }
        fresh
    }

    fn buffer(&self) -> Vec<Words> {
        self.pool_rx
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(SLOT_RECORDS))
    }

    fn count_drops(&self, recs: &[Words]) {
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
    fn send_batch(&self, mut v: Vec<Words>) {
        match self.tx.try_send(Msg::Records(v)) {
            Ok(()) => {}
            Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(Msg::Records(back))) => {
                v = back;
                if self.on_full == OnFull::Drop {
                    // Keep the window events, drop the rest.
                    let (keep, drop): (Vec<Words>, Vec<Words>) =
                        v.iter().partition(|r| class_of(r) == DropClass::Window);
                    self.count_drops(&drop);
                    if keep.is_empty() {
                        return;
                    }
                    v = keep;
                }
                if let Err(e) = self.tx.send_timeout(Msg::Records(v), SEND_TIMEOUT)
                    && let Msg::Records(lost) = e.into_inner()
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
            let _ = self.tx.send_timeout(Msg::Names(names), SEND_TIMEOUT);
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
                let _ = self.tx.send_timeout(Msg::Records(v), left);
            }
        }
        let t = Trailer {
            dropped_dispatch: self.counters.dropped_dispatch.load(Ordering::Relaxed),
            dropped_allocation: self.counters.dropped_allocation.load(Ordering::Relaxed),
            dropped_window: self.counters.dropped_window.load(Ordering::Relaxed),
            windows: self.counters.windows.load(Ordering::Relaxed),
            declines: self.counters.declines.load(Ordering::Relaxed),
            finalize_ns: sys::boottime_ns(),
            flags,
            ..Trailer::default()
        };
        let left = deadline.saturating_duration_since(Instant::now());
        let sent = self.tx.send_timeout(Msg::Finish(t), left).is_ok();
        let left = deadline.saturating_duration_since(Instant::now());
        match self.done_rx.recv_timeout(left) {
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
}

type Out = FileWriter<BufWriter<File>>;

fn writer_loop(
    mut w: Out,
    rx: Receiver<Msg>,
    pool_tx: Sender<Vec<Words>>,
    spare_tx: Sender<&'static Slot>,
) -> io::Result<()> {
    let mut pending: Vec<Words> = Vec::with_capacity(krphase_format::block::MAX_RECORDS_PER_BLOCK);
    let mut failed: Option<io::Error> = None;
    let write = |w: &mut Out, pending: &mut Vec<Words>, failed: &mut Option<io::Error>| {
        if !pending.is_empty()
            && failed.is_none()
            && let Err(e) = w.write_words(pending)
        {
            crate::say(&format!("write failed, recording stops: {e}"));
            *failed = Some(e);
        }
        pending.clear();
    };
    while let Ok(first) = rx.recv() {
        let mut msg = Some(first);
        while let Some(m) = msg.take() {
            match m {
                Msg::Records(mut v) if pending.is_empty() && v.len() == SLOT_RECORDS => {
                    // A full slot's batch is a block on its own: no copy into `pending`.
                    write(&mut w, &mut v, &mut failed);
                    let _ = pool_tx.try_send(v);
                }
                Msg::Slot(slot, n) => {
                    slot.read(n, &mut pending);
                    slot.len.store(0, Ordering::Release);
                    if let Err(e) = spare_tx.try_send(slot) {
                        give_back(e.into_inner());
                    }
                    if pending.len() >= SLOT_RECORDS {
                        write(&mut w, &mut pending, &mut failed);
                    }
                }
                Msg::Records(mut v) => {
                    pending.extend_from_slice(&v);
                    v.clear();
                    let _ = pool_tx.try_send(v);
                    if pending.len() >= krphase_format::block::MAX_RECORDS_PER_BLOCK {
                        write(&mut w, &mut pending, &mut failed);
                    }
                }
                Msg::Names(names) => {
                    write(&mut w, &mut pending, &mut failed);
                    let refs: Vec<(NameSpace, u64, &str)> =
                        names.iter().map(|(s, k, n)| (*s, *k, n.as_str())).collect();
                    if failed.is_none()
                        && let Err(e) = w.write_names(&refs)
                    {
                        failed = Some(e);
                    }
                }
                Msg::Finish(t) => {
                    write(&mut w, &mut pending, &mut failed);
                    if let Some(e) = failed {
                        return Err(e);
                    }
                    w.write_trailer(&t)?;
                    // No fsync: the page cache holds a complete file that outlives the process
                    // (a SIGKILL loses nothing written), and syncing a large file would outlast
                    // finalize's budget.
                    return w.flush();
                }
            }
            msg = rx.try_recv().ok();
        }
        // The channel is idle: everything gathered goes to the file now.
        write(&mut w, &mut pending, &mut failed);
        if failed.is_none()
            && let Err(e) = w.flush()
        {
            crate::say(&format!("write failed, recording stops: {e}"));
            failed = Some(e);
        }
    }
    write(&mut w, &mut pending, &mut failed);
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// The current recorder and the thread-local side.

static CURRENT: Mutex<Option<Arc<Recorder>>> = Mutex::new(None);
/// `generation << 1 | recording`: the one word the hot path loads. The generation is bumped
/// whenever the current recorder changes (install, fork); a thread whose attached value differs
/// takes the slow path (re-attach, or return when not recording).
static STATE: AtomicU64 = AtomicU64::new(0);
const RECORDING_BIT: u64 = 1;
/// A thread's attached state before it attached (never a value of `STATE`'s form with a
/// generation that can be reached).
const DETACHED: u64 = u64::MAX;

type Factory = Box<dyn Fn() -> Option<Arc<Recorder>> + Send + Sync>;
/// Builds a fresh recorder in a fork child.
static FORK_FACTORY: OnceLock<Factory> = OnceLock::new();
/// Slots of exited threads, reused by new threads (slots live for the process).
static FREE_SLOTS: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

/// An empty slot from [`FREE_SLOTS`], or a new one. Never waits for the lock (in a fork child a
/// thread that no longer exists may hold it): on contention a new slot is made.
fn free_slot() -> &'static Slot {
    FREE_SLOTS
        .try_lock()
        .ok()
        .and_then(|mut g| g.pop())
        .unwrap_or_else(|| Box::leak(Box::new(Slot::new())))
}

/// Gives an emptied slot back for reuse; on lock contention it is left unused (32 KiB).
fn give_back(slot: &'static Slot) {
    if let Ok(mut g) = FREE_SLOTS.try_lock() {
        g.push(slot);
    }
}

fn set_recording(on: bool) {
    if on {
        STATE.fetch_or(RECORDING_BIT, Ordering::Release);
    } else {
        STATE.fetch_and(!RECORDING_BIT, Ordering::Release);
    }
}

/// Next generation, with the recording bit of `rec` (call with `CURRENT` locked).
fn bump_generation(rec: Option<&Arc<Recorder>>) {
    let g = (STATE.load(Ordering::Relaxed) >> 1).wrapping_add(1) & (u64::MAX >> 2);
    let on = rec.is_some_and(|r| r.is_recording());
    STATE.store(g << 1 | u64::from(on), Ordering::Release);
}

/// Makes `rec` the process's recorder.
pub fn install(rec: Arc<Recorder>) {
    let mut g = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    bump_generation(Some(&rec));
    *g = Some(rec);
}

pub fn set_fork_factory(f: Factory) {
    let _ = FORK_FACTORY.set(f);
}

/// The recorder of this process (a fork child gets its own, built on first use), and the
/// `STATE` value it belongs to.
fn current_with_state() -> (Option<Arc<Recorder>>, u64) {
    let mut g = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = g.as_ref()
        && r.pid != sys::getpid()
    {
        // Fork child: the parent's writer thread does not exist here.
        *g = FORK_FACTORY.get().and_then(|f| f());
        bump_generation(g.as_ref());
    }
    (g.clone(), STATE.load(Ordering::Acquire))
}

/// The recorder of this process (a fork child gets its own, built on first use).
pub fn current() -> Option<Arc<Recorder>> {
    current_with_state().0
}

/// The current recorder without building one (finalize, atexit).
pub fn peek() -> Option<Arc<Recorder>> {
    CURRENT.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Adds one to a counter of the current recorder: through the calling thread's attachment when
/// it is current (no lock), else through [`peek`].
pub fn count(counter: fn(&Counters) -> &AtomicU64) {
    let add = |r: &Recorder| {
        counter(&r.counters).fetch_add(1, Ordering::Relaxed);
    };
    let attached = HOT
        .try_with(|h| h.state.get() == STATE.load(Ordering::Relaxed))
        .unwrap_or(false)
        && COLD
            .try_with(|c| c.rec.try_borrow().ok()?.as_deref().map(add))
            .ok()
            .flatten()
            .is_some();
    if !attached && let Some(r) = peek() {
        add(&r);
    }
}

/// Called in a fork child: make every thread re-fetch the recorder (an atomic add only).
pub fn forked() {
    STATE.fetch_add(2, Ordering::Release);
}

/// The hot per-thread state: `Copy` cells and no destructor, so reaching it is one TLS offset
/// with no lazy-registration check and no borrow flag.
struct Hot {
    /// The `STATE` value this thread attached under; any other value sends it to the slow path.
    state: Cell<u64>,
    slot: Cell<Option<&'static Slot>>,
    /// Records in the slot (the owner's copy; `Slot::len` is the published one).
    len: Cell<usize>,
    /// A partly filled slot is handed over at the first event after this time.
    flush_at: Cell<u64>,
    tid: Cell<u32>,
    /// Placement (agent, queue) last recorded by [`Thread::record_placed`] in this attachment.
    place: Cell<(u64, u64)>,
}

const NO_PLACE: (u64, u64) = (u64::MAX, u64::MAX);

thread_local! {
    static HOT: Hot = const {
        Hot {
            state: Cell::new(DETACHED),
            slot: Cell::new(None),
            len: Cell::new(0),
            flush_at: Cell::new(u64::MAX),
            tid: Cell::new(0),
            place: Cell::new(NO_PLACE),
        }
    };
    /// The recorder this thread's slot belongs to; its destructor delivers the slot at thread
    /// exit. Touched only off the hot path.
    static COLD: Cold = const { Cold { rec: RefCell::new(None) } };
}

struct Cold {
    rec: RefCell<Option<Arc<Recorder>>>,
}

impl Drop for Cold {
    fn drop(&mut self) {
        // Thread exit: deliver what is left, give the slot back for the next thread.
        let rec = self.rec.get_mut().take();
        let _ = HOT.try_with(|h| {
            h.state.set(DETACHED);
            if let Some(rec) = &rec {
                leave(h, rec);
            }
            if let Some(slot) = h.slot.take() {
                slot.len.store(0, Ordering::Release);
                give_back(slot);
            }
        });
    }
}

/// Detaches the thread's slot from `rec`: delivers its records (in a fork child they are the
/// parent's, which the parent writes: dropped here) and unregisters it.
fn leave(h: &Hot, rec: &Recorder) {
    if rec.pid != sys::getpid() {
        // Fork child: the parent's recorder is not touched (its locks may be held by threads
        // that do not exist here); the slot is reset when the thread attaches again.
        h.len.set(0);
        return;
    }
    flush_to(h, Some(rec));
    if let Some(slot) = h.slot.get() {
        slot.len.store(0, Ordering::Release);
        rec.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|s| !std::ptr::eq(*s, slot));
    }
}

/// Attaches the calling thread to the current recorder; false when there is none (or the
/// thread is exiting).
fn attach(h: &Hot) -> bool {
    COLD.try_with(|c| {
        let Ok(mut g) = c.rec.try_borrow_mut() else {
            return false;
        };
        h.state.set(DETACHED);
        if let Some(old) = g.take() {
            leave(h, &old);
        }
        let (rec, state) = current_with_state();
        let Some(rec) = rec else { return false };
        let slot = h.slot.get().unwrap_or_else(|| free_slot());
        slot.len.store(0, Ordering::Release);
        slot.state.store(OPEN, Ordering::Release);
        rec.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(slot);
        h.slot.set(Some(slot));
        h.len.set(0);
        h.flush_at.set(u64::MAX);
        h.tid.set(sys::gettid());
        h.place.set(NO_PLACE);
        *g = Some(rec);
        h.state.set(state);
        true
    })
    .unwrap_or(false)
}

/// Hands the thread's records to its recorder's writer.
#[cold]
#[inline(never)]
fn flush_hot(h: &Hot) {
    let rec = COLD
        .try_with(|c| c.rec.try_borrow().ok().and_then(|r| r.clone()))
        .ok()
        .flatten();
    flush_to(h, rec.as_deref());
}

fn flush_to(h: &Hot, rec: Option<&Recorder>) {
    let n = h.len.replace(0);
    h.flush_at.set(u64::MAX);
    let Some(slot) = h.slot.get() else { return };
    if n == 0 {
        return;
    }
    let Some(rec) = rec else {
        slot.len.store(0, Ordering::Release);
        return;
    };
    if slot
        .state
        .compare_exchange(OPEN, FLUSHING, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return; // finalize closed this slot and took its records
    }
    // The slot itself goes to the writer; the thread continues in another.
    h.slot.set(Some(rec.hand_over(slot, n)));
}

/// When to hand the thread's buffer over right after this record.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// Only when full or old.
    Lazy,
    /// Now (end of a replay window: keeps windows in the file promptly).
    Now,
}

/// The calling thread's recording state, reached once per callback ([`with_thread`]).
#[derive(Clone, Copy)]
pub struct Thread<'a>(&'a Hot);

/// Runs `f` with the calling thread's recording handle: one thread-local access for a whole
/// callback (in a dlopen'ed library each access is a `__tls_get_addr` call). `None` only while
/// the thread is being torn down.
#[inline(always)]
pub fn with_thread<R>(f: impl FnOnce(Thread<'_>) -> R) -> Option<R> {
    HOT.try_with(|h| f(Thread(h))).ok()
}

/// Records one event from the calling thread. `now` is a recent BOOTTIME reading used only for
/// the buffer-age check (the caller already has one).
pub fn record(r: Record, now: u64, flush: Flush) {
    with_thread(|t| t.record(r, now, flush));
}

impl Thread<'_> {
    /// [`record`] on this thread's handle.
    #[inline(always)]
    pub fn record(self, r: Record, now: u64, flush: Flush) {
        let [head, w0, w1, w2] = r.to_words();
        push(self.0, head, w0, w1, w2, now, flush == Flush::Now);
    }

    /// Records `r`, then `place_rec` when `place` differs from the placement this thread last
    /// recorded since it attached (so once per file and whenever it changes).
    #[inline(always)]
    pub fn record_placed(self, r: Record, place: (u64, u64), place_rec: Record, now: u64) {
        self.record(r, now, Flush::Lazy);
        if self.0.place.get() != place && self.0.state.get() != DETACHED {
            self.0.place.set(place);
            self.record(place_rec, now, Flush::Lazy);
        }
    }
}

/// Appends one record to the thread's slot.
///
/// Fast path: one relaxed load of `STATE`, four 64-bit stores into the slot and a store of its
/// length; no lock, allocation, system call or read-modify-write. Everything else is a cold
/// call.
#[inline(always)]
fn push(h: &Hot, head: u64, w0: u64, w1: u64, w2: u64, now: u64, flush_now: bool) {
    if h.state.get() != STATE.load(Ordering::Relaxed) {
        return attach_and_record(head, w0, w1, w2, now, flush_now);
    }
    let Some(slot) = h.slot.get() else { return };
    // A record without a thread id gets the recording thread's.
    let head = if head >> 32 == 0 {
        head | (u64::from(h.tid.get()) << 32)
    } else {
        head
    };
    // `len < SLOT_RECORDS` always (a full slot is flushed at once); the mask lets the compiler
    // drop the bounds check.
    let i = h.len.get() & (SLOT_RECORDS - 1);
    let w = &slot.words[i];
    w[0].store(head, Ordering::Relaxed);
    w[1].store(w0, Ordering::Relaxed);
    w[2].store(w1, Ordering::Relaxed);
    w[3].store(w2, Ordering::Relaxed);
    slot.len.store(i + 1, Ordering::Release);
    h.len.set(i + 1);
    if i == 0 {
        h.flush_at.set(now.saturating_add(FLUSH_AGE_NS));
    }
    if i + 1 == SLOT_RECORDS || flush_now || now > h.flush_at.get() {
        flush_hot(h);
    }
}

/// First event of a thread, the recorder changed (fork), or recording is off.
#[cold]
#[inline(never)]
fn attach_and_record(head: u64, w0: u64, w1: u64, w2: u64, now: u64, flush_now: bool) {
    let _ = HOT.try_with(|h| {
        if STATE.load(Ordering::Relaxed) & RECORDING_BIT != 0 && attach(h) {
            push(h, head, w0, w1, w2, now, flush_now);
        }
    });
}

/// Flushes the calling thread's buffer (finalize on the finalizing thread).
pub fn flush_current_thread() {
    let _ = HOT.try_with(|h| {
        if h.state.get() != DETACHED {
            flush_hot(h);
        }
    });
}
