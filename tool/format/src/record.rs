//! The 32-byte record: the only place its byte layout is defined (the form the tool's buffers
//! hold, and every record of a 1.x–3.x file; a 4.x file sizes records by kind, `events_block`).
//!
//! ```text
//! offset 0  u8   kind      (see event::kind)
//! offset 1  u8   small8    (per-kind 8-bit value)
//! offset 2  u16  small16   (per-kind 16-bit value)
//! offset 4  u32  thread    (OS thread id of the recording thread)
//! offset 8  u64  payload0
//! offset 16 u64  payload1
//! offset 24 u64  payload2
//! ```
//! All little-endian. What `small8`, `small16` and the payload words mean per kind is the table
//! in `event/kinds.rs`; build records with its typed constructors (`Record::config_enter`, …).

/// Size in bytes of one encoded record.
pub const RECORD_SIZE: usize = 32;

/// One raw record, as the hot path builds it and the file stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record {
    pub kind: u8,
    /// The kind's 8-bit value (a decision, layout, flag, class or code).
    pub small8: u8,
    /// The kind's 16-bit value (a duration, operation or count).
    pub small16: u16,
    pub thread: u32,
    /// The kind's three 64-bit payload words.
    pub payload: [u64; 3],
}

impl Record {
    /// Encodes into the on-disk bytes.
    #[inline]
    pub fn encode(&self) -> [u8; RECORD_SIZE] {
        let mut b = [0u8; RECORD_SIZE];
        b[0] = self.kind;
        b[1] = self.small8;
        b[2..4].copy_from_slice(&self.small16.to_le_bytes());
        b[4..8].copy_from_slice(&self.thread.to_le_bytes());
        b[8..16].copy_from_slice(&self.payload[0].to_le_bytes());
        b[16..24].copy_from_slice(&self.payload[1].to_le_bytes());
        b[24..32].copy_from_slice(&self.payload[2].to_le_bytes());
        b
    }

    /// The record as four words (kind | small8 << 8 | small16 << 16 | thread << 32, then the payload words), the form
    /// the tool's lock-free per-thread buffers hold.
    #[inline]
    pub fn to_words(&self) -> [u64; 4] {
        let head = u64::from(self.kind)
            | (u64::from(self.small8) << 8)
            | (u64::from(self.small16) << 16)
            | (u64::from(self.thread) << 32);
        [head, self.payload[0], self.payload[1], self.payload[2]]
    }

    /// Inverse of [`Record::to_words`].
    #[inline]
    pub fn from_words(words: [u64; 4]) -> Record {
        let h = words[0];
        Record {
            kind: h as u8,
            small8: (h >> 8) as u8,
            small16: (h >> 16) as u16,
            thread: (h >> 32) as u32,
            payload: [words[1], words[2], words[3]],
        }
    }

    /// Decodes the on-disk bytes.
    #[inline]
    pub fn decode(b: &[u8; RECORD_SIZE]) -> Record {
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        Record {
            kind: b[0],
            small8: b[1],
            small16: u16::from_le_bytes([b[2], b[3]]),
            thread: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            payload: [u64_at(8), u64_at(16), u64_at(24)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_and_layout() {
        let r = Record {
            kind: 7,
            small8: 2,
            small16: 0x1234,
            thread: 0xdead_beef,
            payload: [1, u64::MAX, 0x0102_0304_0506_0708],
        };
        let b = r.encode();
        assert_eq!(b.len(), 32);
        assert_eq!(b[0], 7);
        assert_eq!(b[1], 2);
        assert_eq!(&b[2..4], &[0x34, 0x12]);
        assert_eq!(&b[4..8], &[0xef, 0xbe, 0xad, 0xde]);
        assert_eq!(&b[24..32], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(Record::decode(&b), r);
        assert_eq!(Record::from_words(r.to_words()), r);
        // The encoding is the four words in little-endian order (what write_words relies on).
        let words: Vec<u8> = r.to_words().iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(&words[..], &b[..]);
    }
}
