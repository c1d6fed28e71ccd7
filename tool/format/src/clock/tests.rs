//! The conversion on a synthetic clock whose truth is known: a TSC at 3 GHz, BOOTTIME slewed
//! (its rate against the TSC 40 ppm off, changing by up to ±2 ppm at instants that fall between
//! pairs), a 5 ms step (a suspend), and preempted pairs (wide, their BOOTTIME read anywhere in
//! the width). Deterministic: a fixed-seed generator.

use super::*;

const TICKS_PER_NS: f64 = 3.0;
const PAIR_TICKS: u64 = PAIR_INTERVAL_MS * 1_000_000 * 3;
const STEP_AT: u64 = 21_150_000_000; // 7.05 s
const STEP_NS: f64 = 5_000_000.0;
const BASE_NS: f64 = 1_000_000_000_000.0;

/// xorshift64*: enough randomness for jitter, the same every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The true BOOTTIME of a tick: a rate that changes at `changes` (tick, ppm) and the step.
struct Truth {
    changes: Vec<(u64, f64)>,
}

impl Truth {
    fn new(rng: &mut Rng, end: u64) -> Truth {
        let mut changes = vec![(0, 40.0)];
        let mut t = 0;
        let mut ppm = 40.0;
        while t < end {
            // Every 0.6–2 s, at an instant unrelated to the pair times.
            t += 1_800_000_000 + rng.below(4_200_000_000);
            ppm += (rng.below(4001) as f64 - 2000.0) / 1000.0;
            changes.push((t, ppm));
        }
        Truth { changes }
    }

    fn ns(&self, tick: u64) -> f64 {
        let mut ns = BASE_NS;
        for (i, &(start, ppm)) in self.changes.iter().enumerate() {
            if start >= tick {
                break;
            }
            let end = self.changes.get(i + 1).map_or(tick, |c| c.0.min(tick));
            ns += (end - start) as f64 / TICKS_PER_NS * (1.0 + ppm * 1e-6);
        }
        if tick >= STEP_AT { ns + STEP_NS } else { ns }
    }
}

/// Pairs every interval from `PAIR_TICKS` to `end`: narrow (45–90 ticks) except every 17th,
/// which is preempted (30 000 ticks, 10 µs, BOOTTIME read anywhere inside).
fn pairs(rng: &mut Rng, truth: &Truth, end: u64) -> (Vec<Pair>, usize) {
    let (mut v, mut preempted) = (Vec::new(), 0);
    let mut t = PAIR_TICKS;
    let mut i = 0;
    while t <= end {
        let width = if i % 17 == 5 {
            preempted += 1;
            30_000
        } else {
            45 + rng.below(46)
        };
        let read_at = t + rng.below(width + 1);
        v.push(Pair {
            tsc: t + width / 2,
            ns: truth.ns(read_at).round() as u64,
            width,
        });
        t += PAIR_TICKS + rng.below(3_000_000); // the writer's wake-ups drift by up to 1 ms
        i += 1;
    }
    (v, preempted)
}

/// The bound inside a segment without the step: half the widest narrow pair (15 ns) plus a
/// quarter of the largest rate change (2 ppm) over the longest segment, plus rounding. A
/// rejected pair joins its two neighbouring segments: the longest is then about 200 ms.
fn bound_ns(longest_segment_ticks: u64) -> f64 {
    90.0 / 2.0 / TICKS_PER_NS + 2e-6 * (longest_segment_ticks as f64 / TICKS_PER_NS) / 4.0 + 1.0
}

