//! A gRPC call's own deadline, as tonic reports it: `TimeoutExpired`, and the `CANCELLED` status
//! "Timeout expired" a tonic client makes of it.

use std::error::Error;

use tonic::{Status, TimeoutExpired};

use crate::info::{RetryInfo, RetrySafety};

/// The deadline of a gRPC call expired on the client: never retried.
///
/// tonic's `Channel` gives every call the shorter of its `grpc-timeout` (set with
/// `Request::set_timeout`) and the endpoint's `Endpoint::timeout`, and fails the call with
/// `TimeoutExpired` when it passes; a tonic client turns that into the status `CANCELLED`
/// "Timeout expired" (not `DEADLINE_EXCEEDED`). In gRPC that deadline is the call's: "gRPC's
/// call deadline applies across all attempts for a given RPC" (gRFC A6, "Maximum Number of
/// Retries"), so once it has passed no attempt may follow. Under a
/// [`RetryLayer`](crate::tower::RetryLayer) the channel gives every attempt the call's whole
/// deadline (the request's `grpc-timeout` is sent again unchanged), so an attempt that ran out of
/// it has used up the call's.
///
/// A per-attempt timeout is another thing: put tower's `TimeoutLayer` under the `RetryLayer`
/// (its `Elapsed` is retried as a timeout), or cut the attempts of a `#[retryable]` fn with
/// `attempt_timeout`.
///
/// ```
/// use retry_core::classify::DynErrorClassifier;
/// use retry_core::{RetryAction, RetryInfo, RetrySafety};
///
/// let expired = tonic::TimeoutExpired(());
/// assert_eq!(expired.retry_safety(), RetrySafety::No);
/// assert!(expired.is_timeout());
/// let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(expired);
/// assert_eq!(DynErrorClassifier::classify_error(boxed.as_ref()), RetryAction::RetryForbidden);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
impl RetryInfo for TimeoutExpired {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::No
    }

    fn is_timeout(&self) -> bool {
        true
    }
}

/// Whether `status` is a tonic client's report of its call's deadline: a `TimeoutExpired` among
/// its causes (the status `CANCELLED` "Timeout expired" made by `Status::from_error`).
pub(crate) fn deadline_expired(status: &Status) -> bool {
    let mut cause = status.source();
    while let Some(error) = cause {
        if error.is::<TimeoutExpired>() {
            return true;
        }
        cause = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{RetryAction, RetryInfoClassifier};
    use tonic::Code;

    #[test]
    fn the_status_made_of_an_expired_deadline_is_cancelled_and_not_retried() {
        let status = Status::from_error(Box::new(TimeoutExpired(())));
        assert_eq!(
            (status.code(), status.message()),
            (Code::Cancelled, "Timeout expired")
        );
        assert!(deadline_expired(&status));
        assert!(status.is_timeout());
        assert_eq!(
            RetryInfoClassifier::classify_error(&status),
            RetryAction::RetryForbidden
        );
    }

    #[test]
    fn other_cancellations_are_no_deadline() {
        let status = Status::cancelled("Timeout expired");
        assert!(!deadline_expired(&status), "a message is no cause");
        assert!(!status.is_timeout());
    }
}
