//! Behaviour of `#[retryable]` on the shapes of function users write besides a plain
//! `async fn(&self)`: methods of `#[async_trait]` impls, smart-pointer receivers, `Result`
//! aliases, blocking functions, and errors without `RetryInfo` (`anyhow::Error`,
//! `Box<dyn Error + Send + Sync>`).
//!
//! Async tests run in virtual time (`start_paused`); blocking tests sleep through a recording
//! sleeper or a `ManualClock` (`with_sleeper`), never for real. Each test has its own scopes:
//! tests run in parallel in one process and scopes are process-wide.

use std::error::Error;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use retry_core::adaptive::ShedReason;
use retry_core::classify::DynErrorClassifier;
use retry_core::clock::ManualClock;
use retry_core::driver::{Sleeper, with_sleeper};
use retry_core::http::{HttpStatusError, RetryAfter};
use retry_core::{
    AdaptiveStrategy, ClassifyRetry, ErrorKind, Fault, LoadShed, RetryAction, RetryConfig,
    RetryInfo, RetrySafety, Scope, StandardStrategy, retryable,
};
use tokio::time::Instant;

/// The error of the test functions.
#[derive(Debug, Clone, PartialEq)]
enum StoreError {
    /// Retried; carries the attempt that failed.
    Unavailable(u32),
    /// Throttling: engages adaptive mode's rate limiter.
    Throttled,
    /// Never retried.
    NotFound,
}

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            StoreError::NotFound => RetrySafety::No,
            _ => RetrySafety::Yes,
        }
    }
    fn is_throttling(&self) -> bool {
        matches!(self, StoreError::Throttled)
    }
    fn fault(&self) -> Fault {
        Fault::Server
    }
}

/// A service that fails its first `fails` attempts, counting every attempt.
#[derive(Debug, Default)]
struct Flaky {
    fails: u32,
    attempts: AtomicU32,
}

impl Flaky {
    fn failing(fails: u32) -> Self {
        Self {
            fails,
            attempts: AtomicU32::new(0),
        }
    }

    /// One attempt: fails with `Unavailable(n)` while `n <= fails`.
    fn attempt(&self) -> Result<u32, StoreError> {
        let n = self.attempts.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= self.fails {
            Err(StoreError::Unavailable(n))
        } else {
            Ok(n)
        }
    }

    fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::Relaxed)
    }
}

// ---- #[async_trait] --------------------------------------------------------------------------

#[async_trait]
trait Store: Send + Sync {
    async fn get(&self, key: &str) -> Result<String, StoreError>;
    async fn bump(&mut self, by: u32) -> Result<u32, StoreError>;
    async fn owned(self: Arc<Self>, key: String) -> Result<String, StoreError>;

    /// A default method, retried too. (Here and on `get`: the classic preset's fixed quota, as
    /// these tests count attempts over many failing calls of one scope; the default's quota,
    /// sized by the scope's traffic, would stop retrying after a call's worth.)
    #[retryable(
        preset = "aws-classic",
        max_attempts = 4,
        initial_backoff = "10ms",
        scope = "shapes-at-default"
    )]
    async fn get_default(&self) -> Result<String, StoreError> {
        self.get("default").await
    }
}

/// The attempts each method of the `#[async_trait]` impl made.
#[derive(Debug, Default)]
struct TraitStore {
    service: Flaky,
    total: u32,
}

#[async_trait]
impl Store for TraitStore {
    #[retryable(
        preset = "aws-classic",
        max_attempts = 3,
        initial_backoff = "10ms",
        scope = "shapes-at-get"
    )]
    async fn get(&self, key: &str) -> Result<String, StoreError> {
        let n = self.service.attempt()?;
        Ok(format!("{key} on attempt {n}"))
    }

    #[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "shapes-at-bump")]
    async fn bump(&mut self, by: u32) -> Result<u32, StoreError> {
        self.total += by;
        self.service.attempt()?;
        Ok(self.total)
    }

    #[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "shapes-at-owned")]
    async fn owned(self: Arc<Self>, key: String) -> Result<String, StoreError> {
        // Consumes this attempt's `self` and `key`: each attempt has its own.
        let this: Arc<Self> = self;
        let n = this.service.attempt()?;
        Ok(format!("{key} on attempt {n}"))
    }
}

