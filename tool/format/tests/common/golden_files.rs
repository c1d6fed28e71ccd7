//! The test writers of the golden files and fixtures in `tests/golden/`, one per format version.
//! Each is deterministic; `tests/golden.rs` checks the committed bytes against them (and
//! rewrites the current version's with `KRPHASE_BLESS=1`; older versions' are frozen).

use krphase_format::block::tag;
use krphase_format::clock;
use krphase_format::enqueue_pair;
use krphase_format::event::{CounterValue, Decision, Notice, attribution, kind, own_time};
use krphase_format::header::Clock;
use krphase_format::sample::{events, header, names, trailer};
use krphase_format::synthetic::Synthetic;
use krphase_format::trailer::flags;
use krphase_format::{Event, FileWriter, FormatVersion, Header, NameSpace, Rank, Record, Trailer};

/// The 1.0 golden (`small.krp`): one 2-pass window, an opt-out and a plain dispatch, written
/// before the three changes of 2.0 (no CONTINUE, no MODULE_VARS, a placement per enqueue).
pub fn v1_0() -> Vec<u8> {
    let recs: Vec<_> = events()
        .iter()
        .map(|e| e.to_record().expect("record"))
        .collect();
    let mut w = FileWriter::with_version(Vec::new(), FormatVersion::V1_0, &header().encode())
        .expect("header");
    w.write_names(&names()).expect("names");
    w.write_records(&recs[..12]).expect("block 1");
    w.write_records(&recs[12..]).expect("block 2");
    w.write_trailer(&trailer()).expect("trailer");
    w.into_inner()
}

const T: u32 = 100;
const AGENT: u64 = 1;
const S: Synthetic = Synthetic {
    thread: T,
    kernel_id: 7,
    agent: AGENT,
    queue: 3,
    layout: 2,
};

/// A pass with its enqueue inside (ENTER, ENQUEUE ENTER/EXIT, EXIT unless stuck).
fn pass_with_enqueue(d: u64, i: u32, total: u32, enter: u64, exit: Option<u64>) -> Vec<Record> {
    let mut v = rec(&S.pass(d, i, total, enter, None));
    v.push(Record::enqueue_enter(T, enter + 10, d, S.kernel_id));
    if d == 1 && i == 0 {
        // The thread's first enqueue in the file records its placement.
        v.push(Record::dispatch_info(T, d, AGENT, 3, true));
    }
    v.push(Record::enqueue_exit(T, enter + 20, d, 10 + d));
    if let Some(x) = exit {
        v.push(Record::pass_exit(T, x, d, i, total, S.layout));
    }
    v
}

fn rec(evs: &[Event]) -> Vec<Record> {
    evs.iter()
        .map(|e| e.to_record().expect("record event"))
        .collect()
}

/// CONFIG ENTER, placement, correlation, byte estimate and pass-count query of a window.
fn open(d: u64, t0: u64, decision: Decision, n: u64) -> Vec<Record> {
    let mut v = rec(&S.open(d, t0, decision, n)[..2]);
    v.push(Record::correlation(T, d, 10 + d, 0));
    v.push(Record::window_bytes(T, d, 4096 + 256, 2, 8192 + 256));
    v.extend(rec(&S.open(d, t0, decision, n)[2..]));
    v
}

