//! The publication protocol of a thread's buffer (`src/recorder/slot.rs`), model-checked with
//! loom: the file itself is compiled here against loom's atomics and cells, and loom runs every
//! interleaving of an owner appending and handing over against finalize closing and reading the
//! slot. loom fails a run in which a record is read without the write of it happening before
//! (a count published with too weak an ordering), besides the checks below: finalize sees each
//! record whole, in order, at most once, and never a record the owner handed on.

#[allow(dead_code)]
#[path = "../src/recorder/slot.rs"]
mod slot;

/// What `slot.rs` is written against: here, loom's.
mod sync {
    pub use loom::cell::UnsafeCell;
    pub use loom::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering, fence};
}

use loom::sync::Arc;
use slot::{RecordWords, Slot};

/// Record `k`: four equal words, so a torn read shows.
fn rec(k: u64) -> RecordWords {
    [k; 4]
}

/// The records' numbers; panics on a torn record.
fn numbers(v: &[RecordWords]) -> Vec<u64> {
    v.iter()
        .map(|r| {
            assert!(r.iter().all(|&w| w == r[0]), "a torn record: {r:?}");
            r[0]
        })
        .collect()
}

/// Appends `w` as the hot path does: the count read once, then the push at it.
///
/// # Safety
/// The calling thread owns the slot (it opened it and is its only writer).
unsafe fn push(s: &Slot<4>, w: RecordWords) {
    // SAFETY: the caller's guarantee; the count was just read by the owner.
    unsafe { s.push_at(s.count(), w) }
}

/// An open slot owned by the thread that appends to it.
fn open_slot() -> Arc<Slot<4>> {
    let s = Arc::new(Slot::<4>::new());
    s.reopen();
    s
}

/// Finalize: close the slot, take what is published, look once more (as `finish.rs` does);
/// the records it took, or `None` when the slot was not open.
fn finalize(s: &Slot<4>) -> Option<Vec<u64>> {
    if !s.close() {
        return None;
    }
    let mut v = Vec::new();
    let n = s.read_closed(0, &mut v);
    s.read_closed(n, &mut v);
    Some(numbers(&v))
}

#[test]
fn finalize_takes_only_whole_published_records_from_an_appending_owner() {
    loom::model(|| {
        let s = open_slot();
        let owner = {
            let s = s.clone();
            loom::thread::spawn(move || {
                for k in 1..=3 {
                    // SAFETY: this thread opened the slot and is its only writer.
                    unsafe { push(&s, rec(k)) };
                }
                // The hand-over: the slot is the owner's to send only if finalize did not
                // close it first.
                s.hold()
            })
        };
        let taken = finalize(&s);
        let handed = owner.join().expect("owner");
        match taken {
            Some(ks) => {
                assert!(!handed, "closed by finalize and handed over too");
                assert_eq!(ks, (1..=ks.len() as u64).collect::<Vec<_>>());
            }
            None => assert!(handed, "neither finalize nor the owner has the slot"),
        }
    });
}

#[test]
fn a_slot_handed_over_and_reopened_is_read_by_finalize_only_from_its_new_records() {
    loom::model(|| {
        let s = open_slot();
        let owner = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let mut handed = Vec::new();
                // SAFETY: this thread opened the slot and is its only writer.
                unsafe {
                    push(&s, rec(1));
                    push(&s, rec(2));
                }
                if !s.hold() {
                    return handed; // finalize has it: the owner lets it go
                }
                // Held: as the writer would, copy the records out, then the slot is reused.
                // SAFETY: held, with both records published by this thread.
                unsafe { s.read(s.count(), &mut handed) };
                s.reopen();
                // SAFETY: reopened by this thread, its only writer again.
                unsafe { push(&s, rec(3)) };
                handed
            })
        };
        let taken = finalize(&s);
        let handed = numbers(&owner.join().expect("owner"));
        match taken {
            Some(ks) if handed.is_empty() => {
                assert_eq!(ks, (1..=ks.len() as u64).collect::<Vec<_>>())
            }
            Some(ks) => {
                assert_eq!(handed, [1, 2]);
                assert!(ks.is_empty() || ks == [3], "finalize read {ks:?}");
            }
            None => assert_eq!(handed, [1, 2]),
        }
    });
}

/// A pending ENQUEUE ENTER (`set_pending`) against finalize: the owner keeps ENTER 10 pending,
/// then its EXIT clears it and publishes the pair (record 10), then keeps ENTER 20 pending.
/// Finalize closes the slot, reads the records twice, then takes the pending ENTER. It never
/// finds ENTER 10 both in the pair and pending, never a torn pending ENTER (its three words
/// agree), and an ENTER it takes is one the owner, looking afterwards, does not find pending.
#[test]
fn finalize_takes_a_pending_enter_whole_and_never_beside_its_pair() {
    loom::model(|| {
        let s = open_slot();
        let owner = {
            let s = s.clone();
            loom::thread::spawn(move || {
                s.set_pending(10, 10, 10);
                // The EXIT: the ENTER is cleared before the pair is published.
                if s.pending()[1] == 10 {
                    s.clear_pending();
                    // SAFETY: this thread opened the slot and is its only writer.
                    unsafe { push(&s, rec(10)) };
                }
                s.set_pending(20, 20, 20);
            })
        };
        let mut records = finalize(&s).expect("finalize closed the open slot");
        let took = s.take_pending();
        owner.join().expect("owner");
        if let Some(p) = took {
            assert!(p[0] == p[1] && p[1] == p[2], "a torn pending ENTER: {p:?}");
            records.push(p[1]);
            if p[1] == 20 {
                // The owner, looking now (its next EXIT), finds it taken.
                assert_eq!(s.pending()[1], 0, "taken by finalize and still the owner's");
            }
        }
        let tens = records.iter().filter(|&&k| k == 10).count();
        assert!(tens <= 1, "ENTER 10 found twice: {records:?}");
    });
}
