//! The classifier of service error codes such as `"ThrottlingException"`.

use std::borrow::Cow;
use std::sync::Arc;

use super::{ClassifierPriority, ClassifyRetry, ErrorKind, RetryAction};

/// An error that carries a service error code, such as AWS's `"ThrottlingException"`.
///
/// Implement it on your error type to use the [`ErrorCodeClassifier`]. The code is compared
/// exactly (case-sensitive) with the classifier's lists.
///
/// ```
/// use retry_core::classify::ProvideErrorCode;
///
/// struct ServiceError {
///     code: String,
/// }
///
/// impl ProvideErrorCode for ServiceError {
///     fn error_code(&self) -> Option<&str> {
///         Some(&self.code)
///     }
/// }
///
/// let error = ServiceError { code: "SlowDown".into() };
/// assert_eq!(error.error_code(), Some("SlowDown"));
/// ```
pub trait ProvideErrorCode {
    /// The service error code, if the error carries one.
    fn error_code(&self) -> Option<&str>;
}

macro_rules! delegate_error_code {
    ($($ty:ty),*) => {$(
        /// Delegates to the wrapped error.
        impl<E: ProvideErrorCode + ?Sized> ProvideErrorCode for $ty {
            fn error_code(&self) -> Option<&str> {
                (**self).error_code()
            }
        }
    )*};
}

delegate_error_code!(&E, Box<E>, Arc<E>);

/// A list of error codes: a borrowed `'static` list (the defaults, no allocation) or one the
/// user supplied.
#[derive(Debug, Clone)]
enum CodeList {
    Static(&'static [&'static str]),
    Owned(Vec<Cow<'static, str>>),
}

impl CodeList {
    fn owned<I, S>(codes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        CodeList::Owned(codes.into_iter().map(Into::into).collect())
    }

    /// Whether `code` is in the list: exact, case-sensitive, allocation-free.
    fn contains(&self, code: &str) -> bool {
        match self {
            CodeList::Static(codes) => codes.contains(&code),
            CodeList::Owned(codes) => codes.iter().any(|c| c == code),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        let (borrowed, owned) = match self {
            CodeList::Static(codes) => (*codes, &[][..]),
            CodeList::Owned(codes) => (&[][..], codes.as_slice()),
        };
        borrowed
            .iter()
            .copied()
            .chain(owned.iter().map(AsRef::as_ref))
    }
}

/// Two lists are equal when they hold the same codes in the same order, however stored.
impl PartialEq for CodeList {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for CodeList {}

/// Classifies errors by their service error code ([`ProvideErrorCode`]): a throttling-code list
/// and a transient-code list, both replaceable (the smithy-rs RFC "User-configurable retry
/// classification").
///
/// * A code in the throttling list retries as [`ErrorKind::Throttling`]. A code in both lists
///   counts as throttling.
/// * A code in the transient list retries as [`ErrorKind::Transient`].
/// * Any other code, an error without a code, and every `Ok` outcome indicate no action.
///
/// Codes are compared exactly (case-sensitive), and classification does not allocate. The
/// defaults are the AWS SDKs' lists, [`THROTTLING_ERROR_CODES`](Self::THROTTLING_ERROR_CODES)
/// and [`TRANSIENT_ERROR_CODES`](Self::TRANSIENT_ERROR_CODES).
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
/// use retry_core::classify::{ErrorCodeClassifier, ProvideErrorCode};
///
/// #[derive(Debug)]
/// struct ServiceError(&'static str);
///
/// impl ProvideErrorCode for ServiceError {
///     fn error_code(&self) -> Option<&str> {
///         Some(self.0)
///     }
/// }
///
/// let classifier = ErrorCodeClassifier::new();
/// let throttled: Result<(), ServiceError> = Err(ServiceError("ThrottlingException"));
/// assert_eq!(classifier.classify(&throttled), RetryAction::retryable(ErrorKind::Throttling));
/// let timed_out: Result<(), ServiceError> = Err(ServiceError("RequestTimeout"));
/// assert_eq!(classifier.classify(&timed_out), RetryAction::retryable(ErrorKind::Transient));
/// let denied: Result<(), ServiceError> = Err(ServiceError("AccessDenied"));
/// assert_eq!(classifier.classify(&denied), RetryAction::NoActionIndicated);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCodeClassifier {
    throttling: CodeList,
    transient: CodeList,
}

impl ErrorCodeClassifier {
    /// The error codes that mean "slow down" by default.
    ///
    /// Source: the AWS SDKs' throttling-error list (`aws-runtime`'s
    /// `THROTTLING_ERRORS` in the Rust SDK, botocore's `_THROTTLED_ERROR_CODES`).
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// assert!(ErrorCodeClassifier::THROTTLING_ERROR_CODES.contains(&"SlowDown"));
    /// ```
    pub const THROTTLING_ERROR_CODES: &'static [&'static str] = &[
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    ];

