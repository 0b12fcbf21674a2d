//! Durations on the command line: a number and a unit (`250ms`, `20s`, `2m`).

use std::time::Duration;

/// Parses `<number><unit>` with the unit `ms`, `s` or `m`; the number may have a fraction
/// (`1.5s`). Anything else is an error saying what to write.
///
/// ```text
/// 250ms  20s  1.5s  2m
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("`{text}` has no unit: write e.g. `500ms`, `20s` or `2m`"))?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}`: `{number}` is not a number"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        other => {
            return Err(format!(
                "`{text}`: unknown unit `{other}` (write `ms`, `s` or `m`)"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{text}` is not a duration"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_fractions_are_read() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    }

    #[test]
    fn a_missing_or_unknown_unit_is_an_error_that_says_what_to_write() {
        assert!(parse_duration("20").unwrap_err().contains("has no unit"));
        assert!(
            parse_duration("20h")
                .unwrap_err()
                .contains("unknown unit `h`")
        );
        assert!(parse_duration("s").unwrap_err().contains("is not a number"));
        assert!(
            parse_duration("1..2s")
                .unwrap_err()
                .contains("is not a number")
        );
    }
}
