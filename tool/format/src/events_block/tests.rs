use super::*;
use crate::Event;

fn rec(kind: u8, thread: u32, payload: [u64; 3]) -> Record {
    Record {
        kind,
        small8: 3,
        small16: 0x1234,
        thread,
        payload,
    }
}

fn encode(records: &[Record]) -> Vec<u8> {
    let mut e = Encoder::default();
    let mut out = Vec::new();
    for r in records {
        e.push(&r.to_words(), &mut out);
    }
    out
}

fn decode(buf: &[u8]) -> Result<Vec<Record>, (usize, String)> {
    let mut d = Decoder::default();
    let mut v = Vec::new();
    while let Some(r) = d.next_record(buf) {
        v.push(r?.record);
    }
    Ok(v)
}

#[test]
fn records_of_interleaved_threads_and_dispatches_round_trip() {
    let at = Record::complete_at(0x00AB_CDEF_0123_4567, 90, 91, 92);
    let v = vec![
        rec(kind::ENQUEUE_ENTER, 7, [10, 5, 1]),
        rec(kind::ENQUEUE_EXIT, 7, [11, 5, 99]),
        at,
        rec(kind::ENQUEUE_EXIT, 7, [12, 5, 98]),
        rec(kind::ENQUEUE_ENTER, 8, [13, 5, 1]),
        rec(kind::DISPATCH_INFO, 8, [5, 1, 2]),
        rec(kind::NOTICE, 8, [14, 5, 5]),
        rec(kind::CONFIG_EXIT, 8, [15, 5, 0]),
        rec(kind::COMPLETE, 7, [6, 1, 2]),
        rec(kind::COMPLETE, 7, [6, 3, 4]),
        rec(kind::ENQUEUE_ENTER, 7, [16, 6, 1]),
        rec(kind::ALLOC, 7, [1, 2, 3]),
    ];
    let bytes = encode(&v);
    assert_eq!(decode(&bytes).expect("decodes"), v);
    assert_eq!(count_records(&bytes), Ok(v.len() as u64));
}

#[test]
fn an_observed_dispatch_takes_88_bytes() {
    let dispatch = |d: u64| {
        [
            Record::enqueue_enter(7, 100 * d, d, 3),
            Record::enqueue_exit(7, 100 * d + 1, d, d + 1000),
            Record::complete_at(d, 100 * d + 50, 1, 2),
        ]
    };
    let one = encode(&dispatch(1));
    let two: Vec<Record> = dispatch(1).into_iter().chain(dispatch(2)).collect();
    // The first names the thread (8 bytes); the second dispatch on the thread does not.
    assert_eq!(one.len(), 8 + 88);
    assert_eq!(encode(&two).len() - one.len(), 88);
}

/// The hand-written table of dispatch words agrees with the kind table: the word it names is
/// the one decoded as the event's `dispatch_id`, and kinds it leaves out have no such word.
#[test]
fn dispatch_words_are_the_kind_tables_dispatch_ids() {
    for k in 1..=kind::COMPLETE_AT {
        for i in 0..3 {
            let mut payload = [1u64, 2, 3];
            payload[i] = 777_777;
            let ev = Event::from_record(&rec(k, 7, payload));
            let json = serde_json::to_value(ev).expect("json");
            let field = json.get("dispatch_id").cloned();
            let is_word = field == Some(serde_json::json!(777_777));
            assert_eq!(is_word, dispatch_word(k) == Some(i), "kind {k} word {i}");
        }
    }
}

#[test]
fn malformed_blocks_are_errors() {
    let short = u64::from(kind::ENQUEUE_EXIT | 2 << 6).to_le_bytes();
    let thread = (u64::from(THREAD) | 7u64 << 32).to_le_bytes();
    // No thread named.
    let e = decode(&[&short[..], &[0; 16]].concat()).expect_err("no thread");
    assert!(e.1.contains("before any THREAD"), "{e:?}");
    // A dispatch id left out before one was stated.
    let e = decode(&[&thread[..], &short[..], &[0; 16]].concat()).expect_err("no dispatch");
    assert_eq!(e.0, 8);
    assert!(e.1.contains("without its dispatch id"), "{e:?}");
    // A record cut by the block's end.
    let e = decode(&[&thread[..], &short[..]].concat()).expect_err("cut");
    assert!(e.1.contains("runs past"), "{e:?}");
    // A kind without a dispatch word in 24 bytes.
    let alloc = u64::from(kind::ALLOC | 2 << 6).to_le_bytes();
    let e = decode(&[&thread[..], &alloc[..], &[0; 16]].concat()).expect_err("alloc");
    assert!(e.1.contains("of 24 bytes"), "{e:?}");
}

#[test]
fn unknown_kinds_are_skipped_by_their_length() {
    let thread = (u64::from(THREAD) | 7u64 << 32).to_le_bytes();
    let unknown = u64::from(40u8 | 1 << 6).to_le_bytes();
    let mut buf = [&thread[..], &unknown[..], &5u64.to_le_bytes()].concat();
    buf.extend(encode(&[rec(kind::ALLOC, 7, [1, 2, 3])]));
    let v = decode(&buf).expect("decodes");
    assert_eq!(v.len(), 2);
    assert_eq!((v[0].kind, v[0].payload), (40, [5, 0, 0]));
    assert_eq!(v[1].kind, kind::ALLOC);
}

/// Observe mode's dispatch: an ENQUEUE_PAIR (written at the EXIT) and a COMPLETE_AT, read as the
/// ENQUEUE ENTER, ENQUEUE EXIT and COMPLETE_AT the three-record form gives, in 64 bytes.
#[test]
fn an_enqueue_pair_reads_as_its_enter_and_exit_and_an_observed_dispatch_takes_64_bytes() {
    let pair = |d: u64| {
        let h = crate::enqueue_pair::head(7, 3).expect("fits");
        let w = crate::enqueue_pair::words(h, 100 * d, d, 100 * d + 1, d + 1000).expect("fits");
        [w, Record::complete_at(d, 100 * d + 50, 1, 2).to_words()]
    };
    let plain = |d: u64| {
        vec![
            Record::enqueue_enter(7, 100 * d, d, 3),
            Record::enqueue_exit(7, 100 * d + 1, d, d + 1000),
            Record::complete_at(d, 100 * d + 50, 1, 2),
        ]
    };
    let mut e = Encoder::default();
    let mut one = Vec::new();
    pair(1).iter().for_each(|w| e.push(w, &mut one));
    let mut two = one.clone();
    // A record of the same dispatch before the pair: the pair leaves its dispatch id out.
    e.push(
        &Record::dispatch_info(7, 2, 5, 6, true).to_words(),
        &mut two,
    );
    pair(2).iter().for_each(|w| e.push(w, &mut two));
    assert_eq!(one.len(), 8 + 64);
    assert_eq!(two.len() - one.len(), 32 + 24 + 32);
    let mut want = plain(1);
    want.push(Record::dispatch_info(7, 2, 5, 6, true));
    want.extend(plain(2));
    assert_eq!(decode(&two).expect("decodes"), want);
    assert_eq!(count_records(&two), Ok(want.len() as u64));
    // Both halves are found at the pair's offset.
    let mut d = Decoder::default();
    let at: Vec<usize> = std::iter::from_fn(|| d.next_record(&one))
        .map(|r| r.expect("decodes").at)
        .collect();
    assert_eq!(at, [8, 8, 40]);
}
