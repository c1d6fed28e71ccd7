//! The two kernels of the SDK's kernel-replay sample application: `bump` (replayed by the
//! samples' clients) and `nudge` (opted out by them). Each has one thread of its block add 1 to
//! a 4-byte device counter atomically, so after one application launch the counter reads 1 no
//! matter how many replay passes ran, provided every pass started from the restored value.

use crate::device_memory::DeviceMemory;
use std::sync::atomic::Ordering;

/// The replayed kernel's block size (`bump<<<1, 67>>>`): clients pick it by
/// `workgroup_size.x == 67`.
pub const BUMP_BLOCK: u32 = 67;
/// The opted-out kernel's block size (`nudge<<<1, 64>>>`).
pub const NUDGE_BLOCK: u32 = 64;

/// Thread 0 of the single block: `atomicAdd(counter, 1)` on the low 4 bytes of word 0.
pub fn bump(counter: &DeviceMemory) {
    add_one(counter);
}

/// As [`bump`]; a separate kernel so clients can tell them apart by block size.
pub fn nudge(counter: &DeviceMemory) {
    add_one(counter);
}

fn add_one(counter: &DeviceMemory) {
    // The counter is 4 bytes in the low half of a little-endian word; adding 1 to the word adds
    // 1 to it as long as it stays below 2^32, which one launch per reset guarantees.
    counter[0].fetch_add(1, Ordering::SeqCst);
}

/// The counter's 4-byte value.
pub fn read(counter: &DeviceMemory) -> u32 {
    (counter[0].load(Ordering::SeqCst) & 0xffff_ffff) as u32
}

/// `hipMemset(counter, 0, 4)`.
pub fn reset(counter: &DeviceMemory) {
    counter[0].fetch_and(!0xffff_ffff, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_memory::alloc_device_memory;

    #[test]
    fn one_launch_reads_one() {
        let c = alloc_device_memory(1);
        bump(&c);
        assert_eq!(read(&c), 1);
        nudge(&c);
        assert_eq!(read(&c), 2);
        reset(&c);
        assert_eq!(read(&c), 0);
    }
}
