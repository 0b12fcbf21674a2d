//! HTTP-dates (RFC 9110 §5.6.7), in all three formats, read as the RFC says:
//!
//! ```text
//! IMF-fixdate   Sun, 06 Nov 1994 08:49:37 GMT
//! rfc850-date   Sunday, 06-Nov-94 08:49:37 GMT
//! asctime-date  Sun Nov  6 08:49:37 1994
//! ```
//!
//! Case-sensitive, no other spacing; the date must exist and the day name must be its own; the
//! time of day runs to 23:59:60 (a leap second, counted as the next minute's first second); a
//! four-digit year may be any, before 1970 too; a two-digit year is placed relative to `now`.
//!
//! Why not the `httpdate` crate (which never panics on parsing): it reads a two-digit year with a
//! fixed pivot (00-69 as 2000-2069, 70-99 as 1970-1999) where RFC 9110 requires one relative to
//! now (already wrong for "70" to "76"), rejects the leap second the grammar allows, and rejects
//! years before 1970, so a past date would be "unreadable" instead of "now". The tests compare
//! this parser with `httpdate`'s formatter where both are defined, and the `retry_after` fuzz
//! target with an independent reference model.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Day names, Monday first.
const DAY_NAMES: [&[u8]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];

/// The rfc850-date's day names, Monday first.
const LONG_DAY_NAMES: [&[u8]; 7] = [
    b"Monday",
    b"Tuesday",
    b"Wednesday",
    b"Thursday",
    b"Friday",
    b"Saturday",
    b"Sunday",
];

