//! Windows do not depend on the order in which different threads' records reach the file.
//!
//! The tool's recorder keeps one buffer per thread and hands a buffer to the writer when it is
//! full or when its oldest record is `FLUSH_AGE_MS` (50 ms) old (`tool/src/recorder/thread.rs`).
//! So each thread's records reach the file in that thread's order, in blocks, and a block is
//! written at some time between its last record and its first record + 50 ms (later when the
//! writer lags; the blocks of one thread in order). Here the records of drive-mode windows from
//! two dispatching threads and the SDK's completion thread are cut into such blocks, given
//! seeded write times within those bounds and merged in write-time order; every shuffle must give
//! the windows of the in-order stream, which are checked against the generated truth first.

mod common;

use common::reconstruct;
use krphase_format::Event;
use krphase_format::event::Decision;
use krphase_format::synthetic::Synthetic;
use krphase_windows::{DeclineReason, Outcome, Output, Window};
use std::collections::HashSet;

const MS: u64 = 1_000_000;
/// The recorder's flush age (`FLUSH_AGE_MS` in `tool/src/recorder/thread.rs`), in ns.
const FLUSH_AGE: u64 = 50 * MS;
const SHUFFLES: u64 = 40;
const WINDOWS_PER_THREAD: u64 = 12;
const PASSES: u32 = 3;

/// splitmix64: a small seeded generator (the test needs no crate for it).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// The host time a record was taken at: 0 for a record without one (placement, correlation,
/// byte estimate: taken with the record before it).
fn stamp(e: &Event) -> u64 {
    e.host_time().unwrap_or(0)
}

/// How the generated records are laid out.
#[derive(Debug, Clone, Copy)]
struct Shape {
    /// Both threads dispatch to one queue (else each to its own).
    shared_queue: bool,
    /// Completions as one COMPLETE_AT record (what the tool writes), else COMPLETE_HOST +
    /// COMPLETE.
    complete_at: bool,
}

const SHAPES: [Shape; 4] = [
    Shape {
        shared_queue: false,
        complete_at: false,
    },
    Shape {
        shared_queue: true,
        complete_at: false,
    },
    Shape {
        shared_queue: false,
        complete_at: true,
    },
    Shape {
        shared_queue: true,
        complete_at: true,
    },
];

/// A generated window: dispatch id, thread and each pass's GPU interval.
type WindowTruth = (u64, u32, Vec<(u64, u64)>);

/// The generated dispatches (the truth the test checks).
#[derive(Default)]
struct Truth {
    windows: Vec<WindowTruth>,
    /// SDK declines (the tool asked for one pass): dispatch id.
    declines: Vec<u64>,
    /// Dispatches that ran once (plain ones and the declined ones' runs): dispatch id.
    plain: Vec<u64>,
}

/// One dispatching thread's records and the completion thread's, being generated.
struct Gen {
    s: Synthetic,
    shape: Shape,
    evs: Vec<Event>,
    completions: Vec<(u64, Event)>,
    /// The thread's placement was recorded at an enqueue (the tool records it when it changes).
    placed: bool,
}

impl Gen {
    /// An enqueue of `d` at `t` (with the thread's placement the first time), and the completion
    /// of its kernel; returns the GPU interval.
    fn enqueue(&mut self, d: u64, t: u64) -> (u64, u64) {
        let s = self.s;
        self.evs.push(Event::EnqueueEnter {
            thread: s.thread,
            ts: t,
            dispatch_id: d,
            kernel_id: s.kernel_id,
        });
        if !self.placed {
            self.placed = true;
            self.evs.push(Event::DispatchInfo {
                thread: s.thread,
                dispatch_id: d,
                agent: s.agent,
                queue: s.queue,
            });
        }
        self.evs.push(Event::EnqueueExit {
            thread: s.thread,
            ts: t + 4_000,
            dispatch_id: d,
            correlation: d,
        });
        let (gs, ge) = (t + 24_000, t + 204_000);
        let host = ge + 30_000;
        if self.shape.complete_at {
            let e = Event::CompleteAt {
                ts: host,
                dispatch_id: d,
                gpu_start: gs,
                gpu_end: ge,
            };
            self.completions.push((host, e));
        } else {
            self.completions.push((host, s.complete_host(d, host, ge)));
            self.completions.push((host + 1, s.complete(d, gs, ge)));
        }
        (gs, ge)
    }

    /// CONFIG ENTER and what the tool records with it, asking for `n` passes.
    fn open(&mut self, d: u64, t: u64, n: u64) {
        let s = self.s;
        self.evs.extend(s.open(d, t, Decision::Replay, n));
        self.evs.push(Event::Correlation {
            thread: s.thread,
            dispatch_id: d,
            internal: d,
            ancestor: 0,
        });
        if n > 1 {
            self.evs.push(Event::WindowBytes {
                thread: s.thread,
                dispatch_id: d,
                classified: 4096,
                regions: 2,
                upper_bound: 8192,
            });
        }
    }
}

