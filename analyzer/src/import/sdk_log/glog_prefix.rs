//! glog's line prefix, as the SDK writes it: `I20250709 16:40:57.435762 140032605917504
//! agent.cpp:499] ` — severity letter, local date (some SDK builds print no year: `I0709`), local
//! time to the microsecond with no zone, and the `pthread_self()` thread id (an address-sized
//! number, never the pid). The stamp is local time, so placing it on a run's clock needs the
//! run's UTC offset and, without a year, the run's year.

/// A stamp as printed: local civil time, the year only when the prefix has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalStamp {
    pub year: Option<i32>,
    pub month: u32,
    pub day: u32,
    /// Microseconds since local midnight.
    pub micros_of_day: i64,
}

/// The parts of a glog prefix the join uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix {
    pub severity: char,
    pub stamp: LocalStamp,
    /// `pthread_self()` of the logging thread.
    pub tid: u64,
}

/// Finds a glog prefix in `text` (the part of a line before the message): three consecutive
/// tokens `<sev><[yyyy]mmdd> <hh:mm:ss.ffffff> <tid>`, anywhere, so a launcher's own prefix
/// before it (`[rank 0] `) does not hide it.
pub fn parse(text: &str) -> Option<Prefix> {
    let toks: Vec<&str> = text.split_whitespace().collect();
    toks.windows(3).find_map(|w| {
        let (severity, year, month, day) = date(w[0])?;
        let micros_of_day = time_of_day(w[1])?;
        let tid = w[2].parse().ok()?;
        Some(Prefix {
            severity,
            stamp: LocalStamp {
                year,
                month,
                day,
                micros_of_day,
            },
            tid,
        })
    })
}

/// `I20250709` or `I0709`.
fn date(tok: &str) -> Option<(char, Option<i32>, u32, u32)> {
    let sev = tok.chars().next()?;
    let digits = &tok[sev.len_utf8()..];
    if !matches!(sev, 'I' | 'W' | 'E' | 'F') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (year, md) = match digits.len() {
        8 => (Some(digits[..4].parse().ok()?), &digits[4..]),
        4 => (None, digits),
        _ => return None,
    };
    let (month, day): (u32, u32) = (md[..2].parse().ok()?, md[2..].parse().ok()?);
    ((1..=12).contains(&month) && (1..=31).contains(&day)).then_some((sev, year, month, day))
}

/// `16:40:57.435762` (fraction of any length up to nanoseconds) as microseconds of the day.
fn time_of_day(tok: &str) -> Option<i64> {
    let (hms, frac) = tok.split_once('.').unwrap_or((tok, ""));
    let mut parts = hms.split(':');
    let mut field = |max: i64| -> Option<i64> {
        let p = parts.next()?;
        let v: i64 = (p.len() == 2).then(|| p.parse().ok()).flatten()?;
        (0..=max).contains(&v).then_some(v)
    };
    // A leap second prints as :60.
    let (h, m, s) = (field(23)?, field(59)?, field(60)?);
    if parts.next().is_some() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let micros = format!("{frac:0<6}")[..6].parse::<i64>().ok()?;
    Some(((h * 60 + m) * 60 + s) * 1_000_000 + micros)
}

pub use crate::db::calendar::{civil_from_days, days_from_civil};

/// The civil year of a day count from 1970-01-01.
pub fn year_of_days(days: i64) -> i32 {
    civil_from_days(days).0
}

/// UTC ns shown as local time at `offset_s` (`2025-07-09 16:40:57.435762`), for messages.
pub fn local_text(utc_ns: i64, offset_s: i64) -> String {
    let micros = utc_ns.div_euclid(1_000) + offset_s * 1_000_000;
    let (days, us) = (
        micros.div_euclid(86_400_000_000),
        micros.rem_euclid(86_400_000_000),
    );
    let (y, m, d) = civil_from_days(days);
    let s = us / 1_000_000;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:06}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        us % 1_000_000
    )
}

/// An offset as `UTC+02:00`.
pub fn offset_text(offset_s: i64) -> String {
    let sign = if offset_s < 0 { '-' } else { '+' };
    let a = offset_s.abs();
    format!("UTC{sign}{:02}:{:02}", a / 3600, a / 60 % 60)
}

impl LocalStamp {
    /// UTC nanoseconds since the epoch, reading the stamp in `year` (its own when it has one)
    /// at `offset_s` seconds east of UTC.
    pub fn utc_ns(&self, year: i32, offset_s: i64) -> i64 {
        let days = days_from_civil(self.year.unwrap_or(year), self.month, self.day);
        (days * 86_400 - offset_s) * 1_000_000_000 + self.micros_of_day * 1_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdks_prefix_with_and_without_the_year() {
        let p = parse("I20250709 16:40:57.435762 140032605917504 agent.cpp:499] ").unwrap();
        assert_eq!(p.severity, 'I');
        assert_eq!(p.tid, 140_032_605_917_504);
        assert_eq!(
            p.stamp,
            LocalStamp {
                year: Some(2025),
                month: 7,
                day: 9,
                micros_of_day: ((16 * 60 + 40) * 60 + 57) * 1_000_000 + 435_762,
            }
        );
        let q = parse("W0709 16:40:57.435762 140032605917504 agent.cpp:499]").unwrap();
        assert_eq!((q.severity, q.stamp.year), ('W', None));
        assert_eq!(q.stamp.micros_of_day, p.stamp.micros_of_day);
        // A launcher's own prefix in front is passed over.
        assert_eq!(
            parse("[rank 1] E1231 23:59:59.999999 77 x.cpp:1] ")
                .unwrap()
                .tid,
            77
        );
        for bad in [
            "",
            "I2025079 16:40:57.435762 1 a.cpp:1]",
            "I1309 16:40:57.435762 1 a.cpp:1]",
            "I0709 24:40:57.435762 1 a.cpp:1]",
            "I0709 16:40:57.4357x2 1 a.cpp:1]",
            "X0709 16:40:57.435762 1 a.cpp:1]",
            "I0709 16:40:57.435762 pid a.cpp:1]",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn local_stamps_become_utc_with_the_offset_and_the_year() {
        // 2025-07-09 16:40:57.435762 at UTC+02:00 is 14:40:57.435762 UTC.
        let p = parse("I20250709 16:40:57.435762 1 a.cpp:1]").unwrap();
        let utc = p.stamp.utc_ns(1999, 7200);
        assert_eq!(utc, 1_752_072_057_435_762_000, "its own year wins");
        let q = parse("I0709 16:40:57.435762 1 a.cpp:1]").unwrap();
        assert_eq!(q.stamp.utc_ns(2025, 7200), utc);
        assert_eq!(q.stamp.utc_ns(2025, 0) - utc, 7_200_000_000_000);
        assert_eq!(local_text(utc, 7200), "2025-07-09 16:40:57.435762");
        assert_eq!(
            (offset_text(7200), offset_text(-16_200)),
            ("UTC+02:00".into(), "UTC-04:30".into())
        );
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for d in [-1, 0, 11_016, 11_017, 20_278, 20_453] {
            let y = year_of_days(d);
            assert!(days_from_civil(y, 1, 1) <= d && d < days_from_civil(y + 1, 1, 1));
        }
    }
}
