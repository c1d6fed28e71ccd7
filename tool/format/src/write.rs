//! The writer: magic, version, header block, then EVENTS / NAMES blocks, then the trailer. It
//! writes [`FORMAT_VERSION`]; [`FileWriter::with_version`] states another one, for the test
//! writers of golden files and fixtures.
//!
//! Each block goes out in one `write_all` of frame + payload, so a killed process leaves at most
//! one partial block at the end of the file.

use crate::block::{self, MAX_RECORDS_PER_BLOCK, tag};
use crate::enqueue_pair::ENQUEUE_PAIR;
use crate::event::NameSpace;
use crate::events_block::{self, Encoder};
use crate::header::Header;
use crate::record::{RECORD_SIZE, Record};
use crate::trailer::Trailer;
use crate::version::FormatVersion;
use crate::{FORMAT_VERSION, MAGIC};
use std::io::{self, Write};

pub struct FileWriter<W: Write> {
    out: W,
    /// Writes 4.x EVENTS blocks ([`events_block`]) rather than fixed 32-byte records.
    sized_records: bool,
    scratch: Vec<u8>,
    blocks: u64,
    records: u64,
}

impl<W: Write> FileWriter<W> {
    /// Writes the magic, the version and the header block.
    pub fn new(out: W, header: &Header) -> io::Result<Self> {
        Self::with_version(out, FORMAT_VERSION, &header.encode())
    }

    /// Writes the magic, `version` and a header block of `header_payload` bytes (an encoded
    /// [`Header`], possibly followed by a newer minor's fields). For golden files and fixtures:
    /// the records that follow must mean what `version` says.
    pub fn with_version(
        mut out: W,
        version: FormatVersion,
        header_payload: &[u8],
    ) -> io::Result<Self> {
        let mut start = Vec::with_capacity(8);
        start.extend_from_slice(&MAGIC);
        start.extend_from_slice(&version.to_word().to_le_bytes());
        out.write_all(&start)?;
        let mut w = FileWriter {
            out,
            sized_records: version.major >= 4,
            scratch: Vec::with_capacity(block::FRAME_SIZE + MAX_RECORDS_PER_BLOCK * RECORD_SIZE),
            blocks: 0,
            records: 0,
        };
        w.write_block(tag::HEADER, header_payload)?;
        Ok(w)
    }

    /// Writes one block of any tag (frame + payload, one write). The typed methods below are
    /// what a writer of this version uses; this one also writes optional blocks (tags ≥ 128).
    pub fn write_block(&mut self, tag: u8, payload: &[u8]) -> io::Result<()> {
        self.scratch.clear();
        self.scratch.extend_from_slice(&block::frame(tag, payload));
        self.scratch.extend_from_slice(payload);
        self.out.write_all(&self.scratch)?;
        self.blocks += 1;
        Ok(())
    }

    /// Writes records as one or more EVENTS blocks.
    pub fn write_records(&mut self, records: &[Record]) -> io::Result<()> {
        if self.sized_records {
            let words: Vec<[u64; 4]> = records.iter().map(Record::to_words).collect();
            return self.write_sized(&words);
        }
        self.write_events(records, |out, r| out.copy_from_slice(&r.encode()))
    }

    /// Writes records given as words ([`Record::to_words`]) as one or more EVENTS blocks; the
    /// bytes are the same as [`FileWriter::write_records`] (a record's encoding is its four
    /// words in little-endian order).
    pub fn write_words(&mut self, words: &[[u64; 4]]) -> io::Result<()> {
        if self.sized_records {
            return self.write_sized(words);
        }
        self.write_events(words, |out, w| {
            out[0..8].copy_from_slice(&w[0].to_le_bytes());
            out[8..16].copy_from_slice(&w[1].to_le_bytes());
            out[16..24].copy_from_slice(&w[2].to_le_bytes());
            out[24..32].copy_from_slice(&w[3].to_le_bytes());
        })
    }

