//! Writer → reader round trips, truncation, corruption and version errors.

use krphase_format::read::ReadErrorKind;
use krphase_format::sample;
use krphase_format::{Event, FileReader, FormatVersion};

fn read_all(bytes: &[u8]) -> (Vec<Event>, FileReader<std::io::Cursor<&[u8]>>) {
    let mut r = FileReader::from_bytes(bytes).expect("open");
    let mut evs = Vec::new();
    for e in r.by_ref() {
        evs.push(e.expect("event"));
    }
    (evs, r)
}

#[test]
fn round_trip_preserves_header_events_names_trailer() {
    let bytes = sample::write_file();
    let (evs, r) = read_all(&bytes);
    assert_eq!(r.header(), &sample::header());
    assert!(!r.truncated());
    assert_eq!(r.trailer().map(|t| t.windows), Some(1));
    assert_eq!(
        r.trailer().map(|t| t.events_written),
        Some(sample::events().len() as u64)
    );
    let names: Vec<_> = evs
        .iter()
        .filter(|e| matches!(e, Event::Name { .. }))
        .collect();
    assert_eq!(names.len(), 2);
    let others: Vec<_> = evs
        .into_iter()
        .filter(|e| !matches!(e, Event::Name { .. }))
        .collect();
    assert_eq!(others, sample::events());
}

#[test]
fn truncated_file_yields_every_complete_block() {
    let full = sample::write_file();
    // Find the end of each block by reading the file back block by block.
    let (all, _) = read_all(&full);
    let n_all = all.len();
    let mut saw_partial = false;
    for cut in (20..full.len()).step_by(7) {
        let (evs, r) = match FileReader::from_bytes(&full[..cut]) {
            Ok(mut r) => {
                let mut v = Vec::new();
                for e in r.by_ref() {
                    v.push(e.expect("a truncated file never errors"));
                }
                (v, r)
            }
            Err(e) => {
                assert!(matches!(e.kind, ReadErrorKind::NoHeader), "cut {cut}: {e}");
                continue;
            }
        };
        // Events are a prefix of the full stream.
        assert_eq!(&all[..evs.len()], &evs[..], "cut {cut}");
        assert!(evs.len() <= n_all);
        if r.truncated() {
            saw_partial = true;
            assert!(r.trailer().is_none());
        }
    }
    assert!(saw_partial);
}

#[test]
fn flipped_byte_is_a_checksum_error_naming_the_offset() {
    let mut bytes = sample::write_file();
    let n = bytes.len();
    bytes[n - 20] ^= 0x40; // inside the trailer block
    let mut r = FileReader::from_bytes(&bytes[..]).expect("header intact");
    let err = r.find_map(|e| e.err()).expect("an error");
    assert!(matches!(err.kind, ReadErrorKind::Corrupt(_)));
    let msg = err.to_string();
    assert!(msg.starts_with("offset "), "{msg}");
    assert!(msg.contains("checksum"), "{msg}");
}

#[test]
fn bad_magic_and_newer_version_are_errors() {
    let mut bytes = sample::write_file();
    bytes[0] = b'X';
    let e = FileReader::from_bytes(&bytes[..]).err().expect("bad magic");
    assert!(matches!(e.kind, ReadErrorKind::BadMagic));
    let mut bytes = sample::write_file();
    bytes[4..8].copy_from_slice(&FormatVersion::new(99, 0).to_word().to_le_bytes());
    let e = FileReader::from_bytes(&bytes[..]).err().expect("too new");
    assert!(matches!(e.kind, ReadErrorKind::TooNew(v) if v == FormatVersion::new(99, 0)));
    assert_eq!(
        e.to_string(),
        "offset 4: written by a newer krphase, format 99.0; upgrade krphase"
    );
    let e = FileReader::from_bytes(&b""[..]).err().expect("empty");
    assert!(matches!(e.kind, ReadErrorKind::Empty), "{e}");
    assert!(e.to_string().contains("empty file"), "{e}");
    let e = FileReader::from_bytes(&b"KR"[..]).err().expect("two bytes");
    assert!(!matches!(e.kind, ReadErrorKind::Empty), "{e}");
}

#[test]
fn any_single_byte_corruption_is_an_error_or_a_clean_prefix_never_a_panic() {
    let full = sample::write_file();
    let (all, _) = read_all(&full);
    for pos in 0..full.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = full.clone();
            b[pos] ^= flip;
            let Ok(mut r) = FileReader::from_bytes(&b[..]) else {
                continue;
            };
            let mut evs = Vec::new();
            let mut errored = false;
            for e in r.by_ref() {
                match e {
                    Ok(e) => evs.push(e),
                    Err(e) => {
                        assert!(e.to_string().starts_with("offset "), "{e}");
                        errored = true;
                    }
                }
            }
            // Whatever decoded before the error is a prefix of the true stream (CRC protects
            // every block's payload).
            assert_eq!(&all[..evs.len()], &evs[..], "byte {pos} ^ {flip:#x}");
            if !errored && !r.truncated() {
                assert_eq!(evs.len(), all.len(), "byte {pos} ^ {flip:#x}: silent loss");
            }
        }
    }
}
