//! A run's identity as rocprofv3's rocpd writer derives it: the node id from the machine id,
//! and a UUIDv7 whose 48-bit timestamp is the process's start (ms since the Unix epoch),
//! whose 12 bits after the version nibble repeat the low bits of that millisecond, and whose
//! 62 variant-tagged bits come from a generator seeded by the process (machine id, pid,
//! parent pid, start), so one process always gets one uuid.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// libstdc++'s `std::hash` of a byte string (MurmurHash64A with libstdc++'s seed): rocprofv3
/// hashes the machine id with it, so the stand-in's node ids are the ones rocprofv3 writes on
/// the same machine.
pub fn std_hash(bytes: &[u8]) -> u64 {
    const MUL: u64 = 0xc6a4_a793_5bd1_e995;
    let mix = |v: u64| v ^ (v >> 47);
    let mut hash = 0xc70f_6907_u64 ^ (bytes.len() as u64).wrapping_mul(MUL);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        hash = (hash ^ mix(word.wrapping_mul(MUL)).wrapping_mul(MUL)).wrapping_mul(MUL);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let word = tail
            .iter()
            .rev()
            .fold(0u64, |w, b| (w << 8) | u64::from(*b));
        hash = (hash ^ word).wrapping_mul(MUL);
    }
    mix(mix(hash).wrapping_mul(MUL))
}

/// `rocpd_info_node.hash` and the node id (`nid`) of `machine_id`: the hash reduced modulo
/// `i64::MAX`, then modulo `u32::MAX`.
pub fn node(machine_id: &str) -> (i64, i64) {
    let hash = std_hash(machine_id.as_bytes()) % i64::MAX as u64;
    (hash as i64, (hash % u64::from(u32::MAX)) as i64)
}

/// The run's UUIDv7 in lowercase 8-4-4-4-12 form; `start_unix_ns` is the process's start.
pub fn uuid_v7(start_unix_ns: u64, machine_id: &str, pid: u64, ppid: u64, start: u64) -> String {
    let ms = start_unix_ns / 1_000_000;
    let seed = std_hash(format!("{machine_id}|{pid}|{ppid}|{start}").as_bytes());
    let random = ChaCha8Rng::seed_from_u64(seed).next_u64();
    let mut b = [0u8; 16];
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    b[6] = 0x70 | ((ms >> 8) & 0x0f) as u8;
    b[7] = (ms & 0xff) as u8;
    b[8..].copy_from_slice(&random.to_be_bytes());
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The table suffix and `rocpd_metadata.uuid` of a guid: `_` and the guid with `-` → `_`.
pub fn suffix(guid: &str) -> String {
    format!("_{}", guid.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values libstdc++ (GCC 12, x86-64) gives for `std::hash<std::string_view>`.
    #[test]
    fn hash_matches_libstdcxx() {
        assert_eq!(std_hash(b""), 6_142_509_188_972_423_790);
        assert_eq!(std_hash(b"abc"), 3_663_726_644_998_027_833);
        assert_eq!(
            std_hash(b"0123456789abcdef0123456789abcdef"),
            4_551_047_608_856_227_223
        );
        assert_eq!(
            node("krphase-emu-machine"),
            (4_611_708_723_451_407_346, 2_900_639_896)
        );
    }

    #[test]
    fn uuid_is_v7_with_the_start_time() {
        let start_ns = 1_790_000_000_123_456_789_u64;
        let g = uuid_v7(start_ns, "m", 10, 1, 5);
        let hex: String = g.chars().filter(|c| *c != '-').collect();
        assert_eq!(g.len(), 36);
        assert_eq!(
            u64::from_str_radix(&hex[..12], 16).unwrap(),
            start_ns / 1_000_000
        );
        assert_eq!(&hex[12..13], "7");
        assert!(matches!(&hex[16..17], "8" | "9" | "a" | "b"), "{g}");
        assert_eq!(
            g,
            uuid_v7(start_ns, "m", 10, 1, 5),
            "deterministic per process"
        );
        assert_ne!(
            g,
            uuid_v7(start_ns, "m", 11, 1, 5),
            "another pid, another uuid"
        );
        assert_eq!(suffix("ab-cd"), "_ab_cd");
    }
}