/// The 2.0 golden's records: every one of the 19 kinds; a fixed 2-pass window with its continue
/// calls (dispatch 1), an indefinite loop of 3 passes ended by the continue callback (2), a
/// stuck window whose second pass never exits (3), an opt-out run once (4), a plain dispatch
/// placed by the thread's earlier placement (5), one that changes the placement (6) and one
/// that inherits the new one (7).
#[allow(clippy::too_many_lines)] // reason: test fixture, one literal timeline
pub fn v2_0_records() -> Vec<Record> {
    let mut v = vec![
        Record::notice(T, 900, Notice::LayoutConfirmed, 2, 0),
        Record::alloc(T, 1, 0x57, 0x10000, 4096, AGENT),
        Record::module_vars(T, 950, AGENT, 256, 2, attribution::CODE_OBJECT),
    ];
    // 1: two passes, continue after each (the second stops the loop).
    v.extend(open(1, 1000, Decision::Replay, 2));
    v.extend(pass_with_enqueue(1, 0, 2, 2000, Some(3000)));
    v.extend(rec(&[S.cont(1, 0, 2, 3100, 40, true)]));
    v.extend(pass_with_enqueue(1, 1, 2, 3500, Some(4500)));
    v.extend(rec(&[
        S.cont(1, 1, 2, 4510, 30, false),
        S.config_exit(1, 4600),
    ]));
    // 2: KRPHASE_PASSES=0, an indefinite loop: pass count 0, total 0, three passes.
    v.extend(open(2, 5000, Decision::Indefinite, 0));
    for (i, t) in [6000u64, 7500, 9000].into_iter().enumerate() {
        let i = i as u32;
        v.extend(pass_with_enqueue(2, i, 0, t, Some(t + 1000)));
        v.extend(rec(&[S.cont(2, u64::from(i), 0, t + 1100, 50, i < 2)]));
    }
    v.extend(rec(&[S.config_exit(2, 10_300)]));
    // 3: the SDK breaks the loop inside pass 1 (pass_drain_stuck).
    v.extend(open(3, 11_000, Decision::Replay, 2));
    v.extend(pass_with_enqueue(3, 0, 2, 12_000, Some(13_000)));
    v.extend(rec(&[S.cont(3, 0, 2, 13_100, 20, true)]));
    v.extend(pass_with_enqueue(3, 1, 2, 13_500, None));
    v.extend(rec(&[S.config_exit(3, 15_000)]));
    // 4: filtered out, then run once; 5: a plain dispatch on the thread's placement (queue 3).
    v.extend([
        Record::config_enter(T, 16_000, 4, 8, Decision::FilteredOut),
        Record::config_exit(T, 16_010, 4),
        Record::enqueue_enter(T, 16_020, 4, 8),
        Record::enqueue_exit(T, 16_030, 4, 14),
        Record::enqueue_enter(T, 17_000, 5, 8),
        Record::enqueue_exit(T, 17_010, 5, 15),
        // 6 moves the thread to queue 5; 7 inherits it.
        Record::enqueue_enter(T, 18_000, 6, 8),
        Record::dispatch_info(T, 6, AGENT, 5, true),
        Record::enqueue_exit(T, 18_010, 6, 16),
        Record::enqueue_enter(T, 19_000, 7, 8),
        Record::enqueue_exit(T, 19_010, 7, 17),
        Record::free(T, 3, 0x57, 0x10000, 4096, AGENT),
    ]);
    // Counter values of window 1's passes, from the SDK's record callback before the completions
    // reach the file (attached to the passes).
    v.extend([
        Record::counter_value(T, 1, SQ_WAVES, CounterValue(4096.0), 0, 1),
        Record::counter_value(T, 1, GRBM_COUNT, CounterValue(123_456.0), 1, 2),
    ]);
    // Completions, late, from the completion thread: each with its host time first (10 ns after
    // the GPU end).
    let gpu: [(u64, u64, u64); 10] = [
        (1, 2100, 2900),
        (1, 3600, 4400),
        (2, 6100, 6900),
        (2, 7600, 8400),
        (2, 9100, 9900),
        (3, 12_100, 12_900),
        (4, 16_100, 16_200),
        (5, 17_100, 17_200),
        (6, 18_100, 18_200),
        (7, 19_100, 19_200),
    ];
    for &(d, s, e) in &gpu {
        v.push(S.complete_host(d, e + 10, e).to_record().expect("host"));
        v.push(S.complete(d, s, e).to_record().expect("complete"));
    }
    // A value reaching the file after its window was emitted comes out on its own.
    v.push(Record::counter_value(
        T,
        2,
        SQ_WAVES,
        CounterValue(4096.0),
        2,
        1,
    ));
    v
}

const SQ_WAVES: u64 = 0x1_0001;
const GRBM_COUNT: u64 = 0x1_0002;

fn v2_names() -> Vec<(NameSpace, u64, &'static str)> {
    let mut n = names();
    n.push((NameSpace::Thread, u64::from(T), "main"));
    n.push((NameSpace::Counter, SQ_WAVES, "SQ_WAVES"));
    n.push((NameSpace::Counter, GRBM_COUNT, "GRBM_COUNT"));
    n
}

fn v2_trailer() -> Trailer {
    Trailer {
        windows: 3,
        declines: 1,
        finalize_ns: 20_000,
        flags: flags::FINALIZE,
        ..Trailer::default()
    }
}

/// The header of the 2.0 files: the common one with the UTC offset 2.0 appended (UTC+02:00).
fn v2_header() -> Header {
    Header {
        utc_offset_s: Some(7200),
        ..header()
    }
}

/// The 2.0 golden (`v2.0.krp`), frozen: as the 2.0 writer wrote it.
pub fn v2_0() -> Vec<u8> {
    let w = FileWriter::with_version(Vec::new(), FormatVersion::V2_0, &v2_header().encode())
        .expect("header");
    names_records_trailer(w, &v2_0_records())
}