    /// EVENTS blocks of at most [`MAX_RECORDS_PER_BLOCK`] records, `encode` filling each
    /// record's [`RECORD_SIZE`] bytes.
    #[inline]
    fn write_events<T>(&mut self, items: &[T], encode: impl Fn(&mut [u8], &T)) -> io::Result<()> {
        for chunk in items.chunks(MAX_RECORDS_PER_BLOCK) {
            let len = block::FRAME_SIZE + chunk.len() * RECORD_SIZE;
            // Grown once, never cleared: every byte used is overwritten below (no memset).
            if self.scratch.len() < len {
                self.scratch.resize(len, 0);
            }
            let buf = &mut self.scratch[..len];
            for (out, item) in buf[block::FRAME_SIZE..]
                .chunks_exact_mut(RECORD_SIZE)
                .zip(chunk)
            {
                encode(out, item);
            }
            let f = block::frame(tag::EVENTS, &buf[block::FRAME_SIZE..]);
            buf[..block::FRAME_SIZE].copy_from_slice(&f);
            self.out.write_all(buf)?;
            self.blocks += 1;
            self.records += chunk.len() as u64;
        }
        Ok(())
    }

    /// 4.x EVENTS blocks of at most [`MAX_RECORDS_PER_BLOCK`] records, each encoded on its
    /// own ([`events_block`]: a block names its threads and dispatches afresh).
    fn write_sized(&mut self, words: &[[u64; 4]]) -> io::Result<()> {
        for chunk in words.chunks(MAX_RECORDS_PER_BLOCK) {
            let most = block::FRAME_SIZE + chunk.len() * events_block::MAX_ENCODED;
            // Grown once, never cleared: every byte used is overwritten below (no memset).
            if self.scratch.len() < most {
                self.scratch.resize(most, 0);
            }
            let mut e = Encoder::default();
            let mut pos = block::FRAME_SIZE;
            // An ENQUEUE_PAIR is two events (the reader gives both).
            let mut pairs = 0;
            for w in chunk {
                let out = (&mut self.scratch[pos..pos + events_block::MAX_ENCODED])
                    .try_into()
                    .expect("room for one record");
                pos += e.encode(w, out);
                pairs += u64::from(w[0] as u8 == ENQUEUE_PAIR);
            }
            let f = block::frame(tag::EVENTS, &self.scratch[block::FRAME_SIZE..pos]);
            self.scratch[..block::FRAME_SIZE].copy_from_slice(&f);
            self.out.write_all(&self.scratch[..pos])?;
            self.blocks += 1;
            self.records += chunk.len() as u64 + pairs;
        }
        Ok(())
    }

    /// Writes string-table entries as one NAMES block.
    /// Entry: `space u8, key u64, len u32, UTF-8 bytes`.
    pub fn write_names(&mut self, names: &[(NameSpace, u64, &str)]) -> io::Result<()> {
        if names.is_empty() {
            return Ok(());
        }
        let mut p = Vec::new();
        for (space, key, name) in names {
            p.push(space.to_u8());
            p.extend_from_slice(&key.to_le_bytes());
            block::put_str(&mut p, name);
        }
        self.write_block(tag::NAMES, &p)
    }

    /// Writes the trailer block (`blocks` and `events_written` are filled in when zero).
    pub fn write_trailer(&mut self, trailer: &Trailer) -> io::Result<()> {
        let mut t = *trailer;
        if t.blocks == 0 {
            t.blocks = self.blocks;
        }
        if t.events_written == 0 {
            t.events_written = self.records;
        }
        self.write_block(tag::TRAILER, &t.encode())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Blocks written so far (header included).
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u64) -> Record {
        Record {
            kind: 12,
            small8: (i % 7) as u8,
            small16: i as u16,
            thread: 40 + i as u32,
            payload: [i, i.wrapping_mul(31), !i],
        }
    }

    /// `write_words` reuses its block buffer without clearing it: after a longer block, and after
    /// a names block, its bytes must still equal `write_records`' for the same records.
    #[test]
    fn write_words_matches_write_records_across_reused_buffers() {
        let header = Header::default();
        let long: Vec<Record> = (0..3000).map(rec).collect();
        let short: Vec<Record> = (5000..5010).map(rec).collect();
        let words = |rs: &[Record]| rs.iter().map(Record::to_words).collect::<Vec<_>>();
        let names = [(NameSpace::Kernel, 3u64, "k")];

        let mut a = FileWriter::new(Vec::new(), &header).expect("header");
        a.write_records(&long).expect("long");
        a.write_records(&short).expect("short");
        a.write_names(&names).expect("names");
        a.write_records(&short).expect("short");
        let mut b = FileWriter::new(Vec::new(), &header).expect("header");
        b.write_words(&words(&long)).expect("long");
        b.write_words(&words(&short)).expect("short");
        b.write_names(&names).expect("names");
        b.write_words(&words(&short)).expect("short");
        assert_eq!((a.blocks(), a.records()), (b.blocks(), b.records()));
        assert_eq!(a.into_inner(), b.into_inner());
    }
}