#[tokio::test(start_paused = true)]
async fn async_trait_methods_retry_each_receiver() {
    let mut store = TraitStore {
        service: Flaky::failing(2),
        total: 0,
    };
    let started = Instant::now();
    assert_eq!(store.get("a").await.unwrap(), "a on attempt 3");
    assert!(started.elapsed() > Duration::ZERO, "the retries backed off");

    store.service = Flaky::failing(1);
    // `&mut self`, re-borrowed by each attempt: both attempts added 5.
    assert_eq!(store.bump(5).await.unwrap(), 10);

    store.service = Flaky::failing(2);
    let store = Arc::new(store);
    assert_eq!(
        Arc::clone(&store).owned("k".to_owned()).await.unwrap(),
        "k on attempt 3"
    );
    assert_eq!(
        Arc::strong_count(&store),
        1,
        "each attempt's clone is dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn async_trait_methods_work_through_a_trait_object_and_stop_at_max_attempts() {
    let store: Box<dyn Store> = Box::new(TraitStore {
        service: Flaky::failing(100),
        total: 0,
    });
    assert_eq!(
        store.get("a").await.unwrap_err(),
        StoreError::Unavailable(3)
    );
    // The default method retries the (retrying) `get`: retries at two layers multiply, 4 x 3.
    assert_eq!(
        store.get_default().await.unwrap_err(),
        StoreError::Unavailable(15)
    );
}

#[tokio::test(start_paused = true)]
async fn async_trait_futures_are_send() {
    let store = Arc::new(TraitStore {
        service: Flaky::failing(1),
        total: 0,
    });
    let task = tokio::spawn(async move { store.get("spawned").await });
    assert_eq!(task.await.unwrap().unwrap(), "spawned on attempt 2");
}

/// A trait whose futures need not be `Send`, with an `Rc<Self>` receiver.
#[async_trait(?Send)]
trait LocalStore {
    async fn get(self: Rc<Self>) -> Result<u32, StoreError>;
}

#[async_trait(?Send)]
impl LocalStore for Flaky {
    #[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "shapes-at-local")]
    async fn get(self: Rc<Self>) -> Result<u32, StoreError> {
        let this: Rc<Self> = self;
        this.attempt()
    }
}

#[tokio::test(start_paused = true)]
async fn async_trait_without_send_and_an_rc_receiver() {
    let store = Rc::new(Flaky::failing(2));
    assert_eq!(Rc::clone(&store).get().await, Ok(3));
    assert_eq!(Rc::strong_count(&store), 1);
}

// ---- smart-pointer receivers ------------------------------------------------------------------

struct Client {
    service: Flaky,
    /// Attempts seen through `Pin<&mut Self>`.
    pinned_attempts: u32,
}

impl Client {
    #[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "shapes-arc")]
    async fn by_arc(self: Arc<Self>) -> Result<u32, StoreError> {
        let this: Arc<Self> = self; // moved: each attempt needs its own
        this.service.attempt()
    }

    #[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "shapes-rc")]
    async fn by_rc(self: Rc<Self>) -> Result<u32, StoreError> {
        let this: Rc<Self> = self;
        this.service.attempt()
    }

    #[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "shapes-pin")]
    async fn by_pin(self: Pin<&mut Self>) -> Result<u32, StoreError> {
        let this: &mut Self = self.get_mut(); // consumes this attempt's `Pin`
        this.pinned_attempts += 1;
        this.service.attempt()
    }

    #[retryable(
        max_attempts = 3,
        initial_backoff = "10ms",
        scope = "shapes-arc-blocking"
    )]
    fn by_arc_blocking(self: Arc<Self>) -> Result<u32, StoreError> {
        let this: Arc<Self> = self;
        this.service.attempt()
    }
}

#[tokio::test(start_paused = true)]
async fn arc_and_rc_receivers_are_cloned_for_each_attempt() {
    let client = Arc::new(Client {
        service: Flaky::failing(2),
        pinned_attempts: 0,
    });
    assert_eq!(Arc::clone(&client).by_arc().await, Ok(3));
    assert_eq!(client.service.attempts(), 3);
    assert_eq!(Arc::strong_count(&client), 1);

    let client = Rc::new(Client {
        service: Flaky::failing(1),
        pinned_attempts: 0,
    });
    assert_eq!(Rc::clone(&client).by_rc().await, Ok(2));
    assert_eq!(Rc::strong_count(&client), 1);
}

