//! The settings every clone of a [`RetryService`](super::RetryService) and every call in flight
//! share: the strategy, the classifier, the request-copy hook, the shedding policy and the
//! declared idempotency.

use crate::classify::Idempotency;

/// A layer's strategy, classifier, request-copy hook and shedding policy, behind one `Arc`: a call takes one
/// reference count (its response future outlives the service's borrow), whatever the strategy
/// and the classifier hold.
#[derive(Debug)]
pub(super) struct Shared<S, C, P, L> {
    pub(super) strategy: S,
    pub(super) classifier: C,
    pub(super) copy: P,
    pub(super) shedding: L,
    /// The idempotency declared for every call; `None`: each request says its own.
    pub(super) idempotency: Option<Idempotency>,
}
