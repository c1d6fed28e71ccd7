//! How figures are written for people: durations, bytes, shares, factors. Every renderer
//! (report, compare, the bench summary) writes a figure through one of these, so a given style
//! has one definition.

use crate::db::basis::Basis;

/// The table marker of a figure's bases: `M`, `L`, `M+L` (windows differ); `-` when none.
pub fn markers(bases: &[Basis]) -> String {
    if bases.is_empty() {
        return "-".into();
    }
    bases
        .iter()
        .map(|b| b.marker())
        .collect::<Vec<_>>()
        .join("+")
}

/// The bases as CSV writes them: codes joined with `+`.
pub fn codes(bases: &[Basis]) -> String {
    bases.iter().map(|b| b.code()).collect::<Vec<_>>().join("+")
}

/// The legend of the basis markers, one line per marker.
pub fn basis_legend() -> String {
    let mut s = String::from("basis of each figure:\n");
    for b in Basis::ALL {
        s.push_str(&format!("  {:<3} {}\n", b.marker(), b.what()));
    }
    s
}

/// `text` wrapped at spaces into lines of at most `width` characters, the first starting with
/// `first`, the rest with `rest`.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    // The first word follows `first` directly (it may end in a space).
    let mut empty = true;
    for word in text.split(' ') {
        if !empty && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// A duration in ns, µs, ms or s: `"12 ns"`, `"1.5 µs"`, `"2.000 ms"`, `"1.000 s"`.
pub fn duration(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// [`duration`], or `-` when absent.
pub fn duration_or_dash(ns: Option<f64>) -> String {
    ns.map_or("-".into(), duration)
}

/// A duration in 3–4 significant digits, short enough for a 9-column table: `"1.50 µs"`,
/// `"12.5 ms"`, `"250 ns"`.
pub fn duration_short(ns: f64) -> String {
    let (v, unit) = match ns.abs() {
        a if a >= 1e9 => (ns / 1e9, "s"),
        a if a >= 1e6 => (ns / 1e6, "ms"),
        a if a >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0} {unit}"),
        a if a >= 10.0 => format!("{v:.1} {unit}"),
        _ => format!("{v:.2} {unit}"),
    }
}

/// `mean ± σ`, each in the unit that suits it (`-` without a mean; the mean alone below two
/// windows).
pub fn mean_sd(mean: Option<f64>, sd: Option<f64>) -> String {
    match (mean, sd) {
        (Some(m), Some(sd)) => format!("{} ± {}", duration_short(m), duration_short(sd)),
        (Some(m), None) => duration_short(m),
        (None, _) => "-".into(),
    }
}

/// A per-dispatch cost in ms (from 1 ms on) or us, ASCII units: `"1.234 ms"`, `"0.50 us"`; `-`
/// when absent.
pub fn duration_us_ms(ns: Option<f64>) -> String {
    match ns {
        None => "-".into(),
        Some(n) if n.abs() >= 1e6 => format!("{:.3} ms", n / 1e6),
        Some(n) => format!("{:.2} us", n / 1e3),
    }
}

/// Seconds with three decimals: `"1.500 s"`; `-` when absent.
pub fn seconds(s: Option<f64>) -> String {
    s.map_or("-".into(), |v| format!("{v:.3} s"))
}

/// A byte count in B, KiB, MiB or GiB: `"512 B"`, `"4.0 KiB"`, `"1.5 MiB"`, `"2.00 GiB"`.
pub fn bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// A byte count in B or (from 1 MiB on) MiB, for the bench summary's narrow columns; `-` when
/// absent.
pub fn bytes_b_or_mib(b: Option<f64>) -> String {
    match b {
        None => "-".into(),
        Some(b) if b >= 1048576.0 => format!("{:.1} MiB", b / 1048576.0),
        Some(b) => format!("{:.0} B", b),
    }
}

/// A fraction as a percentage with one decimal: `"42.5%"`; `-` when absent.
pub fn percent(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

/// A factor with two decimals: `"2.50x"`; `-` when absent.
pub fn factor(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}x"))
}

/// A factor with `decimals` decimals: `"0.0812x"`.
pub fn factor_digits(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}x")
}

/// An interval's ends as factors with three significant digits (at least two decimals), and
/// more (up to six decimals) where different ends would still print as one number:
/// `("0.0812x", "0.0831x")` rather than `0.08x .. 0.08x`.
pub fn factor_pair(lo: f64, hi: f64) -> (String, String) {
    let top = lo.abs().max(hi.abs());
    let mut d = if top > 0.0 && top.is_finite() {
        (2 - top.log10().floor() as i64).clamp(2, 6) as usize
    } else {
        2
    };
    while d < 6 && factor_digits(lo, d) == factor_digits(hi, d) && lo != hi {
        d += 1;
    }
    (factor_digits(lo, d), factor_digits(hi, d))
}

/// A percentage with one decimal and no signed zero (`"0.0%"`, never `"-0.0%"`).
pub fn percent_unsigned_zero(v: f64) -> String {
    let s = format!("{:.1}%", v * 100.0);
    if s == "-0.0%" { "0.0%".into() } else { s }
}

/// A value with two decimals: `"4.18"`; `-` when absent.
pub fn fixed2(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_ends_never_collapse_and_zero_has_no_sign() {
        assert_eq!(
            factor_pair(0.0812, 0.0831),
            ("0.0812x".into(), "0.0831x".into())
        );
        assert_eq!(
            factor_pair(0.08121, 0.08124),
            ("0.08121x".into(), "0.08124x".into())
        );
        assert_eq!(factor_pair(1.02, 1.10), ("1.02x".into(), "1.10x".into()));
        assert_eq!(factor_pair(0.5, 0.5), ("0.500x".into(), "0.500x".into()));
        assert_eq!(percent_unsigned_zero(-0.0004), "0.0%");
        assert_eq!(percent_unsigned_zero(-0.004), "-0.4%");
    }

    #[test]
    fn each_style_keeps_its_units() {
        assert_eq!(duration(1500.0), "1.5 µs");
        assert_eq!(duration(2e9), "2.000 s");
        assert_eq!(duration_short(1500.0), "1.50 µs");
        assert_eq!(duration_short(250.0), "250 ns");
        assert_eq!(duration_us_ms(Some(500.0)), "0.50 us");
        assert_eq!(duration_us_ms(Some(2e6)), "2.000 ms");
        assert_eq!(bytes(4096.0), "4.0 KiB");
        assert_eq!(bytes_b_or_mib(Some(4096.0)), "4096 B");
        assert_eq!(percent(Some(0.425)), "42.5%");
        assert_eq!(factor(None), "-");
        assert_eq!(seconds(Some(1.5)), "1.500 s");
        assert_eq!(markers(&[Basis::InProcess, Basis::SdkLog]), "M+L");
        assert_eq!(markers(&[]), "-");
        assert_eq!(wrap("aa bb cc", 5, "", "  "), "aa bb\n  cc\n");
        assert_eq!(basis_legend().lines().count(), 1 + Basis::ALL.len());
    }
}
