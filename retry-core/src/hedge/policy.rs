//! A call's hedging policy: when a copy is sent ([`HedgeDelay`]) and how many ([`Hedging`]).
//!
//! `retry-macros` keeps a copy of [`HedgeDelay`]'s parser (`retry-macros/src/parse/hedge.rs`) to
//! check `#[retryable(hedge_after = "...")]` at compile time; its tests fail when the two read
//! any string differently.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::error::HedgeConfigError;
use super::limits::MAX_HEDGES;
use crate::config::parse_duration;

/// When a hedge is sent: a fixed delay after the last copy was sent, or a percentile of the
/// scope's measured latency (the latency of the first attempts of its hedged calls: see
/// [`ScopeHedging`](super::ScopeHedging)).
///
/// Read from a string as `#[retryable(hedge_after = "...")]` writes it: a duration (`"50ms"`,
/// `"1.5s"`, longer than zero) or `p` and a percentile strictly between 0 and 100 (`"p95"`,
/// `"p99.9"`), surrounding whitespace ignored, `p` in either case.
///
/// ```
/// use retry_core::hedge::HedgeDelay;
/// use std::time::Duration;
///
/// assert_eq!("50ms".parse(), Ok(HedgeDelay::After(Duration::from_millis(50))));
/// assert_eq!("p95".parse(), Ok(HedgeDelay::Percentile(95.0)));
/// assert_eq!(" P99.9 ".parse(), Ok(HedgeDelay::Percentile(99.9)));
/// assert_eq!(
///     "p100".parse::<HedgeDelay>().unwrap_err().to_string(),
///     "invalid hedge delay `p100`: a percentile is strictly between 0 and 100; write e.g. \
///      \"p95\" or \"p99.9\""
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HedgeDelay {
    /// A hedge is sent this long after the last copy was sent, if no answer ended the call.
    After(Duration),
    /// A hedge is sent once the last copy has been in flight longer than this percentile of the
    /// scope's measured latency (`95.0` for p95), once the scope has enough samples
    /// ([`ScopeHedging::latency`](super::ScopeHedging::latency)); before, calls are not hedged.
    Percentile(f64),
}

impl HedgeDelay {
    /// A delay that is a valid setting: longer than zero, or a percentile strictly between 0
    /// and 100.
    fn check(self) -> Result<Self, HedgeConfigError> {
        match self {
            HedgeDelay::After(delay) if delay.is_zero() => Err(HedgeConfigError::ZeroDelay),
            HedgeDelay::Percentile(percentile) if !(percentile > 0.0 && percentile < 100.0) => {
                Err(HedgeConfigError::Percentile { percentile })
            }
            delay => Ok(delay),
        }
    }
}

impl FromStr for HedgeDelay {
    type Err = HedgeConfigError;

    fn from_str(input: &str) -> Result<Self, HedgeConfigError> {
        let text = input.trim();
        let invalid = |problem| HedgeConfigError::Parse {
            input: text.to_owned(),
            problem,
        };
        let Some(number) = text.strip_prefix(['p', 'P']) else {
            let delay = parse_duration(text).map_err(HedgeConfigError::Duration)?;
            return HedgeDelay::After(delay).check();
        };
        let well_formed = !number.is_empty()
            && number
                .bytes()
                .all(|byte| byte.is_ascii_digit() || byte == b'.')
            && number.bytes().filter(|&byte| byte == b'.').count() <= 1
            && !number.starts_with('.')
            && !number.ends_with('.');
        let percentile = number
            .parse::<f64>()
            .ok()
            .filter(|_| well_formed)
            .ok_or_else(|| invalid("`p` is followed by a number".to_owned()))?;
        HedgeDelay::Percentile(percentile)
            .check()
            .map_err(|_| invalid("a percentile is strictly between 0 and 100".to_owned()))
    }
}

impl fmt::Display for HedgeDelay {
    /// As it is written: `50ms`, `p95`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HedgeDelay::After(delay) => write!(f, "{delay:?}"),
            HedgeDelay::Percentile(percentile) => write!(f, "p{percentile}"),
        }
    }
}

/// A call's hedging: send another copy of an idempotent request when the copies in flight have
/// not answered within [`delay`](Self::delay), at most [`max_hedges`](Self::max_hedges) of them
/// per call; the first answer that ends the call wins and the other copies are dropped. Given
/// to [`Retry::hedge`](crate::Retry::hedge), [`HedgedLoop`](crate::driver::HedgedLoop), the
/// tower layer's `hedge`, or written `#[retryable(hedge_after = "...", max_hedges = N)]`.
///
/// Valid by construction: the constructors check what they are given.
///
/// ```
/// use retry_core::hedge::{HedgeDelay, Hedging};
/// use std::time::Duration;
///
/// let fixed = Hedging::after(Duration::from_millis(50))?;
/// assert_eq!(fixed.delay(), HedgeDelay::After(Duration::from_millis(50)));
/// assert_eq!(fixed.max_hedges(), 1);
/// let tail = Hedging::at_percentile(99.0)?.with_max_hedges(2)?;
/// assert_eq!((tail.delay(), tail.max_hedges()), (HedgeDelay::Percentile(99.0), 2));
/// assert_eq!("p95".parse::<Hedging>()?, Hedging::at_percentile(95.0)?);
/// assert!(Hedging::after(Duration::ZERO).is_err());
/// # Ok::<(), retry_core::hedge::HedgeConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hedging {
    delay: HedgeDelay,
    max_hedges: u32,
}

