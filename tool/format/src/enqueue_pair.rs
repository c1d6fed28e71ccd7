//! ENQUEUE_PAIR (kind 23, 4.0): an ENQUEUE ENTER and its ENQUEUE EXIT in one 32-byte record,
//! written at the EXIT (observe mode's hot path keeps the ENTER's time until then). It is not an
//! event of its own: the reader gives it as the two events it stands for, ENQUEUE ENTER then
//! ENQUEUE EXIT, so every consumer sees what the two-record form gives.
//!
//! ```text
//! head      kind 23 | kernel id (24 bits, small8 + small16) << 8 | thread << 32
//! payload0  the ENTER's host time
//! payload1  the dispatch id
//! payload2  the correlation internal id (low 32 bits) | EXIT time − ENTER time << 32
//! ```
//!
//! The fields fit only when the kernel id is below 2^24, the correlation id below 2^32 and the
//! EXIT within 2^32 clock units of the ENTER (and not before it): otherwise the writer uses the
//! two records ENQUEUE ENTER and ENQUEUE EXIT, which carry every value whole.

use crate::record::Record;

/// The pair's kind.
pub const ENQUEUE_PAIR: u8 = 23;

/// The largest kernel id the pair holds (24 bits).
pub const KERNEL_LIMIT: u64 = 1 << 24;

/// The pair's head for a thread's ENTER of `kernel`, when the kernel id fits (the ENTER's part
/// of the record, made at the ENTER).
#[inline(always)]
pub fn head(thread: u32, kernel: u64) -> Option<u64> {
    (kernel < KERNEL_LIMIT).then(|| u64::from(ENQUEUE_PAIR) | kernel << 8 | u64::from(thread) << 32)
}

/// The pair's words from its head ([`head`]), the ENTER's time, the dispatch id, the EXIT's
/// time and the correlation id; `None` when they do not fit (see the module's doc).
#[inline(always)]
pub fn words(head: u64, enter: u64, dispatch: u64, exit: u64, corr: u64) -> Option<[u64; 4]> {
    let delta = exit.wrapping_sub(enter);
    ((delta | corr) >> 32 == 0).then_some([head, enter, dispatch, corr | delta << 32])
}

/// The ENTER alone, as an ENQUEUE ENTER record, from the pair's head, ENTER time and dispatch id
/// (an ENTER whose EXIT never came, or whose pair does not fit).
pub fn enter(head: u64, enter: u64, dispatch: u64) -> Record {
    Record::enqueue_enter(
        (head >> 32) as u32,
        enter,
        dispatch,
        (head >> 8) & 0xFF_FFFF,
    )
}

/// The two records a pair stands for: ENQUEUE ENTER and ENQUEUE EXIT (`r` is the pair as a
/// record, its thread filled in).
pub fn expand(r: &Record) -> [Record; 2] {
    let [ts, dispatch, packed] = r.payload;
    let kernel = u64::from(r.small8) | u64::from(r.small16) << 8;
    let exit = ts.wrapping_add(packed >> 32);
    [
        Record::enqueue_enter(r.thread, ts, dispatch, kernel),
        Record::enqueue_exit(r.thread, exit, dispatch, packed & 0xFFFF_FFFF),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_expands_to_the_enter_and_exit_it_was_made_of() {
        let h = head(7, 0xAB_CDEF).expect("fits");
        let w = words(h, 1_000, 42, 1_250, 99).expect("fits");
        let [a, b] = expand(&Record::from_words(w));
        assert_eq!(a, Record::enqueue_enter(7, 1_000, 42, 0xAB_CDEF));
        assert_eq!(b, Record::enqueue_exit(7, 1_250, 42, 99));
        assert_eq!(enter(h, 1_000, 42), a);
    }

    #[test]
    fn values_that_do_not_fit_are_refused() {
        assert_eq!(head(7, KERNEL_LIMIT), None);
        let h = head(7, 3).expect("fits");
        assert_eq!(words(h, 10, 1, 10 + (1 << 32), 5), None, "EXIT too late");
        assert_eq!(words(h, 10, 1, 9, 5), None, "EXIT before ENTER");
        assert_eq!(
            words(h, 10, 1, 11, 1 << 32),
            None,
            "correlation id too large"
        );
        assert!(words(h, 10, 1, 10 + u64::from(u32::MAX), u64::from(u32::MAX)).is_some());
    }
}
