//! Running several classifiers in priority order.

use std::fmt;
use std::sync::Arc;

use super::{ClassifierPriority, ClassifyRetry, Idempotency, RetryAction};

/// Classifiers run in priority order (lower first). A verdict other than
/// [`NoActionIndicated`](RetryAction::NoActionIndicated) overrides the ones before it, and
/// [`RetryForbidden`](RetryAction::RetryForbidden) stops the chain (the smithy-rs RFC
/// "User-configurable retry classification"). Classifiers of equal priority run in the order
/// they were added.
///
/// Build a chain once (a client field, a `static`) and share it: classifying does not allocate.
///
/// ```
/// use retry_core::classify::{ClassifierChain, FnClassifier, RetryInfoClassifier};
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
///
/// let chain = ClassifierChain::<(), std::io::Error>::new()
///     .with(RetryInfoClassifier)
///     .with(FnClassifier::new("no permission retries", |outcome: &Result<(), std::io::Error>| {
///         match outcome {
///             Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => RetryAction::RetryForbidden,
///             _ => RetryAction::NoActionIndicated,
///         }
///     }));
/// let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
/// assert!(chain.classify(&Err(refused)).should_retry());
/// ```
pub struct ClassifierChain<T, E> {
    classifiers: Vec<Arc<dyn ClassifyRetry<T, E>>>,
}

impl<T, E> ClassifierChain<T, E> {
    /// An empty chain: it indicates no action for every outcome.
    ///
    /// ```
    /// use retry_core::classify::ClassifierChain;
    /// use retry_core::{ClassifyRetry, RetryAction};
    /// let chain = ClassifierChain::<(), ()>::new();
    /// assert_eq!(chain.classify(&Err(())), RetryAction::NoActionIndicated);
    /// ```
    pub fn new() -> Self {
        Self {
            classifiers: Vec::new(),
        }
    }

    /// Adds a classifier at its own [`priority`](ClassifyRetry::priority).
    ///
    /// ```
    /// use retry_core::classify::{ClassifierChain, RetryInfoClassifier};
    /// let chain = ClassifierChain::<(), std::io::Error>::new().with(RetryInfoClassifier);
    /// assert_eq!(chain.len(), 1);
    /// ```
    pub fn with(mut self, classifier: impl ClassifyRetry<T, E> + 'static) -> Self {
        self.push(Arc::new(classifier));
        self
    }

    /// Adds a shared classifier at its own priority.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use retry_core::classify::{ClassifierChain, RetryInfoClassifier};
    /// let mut chain = ClassifierChain::<(), std::io::Error>::new();
    /// chain.push(Arc::new(RetryInfoClassifier));
    /// assert!(!chain.is_empty());
    /// ```
    pub fn push(&mut self, classifier: Arc<dyn ClassifyRetry<T, E>>) {
        let priority = classifier.priority();
        let at = self
            .classifiers
            .partition_point(|existing| existing.priority() <= priority);
        self.classifiers.insert(at, classifier);
    }

    /// The number of classifiers.
    pub fn len(&self) -> usize {
        self.classifiers.len()
    }

    /// Whether the chain has no classifier.
    pub fn is_empty(&self) -> bool {
        self.classifiers.is_empty()
    }

    /// The names of the classifiers, in the order they run.
    ///
    /// ```
    /// use retry_core::classify::{ClassifierChain, RetryInfoClassifier, TransientErrorClassifier};
    /// let chain = ClassifierChain::<(), std::io::Error>::new()
    ///     .with(TransientErrorClassifier)
    ///     .with(RetryInfoClassifier);
    /// assert_eq!(chain.names().collect::<Vec<_>>(), ["retry info", "transient error"]);
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.classifiers.iter().map(|c| c.name())
    }
}

impl<T, E> Default for ClassifierChain<T, E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, E> Clone for ClassifierChain<T, E> {
    fn clone(&self) -> Self {
        Self {
            classifiers: self.classifiers.clone(),
        }
    }
}

impl<T, E> fmt::Debug for ClassifierChain<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.classifiers.iter().map(|c| (c.name(), c.priority())))
            .finish()
    }
}

impl<T, E> ClassifyRetry<T, E> for ClassifierChain<T, E> {
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        self.classify_for(outcome, Idempotency::Undeclared)
    }

    /// Every classifier in the chain is told the call's idempotency.
    fn classify_for(&self, outcome: &Result<T, E>, idempotency: Idempotency) -> RetryAction {
        let mut verdict = RetryAction::NoActionIndicated;
        for classifier in &self.classifiers {
            match classifier.classify_for(outcome, idempotency) {
                RetryAction::NoActionIndicated => {}
                RetryAction::RetryForbidden => return RetryAction::RetryForbidden,
                action => verdict = action,
            }
        }
        verdict
    }

    fn name(&self) -> &'static str {
        "chain"
    }

    fn priority(&self) -> ClassifierPriority {
        self.classifiers
            .first()
            .map_or_else(ClassifierPriority::default, |c| c.priority())
    }
}
