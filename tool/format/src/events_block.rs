//! The EVENTS block of a 4.x file: records sized by kind, the recording thread stated once per
//! run of its records, and a dispatch id stated once per run of a thread's records of that
//! dispatch. Files of majors 1–3 hold fixed 32-byte records instead ([`crate::record`]).
//!
//! ```text
//! record head (8 bytes)
//! offset 0  u8   bits 0..6 kind, bits 6..8 length code c: the record is 8·(c+1) bytes
//! offset 1  u8   small8
//! offset 2  u16  small16
//! offset 4  u32  small32   (COMPLETE_AT: dispatch id bits 24..56; THREAD: the thread id; else 0)
//! offset 8  the payload words present, u64 each, in payload order
//! ```
//!
//! * A THREAD record (kind [`THREAD`], 8 bytes) names the thread of the records after it, up to
//!   the next THREAD record; a block starts with none named. COMPLETE_AT records carry no
//!   thread (their `small32` is part of the dispatch id) and need none named.
//! * A record of a kind with a dispatch-id payload word ([`dispatch_word`]) is 32 bytes, or 24
//!   bytes with that word left out: it then has the dispatch id of the last 32-byte record of
//!   such a kind since the last THREAD record. Every other known kind is 32 bytes.
//! * An ENQUEUE_PAIR record ([`crate::enqueue_pair`], kind 23) is read as the ENQUEUE ENTER
//!   and ENQUEUE EXIT it holds, in that order, both at its offset.
//! * A kind this reader does not know (a newer minor's) is skipped by its length.
//!
//! An observed dispatch, ENQUEUE_PAIR and COMPLETE_AT, takes 64 bytes (ENQUEUE ENTER, ENQUEUE
//! EXIT and COMPLETE_AT: 88; 3.x: 96).

use crate::enqueue_pair::{self, ENQUEUE_PAIR};
use crate::event::kind;
use crate::record::Record;

/// The record that names the thread of the records after it (never an [`crate::Event`]).
pub const THREAD: u8 = 22;
/// Kinds fit in the low 6 bits of a record's first byte.
const KIND_MASK: u8 = 0x3F;
/// Longest record: a head and three payload words.
pub const MAX_RECORD: usize = 32;

/// The payload word that holds the dispatch id, for the kinds that have one.
pub const fn dispatch_word(k: u8) -> Option<usize> {
    match k {
        kind::DISPATCH_INFO
        | kind::CORRELATION
        | kind::COMPLETE
        | kind::WINDOW_BYTES
        | kind::COUNTER_VALUE => Some(0),
        kind::CONFIG_ENTER
        | kind::PASS_COUNT_ENTER
        | kind::PASS_COUNT_RETURN
        | kind::CONFIG_EXIT
        | kind::PASS_ENTER
        | kind::PASS_EXIT
        | kind::CONTINUE
        | kind::ENQUEUE_ENTER
        | kind::ENQUEUE_EXIT
        | kind::COMPLETE_HOST
        | ENQUEUE_PAIR => Some(1),
        _ => None,
    }
}

/// [`dispatch_word`] for every 6-bit kind, 3 for none: one load per record in the writer.
const DISPATCH_WORDS: [u8; 64] = {
    let mut t = [3u8; 64];
    let mut k = 0;
    while k < 64 {
        if let Some(i) = dispatch_word(k as u8) {
            t[k] = i as u8;
        }
        k += 1;
    }
    t
};

/// The most bytes one [`Encoder::encode`] writes: a THREAD record and a 32-byte record.
pub const MAX_ENCODED: usize = 8 + MAX_RECORD;

/// Encodes records (as [`Record::to_words`] gives them) into one block's payload.
pub struct Encoder {
    /// The thread named last (`u64::MAX`: none yet; thread ids are 32 bits).
    thread: u64,
    /// The dispatch id stated last since then, when `dispatch_known`.
    dispatch: u64,
    dispatch_known: bool,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder {
            thread: u64::MAX,
            dispatch: 0,
            dispatch_known: false,
        }
    }
}

impl Encoder {
    /// Writes `w`'s encoding at the start of `out`; returns its length in bytes.
    #[inline]
    pub fn encode(&mut self, w: &[u64; 4], out: &mut [u8; MAX_ENCODED]) -> usize {
        let k = w[0] as u8 & KIND_MASK;
        let mut n = 0;
        let head32 = if k == kind::COMPLETE_AT {
            w[0] & !0xFF
        } else {
            let tid = w[0] >> 32;
            if self.thread != tid {
                self.thread = tid;
                self.dispatch_known = false;
                out[..8].copy_from_slice(&(u64::from(THREAD) | tid << 32).to_le_bytes());
                n = 8;
            }
            w[0] & 0xFFFF_FF00
        };
        let p = [w[1], w[2], w[3]];
        let dw = usize::from(DISPATCH_WORDS[usize::from(k)]);
        let words = if dw < 3 && self.dispatch_known && self.dispatch == p[dw] {
            let rest = match dw {
                0 => [p[1], p[2]],
                1 => [p[0], p[2]],
                _ => [p[0], p[1]],
            };
            [head32 | u64::from(k | 2 << 6), rest[0], rest[1], 0]
        } else {
            if dw < 3 {
                self.dispatch = p[dw];
                self.dispatch_known = true;
            }
            [head32 | u64::from(k | 3 << 6), p[0], p[1], p[2]]
        };
        let len = 8 * (usize::from((words[0] as u8) >> 6) + 1);
        for (o, v) in out[n..n + 32].chunks_exact_mut(8).zip(words) {
            o.copy_from_slice(&v.to_le_bytes());
        }
        n + len
    }

