//! The hot path's clock: raw TSC ticks where the TSC is invariant and the kernel itself keeps
//! time with it; CLOCK_BOOTTIME nanoseconds (`clock_gettime`, the SDK's clock) everywhere else.
//!
//! Decided once, before recording starts ([`init`]), and stated in the file's header
//! ([`kind`]). In a TSC file the writer thread adds (TSC, BOOTTIME) calibration pairs
//! ([`pair`]), and the reader converts every tick to BOOTTIME ns (`krphase_format::clock`), so
//! nothing downstream sees a tick.
//!
//! Why both checks: the CPUID "invariant TSC" bit says the counter's rate does not change with
//! power states; the kernel choosing `tsc` as its clocksource says it also found the counter
//! synchronised across CPUs and stable against its other clocks (it falls back to `hpet` or a
//! hypervisor clock when not), so a record taken on any CPU maps onto the same line.

use crate::sys;
use krphase_format::clock::{MAX_PAIR_WIDTH_NS, PAIR_TRIES, Pair};
use krphase_format::header::Clock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Read the TSC (decided by [`init`]).
static TSC: AtomicBool = AtomicBool::new(false);
/// Clock units in one millisecond (1 000 000 for BOOTTIME; the TSC's rate, measured at start).
static UNITS_PER_MS: AtomicU64 = AtomicU64::new(1_000_000);
/// The two pairs the rate was measured with (2 ms apart): the file's first calibration pairs,
/// so that a run killed before the writer's first periodic pair still converts.
static START_PAIRS: std::sync::OnceLock<[Pair; 2]> = std::sync::OnceLock::new();

/// Where the kernel names its current clocksource.
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// Decides the clock (once per process; later calls keep the first decision, so records of one
/// file never mix units) and returns it. `force_boottime`: `KRPHASE_CLOCK=boottime`.
pub fn init(force_boottime: bool) -> Clock {
    static DECIDED: std::sync::OnceLock<Clock> = std::sync::OnceLock::new();
    *DECIDED.get_or_init(|| {
        if force_boottime || !tsc_usable() {
            return Clock::Boottime;
        }
        UNITS_PER_MS.store(measure_tsc_per_ms(), Ordering::Relaxed);
        TSC.store(true, Ordering::Release);
        Clock::Tsc
    })
}

/// The clock in effect (BOOTTIME before [`init`]).
pub fn kind() -> Clock {
    if TSC.load(Ordering::Relaxed) {
        Clock::Tsc
    } else {
        Clock::Boottime
    }
}

/// A clock read, as a type: the dispatch callback is instantiated once per clock and configure
/// registers the one it chose, so that path reads its clock without loading [`kind`]'s flag.
pub trait Source {
    /// Now, in this clock's units.
    fn now() -> u64;
}

/// The TSC (raw ticks), where [`init`] chose it.
pub struct Tsc;
/// CLOCK_BOOTTIME ns.
pub struct Boottime;

impl Source for Tsc {
    #[inline(always)]
    fn now() -> u64 {
        #[cfg(target_arch = "x86_64")]
        return sys::rdtsc();
        #[cfg(not(target_arch = "x86_64"))]
        return sys::boottime_ns();
    }
}

impl Source for Boottime {
    #[inline(always)]
    fn now() -> u64 {
        sys::boottime_ns()
    }
}

/// Now, in the file's clock units.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if TSC.load(Ordering::Relaxed) {
        return sys::rdtsc();
    }
    sys::boottime_ns()
}

/// `ms` milliseconds in clock units (approximate for the TSC: for buffer ages, never stored).
pub fn units(ms: u64) -> u64 {
    UNITS_PER_MS.load(Ordering::Relaxed).saturating_mul(ms)
}

#[cfg(target_arch = "x86_64")]
fn tsc_usable() -> bool {
    sys::invariant_tsc() && std::fs::read_to_string(CLOCKSOURCE).is_ok_and(|s| s.trim() == "tsc")
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_usable() -> bool {
    false
}

/// TSC ticks per ms, from two pairs 2 ms apart (a buffer-age scale only: the file's times are
/// converted from the calibration pairs).
fn measure_tsc_per_ms() -> u64 {
    let a = raw_pair();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let b = raw_pair();
    let _ = START_PAIRS.set([a, b]);
    let (dt, dn) = (b.tsc.saturating_sub(a.tsc), b.ns.saturating_sub(a.ns));
    if dn == 0 {
        return 1_000_000;
    }
    (u128::from(dt) * 1_000_000 / u128::from(dn)).clamp(1, u128::from(u64::MAX)) as u64
}

/// The two pairs taken at [`init`] (TSC clock only).
pub fn start_pairs() -> Option<[Pair; 2]> {
    START_PAIRS.get().copied().filter(|_| kind() == Clock::Tsc)
}

/// A calibration pair for a CLOCK_PAIR record: the narrowest of [`PAIR_TRIES`] back-to-back
/// (TSC, BOOTTIME, TSC) readings; `None` when even that one is wider than
/// [`MAX_PAIR_WIDTH_NS`] (the writer was preempted every time: the next period tries again), or
/// when the clock is not the TSC.
pub fn pair() -> Option<Pair> {
    if kind() != Clock::Tsc {
        return None;
    }
    let max_width = units(1).saturating_mul(MAX_PAIR_WIDTH_NS) / 1_000_000;
    let p = raw_pair();
    (p.width <= max_width).then_some(p)
}

fn raw_pair() -> Pair {
    let mut best = Pair {
        tsc: 0,
        ns: 0,
        width: u64::MAX,
    };
    for _ in 0..PAIR_TRIES {
        let (t0, ns, t1) = reading();
        if t1 < t0 {
            continue;
        }
        let width = t1 - t0;
        if width < best.width {
            best = Pair {
                tsc: t0 + width / 2,
                ns,
                width,
            };
        }
    }
    best
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn reading() -> (u64, u64, u64) {
    let t0 = sys::rdtsc();
    let ns = sys::boottime_ns();
    (t0, ns, sys::rdtsc())
}

#[cfg(not(target_arch = "x86_64"))]
fn reading() -> (u64, u64, u64) {
    (0, sys::boottime_ns(), u64::MAX)
}
