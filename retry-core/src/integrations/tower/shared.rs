//! The settings every clone of a [`RetryService`](super::RetryService) and every call in flight
//! share: the strategy, the classifier and the request-copy hook.

/// A layer's strategy, classifier and request-copy hook, behind one `Arc`: a call takes one
/// reference count (its response future outlives the service's borrow), whatever the strategy
/// and the classifier hold.
#[derive(Debug)]
pub(super) struct Shared<S, C, P> {
    pub(super) strategy: S,
    pub(super) classifier: C,
    pub(super) copy: P,
}