/// From threads 7 and 8 (a kernel each, own queues or one shared): drive-mode windows of
/// `PASSES` passes with every pass enqueued inside it, a plain dispatch after each, and after
/// every fourth an SDK decline (the tool asked for one pass) that then runs once; and the
/// completion thread's records of every kernel run. Returns each thread's records in its own
/// order, and the truth.
fn per_thread_records(shape: Shape) -> (Vec<Vec<Event>>, Truth) {
    let mut threads = Vec::new();
    let mut completions = Vec::new();
    let mut truth = Truth::default();
    for (k, thread) in [7u32, 8].into_iter().enumerate() {
        let k = k as u64;
        let mut g = Gen {
            s: Synthetic {
                thread,
                kernel_id: 20 + k,
                agent: 1,
                queue: if shape.shared_queue { 30 } else { 30 + k },
                layout: 2,
            },
            shape,
            evs: Vec::new(),
            completions: Vec::new(),
            placed: false,
        };
        // The two threads' windows interleave in time: thread 8 starts 0.7 ms later.
        let mut t = MS + k * 700_000;
        for w in 0..WINDOWS_PER_THREAD {
            let d = 100 * (k + 1) + w;
            g.open(d, t, u64::from(PASSES));
            let mut gpu = Vec::new();
            let mut p = t + 50_000;
            for i in 0..PASSES {
                let mut pass = g.s.pass(d, i, PASSES, p, Some(p + 300_000));
                let pass_exit = pass.pop().expect("PASS EXIT");
                g.evs.extend(pass);
                gpu.push(g.enqueue(d, p + 5_000));
                g.evs.push(pass_exit);
                // The restore before the next pass.
                p += 450_000;
            }
            g.evs.push(g.s.config_exit(d, p));
            truth.windows.push((d, thread, gpu));
            let plain = 1000 + 100 * k + w;
            g.enqueue(plain, p + 20_000);
            truth.plain.push(plain);
            t = p + 400_000;
            if w % 4 == 3 {
                let declined = 5000 + 100 * k + w;
                g.open(declined, t, 1);
                g.evs.push(g.s.config_exit(declined, t + 30));
                g.enqueue(declined, t + 1_000);
                truth.declines.push(declined);
                truth.plain.push(declined);
                t += 400_000;
            }
        }
        threads.push(g.evs);
        completions.extend(g.completions);
    }
    // The completion thread records in the order its callbacks ran.
    completions.sort_by_key(|&(ts, _)| ts);
    threads.push(completions.into_iter().map(|(_, e)| e).collect());
    (threads, truth)
}

/// One thread's records cut into blocks of 1..=`max_block` records, each given a write time
/// between its last record's stamp and its first record's stamp + `FLUSH_AGE` (after the
/// thread's previous block).
fn blocks(rng: &mut Rng, evs: &[Event], max_block: u64) -> Vec<(u64, Vec<Event>)> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut prev_write = 0;
    while i < evs.len() {
        let n = (rng.range(1, max_block) as usize).min(evs.len() - i);
        let block = evs[i..i + n].to_vec();
        let first = block
            .iter()
            .map(stamp)
            .find(|&s| s > 0)
            .unwrap_or(prev_write);
        let last = block.iter().map(stamp).max().unwrap_or(first);
        let write = rng
            .range(last, (first + FLUSH_AGE).max(last))
            .max(prev_write + 1);
        prev_write = write;
        out.push((write, block));
        i += n;
    }
    out
}

/// The file's record order for `seed`: every thread's blocks merged by write time (ties in a
/// seeded order), each thread's own order kept.
fn shuffled(threads: &[Vec<Event>], seed: u64) -> Vec<Event> {
    let mut rng = Rng(seed);
    let mut all: Vec<(u64, u64, Vec<Event>)> = Vec::new();
    for evs in threads {
        let max_block = rng.range(1, 24);
        for (write, block) in blocks(&mut rng, evs, max_block) {
            all.push((write, rng.next(), block));
        }
    }
    // One thread's write times increase; the same time on two threads: a seeded order.
    all.sort_by_key(|&(write, tie, _)| (write, tie));
    all.into_iter().flat_map(|b| b.2).collect()
}

/// The in-order stream: every record written at once, at its own stamp (a writer with no delay).
fn in_order(threads: &[Vec<Event>]) -> Vec<Event> {
    let mut evs: Vec<(u64, usize, usize, Event)> = Vec::new();
    for (t, th) in threads.iter().enumerate() {
        let mut last = 0;
        for (i, e) in th.iter().enumerate() {
            last = stamp(e).max(last);
            evs.push((last, t, i, e.clone()));
        }
    }
    evs.sort_by_key(|&(s, t, i, _)| (s, t, i));
    evs.into_iter().map(|e| e.3).collect()
}

