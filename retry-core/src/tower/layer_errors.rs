//! The errors of tower's own layers under a [`RetryLayer`](super::RetryLayer): `TimeoutLayer`'s
//! `Elapsed` and `LoadShedLayer`'s `Overloaded`, which reach the retry layer inside a `BoxError`.

use ::tower::load_shed::error::Overloaded;
use ::tower::timeout::error::Elapsed;

use crate::info::{Fault, RetryInfo, RetrySafety};

/// tower's `TimeoutLayer` cut the attempt: retried as a timeout (it costs more quota), as the AWS
/// SDKs retry timeouts. The timer may have struck after the request reached the server, so the
/// safety is [`RetrySafety::Maybe`] with the server's fault, which
/// [`RetryInfoClassifier`](crate::classify::RetryInfoClassifier) retries unless the request is not
/// idempotent (under `RetryLayer` a POST or a PATCH, by its method, or any request of a layer
/// declared [`idempotent(false)`](crate::tower::RetryLayer::idempotent)).
///
/// `TimeoutLayer`'s error is a `BoxError`: classify it with
/// [`DynErrorClassifier`](crate::classify::DynErrorClassifier), which finds the `Elapsed` in it.
///
/// ```
/// use retry_core::classify::DynErrorClassifier;
/// use retry_core::{ErrorKind, Fault, RetryAction, RetryInfo, RetrySafety};
///
/// let elapsed = tower::timeout::error::Elapsed::new();
/// assert!(elapsed.is_timeout());
/// assert_eq!((elapsed.retry_safety(), elapsed.fault()), (RetrySafety::Maybe, Fault::Server));
/// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(elapsed);
/// assert_eq!(
///     DynErrorClassifier::classify_error(boxed.as_ref()),
///     RetryAction::retryable(ErrorKind::Timeout)
/// );
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
impl RetryInfo for Elapsed {
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

/// tower's `LoadShedLayer` refused the call because the service under it was not ready: never
/// retried. Nothing was sent; the layer sheds so that the caller fails fast instead of queueing,
/// and a retry would turn the shedding back into queueing (a later attempt of the same call
/// waits for the same saturated service). This crate's own [`LoadShed`](crate::LoadShed) is
/// treated the same way.
///
/// ```
/// use retry_core::classify::DynErrorClassifier;
/// use retry_core::{RetryAction, RetryInfo, RetrySafety};
///
/// let shed = tower::load_shed::error::Overloaded::new();
/// assert_eq!(shed.retry_safety(), RetrySafety::No);
/// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(shed);
/// assert_eq!(DynErrorClassifier::classify_error(boxed.as_ref()), RetryAction::RetryForbidden);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
impl RetryInfo for Overloaded {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{ErrorKind, RetryAction, RetryInfoClassifier};

    #[test]
    fn elapsed_is_a_timeout_that_may_have_been_sent() {
        assert_eq!(
            RetryInfoClassifier::classify_error(&Elapsed::new()),
            RetryAction::retryable(ErrorKind::Timeout)
        );
        assert_eq!(Elapsed::new().retry_safety(), RetrySafety::Maybe);
    }

    #[test]
    fn overloaded_is_never_retried() {
        assert_eq!(
            RetryInfoClassifier::classify_error(&Overloaded::new()),
            RetryAction::RetryForbidden
        );
        assert!(!Overloaded::new().is_throttling());
    }
}
