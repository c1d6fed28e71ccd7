//! Record sizes and the header's lenient mode: a file with a record size the reader cannot
//! take is refused, a newer minor's longer records are read by their prefix, and an unknown
//! header mode is kept.

use krphase_format::event::Decision;
use krphase_format::read::ReadErrorKind;
use krphase_format::sample;
use krphase_format::{Event, FileReader, FileWriter, FormatVersion, Header, Mode, Record};

fn file_with(version: FormatVersion, header: &Header, record_size: usize) -> Vec<u8> {
    let mut w = FileWriter::with_version(Vec::new(), version, &header.encode()).expect("header");
    let recs = [
        Record::config_enter(1, 10, 1, 1, Decision::FilteredOut),
        Record::config_exit(1, 20, 1),
    ];
    let mut payload = Vec::new();
    for r in recs {
        payload.extend_from_slice(&r.encode());
        payload.resize(payload.len() + record_size - 32, 0xEE);
    }
    w.write_block(krphase_format::block::tag::EVENTS, &payload)
        .expect("events");
    w.into_inner()
}

#[test]
fn record_size_is_checked_and_a_newer_minors_longer_record_is_read_by_its_prefix() {
    let h = |size| Header {
        record_size: size,
        ..sample::header()
    };
    for (version, size) in [
        (FormatVersion::V2_0, 40u32),
        (FormatVersion::V2_0, 24),
        (FormatVersion::V1_0, 40),
        (FormatVersion::new(2, 1), 36),
        (FormatVersion::new(2, 1), 264),
        // 4.x records carry their own length: a newer minor adds kinds, not record bytes.
        (FormatVersion::new(4, 1), 40),
    ] {
        let bytes = file_with(version, &h(size), 32);
        let e = FileReader::from_bytes(&bytes[..]).err().expect("refused");
        assert!(
            matches!(e.kind, ReadErrorKind::RecordSize(s) if s == size),
            "{version} {size}: {e}"
        );
        assert!(
            e.to_string()
                .starts_with(&format!("offset 8: record size {size}"))
        );
    }
    let bytes = file_with(FormatVersion::new(2, 1), &h(40), 40);
    let mut r = FileReader::from_bytes(&bytes[..]).expect("a 2.1 file with 40-byte records");
    let evs: Vec<_> = r.by_ref().map(|e| e.expect("decodes")).collect();
    assert!(
        matches!(evs[1], Event::ConfigExit { ts: 20, .. }),
        "{evs:?}"
    );
    assert_eq!(r.skipped().record_bytes, 16);
    assert_eq!(r.last_offset(), bytes.len() as u64 - 40);
}

#[test]
fn an_unknown_header_mode_is_kept_not_refused() {
    let mut head = sample::header().encode();
    // requested_mode and mode follow the SDK version; find them by encoding a known header.
    let known = Header {
        requested_mode: Mode::Observe,
        mode: Mode::Observe,
        ..sample::header()
    }
    .encode();
    let at = head
        .iter()
        .zip(&known)
        .position(|(a, b)| a != b)
        .expect("modes differ");
    head[at] = 7;
    head[at + 1] = 9;
    let bytes = FileWriter::with_version(Vec::new(), FormatVersion::V2_0, &head)
        .expect("header")
        .into_inner();
    let r = FileReader::from_bytes(&bytes[..]).expect("lenient");
    assert_eq!(
        (r.header().requested_mode, r.header().mode),
        (Mode::Unknown(7), Mode::Unknown(9))
    );
    assert_eq!(r.header().mode.name(), "unknown");
}
