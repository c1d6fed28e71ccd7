//! The header block: who wrote the file, how the tool was configured, and the clock anchor.
//!
//! Payload, in order (strings are u32 length + UTF-8 bytes, integers little-endian):
//! `tool_version str, pid u32, ppid u32, hostname str, command_line str, sdk_major u32,
//! sdk_minor u32, sdk_patch u32, requested_mode u8, mode u8, payload_layout u8, on_full u8,
//! passes u32, filter str, boottime_ns u64, realtime_ns u64, record_size u32, replay_kind u32,
//! config_op u32, pass_op u32, output_path str`, then (appended in 2.0, optional)
//! `utc_offset_s i32`, then (3.0, optional) `clock u8` ([`Clock`]: the unit of every host time
//! in the records), then (3.1, optional) `rank u32, world_size u32, rank_var str` ([`Rank`]).
//! Readers skip (and count) bytes after the known fields: a newer minor may append fields.

use crate::block::{Cursor, put_str};
use serde::{Deserialize, Serialize};

/// Tool mode (`KRPHASE_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Auto,
    Drive,
    Observe,
    /// A value this reader does not know (kept, like the other coded values).
    Unknown(u8),
}

impl Mode {
    pub fn to_u8(self) -> u8 {
        match self {
            Mode::Auto => 0,
            Mode::Drive => 1,
            Mode::Observe => 2,
            Mode::Unknown(v) => v,
        }
    }
    /// A known mode; `None` for any other value.
    pub fn from_u8(v: u8) -> Option<Mode> {
        match Mode::decode(v) {
            Mode::Unknown(_) => None,
            m => Some(m),
        }
    }
    /// Any stored value: an unknown one is kept as [`Mode::Unknown`].
    pub fn decode(v: u8) -> Mode {
        match v {
            0 => Mode::Auto,
            1 => Mode::Drive,
            2 => Mode::Observe,
            v => Mode::Unknown(v),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Drive => "drive",
            Mode::Observe => "observe",
            Mode::Unknown(_) => "unknown",
        }
    }
}

/// What the records' host times (`ts` fields, a CONTINUE's own time) count. GPU start/end are
/// always the SDK's CLOCK_BOOTTIME nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// CLOCK_BOOTTIME nanoseconds (every file before 3.0; a 3.0 writer on a machine without an
    /// invariant TSC the kernel uses as its clocksource, or off x86_64).
    #[default]
    Boottime,
    /// Raw TSC ticks: the reader converts them to CLOCK_BOOTTIME nanoseconds through the file's
    /// CLOCK_PAIR records (see [`crate::clock`]).
    Tsc,
    /// A value this reader does not know (its times cannot be converted).
    Unknown(u8),
}

impl Clock {
    pub fn to_u8(self) -> u8 {
        match self {
            Clock::Boottime => 0,
            Clock::Tsc => 1,
            Clock::Unknown(v) => v,
        }
    }
    pub fn decode(v: u8) -> Clock {
        match v {
            0 => Clock::Boottime,
            1 => Clock::Tsc,
            v => Clock::Unknown(v),
        }
    }
    fn is_boottime(&self) -> bool {
        *self == Clock::Boottime
    }
}

/// Value of `replay_kind`/`config_op`/`pass_op` when not found.
pub const NOT_FOUND: u32 = u32::MAX;

/// The decoded header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Header {
    pub tool_version: String,
    pub pid: u32,
    pub ppid: u32,
    pub hostname: String,
    pub command_line: String,
    /// SDK version (major, minor, patch) as reported at configure time.
    pub sdk_version: (u32, u32, u32),
    pub requested_mode: Mode,
    /// Mode in effect when the header was written (a later NOTICE may change it).
    pub mode: Mode,
    /// 0 = decided at run time, 1 = Layout A, 2 = Layout B (forced by `KRPHASE_PAYLOAD_LAYOUT`).
    pub payload_layout: u8,
    /// 0 = drop, 1 = block (`KRPHASE_ON_FULL`).
    pub on_full: u8,
    pub passes: u32,
    /// Kernel filter regex; empty when none.
    pub filter: String,
    /// CLOCK_BOOTTIME and CLOCK_REALTIME read back to back, ns.
    pub boottime_ns: u64,
    pub realtime_ns: u64,
    pub record_size: u32,
    /// KERNEL_REPLAY kind and CONFIG/PASS operations as found by name ([`NOT_FOUND`] if not).
    pub replay_kind: u32,
    pub config_op: u32,
    pub pass_op: u32,
    pub output_path: String,
    /// The local time zone's offset from UTC in seconds east (`tm_gmtoff` at `realtime_ns`), so a
    /// reader can place zone-less local wall-clock stamps (the SDK's glog lines) on the clock
    /// anchor. `None`: not recorded (1.x files, 2.0 files written before the field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utc_offset_s: Option<i32>,
    /// The unit of the records' host times (appended in 3.0; earlier files: BOOTTIME ns). A
    /// writer that stores it also stores `utc_offset_s` (or its "unknown" value) before it.
    #[serde(default, skip_serializing_if = "Clock::is_boottime")]
    pub clock: Clock,
    /// The process's rank in a parallel job, from its launcher's environment (appended in 3.1;
    /// `None`: no launcher variable was set, or the file is older).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<Rank>,
}

