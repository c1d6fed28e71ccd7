//! BabelStream-style kernels: copy, mul, add, triad, dot (see `hip/stream.hip`).

use crate::device_memory::{DeviceMemory, get_f64, set_f64};

pub const SCALAR: f64 = 0.4;
pub const INIT_A: f64 = 0.1;
pub const INIT_B: f64 = 0.2;
pub const INIT_C: f64 = 0.0;

/// c = a
pub fn copy(a: &DeviceMemory, c: &DeviceMemory, n: usize) {
    for i in 0..n {
        set_f64(c, i, get_f64(a, i));
    }
}

/// b = scalar * c
pub fn mul(b: &DeviceMemory, c: &DeviceMemory, n: usize) {
    for i in 0..n {
        set_f64(b, i, SCALAR * get_f64(c, i));
    }
}

/// c = a + b
pub fn add(a: &DeviceMemory, b: &DeviceMemory, c: &DeviceMemory, n: usize) {
    for i in 0..n {
        set_f64(c, i, get_f64(a, i) + get_f64(b, i));
    }
}

/// a = b + scalar * c
pub fn triad(a: &DeviceMemory, b: &DeviceMemory, c: &DeviceMemory, n: usize) {
    for i in 0..n {
        set_f64(a, i, get_f64(b, i) + SCALAR * get_f64(c, i));
    }
}

/// sum[0] = sum(a * b)
pub fn dot(a: &DeviceMemory, b: &DeviceMemory, sum: &DeviceMemory, n: usize) {
    let mut s = 0.0;
    for i in 0..n {
        s += get_f64(a, i) * get_f64(b, i);
    }
    set_f64(sum, 0, s);
}

/// The values every element of a, b, c holds after `iterations` rounds of
/// copy, mul, add, triad (the host-side reference), and the expected dot.
pub fn expected(iterations: usize, n: usize) -> (f64, f64, f64, f64) {
    let (mut a, mut b, mut c) = (INIT_A, INIT_B, INIT_C);
    for _ in 0..iterations {
        c = a;
        b = SCALAR * c;
        c = a + b;
        a = b + SCALAR * c;
    }
    (a, b, c, a * b * n as f64)
}

/// Whether `got` is within a relative tolerance of `want` (BabelStream checks 1e-8).
pub fn close(got: f64, want: f64, tol: f64) -> bool {
    let denom = want.abs().max(f64::MIN_POSITIVE);
    ((got - want) / denom).abs() <= tol
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_memory::{alloc_device_memory, fill_f64};

    #[test]
    fn one_round_matches_reference() {
        let n = 16;
        let (a, b, c, s) = (
            alloc_device_memory(n),
            alloc_device_memory(n),
            alloc_device_memory(n),
            alloc_device_memory(1),
        );
        fill_f64(&a, n, INIT_A);
        fill_f64(&b, n, INIT_B);
        fill_f64(&c, n, INIT_C);
        for _ in 0..3 {
            copy(&a, &c, n);
            mul(&b, &c, n);
            add(&a, &b, &c, n);
            triad(&a, &b, &c, n);
            dot(&a, &b, &s, n);
        }
        let (ea, eb, ec, es) = expected(3, n);
        assert_eq!(get_f64(&a, 5), ea);
        assert_eq!(get_f64(&b, 5), eb);
        assert_eq!(get_f64(&c, 5), ec);
        assert!(close(get_f64(&s, 0), es, 1e-12));
    }
}
