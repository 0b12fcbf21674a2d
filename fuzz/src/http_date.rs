//! Reference model of an HTTP-date (RFC 9110 §5.6.7), in all three formats:
//!
//! ```text
//! IMF-fixdate   Sun, 06 Nov 1994 08:49:37 GMT
//! rfc850-date   Sunday, 06-Nov-94 08:49:37 GMT
//! asctime-date  Sun Nov  6 08:49:37 1994
//! ```
//!
//! Read as the RFC says: case-sensitive; the day name must be the date's; a second of 60 (a
//! leap second) is the next minute's first; any four-digit year, before 1970 too; a two-digit
//! year (rfc850) is the one with those last two digits that is not more than 50 years after
//! `now`. Written apart from retry-core's parser: it splits the text at its separators where
//! retry-core reads fixed positions, and counts days from year 0 with leap-year sums.

/// Short day names, Sunday first (the reference's weekday numbering: days since Sunday).
const DAY_NAMES: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// Long day names (rfc850-date), Sunday first.
const LONG_DAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Days from 0000-01-01 to 1970-01-01 in the proleptic Gregorian calendar.
const DAYS_BEFORE_1970: i64 = 719_528;

/// 1970-01-01 was a Thursday.
const WEEKDAY_OF_1970_01_01: i64 = 4;

/// The instant an HTTP-date names, in whole seconds since the Unix epoch (negative before it);
/// `None` for anything that is not an HTTP-date. `now_unix` (seconds) places a two-digit year.
///
/// ```
/// use retry_core_fuzz::http_date::unix_seconds;
/// let now = 784_111_767; // Sun, 06 Nov 1994 08:49:27 GMT
/// for date in [
///     "Sun, 06 Nov 1994 08:49:37 GMT",
///     "Sunday, 06-Nov-94 08:49:37 GMT",
///     "Sun Nov  6 08:49:37 1994",
///     "Sun Nov 06 08:49:37 1994",
/// ] {
///     assert_eq!(unix_seconds(date.as_bytes(), now), Some(784_111_777), "{date}");
/// }
/// assert_eq!(unix_seconds(b"Mon, 06 Nov 1994 08:49:37 GMT", now), None); // a Sunday
/// assert_eq!(unix_seconds(b"Thu, 01 Jan 1970 00:00:00 GMT", now), Some(0));
/// assert_eq!(unix_seconds(b"Wed, 31 Dec 1969 23:59:60 GMT", now), Some(0));
/// assert_eq!(unix_seconds(b"Mon, 01 Jan 0001 00:00:00 GMT", now), Some(-62_135_596_800));
/// ```
pub fn unix_seconds(value: &[u8], now_unix: i64) -> Option<i64> {
    let text = std::str::from_utf8(value).ok()?;
    imf_fixdate(text)
        .or_else(|| rfc850_date(text, now_unix))
        .or_else(|| asctime_date(text))
}

/// `day-name "," SP 2DIGIT SP month SP 4DIGIT SP time-of-day SP "GMT"`.
fn imf_fixdate(text: &str) -> Option<i64> {
    let (day_name, rest) = text.split_once(", ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = fields[..] else {
        return None;
    };
    instant(
        position(&DAY_NAMES, day_name)?,
        number(year, 4)?,
        position(&MONTHS, month)?,
        number(day, 2)?,
        time,
    )
}

