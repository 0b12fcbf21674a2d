//! The error vocabulary: how an error describes its own retryability.
//!
//! Modeled on Smithy's `ErrorInfo` / `ErrorRetryInfo` and `HasFault` (the Smithy client guide
//! "Retries" and smithy-python's retry design). One trait, [`RetryInfo`], with every method
//! defaulted, so an error type opts in with an empty `impl` and overrides only what it knows.

use std::sync::Arc;
use std::time::Duration;

/// Whether retrying an operation that failed with an error is safe.
///
/// Smithy's guides leave open what "maybe" means; this crate decides:
/// [`Yes`](RetrySafety::Yes) may retry (nothing was sent, or the server asked for it),
/// [`No`](RetrySafety::No) never retries (a definite answer: a 404 is `No`), and
/// [`Maybe`](RetrySafety::Maybe) ("the request may have reached the server": a reset, a timeout)
/// follows the call's [`Idempotency`](crate::classify::Idempotency): retried for an idempotent
/// call, never for one declared not idempotent, and for an undeclared one only when the
/// [`Fault`] is [`Fault::Server`].
///
/// ```
/// use retry_core::RetrySafety;
/// assert_eq!(RetrySafety::default(), RetrySafety::Maybe);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RetrySafety {
    /// The operation may be retried.
    Yes,
    /// The operation must not be retried.
    No,
    /// Unknown: the request may have reached the server. Retried as the call's idempotency
    /// says; for an undeclared call only when the fault lies with the server.
    #[default]
    Maybe,
}

/// Which side of the call an error is attributed to (Smithy's `HasFault`).
///
/// ```
/// use retry_core::Fault;
/// assert_eq!(Fault::default(), Fault::Unknown);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fault {
    /// The request was wrong: sending it again will not help.
    Client,
    /// The service failed to handle a valid request.
    Server,
    /// Nothing is known about the fault.
    #[default]
    Unknown,
}

/// An error that describes its own retryability.
///
/// Every method has a default, so `impl RetryInfo for MyError {}` compiles and means "nothing is
/// known" ([`RetrySafety::Maybe`], [`Fault::Unknown`]): such an error is not retried. Derive it
/// with `#[derive(RetryInfo)]` (feature `macros`) to describe each variant with attributes.
///
/// ```
/// use retry_core::{Fault, RetryInfo, RetrySafety};
/// use std::time::Duration;
///
/// #[derive(Debug)]
/// enum StoreError {
///     Throttled { retry_after: Option<Duration> },
///     NotFound,
/// }
///
/// impl RetryInfo for StoreError {
///     fn retry_safety(&self) -> RetrySafety {
///         match self {
///             StoreError::Throttled { .. } => RetrySafety::Yes,
///             StoreError::NotFound => RetrySafety::No,
///         }
///     }
///     fn is_throttling(&self) -> bool {
///         matches!(self, StoreError::Throttled { .. })
///     }
///     fn retry_after(&self) -> Option<Duration> {
///         match self {
///             StoreError::Throttled { retry_after } => *retry_after,
///             StoreError::NotFound => None,
///         }
///     }
///     fn fault(&self) -> Fault {
///         match self {
///             StoreError::Throttled { .. } => Fault::Server,
///             StoreError::NotFound => Fault::Client,
///         }
///     }
/// }
///
/// assert!(StoreError::Throttled { retry_after: None }.is_throttling());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not describe its retryability: it does not implement `RetryInfo`",
    label = "`RetryInfo` is not implemented for `{Self}`",
    note = "derive it: `#[derive(retry_core::RetryInfo)]` and mark variants with `#[retry(transient)]`, `#[retry(throttling)]`, `#[retry(never)]`, ...",
    note = "or, for an error type of your own crate, implement `retry_core::RetryInfo` for it (every method has a default) and override what you need",
    note = "for `anyhow::Error`, `Box<dyn Error + Send + Sync>` and other type-erased errors: `#[retryable(classifier = retry_core::classify::DynErrorClassifier)]` classifies by the source chain",
    note = "or pass a classifier that does not need it: `#[retryable(classifier = ...)]` / `#[retryable(retry_if = ...)]`"
)]
pub trait RetryInfo {
    /// Whether the failed operation may be sent again. Default: [`RetrySafety::Maybe`].
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Maybe
    }

    /// Whether the service asked the client to slow down (HTTP 429, `ThrottlingException`, ...).
    /// Throttling errors engage the adaptive rate limiter. Default: `false`.
    fn is_throttling(&self) -> bool {
        false
    }

    /// Whether the attempt timed out. A retry after a timeout costs more quota. Default: `false`.
    fn is_timeout(&self) -> bool {
        false
    }

    /// How long the service asked the client to wait before the next attempt. Default: `None`.
    fn retry_after(&self) -> Option<Duration> {
        None
    }

    /// Which side the error is attributed to. Default: [`Fault::Unknown`].
    fn fault(&self) -> Fault {
        Fault::Unknown
    }
}

/// tokio's timeout error: the attempt timed out, and is retried as a timeout (as the AWS SDKs
/// retry timeouts). The timer may have cut it after the request reached the server, so its
/// safety is [`RetrySafety::Maybe`] with the fault the server's (which [`RetryInfoClassifier`]
/// retries): a classifier guarding requests that must not run twice can tell it from a failure
/// that surely sent nothing, such as a refused connection ([`RetrySafety::Yes`]).
///
/// [`RetryInfoClassifier`]: crate::classify::RetryInfoClassifier
///
/// ```
/// use retry_core::{Fault, RetryInfo, RetrySafety};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let elapsed = tokio::time::timeout(std::time::Duration::ZERO, std::future::pending::<()>())
///     .await
///     .unwrap_err();
/// assert!(elapsed.is_timeout());
/// assert_eq!((elapsed.retry_safety(), elapsed.fault()), (RetrySafety::Maybe, Fault::Server));
/// # }
/// ```
impl RetryInfo for tokio::time::error::Elapsed {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Maybe
    }

    fn is_timeout(&self) -> bool {
        true
    }

    fn fault(&self) -> Fault {
        Fault::Server
    }
}

macro_rules! delegate_retry_info {
    ($($ty:ty),*) => {$(
        /// Delegates to the wrapped error.
        impl<E: RetryInfo + ?Sized> RetryInfo for $ty {
            fn retry_safety(&self) -> RetrySafety {
                (**self).retry_safety()
            }
            fn is_throttling(&self) -> bool {
                (**self).is_throttling()
            }
            fn is_timeout(&self) -> bool {
                (**self).is_timeout()
            }
            fn retry_after(&self) -> Option<Duration> {
                (**self).retry_after()
            }
            fn fault(&self) -> Fault {
                (**self).fault()
            }
        }
    )*};
}

delegate_retry_info!(Box<E>, Arc<E>, &E);