const MONTH_NAMES: [&[u8]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

const SECONDS_PER_DAY: i64 = 86_400;

/// RFC 9110 §5.6.7: a two-digit year that "appears to be more than 50 years in the future" is
/// the most recent past year with those digits.
const TWO_DIGIT_YEAR_HORIZON: i64 = 50;

/// The instant an HTTP-date names, or `None` when `value` is not an HTTP-date (or names an
/// instant a [`SystemTime`] cannot hold). `now` places an rfc850-date's two-digit year: it is the
/// year with those digits that is at most 50 years after now's year and less than 50 before.
pub(crate) fn parse_http_date(value: &[u8], now: SystemTime) -> Option<SystemTime> {
    let written = imf_fixdate(Reader(value))
        .or_else(|| rfc850_date(Reader(value), now))
        .or_else(|| asctime_date(Reader(value)))?;
    let seconds = written.unix_seconds()?;
    let magnitude = Duration::from_secs(seconds.unsigned_abs());
    if seconds >= 0 {
        UNIX_EPOCH.checked_add(magnitude)
    } else {
        UNIX_EPOCH.checked_sub(magnitude)
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(mut text: Reader<'_>) -> Option<Written> {
    let weekday = text.one_of(&DAY_NAMES)?;
    text.literal(b", ")?;
    let day = text.digits(2)?;
    text.literal(b" ")?;
    let month = text.one_of(&MONTH_NAMES)?;
    text.literal(b" ")?;
    let year = text.digits(4)?;
    text.literal(b" ")?;
    let (hour, minute, second) = text.time_of_day()?;
    text.literal(b" GMT")?;
    text.end()?;
    Some(Written {
        weekday,
        year,
        month,
        day,
        hour,
        minute,
        second,
    })
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn rfc850_date(mut text: Reader<'_>, now: SystemTime) -> Option<Written> {
    let weekday = text.one_of(&LONG_DAY_NAMES)?;
    text.literal(b", ")?;
    let day = text.digits(2)?;
    text.literal(b"-")?;
    let month = text.one_of(&MONTH_NAMES)?;
    text.literal(b"-")?;
    let two_digit_year = text.digits(2)?;
    text.literal(b" ")?;
    let (hour, minute, second) = text.time_of_day()?;
    text.literal(b" GMT")?;
    text.end()?;
    Some(Written {
        weekday,
        year: full_year(two_digit_year, now),
        month,
        day,
        hour,
        minute,
        second,
    })
}

/// `Sun Nov  6 08:49:37 1994` (the day as two digits, or a space and one digit)
fn asctime_date(mut text: Reader<'_>) -> Option<Written> {
    let weekday = text.one_of(&DAY_NAMES)?;
    text.literal(b" ")?;
    let month = text.one_of(&MONTH_NAMES)?;
    text.literal(b" ")?;
    let day = match text.literal(b" ") {
        Some(()) => text.digits(1)?,
        None => text.digits(2)?,
    };
    text.literal(b" ")?;
    let (hour, minute, second) = text.time_of_day()?;
    text.literal(b" ")?;
    let year = text.digits(4)?;
    text.end()?;
    Some(Written {
        weekday,
        year,
        month,
        day,
        hour,
        minute,
        second,
    })
}

/// The rest of a value, read left to right; each step takes exactly the text it expects.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn literal(&mut self, expected: &[u8]) -> Option<()> {
        self.0 = self.0.strip_prefix(expected)?;
        Some(())
    }

    /// Exactly `count` ASCII digits.
    fn digits(&mut self, count: usize) -> Option<i64> {
        let (digits, rest) = self.0.split_at_checked(count)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.0 = rest;
        Some(
            digits
                .iter()
                .fold(0, |value, digit| value * 10 + i64::from(digit - b'0')),
        )
    }

    /// The index of the name the text starts with (no name is a prefix of another).
    fn one_of(&mut self, names: &[&[u8]]) -> Option<i64> {
        let index = names.iter().position(|name| self.0.starts_with(name))?;
        self.literal(names[index])?;
        i64::try_from(index).ok()
    }

    /// `hour ":" minute ":" second`, two digits each.
    fn time_of_day(&mut self) -> Option<(i64, i64, i64)> {
        let hour = self.digits(2)?;
        self.literal(b":")?;
        let minute = self.digits(2)?;
        self.literal(b":")?;
        Some((hour, minute, self.digits(2)?))
    }

    fn end(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }
}

/// A date and time as written; [`unix_seconds`](Self::unix_seconds) checks it.
struct Written {
    /// 0 (Monday) to 6 (Sunday).
    weekday: i64,
    year: i64,
    /// 0 (January) to 11 (December).
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
}

impl Written {
    /// Seconds since the epoch, if the date exists, falls on the day named, and the time is a
    /// time of day (a leap second included).
    fn unix_seconds(&self) -> Option<i64> {
        let valid = (1..=days_in_month(self.year, self.month)).contains(&self.day)
            && (0..=23).contains(&self.hour)
            && (0..=59).contains(&self.minute)
            && (0..=60).contains(&self.second);
        let days = days_since_epoch(self.year, self.month, self.day)?;
        // 1970-01-01 was a Thursday (3, counting from Monday).
        let weekday = days.checked_add(3)?.rem_euclid(7);
        if !valid || weekday != self.weekday {
            return None;
        }
        days.checked_mul(SECONDS_PER_DAY)?
            .checked_add(self.hour * 3_600 + self.minute * 60 + self.second)
    }
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 if is_leap_year(year) => 29,
        1 => 28,
        3 | 5 | 8 | 10 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (`month` from 0), by
/// H. Hinnant's `days_from_civil` ("chrono-Compatible Low-Level Date Algorithms"): years counted
/// from March, in 400-year eras of 146 097 days. `None` past the range of an `i64`.
fn days_since_epoch(year: i64, month: i64, day: i64) -> Option<i64> {
    let year = if month < 2 {
        year.checked_sub(1)?
    } else {
        year
    };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (month + 10) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era.checked_mul(146_097)?
        .checked_add(day_of_era)?
        .checked_sub(719_468)
}

/// The year `days` (since 1970-01-01) falls in: the inverse of [`days_since_epoch`] for the
/// year alone.
fn year_of(days: i64) -> i64 {
    let shifted = days.saturating_add(719_468);
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Counted from March: January and February belong to the next calendar year.
    let january_or_february = day_of_year >= 306;
    era * 400 + year_of_era + i64::from(january_or_february)
}

/// RFC 9110 §5.6.7: the year ending in `two_digits` that is at most
/// [`TWO_DIGIT_YEAR_HORIZON`] years after now's, and less than that many before.
fn full_year(two_digits: i64, now: SystemTime) -> i64 {
    let now_seconds = match now.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
    };
    let now_year = year_of(now_seconds.div_euclid(SECONDS_PER_DAY));
    let year = now_year - now_year.rem_euclid(100) + two_digits;
    if year > now_year + TWO_DIGIT_YEAR_HORIZON {
        year - 100
    } else if year <= now_year - TWO_DIGIT_YEAR_HORIZON {
        year + 100
    } else {
        year
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> SystemTime {
        let magnitude = Duration::from_secs(seconds.unsigned_abs());
        if seconds >= 0 {
            UNIX_EPOCH + magnitude
        } else {
            UNIX_EPOCH - magnitude
        }
    }

    fn seconds_of(value: &str, now: SystemTime) -> Option<i64> {
        let date = parse_http_date(value.as_bytes(), now)?;
        Some(match date.duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_secs()).expect("small"),
            Err(before) => -i64::try_from(before.duration().as_secs()).expect("small"),
        })
    }

    #[test]
    fn the_three_formats_name_the_same_instant() {
        let now = at(784_111_767);
        for value in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Sun Nov 06 08:49:37 1994",
        ] {
            assert_eq!(seconds_of(value, now), Some(784_111_777), "{value}");
        }
    }

    /// Dates whose seconds since the epoch were computed elsewhere (Python's
    /// `calendar.timegm`), each in the three formats; an rfc850-date read at the date itself,
    /// where its two-digit year is that of the date.
    #[test]
    fn known_dates_in_every_format() {
        for (seconds, imf, rfc850, asctime) in [
            (
                0,
                "Thu, 01 Jan 1970 00:00:00 GMT",
                "Thursday, 01-Jan-70 00:00:00 GMT",
                "Thu Jan  1 00:00:00 1970",
            ),
            (
                946_684_799,
                "Fri, 31 Dec 1999 23:59:59 GMT",
                "Friday, 31-Dec-99 23:59:59 GMT",
                "Fri Dec 31 23:59:59 1999",
            ),
            (
                951_825_600,
                "Tue, 29 Feb 2000 12:00:00 GMT",
                "Tuesday, 29-Feb-00 12:00:00 GMT",
                "Tue Feb 29 12:00:00 2000",
            ),
            (
                1_795_388_462,
                "Sun, 22 Nov 2026 23:01:02 GMT",
                "Sunday, 22-Nov-26 23:01:02 GMT",
                "Sun Nov 22 23:01:02 2026",
            ),
            (
                2_147_483_648,
                "Tue, 19 Jan 2038 03:14:08 GMT",
                "Tuesday, 19-Jan-38 03:14:08 GMT",
                "Tue Jan 19 03:14:08 2038",
            ),
            (
                3_155_760_000,
                "Wed, 01 Jan 2070 00:00:00 GMT",
                "Wednesday, 01-Jan-70 00:00:00 GMT",
                "Wed Jan  1 00:00:00 2070",
            ),
            (
                -2_203_891_200,
                "Thu, 01 Mar 1900 00:00:00 GMT",
                "Thursday, 01-Mar-00 00:00:00 GMT",
                "Thu Mar  1 00:00:00 1900",
            ),
            (
                -14_182_940,
                "Sun, 20 Jul 1969 20:17:40 GMT",
                "Sunday, 20-Jul-69 20:17:40 GMT",
                "Sun Jul 20 20:17:40 1969",
            ),
            (
                253_402_300_799,
                "Fri, 31 Dec 9999 23:59:59 GMT",
                "Friday, 31-Dec-99 23:59:59 GMT",
                "Fri Dec 31 23:59:59 9999",
            ),
        ] {
            let now = at(seconds);
            for value in [imf, rfc850, asctime] {
                assert_eq!(seconds_of(value, now), Some(seconds), "{value}");
            }
        }
    }

    /// RFC 9110 §5.6.7 places a two-digit year relative to now, where a fixed pivot (1970-2069,
    /// as the `httpdate` crate reads them) is wrong for "70" to "76" from 2026 on.
    #[test]
    fn a_two_digit_year_follows_now_not_a_fixed_pivot() {
        let now = at(1_795_388_462); // Sun, 22 Nov 2026 23:01:02 GMT
        assert_eq!(
            seconds_of("Wednesday, 01-Jan-70 00:00:00 GMT", now),
            Some(3_155_760_000),
            "2070"
        );
        assert_eq!(
            seconds_of("Thursday, 01-Jan-70 00:00:00 GMT", now),
            None,
            "1970 was a Thursday, 2070 is a Wednesday"
        );
        assert_eq!(
            seconds_of("Saturday, 01-Jan-77 00:00:00 GMT", now),
            Some(220_924_800),
            "2077 is more than 50 years ahead: 1977"
        );
    }

    #[test]
    fn calendar_edges() {
        let now = at(0);
        assert_eq!(seconds_of("Thu, 01 Jan 1970 00:00:00 GMT", now), Some(0));
        assert_eq!(seconds_of("Wed, 31 Dec 1969 23:59:60 GMT", now), Some(0));
        assert_eq!(
            seconds_of("Mon, 01 Jan 0001 00:00:00 GMT", now),
            Some(-62_135_596_800)
        );
        assert_eq!(
            seconds_of("Sat, 01 Jan 0000 00:00:00 GMT", now),
            Some(-62_167_219_200)
        );
        assert_eq!(
            seconds_of("Fri, 31 Dec 9999 23:59:59 GMT", now),
            Some(253_402_300_799)
        );
        assert_eq!(
            seconds_of("Tue, 29 Feb 2000 00:00:00 GMT", now),
            Some(951_782_400)
        );
        assert_eq!(seconds_of("Thu, 29 Feb 2100 00:00:00 GMT", now), None);
    }

    #[test]
    fn years_of_days() {
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(-1), 1969);
        assert_eq!(year_of(11_016), 2000); // 2000-02-29
        assert_eq!(year_of(10_956), 1999); // 1999-12-31
        assert_eq!(year_of(10_957), 2000); // 2000-01-01
        assert_eq!(year_of(2_932_896), 9999); // 9999-12-31
        // Any clock: no overflow at the ends of an i64 of days.
        let _ = year_of(i64::MAX / SECONDS_PER_DAY);
        let _ = year_of(i64::MIN / SECONDS_PER_DAY);
    }

    #[test]
    fn two_digit_years_around_now() {
        let year = |two_digits, now_year: i64| {
            let days = days_since_epoch(now_year, 5, 1).expect("in range");
            full_year(two_digits, at(days * SECONDS_PER_DAY))
        };
        assert_eq!(year(94, 2026), 1994);
        assert_eq!(year(76, 2026), 2076);
        assert_eq!(year(77, 2026), 1977);
        assert_eq!(year(5, 2096), 2105);
        assert_eq!(year(46, 2096), 2146);
        assert_eq!(year(47, 2096), 2047);
    }

    #[test]
    fn any_clock_reads_four_digit_years_alike_and_never_panics() {
        for now in [UNIX_EPOCH, at(i64::MAX), at(i64::MIN + 1), at(-1)] {
            assert_eq!(
                parse_http_date(b"Sun, 06 Nov 1994 08:49:37 GMT", now),
                Some(at(784_111_777))
            );
            for value in [
                &b""[..],
                b"\xff\xfe",
                b"Sunday, ",
                b"Sun, 06 Nov 1994 08:49:37",
            ] {
                assert_eq!(parse_http_date(value, now), None);
            }
            // A two-digit year far from 1994 names another day of the week.
            let _ = parse_http_date(b"Sunday, 06-Nov-94 08:49:37 GMT", now);
        }
    }
}
