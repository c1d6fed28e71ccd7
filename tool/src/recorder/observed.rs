//! Observe mode's replay windows, counted by the writer from the records it writes (off the
//! application's threads). Another tool owns replay, so the tool sees no CONFIG; a replayed
//! dispatch shows as several passes sharing one dispatch id. The reader calls a dispatch with
//! more than one enqueue or completion a window; here the repeats are counted as they follow
//! each other on one thread (the SDK replays a dispatch's passes back to back, and each
//! thread's records reach the writer in order), so no state is kept per dispatch.

use super::slot::RecordWords;
use krphase_format::enqueue_pair::ENQUEUE_PAIR;
use krphase_format::event::kind;
use std::collections::{HashMap, VecDeque};

/// Dispatch ids remembered as counted (one window repeats in its enqueues and in its
/// completions, on different threads).
const COUNTED_MEMORY: usize = 64;

#[derive(Default)]
pub struct Observed {
    /// Per (thread, record kind): the dispatch id of its last record of that kind, and whether
    /// its repeat was counted.
    last: HashMap<(u32, u8), (u64, bool)>,
    counted: VecDeque<u64>,
    windows: u64,
}

impl Observed {
    /// Takes records written to the file.
    pub fn add(&mut self, recs: &[RecordWords]) {
        for w in recs {
            // An ENQUEUE_PAIR is its enqueue's ENTER (the two forms mix on one thread).
            let k = match w[0] as u8 {
                ENQUEUE_PAIR => kind::ENQUEUE_ENTER,
                k => k,
            };
            let d = match k {
                kind::ENQUEUE_ENTER => w[2],
                kind::COMPLETE => w[1],
                _ => continue,
            };
            let e = self
                .last
                .entry(((w[0] >> 32) as u32, k))
                .or_insert((u64::MAX, true));
            if e.0 != d {
                *e = (d, false);
            } else if !e.1 {
                e.1 = true;
                self.repeat(d);
            }
        }
    }

    fn repeat(&mut self, d: u64) {
        if self.counted.contains(&d) {
            return;
        }
        self.windows += 1;
        if self.counted.len() == COUNTED_MEMORY {
            self.counted.pop_front();
        }
        self.counted.push_back(d);
    }

    /// Dispatches seen more than once so far.
    pub fn windows(&self) -> u64 {
        self.windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use krphase_format::Record;

    #[test]
    fn a_dispatch_repeated_in_enqueues_and_completions_is_one_window() {
        let mut o = Observed::default();
        let enq = |d| Record::enqueue_enter(7, 1, d, 3).to_words();
        let done = |d| Record::complete(9, d, 1, 2).to_words();
        // Dispatch 1 replayed three times, 2 once, 3 twice; completions on another thread.
        let v = [
            enq(1),
            enq(1),
            done(1),
            enq(1),
            done(1),
            done(1),
            enq(2),
            done(2),
            enq(3),
            done(3),
            enq(3),
            done(3),
        ];
        o.add(&v);
        assert_eq!(o.windows(), 2);
    }

    #[test]
    fn enqueue_pairs_count_as_their_enqueues() {
        let mut o = Observed::default();
        let head = krphase_format::enqueue_pair::head(7, 3).expect("fits");
        let pair = |d| krphase_format::enqueue_pair::words(head, 1, d, 2, 5).expect("fits");
        let enq = |d| Record::enqueue_enter(7, 1, d, 3).to_words();
        // Dispatch 1 replayed (a plain enqueue, then a pair), 2 once.
        o.add(&[enq(1), pair(1), pair(2)]);
        assert_eq!(o.windows(), 1);
    }
}