    /// Appends `w`'s encoding to `out`.
    pub fn push(&mut self, w: &[u64; 4], out: &mut Vec<u8>) {
        let mut buf = [0u8; MAX_ENCODED];
        let n = self.encode(w, &mut buf);
        out.extend_from_slice(&buf[..n]);
    }
}

/// One record read from a block (of a known kind or not), with its offset in the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRecord {
    pub at: usize,
    pub record: Record,
}

/// Reads a block's records in order: the state between two records of one block's payload
/// (a new block takes a new decoder).
#[derive(Debug, Default, Clone, Copy)]
pub struct Decoder {
    pos: usize,
    thread: Option<u32>,
    dispatch: Option<u64>,
    /// The ENQUEUE EXIT of the ENQUEUE_PAIR read last, given next.
    pending: Option<BlockRecord>,
}

impl Decoder {
    /// Payload bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The next record; `None` at the end of the block, an error (payload offset, why) for a
    /// malformed one.
    pub fn next_record(&mut self, buf: &[u8]) -> Option<Result<BlockRecord, (usize, String)>> {
        if let Some(r) = self.pending.take() {
            return Some(Ok(r));
        }
        loop {
            let at = self.pos;
            let b0 = *buf.get(at)?;
            let len = 8 * (usize::from(b0 >> 6) + 1);
            let Some(bytes) = buf.get(at..at + len) else {
                return Some(Err((
                    at,
                    format!("a {len}-byte record runs past the block"),
                )));
            };
            self.pos += len;
            let head = u64::from_le_bytes(bytes[..8].try_into().expect("8"));
            let k = b0 & KIND_MASK;
            let mut words = [0u64; 3];
            let n = len / 8 - 1;
            for (w, c) in words.iter_mut().zip(bytes[8..].chunks_exact(8)) {
                *w = u64::from_le_bytes(c.try_into().expect("8"));
            }
            if k == THREAD {
                if len != 8 {
                    return Some(Err((at, format!("a THREAD record of {len} bytes"))));
                }
                self.thread = Some((head >> 32) as u32);
                self.dispatch = None;
                continue;
            }
            let r = self.record(at, k, head, &words[..n]);
            return Some(match r {
                Ok(r) if k == ENQUEUE_PAIR => {
                    let [enter, exit] = enqueue_pair::expand(&r.record);
                    self.pending = Some(BlockRecord { at, record: exit });
                    Ok(BlockRecord { at, record: enter })
                }
                r => r.map_err(|m| (at, m)),
            });
        }
    }

    fn record(
        &mut self,
        at: usize,
        k: u8,
        head: u64,
        words: &[u64],
    ) -> Result<BlockRecord, String> {
        let known = k <= kind::COMPLETE_AT || k == ENQUEUE_PAIR;
        let thread = match (k, self.thread) {
            (kind::COMPLETE_AT, _) => (head >> 32) as u32,
            (_, Some(t)) => t,
            // A newer minor's kind may need no thread.
            (_, None) if !known => 0,
            (_, None) => return Err(format!("a kind {k} record before any THREAD record")),
        };
        let mut payload = [0u64; 3];
        match (known, dispatch_word(k), words.len()) {
            (true, Some(i), 2) => {
                let d = self.dispatch.ok_or_else(|| {
                    format!("a kind {k} record without its dispatch id, none stated before it")
                })?;
                let mut rest = words.iter();
                for (j, p) in payload.iter_mut().enumerate() {
                    *p = if j == i { d } else { *rest.next().expect("2") };
                }
            }
            (true, d, 3) => {
                payload.copy_from_slice(words);
                if let Some(i) = d {
                    self.dispatch = Some(words[i]);
                }
            }
            (true, _, n) => return Err(format!("a kind {k} record of {} bytes", 8 * (n + 1))),
            (false, _, _) => {
                for (p, w) in payload.iter_mut().zip(words) {
                    *p = *w;
                }
            }
        }
        Ok(BlockRecord {
            at,
            record: Record {
                kind: k,
                small8: (head >> 8) as u8,
                small16: (head >> 16) as u16,
                thread,
                payload,
            },
        })
    }
}

/// The records in a block's payload (THREAD records not counted); an error for a malformed one.
pub fn count_records(buf: &[u8]) -> Result<u64, (usize, String)> {
    let mut d = Decoder::default();
    let mut n = 0;
    while let Some(r) = d.next_record(buf) {
        r?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests;