/// The 2.0 and 3.0 goldens' body: the names, the records in two blocks, the trailer.
fn names_records_trailer(mut w: FileWriter<Vec<u8>>, recs: &[Record]) -> Vec<u8> {
    w.write_names(&v2_names()).expect("names");
    let half = recs.len() / 2;
    w.write_records(&recs[..half]).expect("block 1");
    w.write_records(&recs[half..]).expect("block 2");
    w.write_trailer(&v2_trailer()).expect("trailer");
    w.into_inner()
}

/// What the future-minor fixture adds, as a 2.1 writer might.
pub const FUTURE_TAG: u8 = 200;
pub const FUTURE_KIND: u8 = 20;
pub const FUTURE_HEADER_BYTES: usize = 8;
pub const FUTURE_TRAILER_COUNTERS: u32 = 2;

/// A "future minor" file (`v2.1-future-minor.krp`): the 2.0 golden's records as a 2.1 writer
/// would write them, with a header field appended, an optional block of an unknown tag, records
/// of an unknown kind and two more trailer counters. A 2.0 reader reads it all and skips those.
pub fn v2_1_future_minor() -> Vec<u8> {
    let mut head = v2_header().encode();
    head.extend_from_slice(&[0xA5; FUTURE_HEADER_BYTES]);
    let mut w =
        FileWriter::with_version(Vec::new(), FormatVersion::new(2, 1), &head).expect("header");
    w.write_names(&v2_names()).expect("names");
    w.write_block(FUTURE_TAG, b"a future section")
        .expect("optional block");
    let future = |ts: u64| Record {
        kind: FUTURE_KIND,
        small8: 1,
        small16: 2,
        thread: T,
        payload: [ts, 1, 2],
    };
    let mut recs = v2_0_records();
    recs.insert(3, future(960));
    recs.push(future(20_000));
    w.write_records(&recs).expect("events");
    // A 2.1 writer writes every counter 2.0 knows (zeros included), then its own.
    let mut t = v2_trailer().encode();
    let written = u32::from_le_bytes(t[..4].try_into().expect("4"));
    let known = krphase_format::trailer::KNOWN_COUNTERS as u32;
    t.extend(std::iter::repeat_n(0u8, 8 * (known - written) as usize));
    t[..4].copy_from_slice(&(known + FUTURE_TRAILER_COUNTERS).to_le_bytes());
    for c in 0..u64::from(FUTURE_TRAILER_COUNTERS) {
        t.extend_from_slice(&(1000 + c).to_le_bytes());
    }
    w.write_block(tag::TRAILER, &t).expect("trailer");
    w.into_inner()
}

/// TSC ticks per ns in the 3.0 golden: its CLOCK_PAIR records put BOOTTIME at ticks / 3.
pub const V3_TICKS_PER_NS: u64 = 3;

/// The 3.0 golden's records: the 2.0 timeline with every host time in TSC ticks (3 per ns,
/// the CONTINUE own times too), calibration pairs at the start, in the middle and at finish,
/// and each completion as one COMPLETE_AT record, but dispatch 7's, written in the two-record
/// form a dispatch id beyond 56 bits takes. Read back, its host times are the 2.0 golden's.
pub fn v3_0_records() -> Vec<Record> {
    let tick = |ns: u64| ns * V3_TICKS_PER_NS;
    let pair = |ns: u64, when: u8| Record::clock_pair(0xFFFF, tick(ns), ns, 40, when);
    let mut v = vec![pair(500, clock::pair_when::START)];
    let mut host_end = None;
    for r in v2_0_records() {
        let ev = Event::from_record(&r);
        match ev {
            Event::CompleteHost {
                dispatch_id, ts, ..
            } if dispatch_id != 7 => host_end = Some(ts),
            Event::Complete {
                dispatch_id,
                gpu_start,
                gpu_end,
                ..
            } if dispatch_id != 7 => {
                let ts = host_end.take().expect("host time first");
                v.push(Record::complete_at(
                    tick(ts),
                    dispatch_id,
                    gpu_start,
                    gpu_end,
                ));
            }
            _ => v.push(in_ticks(r)),
        }
        if r.kind == kind::CONFIG_EXIT && r.payload[1] == 2 {
            v.push(pair(10_500, clock::pair_when::PERIODIC));
        }
    }
    v.push(pair(20_500, clock::pair_when::FINISH));
    v
}