/// `day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"`.
fn rfc850_date(text: &str, now_unix: i64) -> Option<i64> {
    let (day_name, rest) = text.split_once(", ")?;
    let fields: Vec<&str> = rest.split(' ').collect();
    let [date, time, "GMT"] = fields[..] else {
        return None;
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [day, month, two_digit_year] = parts[..] else {
        return None;
    };
    let year = full_year(number(two_digit_year, 2)?, year_of(now_unix));
    instant(
        position(&LONG_DAY_NAMES, day_name)?,
        year,
        position(&MONTHS, month)?,
        number(day, 2)?,
        time,
    )
}

/// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP 4DIGIT`.
fn asctime_date(text: &str) -> Option<i64> {
    let (day_name, rest) = text.split_once(' ')?;
    let (month, rest) = rest.split_once(' ')?;
    // The day is two characters: two digits, or a space and one digit.
    let day_field = rest.get(..2)?;
    let day = match day_field.strip_prefix(' ') {
        Some(single) => number(single, 1)?,
        None => number(day_field, 2)?,
    };
    let fields: Vec<&str> = rest.get(2..)?.split(' ').collect();
    let ["", time, year] = fields[..] else {
        return None;
    };
    instant(
        position(&DAY_NAMES, day_name)?,
        number(year, 4)?,
        position(&MONTHS, month)?,
        day,
        time,
    )
}

/// The instant of a written date, if the date exists and falls on the day named.
fn instant(weekday: usize, year: i64, month: usize, day: i64, time: &str) -> Option<i64> {
    let day = u32::try_from(day).ok()?;
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_before_year(year) + days_before_month(year, month) + i64::from(day)
        - 1
        - DAYS_BEFORE_1970;
    if (days + WEEKDAY_OF_1970_01_01).rem_euclid(7) != weekday as i64 {
        return None;
    }
    let fields: Vec<&str> = time.split(':').collect();
    let [hour, minute, second] = fields[..] else {
        return None;
    };
    let (hour, minute, second) = (number(hour, 2)?, number(minute, 2)?, number(second, 2)?);
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// Exactly `digits` ASCII digits.
fn number(text: &str, digits: usize) -> Option<i64> {
    (text.len() == digits && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

fn position(names: &[&str], name: &str) -> Option<usize> {
    names.iter().position(|candidate| *candidate == name)
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days from 0000-01-01 to `year`-01-01 (`year` >= 0): 365 a year plus one per leap year
/// before it, year 0 included.
fn days_before_year(year: i64) -> i64 {
    let leap_years = if year == 0 {
        0
    } else {
        (year - 1) / 4 - (year - 1) / 100 + (year - 1) / 400 + 1
    };
    365 * year + leap_years
}

fn days_in_month(year: i64, month: usize) -> u32 {
    match month {
        1 => 28 + u32::from(is_leap(year)),
        3 | 5 | 8 | 10 => 30,
        _ => 31,
    }
}

fn days_before_month(year: i64, month: usize) -> i64 {
    (0..month).map(|m| i64::from(days_in_month(year, m))).sum()
}

/// The calendar year `unix_seconds` falls in (years 0 to 9999).
pub fn year_of(unix_seconds: i64) -> i64 {
    let days = unix_seconds.div_euclid(86_400) + DAYS_BEFORE_1970;
    let mut year = (days * 400 / 146_097).clamp(0, 10_000);
    while year > 0 && days_before_year(year) > days {
        year -= 1;
    }
    while days_before_year(year + 1) <= days {
        year += 1;
    }
    year
}

/// RFC 9110 §5.6.7: a two-digit year "that appears to be more than 50 years in the future" is
/// the most recent past year with those digits. Read as a window: the year with those last two
/// digits in `(now_year - 50, now_year + 50]`.
fn full_year(two_digits: i64, now_year: i64) -> i64 {
    let year = now_year - now_year % 100 + two_digits;
    if year > now_year + 50 {
        year - 100
    } else if year <= now_year - 50 {
        year + 100
    } else {
        year
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_years_at_known_dates() {
        assert_eq!(days_before_year(1970), DAYS_BEFORE_1970);
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(-1), 1969);
        assert_eq!(year_of(951_782_400), 2000); // 2000-02-29
        assert_eq!(year_of(253_402_300_799), 9999);
        // 2000 was a leap year, 1900 and 2100 were not.
        assert!(is_leap(2000) && !is_leap(1900) && !is_leap(2100) && is_leap(2024));
    }

    #[test]
    fn two_digit_years_follow_rfc_9110() {
        assert_eq!(full_year(94, 2026), 1994);
        assert_eq!(full_year(76, 2026), 2076);
        assert_eq!(full_year(77, 2026), 1977);
        assert_eq!(full_year(5, 2096), 2105);
    }
}
