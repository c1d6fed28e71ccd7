//! Whole inputs held in memory, decoded as the analyzer decodes a file: the entry points of the
//! fuzz targets (`fuzz/`) and of the test that replays their corpus, so both exercise exactly the
//! streaming reader and the window reconstruction an import runs, with no file in between.

use crate::reconstruct::Reconstructor;
use krphase_format::Event;
use krphase_format::block::{self, FRAME_SIZE};
use krphase_format::read::{FileReader, ReadError};
use krphase_format::record::{RECORD_SIZE, Record};

/// What one decode saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    /// Events read (records and names).
    pub events: u64,
    /// Windows, declines and plain dispatches the reconstruction emitted.
    pub outputs: u64,
    /// The input ended inside a block.
    pub truncated: bool,
    /// The input carried a trailer.
    pub has_trailer: bool,
    /// A reconstruction limit the input broke (`offset N: …`); decoding stopped there.
    pub refused: Option<String>,
}

/// Reads a whole `.krp` file from `bytes` with [`FileReader`] and feeds every event to a
/// [`Reconstructor`], as `krphase import` does. The first read error ends the decode and is
/// returned; what was decoded before it is discarded, as an import discards it.
pub fn decode_file(bytes: &[u8]) -> Result<Decoded, ReadError> {
    let mut reader = FileReader::from_bytes(bytes)?;
    let mut rec = Reconstructor::for_version(reader.version());
    let mut d = Decoded::default();
    while let Some(ev) = reader.next_event() {
        if let Err(e) = rec.push_at(&ev?, reader.last_offset()) {
            d.refused = Some(e.to_string());
            break;
        }
        d.events += 1;
        d.outputs += drain(&mut rec);
    }
    rec.finish();
    d.outputs += drain(&mut rec);
    d.truncated = reader.truncated();
    d.has_trailer = reader.trailer().is_some();
    Ok(d)
}

/// Reads `bytes` as consecutive 32-byte records (a partial last record is ignored) and feeds
/// their events to a [`Reconstructor`]: the event stream of an EVENTS block without the framing
/// and checksums around it, so that a fuzzer reaches the reconstruction directly.
pub fn reconstruct_records(bytes: &[u8]) -> Decoded {
    let mut rec = Reconstructor::new();
    let mut d = Decoded::default();
    for chunk in bytes.chunks_exact(RECORD_SIZE) {
        let raw: &[u8; RECORD_SIZE] = chunk.try_into().expect("chunks_exact yields whole records");
        if let Err(e) = rec.push(&Event::from_record(&Record::decode(raw))) {
            d.refused = Some(e.to_string());
            break;
        }
        d.events += 1;
        d.outputs += drain(&mut rec);
    }
    rec.finish();
    d.outputs += drain(&mut rec);
    d
}

/// A copy of `bytes` in which every complete block's checksum is correct. A fuzzer almost never
/// guesses a CRC-32, so without this the stages behind the checksum (header, names, trailer and
/// record decoding) would see no mutated input; the magic and version are left as they are.
pub fn with_checksums_fixed(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut at = 8;
    while at + FRAME_SIZE <= out.len() {
        let frame: [u8; FRAME_SIZE] = out[at..at + FRAME_SIZE].try_into().expect("frame");
        let (_, len, _) = block::parse_frame(&frame);
        let Some(end) = (at + FRAME_SIZE)
            .checked_add(len)
            .filter(|&e| e <= out.len())
        else {
            break;
        };
        let crc = block::checksum(&frame[..8], &out[at + FRAME_SIZE..end]);
        out[at + 8..at + FRAME_SIZE].copy_from_slice(&crc.to_le_bytes());
        at = end;
    }
    out
}

fn drain(rec: &mut Reconstructor) -> u64 {
    let mut n = 0;
    while rec.pop().is_some() {
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use krphase_format::event::Decision;
    use krphase_format::synthetic::Synthetic;

    #[test]
    fn records_of_one_window_reconstruct_to_one_output() {
        let s = Synthetic {
            thread: 1,
            kernel_id: 7,
            agent: 2,
            queue: 3,
            layout: 1,
        };
        let mut evs = s.open(5, 100, Decision::Replay, 2);
        evs.extend(s.pass(5, 0, 2, 200, Some(300)));
        evs.extend(s.pass(5, 1, 2, 400, Some(500)));
        evs.push(s.config_exit(5, 600));
        evs.push(s.complete(5, 210, 290));
        evs.push(s.complete(5, 410, 490));
        let bytes: Vec<u8> = evs
            .iter()
            .flat_map(|e| e.to_record().expect("a record kind").encode())
            .collect();
        let d = reconstruct_records(&bytes);
        assert_eq!((d.events, d.outputs), (evs.len() as u64, 1));
    }

    #[test]
    fn fixed_checksums_let_a_changed_payload_through() {
        let golden = include_bytes!("../../../tests/golden/small.krp");
        let mut b = golden.to_vec();
        // The first payload byte of the header block: the header decodes it, the CRC covers it.
        b[8 + FRAME_SIZE] ^= 0x01;
        let e = decode_file(&b).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        assert_eq!(with_checksums_fixed(golden), golden.to_vec());
        let fixed = with_checksums_fixed(&b);
        assert!(
            decode_file(&fixed).map_or_else(|e| !e.to_string().contains("checksum"), |_| true),
            "fixing the checksum moves the decode past the check"
        );
    }

    #[test]
    fn non_krp_bytes_are_an_error_naming_the_offset() {
        let e = decode_file(b"not a krp file").unwrap_err();
        assert_eq!(e.to_string(), "offset 0: not a krphase file (bad magic)");
    }
}
