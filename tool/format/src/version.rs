//! The format version, major.minor, as the `u32` after the magic stores it: bits 0..16 are the
//! major, bits 16..32 the minor. Files written before versions had a minor store `1`, which
//! reads as 1.0.
//!
//! A change of meaning (a field read differently, a record written under other conditions) is a
//! new major: a reader refuses a major newer than its own. An addition (a new record kind, an
//! optional block, a header field or trailer counter appended, a longer record) is a new minor:
//! a reader of an older minor skips what it does not know and says what it skipped.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A format version, major.minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FormatVersion {
    pub major: u16,
    pub minor: u16,
}

impl FormatVersion {
    /// The first format (files whose version word is `1`).
    pub const V1_0: FormatVersion = FormatVersion::new(1, 0);
    /// Sticky enqueue placement, CONTINUE with total and own time, MODULE_VARS, COMPLETE_HOST,
    /// COUNTER_VALUE.
    pub const V2_0: FormatVersion = FormatVersion::new(2, 0);
    /// Host times in the header's clock (raw TSC ticks, converted by the reader through the
    /// CLOCK_PAIR calibration records), and one COMPLETE_AT record per completion.
    pub const V3_0: FormatVersion = FormatVersion::new(3, 0);
    /// The header's rank (a launcher's rank variable, the job's size and the variable's name).
    pub const V3_1: FormatVersion = FormatVersion::new(3, 1);
    /// EVENTS blocks with records sized by kind, the thread stated once per run of a thread's
    /// records and the dispatch id once per run of a thread's records of one dispatch
    /// ([`crate::events_block`]).
    pub const V4_0: FormatVersion = FormatVersion::new(4, 0);

    pub const fn new(major: u16, minor: u16) -> Self {
        FormatVersion { major, minor }
    }

    /// Decodes the version word stored after the magic.
    pub const fn from_word(word: u32) -> Self {
        FormatVersion {
            major: word as u16,
            minor: (word >> 16) as u16,
        }
    }

    /// The version word stored after the magic.
    pub const fn to_word(self) -> u32 {
        self.major as u32 | (self.minor as u32) << 16
    }
}

impl fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_old_version_word_reads_as_1_0_and_words_round_trip() {
        assert_eq!(FormatVersion::from_word(1), FormatVersion::V1_0);
        assert_eq!(FormatVersion::V2_0.to_word(), 2);
        assert_eq!(FormatVersion::V3_0.to_word(), 3);
        let v = FormatVersion::new(2, 1);
        assert_eq!(v.to_word(), 2 | 1 << 16);
        assert_eq!(FormatVersion::from_word(v.to_word()), v);
        assert_eq!(v.to_string(), "2.1");
        assert!(FormatVersion::new(2, 1) > FormatVersion::V2_0);
        assert!(FormatVersion::new(3, 0) > FormatVersion::new(2, 9));
    }
}
