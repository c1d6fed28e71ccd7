//! A value axis: linear or base-10 log, its ticks and their labels.

/// Values spanning more than this factor get a log axis.
pub const LOG_SPAN: f64 = 10.0;

/// An axis mapping values in `lo..=hi` to pixels `p0..=p1` (p1 < p0 for a vertical axis).
#[derive(Clone, Copy, Debug)]
pub struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    /// Ticks only at whole numbers (counts).
    pub integer: bool,
    pub p0: f64,
    pub p1: f64,
}

/// Whether values from `min` to `max` want a log axis: all positive and spanning more than
/// [`LOG_SPAN`].
pub fn wants_log(min: f64, max: f64) -> bool {
    min > 0.0 && max / min > LOG_SPAN
}

/// A "nice" tick step for about `n` ticks over `span`.
pub fn nice_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

impl Axis {
    /// A linear axis from 0 (or `min` when it is negative) to a nice bound at or above `max`.
    pub fn linear_from_zero(max: f64, integer: bool, p0: f64, p1: f64) -> Axis {
        let mut step = nice_step(max, 4.0);
        if integer {
            step = step.max(1.0).round();
        }
        let hi = if max > 0.0 {
            (max / step).ceil() * step
        } else {
            step
        };
        Axis {
            lo: 0.0,
            hi,
            log: false,
            integer,
            p0,
            p1,
        }
    }

    /// A log axis from the power of ten at or below `min` to the one at or above `max`.
    pub fn log(min: f64, max: f64, p0: f64, p1: f64) -> Axis {
        let lo = 10f64.powf(min.log10().floor());
        let hi = 10f64.powf(max.log10().ceil()).max(lo * 10.0);
        Axis {
            lo,
            hi,
            log: true,
            integer: false,
            p0,
            p1,
        }
    }

    /// An axis for values in `min..=max`: log when [`wants_log`], else linear from zero.
    pub fn auto(min: f64, max: f64, p0: f64, p1: f64) -> Axis {
        if wants_log(min, max) {
            Axis::log(min, max, p0, p1)
        } else {
            Axis::linear_from_zero(max, false, p0, p1)
        }
    }

    /// The pixel of value `v` (clamped to the axis).
    pub fn px(&self, v: f64) -> f64 {
        let f = if self.log {
            let v = v.max(self.lo);
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.p0 + f.clamp(0.0, 1.0) * (self.p1 - self.p0)
    }

    /// Tick values: every power of ten on a log axis (with 2 and 5 between them when it spans
    /// at most two decades), nice steps on a linear one.
    pub fn ticks(&self) -> Vec<f64> {
        if self.log {
            let decades = (self.hi / self.lo).log10().round() as i32;
            let mults: &[f64] = if decades <= 2 {
                &[1.0, 2.0, 5.0]
            } else {
                &[1.0]
            };
            let first = self.lo.log10().round() as i32;
            return (first..=first + decades)
                .flat_map(|e| mults.iter().map(move |m| m * 10f64.powi(e)))
                .filter(|v| *v <= self.hi * 1.000_001)
                .collect();
        }
        let mut step = nice_step(self.hi - self.lo, 4.0);
        if self.integer {
            step = step.max(1.0).round();
        }
        let n = ((self.hi - self.lo) / step).round() as usize;
        (0..=n).map(|k| self.lo + k as f64 * step).collect()
    }

    /// What the axis is, for a subtitle: "log scale" or "linear from 0".
    pub fn describe(&self) -> &'static str {
        if self.log {
            "log scale"
        } else {
            "linear from 0"
        }
    }
}

/// A tick or value label: at most 3 significant digits, no trailing zeros ("0.4", "12.5",
/// "100", "1.2k" is not used: values are in the axis' unit).
pub fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let a = v.abs();
    let decimals = if a >= 100.0 {
        0
    } else {
        (2 - a.log10().floor() as i32).clamp(0, 6) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_get_whole_ticks_and_wide_spans_a_log_axis() {
        let a = Axis::linear_from_zero(3.0, true, 0.0, 100.0);
        assert!(
            a.ticks().iter().all(|t| t.fract() == 0.0),
            "{:?}",
            a.ticks()
        );
        assert!(a.hi >= 3.0);
        assert!(wants_log(1.0, 100.0) && !wants_log(1.0, 9.0) && !wants_log(0.0, 100.0));
        let l = Axis::log(1.0, 100.0, 0.0, 200.0);
        assert_eq!(l.ticks(), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert!((l.px(10.0) - 100.0).abs() < 1e-9);
        let wide = Axis::log(0.2, 130.0, 0.0, 1.0);
        assert_eq!(wide.ticks(), [0.1, 1.0, 10.0, 100.0, 1000.0]);
    }

    #[test]
    fn numbers_read_plainly() {
        assert_eq!(fmt_num(0.4), "0.4");
        assert_eq!(fmt_num(0.125), "0.125");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(fmt_num(100.0), "100");
        assert_eq!(fmt_num(106.6), "107");
        assert_eq!(fmt_num(1.0), "1");
        assert_eq!(fmt_num(0.0), "0");
    }
}
