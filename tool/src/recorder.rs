//! The recording pipeline: lock-free thread-local buffers of fixed records, handed in batches
//! over a bounded channel to one writer thread, buffers recycled through a return channel.
//!
//! Hot path (per event): a thread-local lookup, two relaxed loads (generation, recording), four
//! relaxed 64-bit stores into the thread's slot and one release store of its length. No lock, no
//! allocation, no system call. The slot is shared (as atomics) only so that finalize can collect
//! the records of threads that are still alive; the owner takes its slot's flag with one
//! compare-exchange per *batch*, never per event.

use crate::config::OnFull;
use crate::sys;
use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};
use krphase_format::event::{DropClass, drop_class};
use krphase_format::{FileWriter, Header, NameSpace, Record, Trailer};
use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
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
/// finalize's whole budget: flush, trailer, writer join.
pub const FINALIZE_BUDGET: Duration = Duration::from_secs(1);

/// A record as its four words ([`Record::to_words`]): what buffers and batches hold.
type Words = [u64; 4];

fn class_of(w: &Words) -> DropClass {
    drop_class(&Record::from_words(*w))
}

const OPEN: u8 = 0;
const FLUSHING: u8 = 1;
const CLOSED: u8 = 2;

/// One thread's buffer. Only its owner appends; finalize reads it after closing it.
pub struct Slot {
    words: Box<[[AtomicU64; 4]]>,
    len: AtomicUsize,
    state: AtomicU8,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            words: (0..SLOT_RECORDS).map(|_| Default::default()).collect(),
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
    done_rx: Receiver<io::Result<()>>,
    on_full: OnFull,
    recording: AtomicBool,
    finished: AtomicBool,
    pub counters: Counters,
    slots: Mutex<Vec<Weak<Slot>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    pub pid: u32,
    pub path: PathBuf,
}

