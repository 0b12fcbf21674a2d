//! The classifier trait: a verdict on one attempt's outcome.

use std::sync::Arc;

use super::{ClassifierPriority, Idempotency, RetryAction};

/// Decides whether an attempt's outcome should be retried.
///
/// A classifier sees the whole outcome, `Ok` values included: a waiter retries while the resource
/// it polls is still pending. Classifiers are combined in a [`ClassifierChain`](super::ClassifierChain)
/// ordered by [`priority`](Self::priority).
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
///
/// /// Retries while a job is still running.
/// struct UntilDone;
///
/// impl ClassifyRetry<&'static str, std::io::Error> for UntilDone {
///     fn classify(&self, outcome: &Result<&'static str, std::io::Error>) -> RetryAction {
///         match outcome {
///             Ok(state) if *state == "running" => RetryAction::retryable(ErrorKind::Transient),
///             _ => RetryAction::NoActionIndicated,
///         }
///     }
///     fn name(&self) -> &'static str {
///         "until done"
///     }
/// }
///
/// assert!(UntilDone.classify(&Ok("running")).should_retry());
/// ```
pub trait ClassifyRetry<T, E>: Send + Sync {
    /// The verdict on one attempt's outcome.
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction;

    /// The verdict on one attempt's outcome, for a call whose [`Idempotency`] is `idempotency`:
    /// what the drivers call. Default: [`classify`](Self::classify), whatever the idempotency.
    /// The built-in classifiers of errors that may have reached the server
    /// ([`RetryInfoClassifier`](super::RetryInfoClassifier),
    /// [`DynErrorClassifier`](super::DynErrorClassifier),
    /// [`TransientErrorClassifier`](super::TransientErrorClassifier)) and
    /// [`ClassifierChain`](super::ClassifierChain) override it; a classifier that wraps one
    /// should forward it.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] { // tower's timeout error
    /// use retry_core::classify::{Idempotency, RetryInfoClassifier};
    /// use retry_core::{ClassifyRetry, RetryAction};
    /// let cut: Result<(), tower::timeout::error::Elapsed> = Err(tower::timeout::error::Elapsed::new());
    /// assert_eq!(RetryInfoClassifier.classify_for(&cut, Idempotency::NotIdempotent), RetryAction::RetryForbidden);
    /// assert!(RetryInfoClassifier.classify(&cut).should_retry()); // undeclared: the server's fault
    /// # }
    /// ```
    #[inline(always)]
    fn classify_for(&self, outcome: &Result<T, E>, idempotency: Idempotency) -> RetryAction {
        let _ = idempotency;
        self.classify(outcome)
    }

    /// A name for logs.
    fn name(&self) -> &'static str;

    /// Where this classifier runs in a chain. Default: after every built-in.
    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::default()
    }
}

macro_rules! delegate_classifier {
    ($($ty:ty),*) => {$(
        /// Delegates to the wrapped classifier.
        impl<T, E, C: ClassifyRetry<T, E> + ?Sized> ClassifyRetry<T, E> for $ty {
            fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
                (**self).classify(outcome)
            }
            #[inline]
            fn classify_for(&self, outcome: &Result<T, E>, idempotency: Idempotency) -> RetryAction {
                (**self).classify_for(outcome, idempotency)
            }
            fn name(&self) -> &'static str {
                (**self).name()
            }
            fn priority(&self) -> ClassifierPriority {
                (**self).priority()
            }
        }
    )*};
}

delegate_classifier!(&C, Box<C>, Arc<C>);

/// A classifier made from a closure, with a name and a priority.
///
/// ```
/// use retry_core::classify::{ClassifierPriority, FnClassifier};
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
///
/// let retry_conflicts = FnClassifier::new("conflicts", |outcome: &Result<(), u16>| match outcome {
///     Err(409) => RetryAction::retryable(ErrorKind::Transient),
///     _ => RetryAction::NoActionIndicated,
/// })
/// .with_priority(ClassifierPriority::run_after(ClassifierPriority::retry_info()));
/// assert!(retry_conflicts.classify(&Err(409)).should_retry());
/// ```
#[derive(Clone)]
pub struct FnClassifier<F> {
    name: &'static str,
    priority: ClassifierPriority,
    classify: F,
}

impl<F> FnClassifier<F> {
    /// A classifier named `name` that runs `classify`, at the default priority.
    ///
    /// ```
    /// let c = retry_core::classify::FnClassifier::new("never", |_: &Result<(), ()>| {
    ///     retry_core::RetryAction::RetryForbidden
    /// });
    /// # let _ = c;
    /// ```
    pub fn new(name: &'static str, classify: F) -> Self {
        Self {
            name,
            priority: ClassifierPriority::default(),
            classify,
        }
    }

    /// Places the classifier in a chain.
    ///
    /// ```
    /// use retry_core::classify::{ClassifierPriority, FnClassifier};
    /// use retry_core::{ClassifyRetry, RetryAction};
    /// let c = FnClassifier::new("first", |_: &Result<(), ()>| RetryAction::NoActionIndicated)
    ///     .with_priority(ClassifierPriority::run_before(ClassifierPriority::http_status()));
    /// assert!(c.priority() < ClassifierPriority::http_status());
    /// ```
    pub fn with_priority(mut self, priority: ClassifierPriority) -> Self {
        self.priority = priority;
        self
    }
}

impl<T, E, F> ClassifyRetry<T, E> for FnClassifier<F>
where
    F: Fn(&Result<T, E>) -> RetryAction + Send + Sync,
{
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        (self.classify)(outcome)
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn priority(&self) -> ClassifierPriority {
        self.priority
    }
}

impl<F> std::fmt::Debug for FnClassifier<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnClassifier")
            .field("name", &self.name)
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}