#[test]
fn a_slewed_stepped_clock_with_preempted_pairs_converts_within_the_bound() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let end = 60_000_000_000; // 20 s of ticks
    let truth = Truth::new(&mut rng, end);
    let (ps, preempted) = pairs(&mut rng, &truth, end);
    let mut cal = Calibration::fit(&ps).expect("enough pairs");
    assert_eq!(
        cal.points().len(),
        ps.len() - preempted,
        "preempted pairs rejected"
    );
    let pts = cal.points().to_vec();
    let step_seg = pts
        .windows(2)
        .find(|w| w[0].0 < STEP_AT && STEP_AT <= w[1].0);
    let step_seg = step_seg
        .map(|w| (w[0].0, w[1].0))
        .expect("a segment holds the step");
    let (first, last) = (pts[0].0, pts[pts.len() - 1].0);
    let longest = pts
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .max()
        .expect("segments");
    let bound = bound_ns(longest);
    assert!(bound < 120.0, "{bound}");
    let (mut worst, mut worst_in_step) = (0.0f64, 0.0f64);
    for k in 0..20_000u64 {
        let tick = first + k * (last - first) / 20_000 + rng.below(1000);
        let err = (cal.to_ns(tick) as f64 - truth.ns(tick)).abs();
        if tick > step_seg.0 && tick < step_seg.1 {
            worst_in_step = worst_in_step.max(err);
        } else {
            worst = worst.max(err);
        }
    }
    assert!(worst <= bound, "worst {worst:.1} ns > {bound:.1} ns");
    eprintln!(
        "worst {worst:.1} ns (bound {bound:.1} ns), in the step's segment {worst_in_step:.0} ns"
    );
    assert!(
        worst_in_step <= STEP_NS,
        "inside the step's segment: {worst_in_step}"
    );
    // Outside the pairs, the median rate: 100 ms past the last pair stays within 1 µs (the
    // rate may be a few ppm off the median: 100 ms × 10 ppm = 1 µs).
    let past = last + PAIR_TICKS;
    let err = (cal.to_ns(past) as f64 - truth.ns(past)).abs();
    assert!(err <= 1000.0, "extrapolated 100 ms: {err:.1} ns");
    // Durations (a CONTINUE's own time) at the local rate: 30 000 ticks are 10 µs ± 1 ns.
    let d = cal.ticks_to_ns(30_000, first + PAIR_TICKS * 3);
    assert!((9_999..=10_002).contains(&d), "{d}");
}

#[test]
fn one_straight_line_through_the_same_pairs_is_far_worse() {
    // Why piecewise: the slewed clock drifts from any single line by microseconds within 20 s.
    let mut rng = Rng(7);
    let end = 60_000_000_000;
    let truth = Truth::new(&mut rng, end);
    let (ps, _) = pairs(&mut rng, &truth, end);
    let pre: Vec<Pair> = ps.iter().copied().filter(|p| p.tsc < STEP_AT).collect();
    let (a, b) = (pre[0], pre[pre.len() - 1]);
    let rate = (b.ns - a.ns) as f64 / (b.tsc - a.tsc) as f64;
    let worst = pre
        .iter()
        .map(|p| (a.ns as f64 + (p.tsc - a.tsc) as f64 * rate - p.ns as f64).abs())
        .fold(0.0, f64::max);
    assert!(worst > 10.0 * bound_ns(PAIR_TICKS), "{worst}");
}

#[test]
fn fewer_than_two_usable_pairs_refuse_and_backward_pairs_are_dropped() {
    let one = [Pair {
        tsc: 10,
        ns: 5,
        width: 3,
    }];
    assert_eq!(Calibration::fit(&one).unwrap_err(), TooFewPairs(1));
    assert_eq!(Calibration::fit(&[]).unwrap_err(), TooFewPairs(0));
    let p = |tsc, ns| Pair { tsc, ns, width: 10 };
    let mut cal = Calibration::fit(&[p(1000, 100), p(2000, 90), p(3000, 300)]).expect("two");
    assert_eq!(cal.points(), &[(1000, 100), (3000, 300)]);
    assert_eq!(cal.to_ns(2000), 200);
    // Extrapolation on both sides at the (one) segment's rate.
    assert_eq!(cal.to_ns(0), 0);
    assert_eq!(cal.to_ns(4000), 400);
}
