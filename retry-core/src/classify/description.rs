//! A retryability written out as a value: what a `#[retry(with = ...)]` function returns for an
//! error type it cannot derive or implement `RetryInfo` for.

use std::time::Duration;

use crate::info::{Fault, RetryInfo, RetrySafety};

/// The five answers of [`RetryInfo`] as plain data. Start from one of the constants, which
/// match the derive's keys (`TRANSIENT` is `#[retry(transient)]`, ...), and adjust with
/// [`with_retry_after`](Self::with_retry_after) / [`with_fault`](Self::with_fault).
///
/// Made for `#[derive(RetryInfo)]`'s `#[retry(with = path)]`, which classifies a field of a
/// foreign error type (a `sqlx::Error`, a `reqwest::Error`) through a function of yours,
/// `fn(&Field) -> impl RetryInfo`, without a newtype:
///
/// ```
/// use retry_core::classify::RetryDescription;
/// use retry_core::{RetryInfo, RetrySafety};
///
/// /// Stands for a foreign error type (`sqlx::Error`, ...).
/// #[derive(Debug)]
/// enum DbError {
///     PoolTimedOut,
///     RowNotFound,
/// }
///
/// fn describe_db(error: &DbError) -> RetryDescription {
///     match error {
///         DbError::PoolTimedOut => RetryDescription::TIMEOUT,
///         DbError::RowNotFound => RetryDescription::NEVER,
///     }
/// }
///
/// #[derive(Debug, RetryInfo)]
/// enum StoreError {
///     #[retry(with = describe_db)]
///     Db(DbError),
///     #[retry(transient)]
///     Unavailable,
/// }
///
/// assert!(StoreError::Db(DbError::PoolTimedOut).is_timeout());
/// assert_eq!(StoreError::Db(DbError::RowNotFound).retry_safety(), RetrySafety::No);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryDescription {
    safety: RetrySafety,
    throttling: bool,
    timeout: bool,
    retry_after: Option<Duration>,
    fault: Fault,
}

impl RetryDescription {
    /// Nothing known: the trait's defaults (`RetrySafety::Maybe`, `Fault::Unknown`); retried
    /// by the default classifier only if another answer says so.
    pub const MAYBE: Self = Self::new(RetrySafety::Maybe, false, false, Fault::Unknown);
    /// `#[retry(retryable)]`: may be retried.
    pub const RETRYABLE: Self = Self::new(RetrySafety::Yes, false, false, Fault::Unknown);
    /// `#[retry(transient)]`: a transient failure, retried (its retries' reason: `transient`;
    /// [`with_fault`](Self::with_fault)`(Fault::Server)` makes it `server`).
    pub const TRANSIENT: Self = Self::new(RetrySafety::Yes, false, false, Fault::Unknown);
    /// `#[retry(throttling)]`: the service asked to slow down; retried, and engages adaptive
    /// mode's rate limiter.
    pub const THROTTLING: Self = Self::new(RetrySafety::Yes, true, false, Fault::Server);
    /// `#[retry(timeout)]`: the attempt timed out; retried (at a timeout's quota cost).
    pub const TIMEOUT: Self = Self::new(RetrySafety::Yes, false, true, Fault::Server);
    /// `#[retry(never)]`: never retried, whatever other classifiers say.
    pub const NEVER: Self = Self::new(RetrySafety::No, false, false, Fault::Unknown);
    /// `#[retry(fault = "client")]`: the caller's mistake, not retried.
    pub const CLIENT: Self = Self::new(RetrySafety::No, false, false, Fault::Client);

    const fn new(safety: RetrySafety, throttling: bool, timeout: bool, fault: Fault) -> Self {
        Self {
            safety,
            throttling,
            timeout,
            retry_after: None,
            fault,
        }
    }

    /// The same answers, with the delay the service asked for (`#[retry(after)]`).
    ///
    /// ```
    /// use retry_core::classify::RetryDescription;
    /// use retry_core::RetryInfo;
    /// use std::time::Duration;
    /// let slow_down = RetryDescription::THROTTLING.with_retry_after(Duration::from_secs(2));
    /// assert_eq!(slow_down.retry_after(), Some(Duration::from_secs(2)));
    /// ```
    #[must_use]
    pub const fn with_retry_after(mut self, after: Duration) -> Self {
        self.retry_after = Some(after);
        self
    }

    /// The same answers, attributed to `fault`.
    ///
    /// ```
    /// use retry_core::{Fault, RetryInfo};
    /// use retry_core::classify::RetryDescription;
    /// assert_eq!(RetryDescription::RETRYABLE.with_fault(Fault::Server).fault(), Fault::Server);
    /// ```
    #[must_use]
    pub const fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }
}

impl Default for RetryDescription {
    /// [`RetryDescription::MAYBE`].
    fn default() -> Self {
        Self::MAYBE
    }
}

impl RetryInfo for RetryDescription {
    fn retry_safety(&self) -> RetrySafety {
        self.safety
    }

    fn is_throttling(&self) -> bool {
        self.throttling
    }

    fn is_timeout(&self) -> bool {
        self.timeout
    }

    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    fn fault(&self) -> Fault {
        self.fault
    }
}
