//! Load shedding's refusal: a call refused before its first attempt, because its send permit is
//! not expected in time ([`LoadShed`], and why: [`ShedReason`]). The value every layer shares (the
//! strategies that shed, the drivers that return it, the classifiers that recognize it), so it
//! sits below them all; the policies that choose to shed are the drivers' (`driver/shed.rs`).

use std::fmt;
use std::time::Duration;

/// Why the caller's budget for waiting was too small.
///
/// ```
/// assert_eq!(retry_core::adaptive::ShedReason::Deadline.as_str(), "deadline");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShedReason {
    /// The permit is expected too late for an answer before the call's deadline (`timeout`):
    /// after the deadline less the time the scope's answers take (see
    /// [`AdaptiveStrategy`](crate::AdaptiveStrategy)).
    Deadline,
    /// The permit is expected later than `max_wait`.
    MaxWait,
}

impl ShedReason {
    /// A short name for logs and metrics.
    ///
    /// ```
    /// assert_eq!(retry_core::adaptive::ShedReason::MaxWait.as_str(), "max_wait");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ShedReason::Deadline => "deadline",
            ShedReason::MaxWait => "max_wait",
        }
    }
}

/// A call refused locally, before its first attempt: in adaptive mode, the scope's rate limiter
/// expected the call's send permit too late for an answer before its deadline (`timeout`) or later than `max_wait`, so
/// no attempt was sent (queueing it until the caller gave up would only have sent it to a
/// throttling service too late to matter). The service never saw the call: this is not the
/// service's error, and retrying it at once only queues again.
///
/// A caller opts in by giving its error type a way to hold it (`E: From<LoadShed>`) and
/// shedding load: [`Retry::shed_load`](crate::Retry::shed_load),
/// [`RetryLoop::shed_load`](crate::driver::RetryLoop::shed_load), `#[retryable(shed = true)]` or
/// the tower layer's `shed_load`; without it, the first attempt is always made.
///
/// ```
/// use retry_core::LoadShed;
/// use retry_core::adaptive::ShedReason;
/// use std::time::Duration;
/// let shed = LoadShed::new(Duration::from_secs(3), Duration::from_secs(1), ShedReason::Deadline);
/// assert_eq!(
///     shed.to_string(),
///     "shed locally: the send permit is expected in 3s, too late for an answer before the call's deadline (1s left to send)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadShed {
    expected: Duration,
    limit: Duration,
    reason: ShedReason,
}

impl LoadShed {
    /// A call shed because its permit was `expected` that far away, past `limit` (what was
    /// left before the deadline, or `max_wait`).
    ///
    /// ```
    /// # use retry_core::LoadShed;
    /// # use retry_core::adaptive::ShedReason;
    /// # use std::time::Duration;
    /// let shed = LoadShed::new(Duration::from_secs(2), Duration::from_millis(500), ShedReason::MaxWait);
    /// assert_eq!(shed.reason(), ShedReason::MaxWait);
    /// ```
    pub fn new(expected: Duration, limit: Duration, reason: ShedReason) -> Self {
        Self {
            expected,
            limit,
            reason,
        }
    }

    /// How far away the send permit was expected.
    pub fn expected(&self) -> Duration {
        self.expected
    }

    /// The longest the call could wait: the time left before its deadline less the time its
    /// answer would take, or `max_wait`.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Which limit it was.
    pub fn reason(&self) -> ShedReason {
        self.reason
    }
}

impl fmt::Display for LoadShed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            ShedReason::Deadline => write!(
                f,
                "shed locally: the send permit is expected in {:?}, too late for an answer before the call's deadline ({:?} left to send)",
                self.expected, self.limit
            ),
            ShedReason::MaxWait => write!(
                f,
                "shed locally: the send permit is expected in {:?}, longer than max_wait {:?}",
                self.expected, self.limit
            ),
        }
    }
}

impl std::error::Error for LoadShed {}
