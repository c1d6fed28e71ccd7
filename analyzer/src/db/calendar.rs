//! Civil dates and UTC text, for stamps the analyzer reads (glog's local date) and writes
//! (import times). Day counts are from 1970-01-01, proleptic Gregorian.

use time::{Date, Month, OffsetDateTime, format_description::well_known::Rfc3339};

/// Julian day number of 1970-01-01.
const EPOCH_JULIAN_DAY: i64 = 2_440_588;

/// Days from 1970-01-01 to the civil date. A day past the month's end (a February 29 read in a
/// common year) rolls into the next month, as counting days from the first of the month does.
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let first = u8::try_from(month)
        .ok()
        .and_then(|m| Month::try_from(m).ok())
        .and_then(|m| Date::from_calendar_date(year, m, 1).ok())
        .unwrap_or(Date::MIN);
    i64::from(first.to_julian_day()) - EPOCH_JULIAN_DAY + i64::from(day) - 1
}

/// The civil date (year, month, day) of a day count from 1970-01-01 (clamped to the years
/// ±9999).
pub fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let jd = (days + EPOCH_JULIAN_DAY).clamp(
        i64::from(Date::MIN.to_julian_day()),
        i64::from(Date::MAX.to_julian_day()),
    );
    let d = Date::from_julian_day(jd as i32).unwrap_or(Date::MIN);
    (d.year(), u32::from(u8::from(d.month())), u32::from(d.day()))
}

/// Current UTC time as ISO-8601 text (`YYYY-MM-DDTHH:MM:SSZ`).
pub fn now_utc() -> String {
    let now = OffsetDateTime::now_utc();
    now.replace_nanosecond(0)
        .unwrap_or(now)
        .format(&Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_counts_round_trip_and_roll_over() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2025, 2, 29), days_from_civil(2025, 3, 1));
        for d in [-800_000, -1, 0, 59, 11_016, 20_000, 800_000] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        let t = now_utc();
        assert!(
            t.len() == 20 && t.ends_with('Z') && t.as_bytes()[10] == b'T',
            "{t}"
        );
    }
}