/// A process's place in a parallel job, as its launcher (MPI, Slurm, torchrun) announced it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rank {
    pub rank: u32,
    /// The job's number of ranks, when the launcher says it beside the rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_size: Option<u32>,
    /// The environment variable the rank was read from (e.g. `OMPI_COMM_WORLD_RANK`), so a
    /// reader can tell which launcher's numbering it is.
    pub var: String,
}

/// The stored `world_size` that means "not announced".
pub const WORLD_SIZE_UNKNOWN: u32 = u32::MAX;

/// The stored `utc_offset_s` value that means "unknown": a writer that knows no offset but
/// appends later fields writes it (one that appends nothing may stop before the field).
pub const UTC_OFFSET_UNKNOWN: i32 = i32::MIN;

impl Header {
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Vec::with_capacity(256);
        put_str(&mut o, &self.tool_version);
        o.extend_from_slice(&self.pid.to_le_bytes());
        o.extend_from_slice(&self.ppid.to_le_bytes());
        put_str(&mut o, &self.hostname);
        put_str(&mut o, &self.command_line);
        for v in [self.sdk_version.0, self.sdk_version.1, self.sdk_version.2] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        o.push(self.requested_mode.to_u8());
        o.push(self.mode.to_u8());
        o.push(self.payload_layout);
        o.push(self.on_full);
        o.extend_from_slice(&self.passes.to_le_bytes());
        put_str(&mut o, &self.filter);
        o.extend_from_slice(&self.boottime_ns.to_le_bytes());
        o.extend_from_slice(&self.realtime_ns.to_le_bytes());
        o.extend_from_slice(&self.record_size.to_le_bytes());
        for v in [self.replay_kind, self.config_op, self.pass_op] {
            o.extend_from_slice(&v.to_le_bytes());
        }
        put_str(&mut o, &self.output_path);
        // Each optional field is written when it, or a field after it, has something to say.
        let rank = self.rank.is_some();
        if self.utc_offset_s.is_some() || !self.clock.is_boottime() || rank {
            let off = self.utc_offset_s.unwrap_or(UTC_OFFSET_UNKNOWN);
            o.extend_from_slice(&off.to_le_bytes());
        }
        if !self.clock.is_boottime() || rank {
            o.push(self.clock.to_u8());
        }
        if let Some(r) = &self.rank {
            o.extend_from_slice(&r.rank.to_le_bytes());
            let size = r.world_size.unwrap_or(WORLD_SIZE_UNKNOWN);
            o.extend_from_slice(&size.to_le_bytes());
            put_str(&mut o, &r.var);
        }
        o
    }

    /// Decodes the fields this reader knows of a header of format `major`; bytes after them
    /// (fields of a newer minor) are ignored.
    pub fn decode(payload: &[u8], major: u16) -> Result<Header, String> {
        Header::decode_counting(payload, major).map(|(h, _)| h)
    }

    /// As [`Header::decode`], also returning how many bytes followed the known fields. `clock`
    /// and `rank` are read only in a 3.x header (a 2.x newer minor's appended bytes are not
    /// them).
    pub fn decode_counting(payload: &[u8], major: u16) -> Result<(Header, usize), String> {
        let mut c = Cursor::new(payload);
        let mode = |v: u8| -> Result<Mode, String> { Ok(Mode::decode(v)) };
        let h = Header {
            tool_version: c.str()?,
            pid: c.u32()?,
            ppid: c.u32()?,
            hostname: c.str()?,
            command_line: c.str()?,
            sdk_version: (c.u32()?, c.u32()?, c.u32()?),
            requested_mode: mode(c.u8()?)?,
            mode: mode(c.u8()?)?,
            payload_layout: c.u8()?,
            on_full: c.u8()?,
            passes: c.u32()?,
            filter: c.str()?,
            boottime_ns: c.u64()?,
            realtime_ns: c.u64()?,
            record_size: c.u32()?,
            replay_kind: c.u32()?,
            config_op: c.u32()?,
            pass_op: c.u32()?,
            output_path: c.str()?,
            utc_offset_s: None,
            clock: Clock::Boottime,
            rank: None,
        };
        let mut h = h;
        // Optional: a file that ends its header before the field has no offset.
        if c.remaining() >= 4 {
            let off = c.u32()? as i32;
            h.utc_offset_s = (off != UTC_OFFSET_UNKNOWN).then_some(off);
        }
        if major >= 3 && c.remaining() >= 1 {
            h.clock = Clock::decode(c.u8()?);
        }
        // A 3.0 file ends at the clock; 3.1 appends the rank as a whole (rank, size, name).
        if major >= 3 && c.remaining() >= 12 {
            let rank = c.u32()?;
            let size = c.u32()?;
            h.rank = Some(Rank {
                rank,
                world_size: (size != WORLD_SIZE_UNKNOWN).then_some(size),
                var: c.str()?,
            });
        }
        Ok((h, c.remaining()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_utc_offset_is_optional_and_appended_last() {
        let h = Header {
            output_path: "x.krp".into(),
            ..Header::default()
        };
        let without = h.encode();
        let (back, rest) = Header::decode_counting(&without, 3).unwrap();
        assert_eq!((back.utc_offset_s, rest), (None, 0));
        let with = Header {
            utc_offset_s: Some(-5 * 3600),
            ..h.clone()
        };
        let bytes = with.encode();
        assert_eq!(bytes.len(), without.len() + 4);
        assert_eq!(
            &bytes[..without.len()],
            &without[..],
            "appended after output_path"
        );
        assert_eq!(Header::decode_counting(&bytes, 3).unwrap(), (with, 0));
        // The sentinel reads as unknown, and what follows it is still counted as skipped.
        let mut sentinel = without.clone();
        sentinel.extend_from_slice(&UTC_OFFSET_UNKNOWN.to_le_bytes());
        sentinel.extend_from_slice(&[1, 2, 3]);
        assert_eq!(
            Header::decode_counting(&sentinel, 2).unwrap(),
            (h.clone(), 3)
        );
        // 3.0: the clock follows the offset (written with the "unknown" offset when none).
        let tsc = Header {
            clock: Clock::Tsc,
            ..h.clone()
        };
        let bytes = tsc.encode();
        assert_eq!(bytes.len(), without.len() + 5);
        assert_eq!(Header::decode_counting(&bytes, 3).unwrap(), (tsc, 0));
        // A 2.x header's byte there is a newer minor's field, not a clock.
        assert_eq!(Header::decode_counting(&bytes, 2).unwrap(), (h, 1));
    }

    #[test]
    fn the_rank_follows_the_clock_and_a_3_0_reader_skips_it() {
        let h = Header {
            output_path: "x.krp".into(),
            ..Header::default()
        };
        let base = h.encode().len();
        let ranked = Header {
            rank: Some(Rank {
                rank: 7,
                world_size: Some(256),
                var: "OMPI_COMM_WORLD_RANK".into(),
            }),
            ..h.clone()
        };
        let bytes = ranked.encode();
        // Offset ("unknown") and clock (BOOTTIME) are written so the rank has its place.
        assert_eq!(bytes.len(), base + 4 + 1 + 4 + 4 + 4 + 20);
        assert_eq!(Header::decode_counting(&bytes, 3).unwrap(), (ranked, 0));
        let no_size = Header {
            rank: Some(Rank {
                rank: 0,
                world_size: None,
                var: "RANK".into(),
            }),
            ..h.clone()
        };
        assert_eq!(
            Header::decode_counting(&no_size.encode(), 3).unwrap(),
            (no_size, 0)
        );
        // A 2.x header's bytes there belong to a newer minor of 2: counted, not a rank.
        let (two, rest) = Header::decode_counting(&bytes, 2).unwrap();
        assert_eq!((two.rank, rest), (None, 1 + 4 + 4 + 4 + 20));
    }
}
