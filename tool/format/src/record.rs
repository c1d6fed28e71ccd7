//! The fixed 32-byte record: the only place its byte layout is defined.
//!
//! ```text
//! offset 0  u8   kind     (see event::kind)
//! offset 1  u8   aux      (per-kind small value)
//! offset 2  u16  x        (per-kind small value)
//! offset 4  u32  thread   (OS thread id of the recording thread)
//! offset 8  u64  w0
//! offset 16 u64  w1
//! offset 24 u64  w2
//! ```
//! All little-endian. What `aux`, `x` and `w0..w2` mean per kind is in [`crate::event`].

/// Size in bytes of one encoded record.
pub const RECORD_SIZE: usize = 32;

/// One raw record, as the hot path builds it and the file stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record {
    pub kind: u8,
    pub aux: u8,
    pub x: u16,
    pub thread: u32,
    pub w: [u64; 3],
}

impl Record {
    /// A record from its header fields and its three payload words.
    #[inline]
    pub fn new(kind: u8, aux: u8, x: u16, thread: u32, w0: u64, w1: u64, w2: u64) -> Record {
        Record {
            kind,
            aux,
            x,
            thread,
            w: [w0, w1, w2],
        }
    }

    /// Encodes into the on-disk bytes.
    #[inline]
    pub fn encode(&self) -> [u8; RECORD_SIZE] {
        let mut b = [0u8; RECORD_SIZE];
        b[0] = self.kind;
        b[1] = self.aux;
        b[2..4].copy_from_slice(&self.x.to_le_bytes());
        b[4..8].copy_from_slice(&self.thread.to_le_bytes());
        b[8..16].copy_from_slice(&self.w[0].to_le_bytes());
        b[16..24].copy_from_slice(&self.w[1].to_le_bytes());
        b[24..32].copy_from_slice(&self.w[2].to_le_bytes());
        b
    }

    /// The record as four words (kind | aux << 8 | x << 16 | thread << 32, w0, w1, w2), the form
    /// the tool's lock-free per-thread buffers hold.
    #[inline]
    pub fn to_words(&self) -> [u64; 4] {
        let head = u64::from(self.kind)
            | (u64::from(self.aux) << 8)
            | (u64::from(self.x) << 16)
            | (u64::from(self.thread) << 32);
        [head, self.w[0], self.w[1], self.w[2]]
    }

    /// Inverse of [`Record::to_words`].
    #[inline]
    pub fn from_words(words: [u64; 4]) -> Record {
        let h = words[0];
        Record {
            kind: h as u8,
            aux: (h >> 8) as u8,
            x: (h >> 16) as u16,
            thread: (h >> 32) as u32,
            w: [words[1], words[2], words[3]],
        }
    }

    /// Decodes the on-disk bytes.
    #[inline]
    pub fn decode(b: &[u8; RECORD_SIZE]) -> Record {
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        Record {
            kind: b[0],
            aux: b[1],
            x: u16::from_le_bytes([b[2], b[3]]),
            thread: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            w: [u64_at(8), u64_at(16), u64_at(24)],
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
            aux: 2,
            x: 0x1234,
            thread: 0xdead_beef,
            w: [1, u64::MAX, 0x0102_0304_0506_0708],
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