/// A 2.0 record with its host time (and a CONTINUE's own time) in the 3.0 golden's ticks.
fn in_ticks(r: Record) -> Record {
    let mut r = r;
    let ts_in_payload0 = [
        kind::CONFIG_ENTER,
        kind::PASS_COUNT_ENTER,
        kind::PASS_COUNT_RETURN,
        kind::CONFIG_EXIT,
        kind::PASS_ENTER,
        kind::PASS_EXIT,
        kind::CONTINUE,
        kind::ENQUEUE_ENTER,
        kind::ENQUEUE_EXIT,
        kind::NOTICE,
        kind::MODULE_VARS,
        kind::COMPLETE_HOST,
    ];
    if ts_in_payload0.contains(&r.kind) {
        r.payload[0] *= V3_TICKS_PER_NS;
    }
    if r.kind == kind::CONTINUE {
        let ns = own_time::decode(r.small16);
        r.small16 = own_time::encode(ns * V3_TICKS_PER_NS);
    }
    r
}

/// The header of the 3.0 golden: the 2.0 one, host times in TSC ticks.
pub fn v3_header() -> Header {
    Header {
        clock: Clock::Tsc,
        ..v2_header()
    }
}

/// The 3.0 golden (`v3.0.krp`), frozen: a 3.0 header has no rank, so today's writer still
/// writes its bytes under the 3.0 version word.
pub fn v3_0() -> Vec<u8> {
    let w = FileWriter::with_version(Vec::new(), FormatVersion::V3_0, &v3_header().encode())
        .expect("header");
    names_records_trailer(w, &v3_0_records())
}

/// The header of the 3.1 golden: the 3.0 one with a launcher's rank.
pub fn v3_1_header() -> Header {
    Header {
        rank: Some(Rank {
            rank: 3,
            world_size: Some(256),
            var: "OMPI_COMM_WORLD_RANK".into(),
        }),
        ..v3_header()
    }
}

/// The 3.1 golden (`v3.1.krp`), frozen: the 3.0 timeline, ranked, in 32-byte records (the
/// writer still writes its bytes under the 3.1 version word).
pub fn v3_1() -> Vec<u8> {
    let w = FileWriter::with_version(Vec::new(), FormatVersion::V3_1, &v3_1_header().encode())
        .expect("header");
    names_records_trailer(w, &v3_0_records())
}

/// The 4.0 golden (`v4.0.krp`), as today's writer writes it: the 3.1 golden's header and
/// records, in 4.0's EVENTS blocks (records sized by kind, threads and dispatch ids stated
/// once per run).
pub fn v4_0() -> Vec<u8> {
    let mut w = FileWriter::new(Vec::new(), &v3_1_header()).expect("header");
    w.write_names(&v2_names()).expect("names");
    let words = v4_0_words();
    let half = words.len() / 2;
    w.write_words(&words[..half]).expect("block 1");
    w.write_words(&words[half..]).expect("block 2");
    w.write_trailer(&v2_trailer()).expect("trailer");
    w.into_inner()
}

/// The 3.1 golden's records as 4.0 writes them: an ENQUEUE ENTER right before its ENQUEUE EXIT
/// (same thread and dispatch) is one ENQUEUE_PAIR, as observe mode's tool writes it; the others
/// (an ENTER with its placement after it) as they are.
pub fn v4_0_words() -> Vec<[u64; 4]> {
    let recs = v3_0_records();
    let mut out = Vec::new();
    let mut i = 0;
    while i < recs.len() {
        let (a, b) = (recs[i], recs.get(i + 1).copied());
        let pair = b.filter(|b| {
            a.kind == kind::ENQUEUE_ENTER
                && b.kind == kind::ENQUEUE_EXIT
                && (a.thread, a.payload[1]) == (b.thread, b.payload[1])
        });
        let words = pair.and_then(|b| {
            let head = enqueue_pair::head(a.thread, a.payload[2])?;
            enqueue_pair::words(head, a.payload[0], a.payload[1], b.payload[0], b.payload[2])
        });
        match words {
            Some(w) => {
                out.push(w);
                i += 2;
            }
            None => {
                out.push(a.to_words());
                i += 1;
            }
        }
    }
    out
}

/// A "newer major" file (`v5.0-newer-major.krp`): what a 5.0 writer's file starts with. A 4.0
/// reader refuses it at the version word.
pub fn v5_0_newer_major() -> Vec<u8> {
    let mut w = FileWriter::with_version(Vec::new(), FormatVersion::new(5, 0), &header().encode())
        .expect("header");
    w.write_records(&v2_0_records()[..8]).expect("events");
    w.write_trailer(&v2_trailer()).expect("trailer");
    w.into_inner()
}
