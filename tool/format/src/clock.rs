//! From the tool's raw TSC ticks to the SDK's clock, CLOCK_BOOTTIME nanoseconds.
//!
//! A 3.0 file whose header says [`Clock::Tsc`](crate::header::Clock) stores every host time as
//! raw TSC ticks (one `rdtsc`, the cheapest clock read there is) and carries CLOCK_PAIR records:
//! (TSC, BOOTTIME ns) pairs the writer thread writes at its start (with the two the tool took
//! 2 ms apart when it chose the clock), every [`PAIR_INTERVAL_MS`] ms and at finish. Each pair is the narrowest of several back-to-back (TSC, BOOTTIME, TSC)
//! readings, its TSC the midpoint of the two reads, and its `width` the ticks between them: a
//! pair whose reading was preempted is wide, and the writer does not write one wider than
//! [`MAX_PAIR_WIDTH_NS`].
//!
//! The conversion ([`Calibration`]) is **piecewise linear between consecutive pairs**, not one
//! line through all of them: BOOTTIME is slewed by NTP (its rate against the TSC changes by
//! parts per million at the adjustments) and jumps forward over a suspend, and a single line
//! would carry those changes into every record. Between two pairs the conversion follows the
//! straight line through them, so its error inside a segment is at most
//!
//! * half the two pairs' widths (each pair's BOOTTIME reading lies somewhere between its two
//!   TSC reads), plus
//! * a quarter of the rate change inside the segment times the segment's length: a slew that
//!   changes the rate by `Δ` (ppm) at some point inside a 100 ms segment moves the straight line
//!   off the true curve by at most `Δ · 100 ms / 4`, 25 ns per ppm of change.
//!
//! A BOOTTIME step (a suspend) inside a segment is spread over that segment: records taken in it
//! are off by up to the step; records outside it are unaffected. Pairs are rejected when wider
//! than [`WIDTH_REJECT_FACTOR`] times the file's median width (preempted), or when their BOOTTIME
//! runs backwards against their neighbours. Before the first pair and after the last (a file cut
//! short: the last pair is then up to one interval old) the conversion extrapolates with the
//! median rate of all segments. A file with fewer than two usable pairs cannot be converted: the
//! reader refuses its first record with a host time.

use crate::event::Event;
use crate::event::own_time;

/// The writer thread takes a pair this often (and at its start and finish).
pub const PAIR_INTERVAL_MS: u64 = 100;
/// A pair whose narrowest reading is wider than this is not written (it was preempted).
pub const MAX_PAIR_WIDTH_NS: u64 = 2_000;
/// Readings per pair: the narrowest is kept.
pub const PAIR_TRIES: usize = 8;
/// A reader rejects pairs wider than this many times the file's median pair width.
pub const WIDTH_REJECT_FACTOR: u64 = 4;
/// Pairs a reader holds; past it, every other pair is let go (the conversion's segments double
/// in length, which at the default interval happens after 29 hours of recording).
pub const MAX_PAIRS: usize = 1 << 20;

/// When a CLOCK_PAIR was taken (its `when`).
pub mod pair_when {
    pub const START: u8 = 0;
    pub const PERIODIC: u8 = 1;
    pub const FINISH: u8 = 2;
}

/// One (TSC, BOOTTIME) pair as a CLOCK_PAIR record stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// Midpoint of the two TSC reads.
    pub tsc: u64,
    /// BOOTTIME ns read between them.
    pub ns: u64,
    /// Ticks between the two TSC reads.
    pub width: u64,
}

/// Why a file's ticks cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a TSC-clock file with {0} usable clock calibration pair(s): at least 2 are needed to convert its ticks to nanoseconds (the writer takes one at start, one every {PAIR_INTERVAL_MS} ms and one at finish)"
)]
pub struct TooFewPairs(pub usize);

/// The tick → BOOTTIME ns conversion of one file.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// Accepted pairs, strictly increasing in TSC and non-decreasing in ns.
    points: Vec<(u64, u64)>,
    /// Median ns per tick over the segments, for extrapolation.
    rate: f64,
    /// The segment the last conversion fell in (records come in near time order).
    last: usize,
}

