//! saxpy with a module-scope call counter: y = a * x + y, and `saxpy_calls += 1` from the first
//! work-item (see `hip/saxpy.hip`). Neither is idempotent, so a replay that fails to restore
//! memory (or the module variable) between passes changes the result: the restore oracle.

use crate::device_memory::{DeviceMemory, get_f64, get_u64, set_f64, set_u64};

pub const A: f64 = 2.0;
pub const INIT_X: f64 = 1.0;
pub const INIT_Y: f64 = 0.5;

/// The module-scope `__device__` variable's name.
pub const COUNTER_SYMBOL: &str = "saxpy_calls";

pub fn saxpy(x: &DeviceMemory, y: &DeviceMemory, counter: &DeviceMemory, n: usize) {
    for i in 0..n {
        set_f64(y, i, A * get_f64(x, i) + get_f64(y, i));
    }
    set_u64(counter, 0, get_u64(counter, 0) + 1);
}

/// y after `iterations` calls, and the counter.
pub fn expected(iterations: usize) -> (f64, u64) {
    let mut y = INIT_Y;
    for _ in 0..iterations {
        y += A * INIT_X;
    }
    (y, iterations as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_memory::{alloc_device_memory, fill_f64};

    #[test]
    fn counts_and_accumulates() {
        let (x, y, c) = (
            alloc_device_memory(4),
            alloc_device_memory(4),
            alloc_device_memory(1),
        );
        fill_f64(&x, 4, INIT_X);
        fill_f64(&y, 4, INIT_Y);
        for _ in 0..3 {
            saxpy(&x, &y, &c, 4);
        }
        assert_eq!((get_f64(&y, 3), get_u64(&c, 0)), expected(3));
    }
}
