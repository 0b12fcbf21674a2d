//! [`Attempt`]: which attempt of a call is running, and how many the call may make.

use std::fmt;

/// One attempt of a call: its number (1 for the first) and the most attempts the call may make
/// (`max_attempts`, when the strategy tells it: ours do).
///
/// With feature `attempt-context`, read it inside the attempt with `attempt::current()` or,
/// under [`RetryLayer`](crate::tower::RetryLayer), from an `http::Request`'s extensions; a
/// [`RetryLoop`](crate::driver::RetryLoop)'s driver reads it with
/// [`RetryLoop::attempt`](crate::driver::RetryLoop::attempt).
///
/// ```
/// use retry_core::driver::{NoHook, RetryLoop};
/// use retry_core::{RetryConfig, StandardStrategy};
/// use retry_core::classify::RetryInfoClassifier;
///
/// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(3).build().unwrap());
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// let mut headers = Vec::new();
/// loop {
///     let attempt = retry.attempt().expect("a call in progress");
///     headers.push(attempt.amz_sdk_request());
///     let outcome: Result<(), std::io::Error> = if attempt.number() < 2 {
///         Err(std::io::ErrorKind::ConnectionRefused.into())
///     } else {
///         Ok(())
///     };
///     if retry.finish(&outcome).is_break() {
///         break;
///     }
/// }
/// assert_eq!(headers, ["attempt=1; max=3", "attempt=2; max=3"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attempt {
    number: u32,
    /// `max_attempts`, 0 when the strategy does not tell it.
    max: u32,
    /// Whether the attempt is a hedge: sent while another copy of the call was in flight.
    hedge: bool,
}

impl Attempt {
    /// Attempt `number` of a call allowed `max` attempts (unknown: `None`, or `Some(0)`).
    #[inline(always)]
    pub(crate) fn new(number: u32, max: Option<u32>) -> Self {
        Self {
            number,
            max: max.unwrap_or(0),
            hedge: false,
        }
    }

    /// Attempt `number` of a call allowed `max` attempts, a hedge when `hedge`.
    #[inline(always)]
    pub(crate) fn copy(number: u32, max: Option<u32>, hedge: bool) -> Self {
        Self {
            hedge,
            ..Self::new(number, max)
        }
    }

    /// The attempt's number: 1 for the first attempt, 2 for the first retry, ...
    #[inline]
    pub fn number(self) -> u32 {
        self.number
    }

    /// The most attempts the call may make (its strategy's `max_attempts`), first included;
    /// `None` under a strategy that does not tell it
    /// ([`RetryStrategy::max_attempts`](crate::RetryStrategy::max_attempts)).
    #[inline]
    pub fn max(self) -> Option<u32> {
        (self.max != 0).then_some(self.max)
    }

    /// How many times the request was sent before this attempt: OpenTelemetry's
    /// `http.request.resend_count` (0 for the first attempt; hedges count, as they are sent).
    #[inline]
    pub fn resend_count(self) -> u32 {
        self.number.saturating_sub(1)
    }

    /// Whether this attempt is a retry: sent after the call's copies in flight failed (not the
    /// call's first attempt, not a hedge).
    #[inline]
    pub fn is_retry(self) -> bool {
        self.number > 1 && !self.hedge
    }

    /// Whether this attempt is a hedge ([`hedge`](crate::hedge)): a copy of the request sent
    /// while another copy was in flight and had not answered within the hedge delay.
    ///
    /// ```
    /// use retry_core::driver::{HedgedLoop, NoHook};
    /// use retry_core::hedge::Hedging;
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    ///
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let hedging = Hedging::after(std::time::Duration::from_millis(50)).unwrap();
    /// let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, hedging);
    /// assert_eq!(call.next_wait(true), None);
    /// let first = call.attempt().unwrap();
    /// let hedge = call.try_hedge().unwrap();
    /// assert_eq!((first.is_hedge(), first.is_retry()), (false, false));
    /// assert_eq!((hedge.number(), hedge.is_hedge(), hedge.is_retry()), (2, true, false));
    /// ```
    #[inline]
    pub fn is_hedge(self) -> bool {
        self.hedge
    }

    /// The value of the AWS SDKs' `amz-sdk-request` header for this attempt:
    /// `attempt=2; max=3` (`attempt=2` when the most attempts is unknown). A service reads it to
    /// tell retries from first attempts, and a client that sends it lets the service see them too.
    pub fn amz_sdk_request(self) -> String {
        match self.max() {
            Some(max) => format!("attempt={}; max={max}", self.number),
            None => format!("attempt={}", self.number),
        }
    }

    /// The attempt packed into one word for the thread-local context: 0 is "none" (attempts are
    /// numbered from 1).
    #[cfg(feature = "attempt-context")]
    #[inline(always)]
    pub(super) fn pack(self) -> u128 {
        (u128::from(self.hedge) << 64) | (u128::from(self.number) << 32) | u128::from(self.max)
    }

    /// The attempt [`pack`](Self::pack) made, `None` for 0.
    #[cfg(feature = "attempt-context")]
    #[inline]
    pub(super) fn unpack(word: u128) -> Option<Self> {
        let number = ((word >> 32) & u128::from(u32::MAX)) as u32;
        if number == 0 {
            return None;
        }
        Some(Self {
            number,
            max: (word & u128::from(u32::MAX)) as u32,
            hedge: word >> 64 != 0,
        })
    }
}

/// `attempt 2 of 3` (`attempt 2` when the most attempts is unknown; `attempt 2 of 3, a hedge`
/// for a hedge).
impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max() {
            Some(max) => write!(f, "attempt {} of {max}", self.number)?,
            None => write!(f, "attempt {}", self.number)?,
        }
        if self.hedge {
            f.write_str(", a hedge")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Attempt;

    #[cfg(feature = "attempt-context")]
    #[test]
    fn an_attempt_packs_into_one_word_and_back() {
        for attempt in [
            Attempt::new(1, Some(3)),
            Attempt::new(7, None),
            Attempt::new(u32::MAX, Some(u32::MAX)),
            Attempt::copy(2, Some(3), true),
            Attempt::copy(u32::MAX, Some(u32::MAX), true),
        ] {
            assert_eq!(Attempt::unpack(attempt.pack()), Some(attempt));
        }
        assert_eq!(Attempt::unpack(0), None);
    }

    #[test]
    fn the_header_and_the_display_name_the_number_and_the_most_attempts() {
        let second = Attempt::new(2, Some(3));
        assert_eq!(second.amz_sdk_request(), "attempt=2; max=3");
        assert_eq!(second.to_string(), "attempt 2 of 3");
        assert_eq!((second.resend_count(), second.is_retry()), (1, true));
        let unbounded = Attempt::new(1, None);
        assert_eq!(unbounded.amz_sdk_request(), "attempt=1");
        assert_eq!(unbounded.to_string(), "attempt 1");
        assert_eq!((unbounded.max(), unbounded.resend_count()), (None, 0));
        assert_eq!(Attempt::new(1, Some(0)).max(), None);
        let hedge = Attempt::copy(2, Some(3), true);
        assert_eq!((hedge.is_hedge(), hedge.is_retry()), (true, false));
        assert_eq!(hedge.resend_count(), 1);
        assert_eq!(hedge.to_string(), "attempt 2 of 3, a hedge");
        assert!(!second.is_hedge());
    }
}
