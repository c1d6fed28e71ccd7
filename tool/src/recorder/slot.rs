//! One thread's buffer of records (a slot), and how other threads read it while its thread
//! appends: the publication protocol.
//!
//! **Publication.** A slot has one *owner*, the thread appending to it. The owner writes a
//! record with plain stores, then publishes it with one Release store of the slot's committed
//! count ([`Slot::push_at`]); nothing else is shared per record. Anyone else reads only records
//! below a committed count it loaded with Acquire, and the owner never writes below the count it
//! published, so no record is read while it is written.
//!
//! **Hand-over and finalize.** A slot's state says who may touch it: OPEN (its owner appends;
//! finalize may close it), HELD (one thread holds it outside finalize's reach: its owner
//! handing it over or emptying it, the writer copying it out, the pool or the free list
//! keeping it) or CLOSED (finalize took it). The owner takes its open slot with one
//! compare-exchange OPEN → HELD per hand-over ([`Slot::hold`]), finalize with OPEN → CLOSED
//! ([`Slot::close`]): exactly one of them wins. Finalize then takes the records published so
//! far, and looks once more just before the trailer for those published since
//! ([`Slot::read_closed`] from where it stopped). An owner whose hold fails leaves the slot to
//! finalize for good: it never empties, rewrites or reuses a closed slot, so every record
//! finalize reads stays as it was published. The owner need not stop appending at once: what
//! it appends lies above everything published, and finalize's second look takes it.
//!
//! **A pending ENQUEUE ENTER.** Observe mode's ENTER is not a record: the owner keeps it in the
//! slot's three pending words ([`Slot::set_pending`]) until its EXIT writes one record for both.
//! The words follow a sequence lock keyed by the ENTER's time (never 0; 0: none pending): the
//! owner clears the time before it writes other words ([`Slot::clear_pending`], then a Release
//! fence before the next set) and stores the time last with Release; finalize reads the time,
//! the words, and swaps the time it read for 0 ([`Slot::take_pending`]), taking the ENTER only
//! when that succeeds. It does so after its last look at the records, so an ENTER whose EXIT
//! came before finalize is found in the pair record or not at all, never in both: the owner
//! clears the pending ENTER before it publishes the pair. An owner that looks after finalize
//! took it finds none. (An owner that read it just before finalize took it writes it once more
//! after recording stopped, where it is counted as dropped: the one overlap left, a count one
//! too high, never a loss.) Opening the slot for a new owner clears it.
//!
//! **Fork.** A fork child has only the forking thread, which was not inside a push; the
//! parent's slots belong to the parent's recorder, which the child never reads. The forking
//! thread re-attaches in the child (the recorder's generation changed) and starts its slot
//! empty.
//!
//! The model test `tool/tests/slot_publication.rs` runs this file under loom: finalize against
//! an owner that appends and hands over, every interleaving.

use super::sync::{AtomicU8, AtomicU64, AtomicUsize, Ordering, UnsafeCell, fence};

/// Records per slot (32 KiB of records).
pub const SLOT_RECORDS: usize = 1024;

/// A record as its four words ([`krphase_format::Record::to_words`]): what slots and batches
/// hold.
pub type RecordWords = [u64; 4];

/// Slot states (see the module's doc).
pub const OPEN: u8 = 0;
pub const HELD: u8 = 1;
pub const CLOSED: u8 = 2;

/// One thread's buffer of `N` records. A slot lives for the process (an exiting thread leaves
/// it for reuse), so its users hold `&'static Slot`.
pub struct Slot<const N: usize = SLOT_RECORDS> {
    records: Box<[UnsafeCell<RecordWords>; N]>,
    /// Records published: the owner stores it (Release) after writing them.
    committed: AtomicUsize,
    state: AtomicU8,
    /// The owner's pending ENQUEUE ENTER: head, time (0: none), dispatch id.
    pending: [AtomicU64; 3],
}

