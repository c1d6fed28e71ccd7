//! Self-framed blocks: every block carries its tag, length and a CRC-32, so a file cut short by
//! SIGKILL is readable up to its last complete block.
//!
//! ```text
//! offset 0  u8   tag       (see tag::*; tags >= 128 are optional and skipped by old readers)
//! offset 1  u8   flags     (0)
//! offset 2  u16  reserved  (0)
//! offset 4  u32  length    (payload bytes, <= MAX_PAYLOAD)
//! offset 8  u32  crc32     (IEEE CRC-32 of frame bytes 0..8 followed by the payload)
//! offset 12 payload
//! ```

/// Bytes in a block frame before the payload.
pub const FRAME_SIZE: usize = 12;
/// Largest payload a reader accepts (bounds reader memory).
pub const MAX_PAYLOAD: usize = 16 << 20;
/// Records per EVENTS block the writer emits at most (256 KiB payload).
pub const MAX_RECORDS_PER_BLOCK: usize = 8192;

/// Block tags.
pub mod tag {
    /// The header; always the first block.
    pub const HEADER: u8 = 1;
    /// A run of 32-byte records.
    pub const EVENTS: u8 = 2;
    /// String-table entries.
    pub const NAMES: u8 = 3;
    /// Counts written at finalize; normally the last block.
    pub const TRAILER: u8 = 4;
    /// Tags at or above this are optional: a reader that does not know them skips them.
    pub const FIRST_OPTIONAL: u8 = 128;
}

/// The frame for a payload.
pub fn frame(tag: u8, payload: &[u8]) -> [u8; FRAME_SIZE] {
    let mut f = [0u8; FRAME_SIZE];
    f[0] = tag;
    f[4..8].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    let crc = checksum(&f[..8], payload);
    f[8..12].copy_from_slice(&crc.to_le_bytes());
    f
}

/// Inverse of [`frame`]: (tag, payload length, crc32).
pub fn parse_frame(f: &[u8; FRAME_SIZE]) -> (u8, usize, u32) {
    let len = u32::from_le_bytes(f[4..8].try_into().expect("4"));
    let crc = u32::from_le_bytes(f[8..12].try_into().expect("4"));
    (f[0], len as usize, crc)
}

/// CRC-32 over the first 8 frame bytes and the payload.
pub fn checksum(frame_head: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(frame_head);
    h.update(payload);
    h.finalize()
}

/// Little-endian cursor helpers shared by the header, names and trailer codecs.
pub(crate) struct Cursor<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.remaining() < n {
            return Err(format!("needs {n} more bytes at payload byte {}", self.pos));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
    pub fn str(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| format!("string is not UTF-8 at byte {}", self.pos))
    }
}

pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}