    /// The error codes of transient failures by default.
    ///
    /// Source: the AWS SDKs' transient-error list (`aws-runtime`'s
    /// `TRANSIENT_ERRORS` in the Rust SDK, botocore's `_TRANSIENT_ERROR_CODES`).
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// assert_eq!(
    ///     ErrorCodeClassifier::TRANSIENT_ERROR_CODES,
    ///     ["RequestTimeout", "RequestTimeoutException"]
    /// );
    /// ```
    pub const TRANSIENT_ERROR_CODES: &'static [&'static str] =
        &["RequestTimeout", "RequestTimeoutException"];

    /// A classifier with the AWS lists, [`THROTTLING_ERROR_CODES`](Self::THROTTLING_ERROR_CODES)
    /// and [`TRANSIENT_ERROR_CODES`](Self::TRANSIENT_ERROR_CODES). Does not allocate.
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// assert_eq!(ErrorCodeClassifier::new(), ErrorCodeClassifier::default());
    /// ```
    pub const fn new() -> Self {
        Self {
            throttling: CodeList::Static(Self::THROTTLING_ERROR_CODES),
            transient: CodeList::Static(Self::TRANSIENT_ERROR_CODES),
        }
    }

    /// Replaces the throttling-code list. An empty list turns throttling detection off.
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// let classifier = ErrorCodeClassifier::new().with_throttling_codes(["Busy", "TooFast"]);
    /// assert_eq!(classifier.throttling_codes().collect::<Vec<_>>(), ["Busy", "TooFast"]);
    /// ```
    pub fn with_throttling_codes<I, S>(mut self, codes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        self.throttling = CodeList::owned(codes);
        self
    }

    /// Replaces the transient-code list. An empty list turns transient detection off.
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// let classifier =
    ///     ErrorCodeClassifier::new().with_transient_codes(vec![String::from("Flaky")]);
    /// assert_eq!(classifier.transient_codes().collect::<Vec<_>>(), ["Flaky"]);
    /// ```
    pub fn with_transient_codes<I, S>(mut self, codes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Cow<'static, str>>,
    {
        self.transient = CodeList::owned(codes);
        self
    }

    /// The throttling codes, in order.
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// assert!(ErrorCodeClassifier::new().throttling_codes().any(|c| c == "Throttling"));
    /// ```
    pub fn throttling_codes(&self) -> impl Iterator<Item = &str> {
        self.throttling.iter()
    }

    /// The transient codes, in order.
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// assert!(ErrorCodeClassifier::new().transient_codes().any(|c| c == "RequestTimeout"));
    /// ```
    pub fn transient_codes(&self) -> impl Iterator<Item = &str> {
        self.transient.iter()
    }

    /// The verdict on one error code: throttling list first, then transient list. Does not
    /// allocate.
    ///
    /// ```
    /// use retry_core::classify::ErrorCodeClassifier;
    /// use retry_core::{ErrorKind, RetryAction};
    /// let classifier = ErrorCodeClassifier::new();
    /// assert_eq!(classifier.classify_code("SlowDown"), RetryAction::retryable(ErrorKind::Throttling));
    /// assert_eq!(classifier.classify_code("slowdown"), RetryAction::NoActionIndicated);
    /// ```
    pub fn classify_code(&self, code: &str) -> RetryAction {
        if self.throttling.contains(code) {
            RetryAction::retryable(ErrorKind::Throttling)
        } else if self.transient.contains(code) {
            RetryAction::retryable(ErrorKind::Transient)
        } else {
            RetryAction::NoActionIndicated
        }
    }

    /// The verdict on one error: [`classify_code`](Self::classify_code) of its code, or no
    /// action if it has none.
    ///
    /// ```
    /// use retry_core::classify::{ErrorCodeClassifier, ProvideErrorCode};
    /// use retry_core::RetryAction;
    ///
    /// struct NoCode;
    /// impl ProvideErrorCode for NoCode {
    ///     fn error_code(&self) -> Option<&str> {
    ///         None
    ///     }
    /// }
    ///
    /// assert_eq!(ErrorCodeClassifier::new().classify_error(&NoCode), RetryAction::NoActionIndicated);
    /// ```
    pub fn classify_error<E: ProvideErrorCode + ?Sized>(&self, error: &E) -> RetryAction {
        match error.error_code() {
            Some(code) => self.classify_code(code),
            None => RetryAction::NoActionIndicated,
        }
    }
}

impl Default for ErrorCodeClassifier {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, E: ProvideErrorCode> ClassifyRetry<T, E> for ErrorCodeClassifier {
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        match outcome {
            Ok(_) => RetryAction::NoActionIndicated,
            Err(error) => self.classify_error(error),
        }
    }

