//! Small non-idempotent step kernels for the queue-depth, multi-queue, graph, multi-packet and
//! vmem workloads: each adds a constant, so the final value counts how many times it really ran.

use crate::device_memory::{DeviceMemory, get_u64, set_u64};

/// x[i] += inc for i < n.
pub fn add_step(x: &DeviceMemory, n: usize, inc: u64) {
    for i in 0..n {
        set_u64(x, i, get_u64(x, i).wrapping_add(inc));
    }
}

/// Whether every one of the first n words equals `want`.
pub fn all_equal(x: &DeviceMemory, n: usize, want: u64) -> bool {
    (0..n).all(|i| get_u64(x, i) == want)
}

/// Every one of the first n words equals `want`; else the first word, for the caller's message.
pub fn expect_count(x: &DeviceMemory, n: usize, want: u64) -> Result<(), u64> {
    if all_equal(x, n, want) {
        Ok(())
    } else {
        Err(get_u64(x, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_memory::alloc_device_memory;

    #[test]
    fn steps_accumulate() {
        let x = alloc_device_memory(8);
        add_step(&x, 8, 3);
        add_step(&x, 8, 3);
        assert!(all_equal(&x, 8, 6));
        assert!(!all_equal(&x, 8, 3));
    }
}