#[tokio::test(start_paused = true)]
async fn a_pinned_receiver_is_reborrowed_for_each_attempt() {
    let mut client = Client {
        service: Flaky::failing(2),
        pinned_attempts: 0,
    };
    assert_eq!(Pin::new(&mut client).by_pin().await, Ok(3));
    assert_eq!(client.pinned_attempts, 3);
}

#[test]
fn an_arc_receiver_of_a_blocking_method() {
    let client = Arc::new(Client {
        service: Flaky::failing(2),
        pinned_attempts: 0,
    });
    let sleeps = Arc::new(Recorder::default());
    let value = with_sleeper(Arc::clone(&sleeps), || {
        Arc::clone(&client).by_arc_blocking()
    });
    assert_eq!(value, Ok(3));
    assert_eq!(sleeps.count(), 2);
    assert_eq!(Arc::strong_count(&client), 1);
}

// ---- `Result` under another name ---------------------------------------------------------------

/// An alias whose name does not end in `Result`.
type Fallible<T> = Result<T, StoreError>;

#[retryable(max_attempts = 4, initial_backoff = "10ms", scope = "shapes-alias")]
async fn through_an_alias(service: &Flaky) -> Fallible<u32> {
    service.attempt()
}

#[tokio::test(start_paused = true)]
async fn a_result_alias_of_any_name_is_retried() {
    let service = Flaky::failing(3);
    assert_eq!(through_an_alias(&service).await, Ok(4));
    assert_eq!(service.attempts(), 4);
}

// ---- blocking functions ----------------------------------------------------------------------

/// Records each sleep instead of sleeping.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Duration>>);

impl Recorder {
    fn sleeps(&self) -> Vec<Duration> {
        self.0.lock().expect("not poisoned").clone()
    }

    fn count(&self) -> usize {
        self.sleeps().len()
    }
}

impl Sleeper for Recorder {
    fn sleep(&self, duration: Duration) {
        self.0.lock().expect("not poisoned").push(duration);
    }
}

/// Records each sleep and moves a manual clock by it.
#[derive(Debug)]
struct ClockSleeper {
    clock: Arc<ManualClock>,
    sleeps: Recorder,
}

impl Sleeper for ClockSleeper {
    fn sleep(&self, duration: Duration) {
        self.sleeps.sleep(duration);
        self.clock.sleep(duration);
    }
}

// The classic preset's fixed quota: two tests call this fn, each failing to the last attempt.
#[retryable(
    preset = "aws-classic",
    max_attempts = 4,
    initial_backoff = "100ms",
    max_backoff = "250ms",
    jitter = "none",
    scope = "shapes-blocking-backoff"
)]
fn blocking_get(service: &Flaky, key: &str) -> Result<String, StoreError> {
    let n = service.attempt()?;
    Ok(format!("{key} on attempt {n}"))
}

#[test]
fn a_blocking_fn_retries_with_the_strategys_backoff() {
    let service = Flaky::failing(3);
    let sleeps = Arc::new(Recorder::default());
    let value = with_sleeper(Arc::clone(&sleeps), || blocking_get(&service, "k"));
    assert_eq!(value.unwrap(), "k on attempt 4");
    // 100 ms, 200 ms, then 400 ms capped at max_backoff.
    assert_eq!(
        sleeps.sleeps(),
        [
            Duration::from_millis(100),
            Duration::from_millis(200),
            Duration::from_millis(250)
        ]
    );
}

#[test]
fn a_blocking_fn_stops_at_max_attempts_and_on_errors_not_retried() {
    let sleeps = Arc::new(Recorder::default());
    let service = Flaky::failing(10);
    let error = with_sleeper(Arc::clone(&sleeps), || blocking_get(&service, "k")).unwrap_err();
    assert_eq!(
        error,
        StoreError::Unavailable(4),
        "the last attempt's own error"
    );
    assert_eq!(sleeps.count(), 3);

    let attempts = AtomicU32::new(0);
    let outcome = with_sleeper(Recorder::default(), || not_found_blocking(&attempts));
    assert_eq!(outcome, Err(StoreError::NotFound));
    assert_eq!(attempts.load(Ordering::Relaxed), 1);
}

#[retryable(max_attempts = 5, scope = "shapes-blocking-not-found")]
fn not_found_blocking(attempts: &AtomicU32) -> Result<(), StoreError> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(StoreError::NotFound)
}

