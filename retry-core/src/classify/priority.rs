//! The order in which classifiers run.

use std::cmp::Ordering;
use std::fmt;

/// Where a classifier runs in a chain. Lower runs first; a later verdict overrides an earlier one.
///
/// The values of the built-in classifiers are the smithy-rs reference priorities (the RFC
/// "User-configurable retry classification") plus the error-code classifier: HTTP status 0,
/// error codes 9, modeled errors ([`RetryInfo`]) 10, transient errors 20. Users do not pick
/// numbers: they place a classifier relative to a built-in one with
/// [`run_before`](Self::run_before) or [`run_after`](Self::run_after).
///
/// [`RetryInfo`]: crate::RetryInfo
///
/// ```
/// use retry_core::classify::ClassifierPriority;
/// let mine = ClassifierPriority::run_after(ClassifierPriority::retry_info());
/// assert!(mine > ClassifierPriority::retry_info());
/// assert!(mine < ClassifierPriority::transient_error());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClassifierPriority {
    value: i32,
}

impl ClassifierPriority {
    /// The HTTP status-code classifier's priority (0): it runs first, so that what the error
    /// itself says can override a bare status code.
    ///
    /// ```
    /// # use retry_core::classify::ClassifierPriority;
    /// assert!(ClassifierPriority::http_status() < ClassifierPriority::error_code());
    /// ```
    pub const fn http_status() -> Self {
        Self { value: 0 }
    }

    /// The error-code classifier's priority (9).
    ///
    /// ```
    /// # use retry_core::classify::ClassifierPriority;
    /// assert!(ClassifierPriority::error_code() < ClassifierPriority::retry_info());
    /// ```
    pub const fn error_code() -> Self {
        Self { value: 9 }
    }

    /// The modeled-error ([`RetryInfo`](crate::RetryInfo)) classifier's priority (10).
    ///
    /// ```
    /// # use retry_core::classify::ClassifierPriority;
    /// assert!(ClassifierPriority::retry_info() < ClassifierPriority::transient_error());
    /// ```
    pub const fn retry_info() -> Self {
        Self { value: 10 }
    }

    /// The transient-error classifier's priority (20): it runs last of the built-ins.
    ///
    /// ```
    /// # use retry_core::classify::ClassifierPriority;
    /// assert!(ClassifierPriority::transient_error() > ClassifierPriority::retry_info());
    /// ```
    pub const fn transient_error() -> Self {
        Self { value: 20 }
    }

    /// Runs just before `other` (its verdict can be overridden by `other`).
    ///
    /// ```
    /// # use retry_core::classify::ClassifierPriority;
    /// let p = ClassifierPriority::run_before(ClassifierPriority::retry_info());
    /// assert!(p < ClassifierPriority::retry_info());
    /// ```
    pub const fn run_before(other: Self) -> Self {
        Self {
            value: other.value.saturating_sub(1),
        }
    }

    /// Runs just after `other` (its verdict overrides `other`'s).
    ///
    /// ```
    /// # use retry_core::classify::ClassifierPriority;
    /// let p = ClassifierPriority::run_after(ClassifierPriority::transient_error());
    /// assert!(p > ClassifierPriority::transient_error());
    /// ```
    pub const fn run_after(other: Self) -> Self {
        Self {
            value: other.value.saturating_add(1),
        }
    }
}

/// A classifier that says nothing of its order runs after every built-in.
impl Default for ClassifierPriority {
    fn default() -> Self {
        Self::run_after(Self::transient_error())
    }
}

impl Ord for ClassifierPriority {
    fn cmp(&self, other: &Self) -> Ordering {
        self.value.cmp(&other.value)
    }
}

impl PartialOrd for ClassifierPriority {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for ClassifierPriority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClassifierPriority({})", self.value)
    }
}