// SAFETY: a record is written only by the slot's owner at an index above its committed count
// (nobody reads there until the count's Release store publishes it), or by the one thread that
// holds the slot (nobody else reads or writes a held slot); readers read only below a committed
// count loaded with Acquire, of a slot they hold or closed. See the module's doc.
unsafe impl<const N: usize> Sync for Slot<N> {}

impl<const N: usize> Default for Slot<N> {
    fn default() -> Self {
        Slot::new()
    }
}

impl<const N: usize> Slot<N> {
    /// An empty slot, held by its maker.
    pub fn new() -> Slot<N> {
        // Built on the heap (a 32 KiB array on an application thread's stack is avoided).
        let records: Box<[UnsafeCell<RecordWords>]> =
            (0..N).map(|_| UnsafeCell::new([0; 4])).collect();
        Slot {
            records: records
                .try_into()
                .unwrap_or_else(|_| unreachable!("N records")),
            committed: AtomicUsize::new(0),
            state: AtomicU8::new(HELD),
            pending: [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// The records in the slot, as its owner or holder knows them (exact for them only: others
    /// read through [`Slot::close`] and [`Slot::read_closed`]).
    #[inline(always)]
    pub fn count(&self) -> usize {
        self.committed.load(Ordering::Relaxed)
    }

    /// Appends `w` at `i`, the count its owner read with [`Slot::count`], and publishes it (the
    /// hot path reads the count once, checks it against `N`, and passes it on). A full slot
    /// (`i` ≥ `N`) takes nothing: its owner hands it over at `N`.
    ///
    /// # Safety
    /// The caller is the slot's owner: the thread that last opened it ([`Slot::open`],
    /// [`Slot::reopen`]) while holding it, and `i` is the slot's count. No other thread pushes
    /// into it.
    #[inline(always)]
    pub unsafe fn push_at(&self, i: usize, w: RecordWords) {
        if let Some(cell) = self.records.get(i) {
            // SAFETY: only the owner writes an open slot's records, and index `i` is the
            // published count: no one reads it before the Release store below.
            cell.with_mut(|p| unsafe { p.write(w) });
            self.committed.store(i + 1, Ordering::Release);
        }
    }

    /// The owner takes its open slot out of finalize's reach (to hand it over, keep part of it
    /// or empty it): false when finalize closed it first (its records are finalize's; the owner
    /// leaves the slot alone from then on).
    pub fn hold(&self) -> bool {
        self.state
            .compare_exchange(OPEN, HELD, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The holder opens the slot again as it is: its thread goes on appending.
    pub fn open(&self) {
        self.state.store(OPEN, Ordering::Release);
    }

    /// The holder empties the slot (it stays held).
    pub fn clear(&self) {
        self.committed.store(0, Ordering::Relaxed);
    }

    /// The holder empties the slot and opens it: the thread that calls it owns it from now on
    /// (with no pending ENTER).
    pub fn reopen(&self) {
        self.clear();
        self.clear_pending();
        self.open();
    }

    /// The time of the owner's pending ENTER (0: none); as [`Slot::pending`], for the owner.
    #[inline(always)]
    pub fn pending_ts(&self) -> u64 {
        self.pending[1].load(Ordering::Relaxed)
    }

    /// The owner keeps an ENQUEUE ENTER pending: `head` and `dispatch` are kept as they are,
    /// `ts` (not 0) marks it set. None may be pending ([`Slot::clear_pending`] first).
    #[inline(always)]
    pub fn set_pending(&self, head: u64, ts: u64, dispatch: u64) {
        // Orders the clear before the words below for finalize's sequence check (free on
        // x86-64: a compiler barrier).
        fence(Ordering::Release);
        self.pending[0].store(head, Ordering::Relaxed);
        self.pending[2].store(dispatch, Ordering::Relaxed);
        self.pending[1].store(ts, Ordering::Release);
    }

    /// The owner's pending ENTER as `[head, ts, dispatch]`; `ts` 0 when none. Only the owner
    /// reads it so (it wrote it).
    #[inline(always)]
    pub fn pending(&self) -> [u64; 3] {
        [
            self.pending[0].load(Ordering::Relaxed),
            self.pending[1].load(Ordering::Relaxed),
            self.pending[2].load(Ordering::Relaxed),
        ]
    }

    /// The owner's pending ENTER is gone (its EXIT came, or it was written as a record).
    #[inline(always)]
    pub fn clear_pending(&self) {
        self.pending[1].store(0, Ordering::Relaxed);
    }

    /// Finalize: takes the pending ENTER of a closed slot, as `[head, ts, dispatch]`, when one
    /// is set and read whole; its time is set to 0 as it is taken (compare-exchange), so an
    /// owner that looks after that finds none and does not write it again. An owner that
    /// changed it meanwhile is past it: its EXIT writes it.
    pub fn take_pending(&self) -> Option<[u64; 3]> {
        let ts = self.pending[1].load(Ordering::Acquire);
        if ts == 0 || self.state.load(Ordering::Acquire) != CLOSED {
            return None;
        }
        let head = self.pending[0].load(Ordering::Relaxed);
        let dispatch = self.pending[2].load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        self.pending[1]
            .compare_exchange(ts, 0, Ordering::AcqRel, Ordering::Relaxed)
            .ok()
            .map(|_| [head, ts, dispatch])
    }

    /// Appends the first `n` records to `out`.
    ///
    /// # Safety
    /// The caller holds the slot, and its owner published them before letting it go.
    pub unsafe fn read(&self, n: usize, out: &mut Vec<RecordWords>) {
        // SAFETY: the caller's guarantee.
        unsafe { self.read_range(0, n, out) }
    }

    /// Finalize: closes an open slot for good; false when it was not open (held: its holder
    /// delivers its records; or closed already).
    pub fn close(&self) -> bool {
        self.state
            .compare_exchange(OPEN, CLOSED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Appends to `out` the records of a closed slot from `from` up to the count published now,
    /// and returns that count (`from` when the slot is not closed).
    pub fn read_closed(&self, from: usize, out: &mut Vec<RecordWords>) -> usize {
        if self.state.load(Ordering::Acquire) != CLOSED {
            return from;
        }
        let to = self.committed.load(Ordering::Acquire).min(N);
        // SAFETY: below the count loaded with Acquire, a closed slot's records are published and
        // never written again: its owner only appends above it, and nobody holds a closed slot.
        unsafe { self.read_range(from, to, out) };
        to.max(from)
    }

    /// Keeps the first `n` records for which `keep` holds, in order, at the front of the slot
    /// (its count set to their number) and passes the others to `dropped`; returns the number
    /// kept.
    ///
    /// # Safety
    /// The caller holds the slot, and its owner published them before letting it go.
    pub unsafe fn retain(
        &self,
        n: usize,
        keep: impl Fn(&RecordWords) -> bool,
        mut dropped: impl FnMut(&RecordWords),
    ) -> usize {
        let mut kept = 0;
        for (i, cell) in self.records.iter().enumerate().take(n) {
            // SAFETY: the holder alone touches a held slot's records.
            let w = cell.with(|p| unsafe { p.read() });
            if keep(&w) {
                if kept != i {
                    // SAFETY: as above.
                    self.records[kept].with_mut(|p| unsafe { p.write(w) });
                }
                kept += 1;
            } else {
                dropped(&w);
            }
        }
        self.committed.store(kept, Ordering::Relaxed);
        kept
    }

    /// # Safety
    /// Records `from..to` are published, and no thread writes them during the call.
    unsafe fn read_range(&self, from: usize, to: usize, out: &mut Vec<RecordWords>) {
        let cells = self.records.get(from..to.min(N)).unwrap_or_default();
        // SAFETY: the caller's guarantee.
        out.extend(cells.iter().map(|c| c.with(|p| unsafe { p.read() })));
    }
}
