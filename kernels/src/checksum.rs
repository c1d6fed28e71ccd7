//! A 64-bit FNV-1a digest of device words: the `checksum=` of a workload's result line.

use crate::device_memory::DeviceMemory;
use std::sync::atomic::Ordering;

#[derive(Debug, Clone, Copy)]
pub struct Checksum(u64);

impl Default for Checksum {
    fn default() -> Self {
        Checksum(0xcbf2_9ce4_8422_2325)
    }
}

impl Checksum {
    pub fn add_u64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    pub fn add_words(&mut self, w: &DeviceMemory, n: usize) {
        for x in &w[..n] {
            self.add_u64(x.load(Ordering::Relaxed));
        }
    }

    /// The 16-hex-digit form printed in result lines.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}
