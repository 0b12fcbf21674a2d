//! Behaviour of `#[derive(RetryInfo)]`: what the five methods return for each attribute.

use retry_core::{Fault, RetryInfo, RetrySafety};
use std::io;
use std::time::Duration;

/// The five answers of a `RetryInfo`, to compare in one `assert_eq!`.
#[derive(Debug, PartialEq, Eq)]
struct Answers {
    safety: RetrySafety,
    throttling: bool,
    timeout: bool,
    after: Option<Duration>,
    fault: Fault,
}

fn answers(error: &impl RetryInfo) -> Answers {
    Answers {
        safety: error.retry_safety(),
        throttling: error.is_throttling(),
        timeout: error.is_timeout(),
        after: error.retry_after(),
        fault: error.fault(),
    }
}

/// The answers for a given safety and fault, flags off and no `retry_after`.
const fn plain(safety: RetrySafety, fault: Fault) -> Answers {
    Answers {
        safety,
        throttling: false,
        timeout: false,
        after: None,
        fault,
    }
}

/// What the trait's defaults answer.
const DEFAULTS: Answers = plain(RetrySafety::Maybe, Fault::Unknown);

#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error("slow down")]
    #[retry(throttling)]
    Throttled {
        code: u16,
        #[retry(after)]
        retry_after: Option<Duration>,
    },
    #[error("busy")]
    #[retry(throttling, fault = "client")]
    Busy(String, #[retry(after)] Duration),
    #[error("unavailable")]
    #[retry(transient)]
    Unavailable,
    #[error("timed out")]
    #[retry(timeout)]
    TimedOut,
    #[error("timed out and throttled")]
    #[retry(timeout, throttling)]
    Both,
    #[error("conflict")]
    #[retry(retryable)]
    Conflict,
    #[error("conflict, client side")]
    #[retry(retryable)]
    #[retry(fault = "client")]
    ClientConflict,
    #[error("corrupt")]
    #[retry(never)]
    Corrupt,
    #[error("corrupt on the server")]
    #[retry(never, fault = "server")]
    ServerCorrupt,
    #[error("not found")]
    #[retry(fault = "client")]
    NotFound,
    #[error("internal")]
    #[retry(fault = "server")]
    Internal,
    #[error("unknown")]
    Unknown,
    #[error("unknown, with a delay")]
    Delayed {
        #[retry(after)]
        after: Duration,
    },
    #[error(transparent)]
    #[retry(transparent)]
    Io(#[from] io::Error),
}

#[test]
fn throttling() {
    let error = StoreError::Throttled {
        code: 429,
        retry_after: Some(Duration::from_secs(3)),
    };
    assert_eq!(
        answers(&error),
        Answers {
            safety: RetrySafety::Yes,
            throttling: true,
            timeout: false,
            after: Some(Duration::from_secs(3)),
            fault: Fault::Server,
        }
    );
    let error = StoreError::Throttled {
        code: 429,
        retry_after: None,
    };
    assert_eq!(error.retry_after(), None);
}

#[test]
fn throttling_client_fault_with_duration_after() {
    let error = StoreError::Busy("queue full".into(), Duration::from_millis(250));
    assert_eq!(
        answers(&error),
        Answers {
            safety: RetrySafety::Yes,
            throttling: true,
            timeout: false,
            after: Some(Duration::from_millis(250)),
            fault: Fault::Client,
        }
    );
}

#[test]
fn transient() {
    // Retried, whoever's fault it is: its retries' reason is `transient`.
    assert_eq!(
        answers(&StoreError::Unavailable),
        plain(RetrySafety::Yes, Fault::Unknown)
    );
}

#[test]
fn timeout() {
    assert_eq!(
        answers(&StoreError::TimedOut),
        Answers {
            timeout: true,
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );
    assert_eq!(
        answers(&StoreError::Both),
        Answers {
            timeout: true,
            throttling: true,
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );
}

#[test]
fn retryable() {
    assert_eq!(
        answers(&StoreError::Conflict),
        plain(RetrySafety::Yes, Fault::Unknown)
    );
    // Keys from two attributes combine; a retryable client fault is retried (Smithy).
    assert_eq!(
        answers(&StoreError::ClientConflict),
        plain(RetrySafety::Yes, Fault::Client)
    );
}

#[test]
fn never() {
    assert_eq!(
        answers(&StoreError::Corrupt),
        plain(RetrySafety::No, Fault::Unknown)
    );
    assert_eq!(
        answers(&StoreError::ServerCorrupt),
        plain(RetrySafety::No, Fault::Server)
    );
}

#[test]
fn fault_alone() {
    // Smithy's rule: a client fault without a retry key is not retried.
    assert_eq!(
        answers(&StoreError::NotFound),
        plain(RetrySafety::No, Fault::Client)
    );
    // A server fault alone stays `Maybe` (retried because the fault is the server's).
    assert_eq!(
        answers(&StoreError::Internal),
        plain(RetrySafety::Maybe, Fault::Server)
    );
}

#[test]
fn no_attribute_is_the_default() {
    assert_eq!(answers(&StoreError::Unknown), DEFAULTS);
    assert_eq!(
        answers(&StoreError::Delayed {
            after: Duration::from_secs(1)
        }),
        Answers {
            after: Some(Duration::from_secs(1)),
            ..DEFAULTS
        }
    );
}

#[test]
fn transparent_delegates_to_io_error() {
    for kind in [
        io::ErrorKind::ConnectionReset,
        io::ErrorKind::TimedOut,
        io::ErrorKind::NotFound,
    ] {
        let inner = io::Error::from(kind);
        let expected = answers(&inner);
        assert_eq!(answers(&StoreError::from(inner)), expected, "{kind:?}");
    }
    assert!(StoreError::from(io::Error::from(io::ErrorKind::TimedOut)).is_timeout());
    assert_eq!(
        StoreError::from(io::Error::from(io::ErrorKind::NotFound)).retry_safety(),
        RetrySafety::No
    );
}

/// A hand-written `RetryInfo` with every answer away from the defaults, to see delegation.
#[derive(Debug)]
struct Custom;

impl RetryInfo for Custom {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
    fn is_throttling(&self) -> bool {
        true
    }
    fn is_timeout(&self) -> bool {
        true
    }
    fn retry_after(&self) -> Option<Duration> {
        Some(Duration::from_secs(7))
    }
    fn fault(&self) -> Fault {
        Fault::Client
    }
}

const CUSTOM: Answers = Answers {
    safety: RetrySafety::Yes,
    throttling: true,
    timeout: true,
    after: Some(Duration::from_secs(7)),
    fault: Fault::Client,
};

#[derive(Debug, RetryInfo)]
enum Generic<'a, E, T = ()> {
    #[retry(transparent)]
    Inner(E),
    #[retry(transparent)]
    Boxed {
        source: Box<E>,
    },
    #[retry(transparent)]
    Borrowed(&'a Custom),
    #[retry(throttling)]
    Throttled {
        payload: T,
        #[retry(after)]
        after: Duration,
    },
    Plain(T),
}

#[test]
fn generic_enum() {
    type G<'a> = Generic<'a, Custom, u8>;
    assert_eq!(answers(&G::Inner(Custom)), CUSTOM);
    assert_eq!(
        answers(&G::Boxed {
            source: Box::new(Custom)
        }),
        CUSTOM
    );
    assert_eq!(answers(&G::Borrowed(&Custom)), CUSTOM);
    let throttled = G::Throttled {
        payload: 1,
        after: Duration::from_secs(2),
    };
    if let G::Throttled { payload, .. } = &throttled {
        assert_eq!(*payload, 1);
    }
    assert_eq!(
        answers(&throttled),
        Answers {
            throttling: true,
            after: Some(Duration::from_secs(2)),
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );
    assert_eq!(answers(&G::Plain(1)), DEFAULTS);
    let io: Generic<'_, io::Error> = Generic::Inner(io::ErrorKind::TimedOut.into());
    assert!(io.is_timeout());
    let default_param: Generic<'_, Custom> = Generic::Throttled {
        payload: (),
        after: Duration::ZERO,
    };
    assert!(default_param.is_throttling());
}

#[derive(Debug, RetryInfo)]
#[retry(throttling)]
struct Throttled {
    #[retry(after)]
    retry_after: Option<Duration>,
    code: u16,
}

#[derive(Debug, RetryInfo)]
#[retry(timeout)]
struct TimedOut(#[retry(after)] Duration);

#[derive(Debug, RetryInfo)]
#[retry(fault = "client")]
struct BadRequest;

#[derive(Debug, RetryInfo)]
struct Opaque;

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
struct Wrapper<E>(E);

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
struct NamedWrapper {
    source: io::Error,
}

#[test]
fn structs() {
    let throttled = Throttled {
        retry_after: Some(Duration::from_secs(1)),
        code: 429,
    };
    assert_eq!(throttled.code, 429);
    assert_eq!(
        answers(&throttled),
        Answers {
            throttling: true,
            after: Some(Duration::from_secs(1)),
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );
    assert_eq!(
        answers(&TimedOut(Duration::from_millis(5))),
        Answers {
            timeout: true,
            after: Some(Duration::from_millis(5)),
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );
    assert_eq!(answers(&BadRequest), plain(RetrySafety::No, Fault::Client));
    assert_eq!(answers(&Opaque), DEFAULTS);
    assert_eq!(answers(&Wrapper(Custom)), CUSTOM);
    let reset = io::Error::from(io::ErrorKind::ConnectionReset);
    let expected = answers(&reset);
    assert_eq!(answers(&NamedWrapper { source: reset }), expected);
}

#[derive(Debug, RetryInfo)]
#[retry(transient)]
enum Defaults {
    /// Inherits `transient`.
    Reset,
    /// A variant's retry key replaces the enum's: not retried.
    #[retry(never)]
    Corrupt,
    /// A variant's `fault` replaces the fault; the enum's `transient` still applies.
    #[retry(fault = "client")]
    Rejected,
    /// `transparent` replaces everything.
    #[retry(transparent)]
    Inner(Custom),
}

#[derive(Debug, RetryInfo)]
#[retry(fault = "client")]
enum ClientDefaults {
    /// Inherits the client fault and so, with no retry key, is not retried.
    Invalid,
    /// Own retry key, enum's fault: retried (Smithy's retryable client error).
    #[retry(retryable)]
    Conflict,
    /// `throttling` implies a server fault, which wins over the enum's default fault.
    #[retry(throttling)]
    Throttled,
}

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
enum TransparentDefaults {
    /// Inherits `transparent`.
    Io(io::Error),
    /// Inherits `transparent`.
    Custom { inner: Custom },
    /// Own keys: not transparent.
    #[retry(never)]
    Closed,
}

#[test]
fn container_defaults() {
    assert_eq!(
        answers(&Defaults::Reset),
        plain(RetrySafety::Yes, Fault::Unknown)
    );
    assert_eq!(
        answers(&Defaults::Corrupt),
        plain(RetrySafety::No, Fault::Unknown)
    );
    assert_eq!(
        answers(&Defaults::Rejected),
        plain(RetrySafety::Yes, Fault::Client)
    );
    assert_eq!(answers(&Defaults::Inner(Custom)), CUSTOM);

    assert_eq!(
        answers(&ClientDefaults::Invalid),
        plain(RetrySafety::No, Fault::Client)
    );
    assert_eq!(
        answers(&ClientDefaults::Conflict),
        plain(RetrySafety::Yes, Fault::Client)
    );
    assert_eq!(
        answers(&ClientDefaults::Throttled),
        Answers {
            throttling: true,
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );

    let timed_out = io::Error::from(io::ErrorKind::TimedOut);
    let expected = answers(&timed_out);
    assert_eq!(answers(&TransparentDefaults::Io(timed_out)), expected);
    assert_eq!(
        answers(&TransparentDefaults::Custom { inner: Custom }),
        CUSTOM
    );
    assert_eq!(
        answers(&TransparentDefaults::Closed),
        plain(RetrySafety::No, Fault::Unknown)
    );
}

#[derive(Debug, RetryInfo)]
enum Uniform {
    #[retry(transient)]
    A,
    #[retry(transient)]
    B,
}

#[derive(Debug, RetryInfo)]
enum Never {}

#[test]
fn uniform_and_empty_enums() {
    for error in [Uniform::A, Uniform::B] {
        assert_eq!(answers(&error), plain(RetrySafety::Yes, Fault::Unknown));
    }
    fn assert_retry_info<T: RetryInfo>() {}
    assert_retry_info::<Never>();
}

#[test]
fn usable_as_trait_object() {
    let errors: Vec<Box<dyn RetryInfo>> = vec![
        Box::new(StoreError::Unavailable),
        Box::new(Throttled {
            retry_after: None,
            code: 503,
        }),
    ];
    assert!(errors.iter().all(|e| e.retry_safety() == RetrySafety::Yes));
}

// ---- #[retry(with = path)]: a foreign error described by a function ----------------------------

/// Stands for a foreign error type (`sqlx::Error`, ...): no `RetryInfo`, no newtype.
#[derive(Debug)]
enum DbError {
    PoolTimedOut,
    Deadlock,
    RowNotFound,
    SlowDown(Duration),
}

fn describe_db(error: &DbError) -> retry_core::classify::RetryDescription {
    use retry_core::classify::RetryDescription;
    match error {
        DbError::PoolTimedOut => RetryDescription::TIMEOUT,
        DbError::Deadlock => RetryDescription::TRANSIENT,
        DbError::RowNotFound => RetryDescription::CLIENT,
        DbError::SlowDown(after) => RetryDescription::THROTTLING.with_retry_after(*after),
    }
}

/// A description of the caller's own, derived.
#[derive(RetryInfo)]
enum CodeKind {
    #[retry(transient)]
    Busy,
    #[retry(never)]
    Invalid,
}

fn describe_code(code: &u16) -> CodeKind {
    if *code == 503 {
        CodeKind::Busy
    } else {
        CodeKind::Invalid
    }
}

#[derive(Debug, RetryInfo)]
#[retry(transient)]
enum AppError {
    /// The whole variant's single field.
    #[retry(with = describe_db)]
    Db(DbError),
    /// One field of several, marked; the enum's default (`transient`) does not apply.
    Http {
        #[retry(with = describe_code)]
        status: u16,
        #[allow(dead_code)] // a second field, not described
        body: String,
    },
    /// The enum's default.
    Other,
}

#[derive(Debug, RetryInfo)]
#[retry(with = describe_db)]
struct DbOnly(DbError);

#[test]
fn with_describes_a_foreign_field_through_a_function() {
    assert_eq!(
        answers(&AppError::Db(DbError::PoolTimedOut)),
        Answers {
            timeout: true,
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );
    assert_eq!(
        answers(&AppError::Db(DbError::Deadlock)),
        plain(RetrySafety::Yes, Fault::Unknown)
    );
    assert_eq!(
        answers(&AppError::Db(DbError::RowNotFound)),
        plain(RetrySafety::No, Fault::Client)
    );
    assert_eq!(
        answers(&AppError::Db(DbError::SlowDown(Duration::from_secs(3)))),
        Answers {
            throttling: true,
            after: Some(Duration::from_secs(3)),
            ..plain(RetrySafety::Yes, Fault::Server)
        }
    );
    assert_eq!(
        answers(&DbOnly(DbError::Deadlock)),
        plain(RetrySafety::Yes, Fault::Unknown)
    );
}

#[test]
fn with_on_a_field_replaces_the_enums_default() {
    let busy = AppError::Http {
        status: 503,
        body: String::new(),
    };
    assert_eq!(answers(&busy), plain(RetrySafety::Yes, Fault::Unknown));
    let invalid = AppError::Http {
        status: 400,
        body: String::new(),
    };
    assert_eq!(answers(&invalid), plain(RetrySafety::No, Fault::Unknown));
    assert_eq!(
        answers(&AppError::Other),
        plain(RetrySafety::Yes, Fault::Unknown)
    );
}

// ---- #[retry(with = path)]: the function runs once per question ------------------------------

std::thread_local! {
    /// How many times `describe_counted` ran, and how many answers its descriptions gave, on
    /// this test's thread.
    static COUNTS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

fn count(runs: usize, answers: usize) {
    COUNTS.with(|counts| {
        let (r, a) = counts.get();
        counts.set((r + runs, a + answers));
    });
}

/// `(runs of the with function, answers read from its descriptions)` during `f`.
fn counted(f: impl FnOnce()) -> (usize, usize) {
    COUNTS.with(|counts| counts.set((0, 0)));
    f();
    COUNTS.with(std::cell::Cell::get)
}

/// A description that counts each answer read from it.
struct CountedDescription;

impl RetryInfo for CountedDescription {
    fn retry_safety(&self) -> RetrySafety {
        count(0, 1);
        RetrySafety::Yes
    }
    fn is_throttling(&self) -> bool {
        count(0, 1);
        true
    }
    fn is_timeout(&self) -> bool {
        count(0, 1);
        false
    }
    fn retry_after(&self) -> Option<Duration> {
        count(0, 1);
        Some(Duration::from_secs(1))
    }
    fn fault(&self) -> Fault {
        count(0, 1);
        Fault::Server
    }
}

fn describe_counted(_: &DbError) -> CountedDescription {
    count(1, 0);
    CountedDescription
}

#[derive(Debug, RetryInfo)]
enum CountedError {
    #[retry(with = describe_counted)]
    Db(DbError),
}

#[test]
fn with_runs_the_function_once_per_method_and_reads_one_answer() {
    let error = CountedError::Db(DbError::Deadlock);
    assert_eq!(counted(|| assert!(error.is_throttling())), (1, 1));
    assert_eq!(
        counted(|| assert_eq!(error.retry_after(), Some(Duration::from_secs(1)))),
        (1, 1)
    );
    let (runs, answers) = counted(|| {
        retry_core::classify::RetryInfoClassifier::classify_error(&error);
    });
    assert!(runs >= 1, "the classification asked nothing");
    assert_eq!(
        answers, runs,
        "each method call runs the function once and reads one answer"
    );
}