impl Calibration {
    /// Fits the conversion to a file's pairs (any order).
    pub fn fit(pairs: &[Pair]) -> Result<Calibration, TooFewPairs> {
        let mut ps: Vec<Pair> = pairs.iter().copied().filter(|p| p.tsc > 0).collect();
        ps.sort_by_key(|p| (p.tsc, p.width));
        ps.dedup_by_key(|p| p.tsc);
        let narrow = reject_wide(&ps);
        let points = monotonic(&narrow);
        if points.len() < 2 {
            return Err(TooFewPairs(points.len()));
        }
        let rate = median_rate(&points);
        Ok(Calibration {
            points,
            rate,
            last: 0,
        })
    }

    /// The accepted pairs (TSC, ns).
    pub fn points(&self) -> &[(u64, u64)] {
        &self.points
    }

    /// BOOTTIME ns at TSC `tsc`.
    pub fn to_ns(&mut self, tsc: u64) -> u64 {
        let p = &self.points;
        let n = p.len();
        let seg = if p[self.last].0 <= tsc && self.last + 1 < n && tsc < p[self.last + 1].0 {
            self.last
        } else {
            // The segment whose start is the last point at or before `tsc`.
            p.partition_point(|&(t, _)| t <= tsc).saturating_sub(1)
        };
        self.last = seg.min(n - 2);
        let (t0, n0) = p[seg];
        if tsc < t0 || seg + 1 >= n {
            return extrapolate(t0, n0, tsc, self.rate);
        }
        let (t1, n1) = p[seg + 1];
        // Points rise in both TSC and ns, and t0 <= tsc < t1: every factor is unsigned and the
        // product of two u64 fits a u128.
        let (dn, dt, off) = (
            u128::from(n1 - n0),
            u128::from(t1 - t0),
            u128::from(tsc - t0),
        );
        let v = u128::from(n0) + (off * dn + dt / 2) / dt;
        v.min(u128::from(u64::MAX)) as u64
    }

    /// A duration of `ticks` measured at about `at`, in ns (the local rate).
    pub fn ticks_to_ns(&mut self, ticks: u64, at: u64) -> u64 {
        self.to_ns(at.saturating_add(ticks))
            .saturating_sub(self.to_ns(at))
    }

    /// `ev` with its host times in BOOTTIME ns (GPU times and CLOCK_PAIR records unchanged).
    pub fn convert(&mut self, ev: Event) -> Event {
        let mut ev = ev;
        if let Event::Continue { ts, own_time, .. } = &mut ev {
            let ticks = own_time::decode(*own_time);
            *own_time = own_time::encode(self.ticks_to_ns(ticks, *ts));
        }
        if let Some(ts) = ev.host_time_mut() {
            *ts = self.to_ns(*ts);
        }
        ev
    }
}

fn extrapolate(t0: u64, n0: u64, tsc: u64, rate: f64) -> u64 {
    let d = (tsc as f64 - t0 as f64) * rate;
    (n0 as f64 + d).round().clamp(0.0, u64::MAX as f64) as u64
}

/// Pairs no wider than [`WIDTH_REJECT_FACTOR`] times the median width (all of them when that
/// leaves fewer than two).
fn reject_wide(ps: &[Pair]) -> Vec<Pair> {
    if ps.is_empty() {
        return Vec::new();
    }
    let mut w: Vec<u64> = ps.iter().map(|p| p.width).collect();
    w.sort_unstable();
    let bound = w[w.len() / 2].max(1).saturating_mul(WIDTH_REJECT_FACTOR);
    let kept: Vec<Pair> = ps.iter().copied().filter(|p| p.width <= bound).collect();
    if kept.len() >= 2 { kept } else { ps.to_vec() }
}

/// The pairs as points, dropping any whose ns runs backwards against the last kept one.
fn monotonic(ps: &[Pair]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ps.len());
    for p in ps {
        if out.last().is_none_or(|&(_, n)| p.ns >= n) {
            out.push((p.tsc, p.ns));
        }
    }
    out
}

/// The median ns per tick of the segments.
fn median_rate(points: &[(u64, u64)]) -> f64 {
    let mut r: Vec<f64> = points
        .windows(2)
        .map(|w| (w[1].1 - w[0].1) as f64 / (w[1].0 - w[0].0) as f64)
        .collect();
    r.sort_by(f64::total_cmp);
    r[r.len() / 2]
}

#[cfg(test)]
mod tests;
