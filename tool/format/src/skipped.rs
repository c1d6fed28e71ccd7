//! What a reader passed over because a newer minor added it: optional blocks (tags ≥ 128),
//! record kinds, header bytes after the known fields, trailer counters after the known ones, and
//! record bytes after the known 32. Counted per tag and per kind, so a reader can say in one
//! line what it did not understand.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of what was skipped, per tag and per kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Optional block tag → (blocks, payload bytes).
    pub blocks: BTreeMap<u8, (u64, u64)>,
    /// Unknown record kind → records (each surfaces as [`crate::Event::Unknown`]).
    pub kinds: BTreeMap<u8, u64>,
    /// Header payload bytes after the fields this reader knows.
    pub header_bytes: u64,
    /// Trailer counters after the ones this reader knows.
    pub trailer_counters: u64,
    /// Bytes after the first 32 of each record (a newer minor's longer record), in total.
    pub record_bytes: u64,
}

impl Skipped {
    pub fn is_empty(&self) -> bool {
        *self == Skipped::default()
    }

    pub(crate) fn block(&mut self, tag: u8, len: usize) {
        let e = self.blocks.entry(tag).or_default();
        e.0 += 1;
        e.1 += len as u64;
    }

    pub(crate) fn kind(&mut self, kind: u8) {
        *self.kinds.entry(kind).or_default() += 1;
    }

    /// One line, e.g. `1 optional block with tag 200 (16 bytes), 2 records of kind 18,
    /// 8 header bytes`; empty when nothing was skipped.
    pub fn summary(&self) -> String {
        let plural = |n: u64, one: &str, many: &str| {
            if n == 1 {
                format!("{n} {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let mut parts: Vec<String> = self
            .blocks
            .iter()
            .map(|(tag, &(n, bytes))| {
                format!(
                    "{} with tag {tag} ({bytes} bytes)",
                    plural(n, "optional block", "optional blocks")
                )
            })
            .collect();
        parts.extend(
            self.kinds
                .iter()
                .map(|(kind, &n)| format!("{} of kind {kind}", plural(n, "record", "records"))),
        );
        if self.header_bytes > 0 {
            parts.push(plural(self.header_bytes, "header byte", "header bytes"));
        }
        if self.trailer_counters > 0 {
            parts.push(plural(
                self.trailer_counters,
                "trailer counter",
                "trailer counters",
            ));
        }
        if self.record_bytes > 0 {
            parts.push(plural(
                self.record_bytes,
                "record byte past the known 32",
                "record bytes past the known 32",
            ));
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_every_tag_and_kind() {
        let mut s = Skipped::default();
        assert!(s.is_empty() && s.summary().is_empty());
        s.block(200, 16);
        s.block(200, 4);
        s.block(130, 1);
        s.kind(19);
        s.header_bytes = 1;
        s.trailer_counters = 2;
        assert_eq!(
            s.summary(),
            "1 optional block with tag 130 (1 bytes), 2 optional blocks with tag 200 (20 bytes), \
             1 record of kind 19, 1 header byte, 2 trailer counters"
        );
    }
}