/// Everything reconstructed from `evs`, sorted by kind and dispatch id (the order in which
/// outputs come out may follow the records' order; what each one is must not).
fn outputs_of(evs: &[Event]) -> Vec<Output> {
    let (before, after) = reconstruct(evs);
    let mut all: Vec<Output> = before.into_iter().chain(after).collect();
    all.sort_by_key(|o| match o {
        Output::Window(w) => (0, w.dispatch_id),
        Output::Decline(d) => (1, d.dispatch_id),
        Output::Plain(p) => (2, p.dispatch_id),
        Output::Counter(c) => (3, c.dispatch_id),
    });
    all
}

/// Whether some window's completion comes before its CONFIG ENTER in `evs` (the incident: a
/// completion block flushed by age ahead of the dispatching thread's block).
fn a_completion_precedes_its_config(evs: &[Event]) -> bool {
    let configured: HashSet<u64> = evs
        .iter()
        .filter_map(|e| match *e {
            Event::ConfigEnter { dispatch_id, .. } => Some(dispatch_id),
            _ => None,
        })
        .collect();
    let mut opened = HashSet::new();
    for e in evs {
        match *e {
            Event::ConfigEnter { dispatch_id, .. } => {
                opened.insert(dispatch_id);
            }
            Event::Complete { dispatch_id, .. } | Event::CompleteAt { dispatch_id, .. }
                if configured.contains(&dispatch_id) && !opened.contains(&dispatch_id) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

#[test]
fn in_order_records_give_the_generated_dispatches() {
    for shape in SHAPES {
        let (threads, truth) = per_thread_records(shape);
        let evs = in_order(&threads);
        assert!(!a_completion_precedes_its_config(&evs));
        let out = outputs_of(&evs);
        let windows: Vec<&Window> = out
            .iter()
            .filter_map(|o| match o {
                Output::Window(w) => Some(w),
                _ => None,
            })
            .collect();
        assert_eq!(windows.len(), truth.windows.len(), "{shape:?}");
        for (w, (d, thread, gpu)) in windows.iter().zip(&truth.windows) {
            assert_eq!(w.dispatch_id, *d);
            assert_eq!(w.thread, *thread, "{shape:?}");
            let queue = if shape.shared_queue {
                30
            } else {
                30 + u64::from(thread - 7)
            };
            assert_eq!(w.queue, Some(queue));
            assert_eq!(w.outcome, Outcome::Replayed);
            assert_eq!(w.executed_passes, u64::from(PASSES));
            assert_eq!(w.requested_passes, Some(u64::from(PASSES)));
            let got: Vec<(u64, u64)> = w
                .passes
                .iter()
                .map(|p| (p.gpu_start.unwrap(), p.gpu_end.unwrap()))
                .collect();
            assert_eq!(&got, gpu, "window {d} {shape:?}");
            assert!(w.passes.iter().all(|p| p.complete_host.is_some()));
            assert_eq!(w.restores.len(), PASSES as usize - 1);
            assert_eq!(w.bytes.map(|b| b.classified), Some(4096));
        }
        let mut declines: Vec<u64> = out
            .iter()
            .filter_map(|o| match o {
                Output::Decline(d) => {
                    assert_eq!(d.reason, DeclineReason::PassCountOne);
                    Some(d.dispatch_id)
                }
                _ => None,
            })
            .collect();
        declines.sort_unstable();
        let mut want = truth.declines.clone();
        want.sort_unstable();
        assert_eq!(declines, want, "{shape:?}");
        let mut plain: Vec<u64> = out
            .iter()
            .filter_map(|o| match o {
                Output::Plain(p) => {
                    assert!(p.gpu_end.is_some() && p.enqueue_exit.is_some());
                    Some(p.dispatch_id)
                }
                _ => None,
            })
            .collect();
        plain.sort_unstable();
        let mut want = truth.plain.clone();
        want.sort_unstable();
        assert_eq!(plain, want, "{shape:?}");
        assert_eq!(
            out.len(),
            truth.windows.len() + truth.declines.len() + truth.plain.len()
        );
    }
}

#[test]
fn seeded_shuffles_within_the_writers_bounds_give_identical_outputs() {
    for shape in SHAPES {
        let (threads, _) = per_thread_records(shape);
        let in_order = in_order(&threads);
        let want = outputs_of(&in_order);
        let (mut reordered, mut early) = (0, 0);
        for seed in 0..SHUFFLES {
            let evs = shuffled(&threads, seed);
            assert_eq!(evs.len(), in_order.len());
            reordered += u64::from(evs != in_order);
            early += u64::from(a_completion_precedes_its_config(&evs));
            let got = outputs_of(&evs);
            if let Some((g, w)) = got.iter().zip(&want).find(|(g, w)| g != w) {
                panic!("seed {seed} {shape:?}: reordered gives\n{g:?}\nin order:\n{w:?}");
            }
            assert_eq!(got.len(), want.len(), "seed {seed} {shape:?}: outputs");
        }
        assert!(
            reordered >= SHUFFLES - 2,
            "the shuffles reorder the records"
        );
        assert!(
            early >= SHUFFLES / 4,
            "{early} shuffles put a completion before its CONFIG ENTER"
        );
    }
}
