//! TSC-clock files as the reader takes them: converted through their pairs, refused with one
//! line when they cannot be, and read up to the cut when a run was killed.

use krphase_format::clock::pair_when;
use krphase_format::header::Clock;
use krphase_format::sample;
use krphase_format::{Event, FileReader, FileWriter, Header, Record};

fn tsc_header() -> Header {
    Header {
        clock: Clock::Tsc,
        ..sample::header()
    }
}

/// A pair putting BOOTTIME at ticks / 2.
fn pair(ns: u64) -> Record {
    Record::clock_pair(1, ns * 2, ns, 20, pair_when::PERIODIC)
}

fn file(header: &Header, blocks: &[Vec<Record>]) -> Vec<u8> {
    let mut w = FileWriter::new(Vec::new(), header).expect("header");
    for b in blocks {
        w.write_records(b).expect("block");
    }
    w.into_inner()
}

fn enqueue_times(bytes: &[u8]) -> Vec<u64> {
    let r = FileReader::from_bytes(bytes).expect("open");
    r.map(|e| e.expect("event"))
        .filter_map(|e| match e {
            Event::EnqueueEnter { ts, .. } => Some(ts),
            _ => None,
        })
        .collect()
}

#[test]
fn ticks_come_out_as_boottime_ns_and_a_cut_file_extrapolates() {
    let blocks = vec![
        vec![pair(1_000), Record::enqueue_enter(7, 2_400, 1, 9)],
        vec![pair(2_000), Record::enqueue_enter(7, 5_000, 2, 9)],
        vec![pair(3_000)],
    ];
    let whole = file(&tsc_header(), &blocks);
    assert_eq!(enqueue_times(&whole), [1_200, 2_500]);
    // Killed after the second block: the last record lies past the last pair, extrapolated at
    // the pairs' rate.
    let cut = file(&tsc_header(), &blocks[..2]);
    assert_eq!(enqueue_times(&cut), [1_200, 2_500]);
    // The same records in a BOOTTIME file are taken as they are.
    assert_eq!(
        enqueue_times(&file(&sample::header(), &blocks)),
        [2_400, 5_000]
    );
}

#[test]
fn ticks_without_two_pairs_or_an_unknown_clock_are_refused_with_one_line() {
    let one = file(
        &tsc_header(),
        &[vec![pair(1_000), Record::enqueue_enter(7, 2_400, 1, 9)]],
    );
    // Refused at its first record with a host time (the one after the pair).
    let mut r = FileReader::from_bytes(&one).expect("the header reads");
    assert!(matches!(r.next(), Some(Ok(Event::ClockPair { .. }))));
    // The pair (32 bytes, thread 1), the record naming thread 7 (8 bytes), the enqueue.
    let at = r.last_offset() + 32 + 8;
    let e = r.next().expect("an item").expect_err("refused").to_string();
    assert!(
        e.starts_with(&format!(
            "offset {at}: a TSC-clock file with 1 usable clock calibration pair(s)"
        )),
        "{e}"
    );
    assert!(!e.contains('\n'));
    assert!(r.next().is_none(), "nothing after the refusal");
    // A file cut before any record with a host time reads (nothing to convert).
    let bare = file(&tsc_header(), &[vec![pair(1_000)]]);
    let evs: Vec<_> = FileReader::from_bytes(&bare).expect("open").collect();
    assert_eq!(evs.len(), 1);
    let unknown = file(
        &Header {
            clock: Clock::Unknown(9),
            ..sample::header()
        },
        &[],
    );
    let e = FileReader::from_bytes(&unknown)
        .err()
        .expect("refused")
        .to_string();
    assert_eq!(
        e,
        "offset 8: header: clock 9 is not one this reader converts; upgrade krphase"
    );
}

#[test]
fn complete_at_carries_a_56_bit_dispatch_id_and_no_thread() {
    let d = (1u64 << 56) - 3;
    let r = Record::complete_at(5, d, 10, 20);
    assert_eq!(r.thread, (d >> 24) as u32);
    assert_eq!(
        Event::from_record(&r),
        Event::CompleteAt {
            ts: 5,
            dispatch_id: d,
            gpu_start: 10,
            gpu_end: 20
        }
    );
}
