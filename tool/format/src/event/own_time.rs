//! The 16-bit own time of a callback (the CONTINUE record's `own_time`): exact nanoseconds
//! below 32 768 ns, where nearly every call lies; above, microseconds with bit 15 set, to
//! 32.767 ms, saturating. A preempted call or one that handed a buffer over keeps its length to
//! the microsecond instead of saturating at 65.5 µs and leaving the rest to the next phase.

/// Bit 15: the low 15 bits count microseconds.
const MICROS: u16 = 1 << 15;
/// The largest value either unit holds.
const LOW: u64 = (MICROS - 1) as u64;

/// Encodes `ns` (rounded up to the microsecond above 32 767 ns, so a phase end is never early).
pub fn encode(ns: u64) -> u16 {
    if ns <= LOW {
        ns as u16
    } else {
        MICROS | ns.div_ceil(1000).min(LOW) as u16
    }
}

/// The nanoseconds an encoded own time stands for.
pub fn decode(raw: u16) -> u64 {
    if raw & MICROS == 0 {
        u64::from(raw)
    } else {
        u64::from(raw & !MICROS) * 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_below_32768_and_microseconds_above() {
        for ns in [0, 1, 35, 32_767] {
            assert_eq!(decode(encode(ns)), ns);
        }
        assert_eq!(decode(encode(32_768)), 33_000);
        assert_eq!(decode(encode(65_536)), 66_000);
        assert_eq!(decode(encode(3_000_000)), 3_000_000);
        assert_eq!(decode(encode(3_000_001)), 3_001_000);
        // Saturates at 32.767 ms.
        assert_eq!(decode(encode(u64::MAX)), 32_767_000);
        // Never early: the decoded value covers the measured one below the saturation.
        for ns in (0..40_000_000).step_by(999_983) {
            assert!(decode(encode(ns)) >= ns.min(32_767_000), "{ns}");
        }
    }
}