impl Hedging {
    /// One hedge per call, sent after `delay` (longer than zero).
    pub fn after(delay: Duration) -> Result<Self, HedgeConfigError> {
        Self::new(HedgeDelay::After(delay))
    }

    /// One hedge per call, sent once the copy in flight has taken longer than `percentile`
    /// (strictly between 0 and 100: `95.0` for p95) of the scope's measured latency.
    pub fn at_percentile(percentile: f64) -> Result<Self, HedgeConfigError> {
        Self::new(HedgeDelay::Percentile(percentile))
    }

    /// One hedge per call, sent after `delay`.
    pub fn new(delay: HedgeDelay) -> Result<Self, HedgeConfigError> {
        Ok(Self {
            delay: delay.check()?,
            max_hedges: 1,
        })
    }

    /// At most `max_hedges` hedges per call, from 1 to [`MAX_HEDGES`]; each is sent
    /// [`delay`](Self::delay) after the copy before it. Hedges and retries share the strategy's
    /// `max_attempts`.
    ///
    /// ```
    /// use retry_core::hedge::Hedging;
    /// let hedging = Hedging::at_percentile(95.0).unwrap();
    /// assert_eq!(
    ///     hedging.with_max_hedges(9).unwrap_err().to_string(),
    ///     "max_hedges must be between 1 and 4 (gRPC's hedging policy sends at most 5 copies), got 9"
    /// );
    /// ```
    pub fn with_max_hedges(self, max_hedges: u32) -> Result<Self, HedgeConfigError> {
        if !(1..=MAX_HEDGES).contains(&max_hedges) {
            return Err(HedgeConfigError::MaxHedges { max_hedges });
        }
        Ok(Self { max_hedges, ..self })
    }

    /// The hedging of `#[retryable(hedge_after = ..., max_hedges = ...)]`, whose values the macro
    /// checked with these rules at compile time (its parser is tested against this one);
    /// `max_hedges` kept in range all the same.
    pub(crate) fn checked_by_macro(delay: HedgeDelay, max_hedges: u32) -> Self {
        debug_assert!(delay.check().is_ok(), "{delay:?}");
        Self {
            delay,
            max_hedges: max_hedges.clamp(1, MAX_HEDGES),
        }
    }

    /// When a hedge is sent.
    pub fn delay(&self) -> HedgeDelay {
        self.delay
    }

    /// The most hedges a call sends.
    pub fn max_hedges(&self) -> u32 {
        self.max_hedges
    }
}

impl FromStr for Hedging {
    type Err = HedgeConfigError;

    /// One hedge per call after the [`HedgeDelay`] written: `"50ms"`, `"p95"`.
    fn from_str(input: &str) -> Result<Self, HedgeConfigError> {
        Self::new(input.parse()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_malformed_delay_says_what_to_write() {
        for (input, problem) in [
            ("p", "`p` is followed by a number"),
            ("p-5", "`p` is followed by a number"),
            ("p9 5", "`p` is followed by a number"),
            ("p95%", "`p` is followed by a number"),
            ("p.5", "`p` is followed by a number"),
            ("p5.", "`p` is followed by a number"),
            ("p1.2.3", "`p` is followed by a number"),
            ("pinf", "`p` is followed by a number"),
            ("pNaN", "`p` is followed by a number"),
            ("p0", "strictly between 0 and 100"),
            ("p100", "strictly between 0 and 100"),
            ("p150", "strictly between 0 and 100"),
            ("0ms", "longer than zero"),
            ("50", "missing unit"),
            ("", "expected a number first"),
        ] {
            let error = input.parse::<HedgeDelay>().unwrap_err().to_string();
            assert!(error.contains(problem), "{input:?}: {error}");
            assert!(error.contains("e.g."), "{input:?}: {error}");
        }
    }

    #[test]
    fn a_delay_reads_back_as_written() {
        for written in ["50ms", "p95", "p99.9", "p0.1", "1.5s"] {
            let delay: HedgeDelay = written.parse().unwrap();
            assert_eq!(
                delay.to_string().parse::<HedgeDelay>(),
                Ok(delay),
                "{written}"
            );
        }
        assert_eq!(
            HedgeDelay::After(Duration::from_millis(50)).to_string(),
            "50ms"
        );
    }

    #[test]
    fn the_constructors_check_their_values() {
        assert!(matches!(
            Hedging::at_percentile(f64::NAN),
            Err(HedgeConfigError::Percentile { .. })
        ));
        assert!(Hedging::at_percentile(0.0).is_err());
        assert!(Hedging::at_percentile(100.0).is_err());
        assert!(Hedging::at_percentile(99.99).is_ok());
        let hedging = Hedging::after(Duration::from_millis(1)).unwrap();
        assert!(hedging.with_max_hedges(0).is_err());
        assert_eq!(
            hedging.with_max_hedges(MAX_HEDGES).unwrap().max_hedges(),
            MAX_HEDGES
        );
        assert!(hedging.with_max_hedges(MAX_HEDGES + 1).is_err());
    }
}
