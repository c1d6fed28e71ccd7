//! The trailer block, written once at finalize.
//!
//! Payload: `count u32` then `count` little-endian u64 counters in the order of the fields below.
//! A reader takes the counters it knows and ignores extra ones; missing ones read as 0.

use crate::block::Cursor;
use serde::{Deserialize, Serialize};

/// Trailer flag bits.
pub mod flags {
    /// Written by the SDK's finalize call.
    pub const FINALIZE: u64 = 1;
    /// Written by the atexit safety net (finalize never ran).
    pub const ATEXIT: u64 = 2;
    /// A panic was caught during the run; recording stopped early.
    pub const PANIC: u64 = 4;
    /// The writer thread could not be joined within the bounded wait; records may be missing.
    pub const WRITER_TIMEOUT: u64 = 8;
    /// The tool's stall budget ran out: from then on no application thread waited for the
    /// output, and records that did not fit were dropped (window records too) and counted.
    pub const STALLED: u64 = 16;
    /// Finalize's bounded wait for threads handing records over ran out: records of those
    /// threads may be missing without being counted.
    pub const UNFLUSHED: u64 = 32;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Trailer {
    /// Events written to the file (all kinds; an ENQUEUE_PAIR record counts as its two).
    pub events_written: u64,
    /// Dispatch records (ENQUEUE/COMPLETE) dropped under `KRPHASE_ON_FULL=drop`.
    pub dropped_dispatch: u64,
    /// Allocation records dropped under `KRPHASE_ON_FULL=drop`.
    pub dropped_allocation: u64,
    /// Window records dropped: only after the tool's stall budget ran out ([`flags::STALLED`]).
    pub dropped_window: u64,
    /// Replay windows (CONFIG with at least one PASS) seen by the tool.
    pub windows: u64,
    /// CONFIG pairs without a PASS (tool opt-outs and SDK declines).
    pub declines: u64,
    /// Blocks written before the trailer.
    pub blocks: u64,
    /// CLOCK_BOOTTIME ns when the trailer was written.
    pub finalize_ns: u64,
    /// [`flags`] bits.
    pub flags: u64,
    /// Kernel-name entries dropped (the stall budget ran out, or finalize had begun).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_names: u64,
    /// Callbacks skipped because their payload's `size` was too small to read.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_payloads: u64,
    /// CLOCK_BOOTTIME ns of the first and last drop of any record (0: none dropped): the span
    /// of the run in which records were lost.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_drop_ns: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub last_drop_ns: u64,
    /// Total ns application threads waited on the output (all threads; at most the stall
    /// budget).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stall_ns: u64,
}

/// Counters this version knows (and writes at most); a newer minor appends after them.
pub const KNOWN_COUNTERS: usize = 14;
/// Counters every trailer has; the later ones are written up to the last non-zero one (a
/// reader reads missing counters as 0).
const FIRST_FIELDS: usize = 9;

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Trailer {
    fn fields(&self) -> [u64; KNOWN_COUNTERS] {
        [
            self.events_written,
            self.dropped_dispatch,
            self.dropped_allocation,
            self.dropped_window,
            self.windows,
            self.declines,
            self.blocks,
            self.finalize_ns,
            self.flags,
            self.dropped_names,
            self.bad_payloads,
            self.first_drop_ns,
            self.last_drop_ns,
            self.stall_ns,
        ]
    }

    pub fn encode(&self) -> Vec<u8> {
        let all = self.fields();
        let n = all
            .iter()
            .rposition(|&v| v != 0)
            .map_or(0, |i| i + 1)
            .max(FIRST_FIELDS);
        let f = &all[..n];
        let mut o = Vec::with_capacity(4 + 8 * f.len());
        o.extend_from_slice(&(f.len() as u32).to_le_bytes());
        for v in f {
            o.extend_from_slice(&v.to_le_bytes());
        }
        o
    }

    pub fn decode(payload: &[u8]) -> Result<Trailer, String> {
        let mut c = Cursor::new(payload);
        let n = c.u32()? as usize;
        let mut v = [0u64; KNOWN_COUNTERS];
        for i in 0..n {
            let x = c.u64()?;
            if i < v.len() {
                v[i] = x;
            }
        }
        Ok(Trailer {
            events_written: v[0],
            dropped_dispatch: v[1],
            dropped_allocation: v[2],
            dropped_window: v[3],
            windows: v[4],
            declines: v[5],
            blocks: v[6],
            finalize_ns: v[7],
            flags: v[8],
            dropped_names: v[9],
            bad_payloads: v[10],
            first_drop_ns: v[11],
            last_drop_ns: v[12],
            stall_ns: v[13],
        })
    }
}