#[retryable(
    max_attempts = 3,
    initial_backoff = "1ms",
    scope = "shapes-blocking-return"
)]
fn blocking_early_return(attempts: &mut Vec<u32>, by_value: String) -> Result<String, StoreError> {
    attempts.push(u32::try_from(attempts.len()).expect("few") + 1);
    if attempts.len() < 3 {
        // `return` ends the attempt, not the call.
        return Err(StoreError::Unavailable(
            u32::try_from(attempts.len()).expect("few"),
        ));
    }
    let parsed: u32 = "7".parse().map_err(|_| StoreError::NotFound)?;
    Ok(format!("{by_value}{parsed}"))
}

#[test]
fn return_and_question_mark_end_a_blocking_attempt() {
    let mut attempts = Vec::new();
    let value = with_sleeper(Recorder::default(), || {
        blocking_early_return(&mut attempts, "v".to_owned())
    });
    assert_eq!(value.unwrap(), "v7");
    assert_eq!(attempts, [1, 2, 3]);
}

#[retryable(
    max_attempts = 3,
    initial_backoff = "1ms",
    scope = "shapes-shared-quota"
)]
fn failing_blocking() -> Result<(), StoreError> {
    Err(StoreError::Unavailable(0))
}

#[retryable(
    max_attempts = 3,
    initial_backoff = "1ms",
    scope = "shapes-shared-quota"
)]
async fn failing_async(attempts: &AtomicU32) -> Result<(), StoreError> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(StoreError::Unavailable(0))
}

#[tokio::test(start_paused = true)]
async fn a_blocking_fn_shares_its_scopes_quota_with_async_fns() {
    // 50 blocking calls of 2 retries at 14 each spend the young scope's 500: 35 retries take
    // 490, and the 10 left cannot pay for another.
    with_sleeper(Recorder::default(), || {
        for _ in 0..50 {
            assert!(failing_blocking().is_err());
        }
    });
    let scope = Scope::lookup("shapes-shared-quota").expect("created by the calls");
    assert_eq!(scope.quota().level(), 10);
    // An async function of the same scope finds too little in the quota: no retry.
    let attempts = AtomicU32::new(0);
    assert!(failing_async(&attempts).await.is_err());
    assert_eq!(attempts.load(Ordering::Relaxed), 1);
}

/// The adaptive strategy of the next test, on a manual clock that its sleeper moves.
static ADAPTIVE_CLOCK: LazyLock<Arc<ManualClock>> = LazyLock::new(|| Arc::new(ManualClock::new()));
static ADAPTIVE: LazyLock<AdaptiveStrategy> = LazyLock::new(|| {
    let config = RetryConfig::builder()
        .max_attempts(3)
        .initial_backoff(Duration::from_millis(100))
        .jitter(retry_core::backoff::Jitter::None)
        .build()
        .expect("valid");
    AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config).clock(Arc::clone(&*ADAPTIVE_CLOCK) as _),
    )
});

#[retryable(strategy = &*ADAPTIVE)]
fn throttled_blocking(attempts: &mut u32) -> Result<u32, StoreError> {
    *attempts += 1;
    if *attempts == 1 {
        Err(StoreError::Throttled)
    } else {
        Ok(*attempts)
    }
}

#[test]
fn a_blocking_fn_waits_for_adaptive_send_permits() {
    let sleeper = Arc::new(ClockSleeper {
        clock: Arc::clone(&ADAPTIVE_CLOCK),
        sleeps: Recorder::default(),
    });
    let mut attempts = 0;
    let value = with_sleeper(Arc::clone(&sleeper), || throttled_blocking(&mut attempts));
    assert_eq!(value, Ok(2));
    // The throttle switched the limiter on, empty, filling at 0.5/s: after the 1 s backoff (the
    // default's base for throttling errors) the retry waits for its permit (2 s from the
    // throttle), re-checking every 500 ms.
    assert_eq!(
        sleeper.sleeps.sleeps(),
        [1000, 500, 500].map(Duration::from_millis).to_vec()
    );
    assert_eq!(ADAPTIVE.scope().limiter().stats().waiting, 0);
}

// ---- errors without RetryInfo ----------------------------------------------------------------