impl Recorder {
    /// Creates the file, writes the header and starts the writer thread.
    pub fn create(path: PathBuf, header: &Header, on_full: OnFull) -> io::Result<Arc<Recorder>> {
        let file = File::create(&path)?;
        let writer = FileWriter::new(file, header)?;
        let (tx, rx) = bounded::<Msg>(CHANNEL_BATCHES);
        let (pool_tx, pool_rx) = bounded::<Vec<Words>>(CHANNEL_BATCHES);
        let (done_tx, done_rx) = bounded(1);
        let handle = std::thread::Builder::new()
            .name("krphase-writer".into())
            .spawn(move || {
                let r = writer_loop(writer, rx, pool_tx);
                let _ = done_tx.send(r);
            })?;
        Ok(Arc::new(Recorder {
            tx,
            pool_rx,
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
        RECORDING.store(false, Ordering::Relaxed);
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

    /// Sends one batch, applying the drop policy when the writer is behind.
    fn send_batch(&self, mut v: Vec<Words>, has_window: bool) {
        match self.tx.try_send(Msg::Records(v)) {
            Ok(()) => {}
            Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(Msg::Records(back))) => {
                v = back;
                if self.on_full == OnFull::Drop {
                    if !has_window {
                        self.count_drops(&v);
                        return;
                    }
                    // Keep the window events, drop the rest.
                    let (keep, drop): (Vec<Words>, Vec<Words>) =
                        v.iter().partition(|r| class_of(r) == DropClass::Window);
                    self.count_drops(&drop);
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
        self.send_batch(recs.iter().map(Record::to_words).collect(), true);
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
        RECORDING.store(false, Ordering::Release);
        let slots: Vec<Arc<Slot>> = match self.slots.lock() {
            Ok(g) => g.iter().filter_map(Weak::upgrade).collect(),
            Err(p) => p.into_inner().iter().filter_map(Weak::upgrade).collect(),
        };
        for slot in slots {
            // Wait (bounded) for an owner that is handing a batch over right now.
            loop {
                match slot
                    .state
                    .compare_exchange(OPEN, CLOSED, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) | Err(CLOSED) => break,
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

fn writer_loop(
    mut w: FileWriter<File>,
    rx: Receiver<Msg>,
    pool_tx: Sender<Vec<Words>>,
) -> io::Result<()> {
    let mut pending: Vec<Words> = Vec::with_capacity(krphase_format::block::MAX_RECORDS_PER_BLOCK);
    let mut failed: Option<io::Error> = None;
    let write =
        |w: &mut FileWriter<File>, pending: &mut Vec<Words>, failed: &mut Option<io::Error>| {
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
                    w.flush()?;
                    return w.get_ref().sync_data();
                }
            }
            msg = rx.try_recv().ok();
        }
        write(&mut w, &mut pending, &mut failed);
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
/// Whether the current recorder records (one load of a static on the hot path).
static RECORDING: AtomicBool = AtomicBool::new(false);
/// Bumped whenever the current recorder changes (install, fork); threads re-fetch on mismatch.
static GENERATION: AtomicU64 = AtomicU64::new(0);

type Factory = Box<dyn Fn() -> Option<Arc<Recorder>> + Send + Sync>;
/// Builds a fresh recorder in a fork child.
static FORK_FACTORY: OnceLock<Factory> = OnceLock::new();

/// Makes `rec` the process's recorder.
pub fn install(rec: Arc<Recorder>) {
    RECORDING.store(rec.is_recording(), Ordering::Release);
    *CURRENT.lock().unwrap_or_else(|p| p.into_inner()) = Some(rec);
    GENERATION.fetch_add(1, Ordering::Release);
}

pub fn set_fork_factory(f: Factory) {
    let _ = FORK_FACTORY.set(f);
}

/// The recorder of this process (a fork child gets its own, built on first use).
pub fn current() -> Option<Arc<Recorder>> {
    let mut g = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    let pid = sys::getpid();
    if let Some(r) = g.as_ref()
        && r.pid != pid
    {
        // Fork child: the parent's writer thread does not exist here.
        *g = FORK_FACTORY.get().and_then(|f| f());
        RECORDING.store(
            g.as_ref().is_some_and(|r| r.is_recording()),
            Ordering::Release,
        );
        GENERATION.fetch_add(1, Ordering::Release);
    }
    g.clone()
}

/// The current recorder without building one (finalize, atexit).
pub fn peek() -> Option<Arc<Recorder>> {
    CURRENT.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The recorder generation (changes when a fork child gets its own file).
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// Called in a fork child: make every thread re-fetch the recorder.
pub fn forked() {
    GENERATION.fetch_add(1, Ordering::Release);
}

struct Local {
    slot: Arc<Slot>,
    rec: Option<Arc<Recorder>>,
    generation: u64,
    tid: u32,
    len: usize,
    /// A partly filled slot is handed over at the first event after this time.
    flush_at: u64,
    windows: usize,
}

impl Local {
    fn attach(generation: u64) -> Local {
        let rec = current();
        let slot = Arc::new(Slot::new());
        if let Some(r) = &rec {
            let mut g = r.slots.lock().unwrap_or_else(|p| p.into_inner());
            g.retain(|w| w.strong_count() > 0);
            g.push(Arc::downgrade(&slot));
        }
        Local {
            slot,
            rec,
            generation,
            tid: sys::gettid(),
            len: 0,
            flush_at: u64::MAX,
            windows: 0,
        }
    }

    /// Hands the slot's records to the writer.
    #[cold]
    #[inline(never)]
    fn flush(&mut self) {
        if self.len == 0 {
            return;
        }
        let n = self.len;
        self.len = 0;
        let has_window = self.windows > 0;
        self.windows = 0;
        let Some(rec) = self.rec.clone() else {
            self.slot.len.store(0, Ordering::Release);
            return;
        };
        if self
            .slot
            .state
            .compare_exchange(OPEN, FLUSHING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return; // finalize closed this slot and took its records
        }
        let mut v = rec.buffer();
        self.slot.read(n, &mut v);
        self.slot.len.store(0, Ordering::Release);
        self.slot.state.store(OPEN, Ordering::Release);
        rec.send_batch(v, has_window);
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        // Thread exit: deliver what is left.
        self.flush();
    }
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// When to hand the thread's buffer over right after this record.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// Only when full or old.
    Lazy,
    /// Now (end of a replay window: keeps windows in the file promptly).
    Now,
}

/// The calling thread's OS id (cached).
pub fn thread_id() -> u32 {
    LOCAL
        .try_with(|l| l.try_borrow().ok().and_then(|l| l.as_ref().map(|l| l.tid)))
        .ok()
        .flatten()
        .unwrap_or_else(sys::gettid)
}

/// Records one event from the calling thread. `now` is a recent BOOTTIME reading used only for
/// the buffer-age check (the caller already has one).
#[inline]
pub fn record(r: Record, now: u64, flush: Flush) {
    if !RECORDING.load(Ordering::Relaxed) {
        return;
    }
    let _ = LOCAL.try_with(|cell| {
        let Ok(mut guard) = cell.try_borrow_mut() else {
            return;
        };
        let gen_now = GENERATION.load(Ordering::Acquire);
        match guard.as_mut() {
            Some(l) if l.generation == gen_now => l.push(r, now, flush),
            _ => attach_and_push(&mut guard, gen_now, r, now, flush),
        }
    });
}

/// First event of a thread, or the recorder changed (fork): re-attach, then record.
#[cold]
#[inline(never)]
fn attach_and_push(guard: &mut Option<Local>, generation: u64, r: Record, now: u64, flush: Flush) {
    if let Some(old) = guard.as_mut() {
        old.flush();
    }
    guard.insert(Local::attach(generation)).push(r, now, flush);
}

impl Local {
    #[inline(always)]
    fn push(&mut self, mut r: Record, now: u64, flush: Flush) {
        if self.rec.is_none() {
            return;
        }
        if r.thread == 0 {
            r.thread = self.tid;
        }
        let i = self.len;
        let words = r.to_words();
        let slot = &self.slot;
        let w = &slot.words[i];
        w[0].store(words[0], Ordering::Relaxed);
        w[1].store(words[1], Ordering::Relaxed);
        w[2].store(words[2], Ordering::Relaxed);
        w[3].store(words[3], Ordering::Relaxed);
        slot.len.store(i + 1, Ordering::Release);
        self.len = i + 1;
        if i == 0 {
            self.flush_at = now.saturating_add(FLUSH_AGE_NS);
        }
        if drop_class(&r) == DropClass::Window {
            self.windows += 1;
        }
        if self.len == SLOT_RECORDS || flush == Flush::Now || now > self.flush_at {
            self.flush();
        }
    }
}

/// Flushes the calling thread's buffer (finalize on the finalizing thread).
pub fn flush_current_thread() {
    let _ = LOCAL.try_with(|cell| {
        if let Ok(mut g) = cell.try_borrow_mut()
            && let Some(l) = g.as_mut()
        {
            l.flush();
        }
    });
}