    fn name(&self) -> &'static str {
        "error code"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::error_code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Coded(Option<&'static str>);

    impl ProvideErrorCode for Coded {
        fn error_code(&self) -> Option<&str> {
            self.0
        }
    }

    fn err(code: &'static str) -> Result<(), Coded> {
        Err(Coded(Some(code)))
    }

    /// The AWS SDKs' throttling codes, written out from their source (smithy-rs `aws-runtime`'s
    /// `THROTTLING_ERRORS`, botocore's `_THROTTLED_ERROR_CODES`), not read back from the list
    /// under test.
    const AWS_THROTTLING_CODES: [&str; 14] = [
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    ];

    /// The AWS SDKs' transient codes (`aws-runtime`'s `TRANSIENT_ERRORS`).
    const AWS_TRANSIENT_CODES: [&str; 2] = ["RequestTimeout", "RequestTimeoutException"];

    #[test]
    fn every_aws_throttling_code_is_throttling() {
        let classifier = ErrorCodeClassifier::default();
        for code in AWS_THROTTLING_CODES {
            assert_eq!(
                classifier.classify(&err(code)),
                RetryAction::retryable(ErrorKind::Throttling),
                "{code}"
            );
        }
    }

    #[test]
    fn every_aws_transient_code_is_transient() {
        let classifier = ErrorCodeClassifier::default();
        for code in AWS_TRANSIENT_CODES {
            assert_eq!(
                classifier.classify(&err(code)),
                RetryAction::retryable(ErrorKind::Transient),
                "{code}"
            );
        }
    }

    #[test]
    fn the_default_lists_are_the_aws_lists_and_nothing_more() {
        assert_eq!(
            ErrorCodeClassifier::THROTTLING_ERROR_CODES,
            AWS_THROTTLING_CODES
        );
        assert_eq!(
            ErrorCodeClassifier::TRANSIENT_ERROR_CODES,
            AWS_TRANSIENT_CODES
        );
    }

    #[test]
    fn unknown_missing_and_ok_indicate_nothing() {
        let classifier = ErrorCodeClassifier::new();
        for code in [
            "AccessDenied",
            "",
            "throttling",
            "THROTTLING",
            " Throttling",
            "Throttling ",
        ] {
            assert_eq!(
                classifier.classify(&err(code)),
                RetryAction::NoActionIndicated,
                "{code:?}"
            );
        }
        assert_eq!(
            classifier.classify(&Err::<(), _>(Coded(None))),
            RetryAction::NoActionIndicated
        );
        assert_eq!(
            classifier.classify(&Ok::<(), Coded>(())),
            RetryAction::NoActionIndicated
        );
    }

    #[test]
    fn replaced_lists_replace_the_defaults() {
        let classifier = ErrorCodeClassifier::new()
            .with_throttling_codes(["Busy"])
            .with_transient_codes(vec![String::from("Flaky")]);
        assert_eq!(
            classifier.classify(&err("Busy")),
            RetryAction::retryable(ErrorKind::Throttling)
        );
        assert_eq!(
            classifier.classify(&err("Flaky")),
            RetryAction::retryable(ErrorKind::Transient)
        );
        assert_eq!(
            classifier.classify(&err("ThrottlingException")),
            RetryAction::NoActionIndicated
        );
        assert_eq!(
            classifier.classify(&err("RequestTimeout")),
            RetryAction::NoActionIndicated
        );
    }

    #[test]
    fn empty_lists_turn_detection_off() {
        let classifier = ErrorCodeClassifier::new()
            .with_throttling_codes(Vec::<String>::new())
            .with_transient_codes(Vec::<&'static str>::new());
        assert_eq!(classifier.throttling_codes().count(), 0);
        assert_eq!(
            classifier.classify(&err("Throttling")),
            RetryAction::NoActionIndicated
        );
    }

    #[test]
    fn equality_compares_codes_not_storage() {
        let copied = ErrorCodeClassifier::new()
            .with_throttling_codes(ErrorCodeClassifier::THROTTLING_ERROR_CODES.iter().copied());
        assert_eq!(copied, ErrorCodeClassifier::new());
        assert_ne!(
            copied.with_transient_codes(["RequestTimeout"]),
            ErrorCodeClassifier::new()
        );
    }

    #[test]
    fn a_code_in_both_lists_is_throttling() {
        let classifier = ErrorCodeClassifier::new()
            .with_throttling_codes(["Both"])
            .with_transient_codes(["Both"]);
        assert_eq!(
            classifier.classify_code("Both"),
            RetryAction::retryable(ErrorKind::Throttling)
        );
    }

    #[test]
    fn delegates_through_references_boxes_and_arcs() {
        let classifier = ErrorCodeClassifier::new();
        let coded = Coded(Some("SlowDown"));
        let throttling = RetryAction::retryable(ErrorKind::Throttling);
        assert_eq!(classifier.classify(&Err::<(), _>(&coded)), throttling);
        assert_eq!(
            classifier.classify(&Err::<(), _>(Box::new(Coded(Some("SlowDown"))))),
            throttling
        );
        assert_eq!(
            classifier.classify(&Err::<(), _>(Arc::new(Coded(Some("SlowDown"))))),
            throttling
        );
        let boxed: Box<dyn ProvideErrorCode> = Box::new(Coded(Some("SlowDown")));
        assert_eq!(classifier.classify_error(&boxed), throttling);
    }

    #[test]
    fn name_and_priority() {
        let classifier = ErrorCodeClassifier::new();
        assert_eq!(ClassifyRetry::<(), Coded>::name(&classifier), "error code");
        assert_eq!(
            ClassifyRetry::<(), Coded>::priority(&classifier),
            ClassifierPriority::error_code()
        );
    }
}