#[derive(Debug, thiserror::Error)]
#[error("request failed")]
struct RequestFailed(#[source] io::Error);

#[retryable(max_attempts = 3, initial_backoff = "10ms", classifier = DynErrorClassifier, scope = "shapes-anyhow")]
async fn anyhow_call(attempts: &AtomicU32, kind: io::ErrorKind) -> anyhow::Result<u32> {
    let n = attempts.fetch_add(1, Ordering::Relaxed) + 1;
    if n < 3 {
        let error = anyhow::Error::new(RequestFailed(kind.into())).context("fetching the item");
        return Err(error);
    }
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn anyhow_errors_are_classified_by_their_source_chain() {
    let attempts = AtomicU32::new(0);
    assert_eq!(
        anyhow_call(&attempts, io::ErrorKind::ConnectionRefused)
            .await
            .unwrap(),
        3
    );
    let attempts = AtomicU32::new(0);
    let error = anyhow_call(&attempts, io::ErrorKind::PermissionDenied)
        .await
        .unwrap_err();
    assert_eq!(attempts.load(Ordering::Relaxed), 1, "not retried");
    assert_eq!(error.to_string(), "fetching the item");
}

type BoxError = Box<dyn Error + Send + Sync>;

#[retryable(max_attempts = 3, initial_backoff = "10ms", classifier = DynErrorClassifier, scope = "shapes-box-error")]
async fn boxed_call(attempts: &AtomicU32, timeout: bool) -> Result<u32, BoxError> {
    let n = attempts.fetch_add(1, Ordering::Relaxed) + 1;
    if n == 1 && timeout {
        let elapsed = tokio::time::timeout(Duration::ZERO, std::future::pending::<()>())
            .await
            .expect_err("a zero timeout elapses");
        // Found one level down the source chain.
        return Err(Box::new(CallFailed(Box::new(elapsed))));
    }
    if n == 1 {
        return Err("not a known error".into());
    }
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn boxed_errors_are_classified_by_their_source_chain() {
    let attempts = AtomicU32::new(0);
    assert_eq!(
        boxed_call(&attempts, true).await.unwrap(),
        2,
        "a timeout is retried"
    );
    let attempts = AtomicU32::new(0);
    assert!(boxed_call(&attempts, false).await.is_err());
    assert_eq!(
        attempts.load(Ordering::Relaxed),
        1,
        "an unknown error is not"
    );
}

/// An error of the caller's that wraps another as its source.
#[derive(Debug, thiserror::Error)]
#[error("the call failed")]
struct CallFailed(#[source] BoxError);

/// `DynErrorClassifier`'s verdict on `error` wrapped one level deep in a source chain.
fn verdict_on_wrapped(error: impl Error + Send + Sync + 'static) -> RetryAction {
    let outcome: Result<(), BoxError> = Err(Box::new(CallFailed(Box::new(error))));
    DynErrorClassifier.classify(&outcome)
}

#[test]
fn the_integrations_errors_and_load_shed_are_known_in_a_source_chain() {
    let unavailable =
        HttpStatusError::new(http::StatusCode::SERVICE_UNAVAILABLE, RetryAfter::Absent);
    assert_eq!(
        verdict_on_wrapped(unavailable),
        RetryAction::retryable(ErrorKind::Server)
    );
    let too_many = HttpStatusError::new(http::StatusCode::TOO_MANY_REQUESTS, RetryAfter::Absent);
    assert_eq!(
        verdict_on_wrapped(too_many),
        RetryAction::retryable(ErrorKind::Throttling)
    );
    let not_found = HttpStatusError::new(http::StatusCode::NOT_FOUND, RetryAfter::Absent);
    // As `HttpStatusError`'s `RetryInfo` says: a client's fault, not retried.
    assert!(!verdict_on_wrapped(not_found).should_retry());
    assert_eq!(
        verdict_on_wrapped(tonic::Status::unavailable("restarting")),
        RetryAction::retryable(ErrorKind::Server)
    );
    assert_eq!(
        verdict_on_wrapped(tonic::Status::invalid_argument("bad key")),
        RetryAction::RetryForbidden,
        "gRPC A6: INVALID_ARGUMENT is not retried"
    );
    // Refused locally: retrying at once would only queue again.
    let shed = LoadShed::new(
        Duration::from_secs(3),
        Duration::from_secs(2),
        ShedReason::Deadline,
    );
    assert_eq!(verdict_on_wrapped(shed), RetryAction::RetryForbidden);
}
