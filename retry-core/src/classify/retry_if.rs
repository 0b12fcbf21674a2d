//! A classifier from a predicate on the error: `#[retryable(retry_if = ...)]`.

use super::{ClassifierPriority, ClassifyRetry, ErrorKind, RetryAction};

/// Retries exactly the errors for which a predicate returns `true` (as transient errors) and
/// forbids retrying the others. `Ok` outcomes are never retried.
///
/// ```
/// use retry_core::{ClassifyRetry, RetryAction};
/// use retry_core::classify::RetryIf;
///
/// fn is_conflict(status: &u16) -> bool {
///     *status == 409
/// }
/// let classifier = RetryIf::new(is_conflict);
/// assert!(ClassifyRetry::<(), u16>::classify(&classifier, &Err(409)).should_retry());
/// assert_eq!(ClassifyRetry::<(), u16>::classify(&classifier, &Err(400)), RetryAction::RetryForbidden);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RetryIf<F> {
    predicate: F,
}

impl<F> RetryIf<F> {
    /// A classifier that retries the errors `predicate` accepts.
    ///
    /// ```
    /// let c = retry_core::classify::RetryIf::new(|e: &std::io::Error| e.kind() == std::io::ErrorKind::Other);
    /// # let _ = c;
    /// ```
    pub fn new(predicate: F) -> Self {
        Self { predicate }
    }
}

impl<T, E, F> ClassifyRetry<T, E> for RetryIf<F>
where
    F: Fn(&E) -> bool + Send + Sync,
{
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        match outcome {
            Ok(_) => RetryAction::NoActionIndicated,
            Err(error) if (self.predicate)(error) => RetryAction::retryable(ErrorKind::Transient),
            Err(_) => RetryAction::RetryForbidden,
        }
    }

    fn name(&self) -> &'static str {
        "retry_if"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::run_after(ClassifierPriority::transient_error())
    }
}
