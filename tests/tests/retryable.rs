//! Behaviour of `#[retryable]`: one test per argument, and the rewrite's guarantees (arguments,
//! receivers, `Send`, `Retry-After`, the last error returned unchanged).
//!
//! Every test runs in virtual time (`start_paused`), and uses its own scope names: tests run in
//! parallel in one process and scopes are process-wide.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_core::{
    ClassifyRetry, ErrorKind, Fault, RetryAction, RetryConfig, RetryEvent, RetryInfo, RetrySafety,
    Scope, StandardStrategy, retryable,
};
use tokio::time::{Instant, sleep};

/// The error every test function returns.
#[derive(Debug, Clone, PartialEq)]
enum StoreError {
    /// Retryable; carries the attempt that failed, to tell errors apart.
    Unavailable(u32),
    /// Throttling, with the server's `Retry-After`.
    Throttled(Option<Duration>),
    /// Never retried.
    NotFound,
    /// An attempt cut by `attempt_timeout`.
    TimedOut,
}

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            StoreError::NotFound => RetrySafety::No,
            _ => RetrySafety::Yes,
        }
    }
    fn is_throttling(&self) -> bool {
        matches!(self, StoreError::Throttled(_))
    }
    fn is_timeout(&self) -> bool {
        matches!(self, StoreError::TimedOut)
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            StoreError::Throttled(after) => *after,
            _ => None,
        }
    }
    fn fault(&self) -> Fault {
        match self {
            StoreError::NotFound => Fault::Client,
            _ => Fault::Server,
        }
    }
}

impl From<tokio::time::error::Elapsed> for StoreError {
    fn from(_: tokio::time::error::Elapsed) -> Self {
        StoreError::TimedOut
    }
}

/// Counts calls and records when each attempt started.
#[derive(Debug)]
struct Calls {
    started: Instant,
    at: Vec<Duration>,
}

impl Calls {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            at: Vec::new(),
        }
    }

    /// Records an attempt and returns its number (1 for the first).
    fn record(&mut self) -> u32 {
        self.at.push(self.started.elapsed());
        u32::try_from(self.at.len()).expect("few attempts")
    }

    fn count(&self) -> usize {
        self.at.len()
    }

    /// The time between consecutive attempts.
    fn gaps(&self) -> Vec<Duration> {
        self.at.windows(2).map(|pair| pair[1] - pair[0]).collect()
    }
}

fn quota_level(scope: &str) -> u32 {
    Scope::lookup(scope)
        .expect("the scope exists")
        .quota()
        .level()
}

// ---- max_attempts, and the last error returned unchanged ------------------------------------

#[retryable(
    max_attempts = 5,
    initial_backoff = "10ms",
    scope = "retryable-test-max-attempts"
)]
async fn always_unavailable(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn max_attempts_bounds_the_attempts_and_the_last_error_is_returned() {
    let mut calls = Calls::new();
    let error = always_unavailable(&mut calls).await.unwrap_err();
    assert_eq!(calls.count(), 5);
    // The last attempt's own error, unchanged (not the first, not a wrapper).
    assert_eq!(error, StoreError::Unavailable(5));
}

#[retryable(max_attempts = 1, scope = "retryable-test-max-attempts-one")]
async fn no_retries(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn max_attempts_one_means_no_retries() {
    let mut calls = Calls::new();
    assert_eq!(
        no_retries(&mut calls).await,
        Err(StoreError::Unavailable(1))
    );
    assert_eq!(calls.count(), 1);
}

#[retryable(max_attempts = 5, scope = "retryable-test-not-retryable")]
async fn not_found(calls: &mut Calls) -> Result<(), StoreError> {
    calls.record();
    Err(StoreError::NotFound)
}

#[tokio::test(start_paused = true)]
async fn errors_that_are_not_retryable_end_the_call_at_once() {
    let mut calls = Calls::new();
    assert_eq!(not_found(&mut calls).await, Err(StoreError::NotFound));
    assert_eq!(calls.count(), 1);
}

// ---- `?` and `return` end the attempt, not the call ------------------------------------------

fn check(attempt: u32) -> Result<u32, StoreError> {
    if attempt < 3 {
        Err(StoreError::Unavailable(attempt))
    } else {
        Ok(attempt)
    }
}

#[retryable(
    max_attempts = 5,
    initial_backoff = "10ms",
    scope = "retryable-test-question-mark"
)]
async fn question_mark(calls: &mut Calls) -> Result<u32, StoreError> {
    let attempt = calls.record();
    if attempt == 1 {
        return Err(StoreError::Unavailable(attempt));
    }
    let value = check(attempt)?;
    Ok(value * 10)
}

#[tokio::test(start_paused = true)]
async fn question_mark_and_return_end_only_the_attempt() {
    let mut calls = Calls::new();
    assert_eq!(question_mark(&mut calls).await, Ok(30));
    assert_eq!(calls.count(), 3);
}

// ---- mode ------------------------------------------------------------------------------------

#[retryable(mode = "adaptive", max_attempts = 1, scope = "retryable-test-adaptive")]
async fn throttled_adaptive() -> Result<(), StoreError> {
    Err(StoreError::Throttled(None))
}

#[retryable(mode = "adaptive", scope = "retryable-test-adaptive")]
async fn fast_adaptive(calls: &mut Calls) -> Result<(), StoreError> {
    calls.record();
    Ok(())
}

#[retryable(mode = "adaptive", scope = "retryable-test-adaptive-elsewhere")]
async fn fast_adaptive_elsewhere(calls: &mut Calls) -> Result<(), StoreError> {
    calls.record();
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn adaptive_mode_throttling_in_one_function_slows_another_in_the_same_scope() {
    // Before any throttling, calls go out at once.
    let mut calls = Calls::new();
    for _ in 0..5 {
        fast_adaptive(&mut calls).await.unwrap();
    }
    assert_eq!(calls.at.last(), Some(&Duration::ZERO));
    assert!(
        !Scope::lookup("retryable-test-adaptive")
            .unwrap()
            .limiter()
            .is_enabled()
    );

    // One throttling error in another function of the scope engages its rate limiter...
    assert_eq!(throttled_adaptive().await, Err(StoreError::Throttled(None)));
    let stats = Scope::lookup("retryable-test-adaptive").unwrap().stats();
    assert!(stats.limiter.enabled);
    assert_eq!(stats.throttles, 1);

    // ...which now paces the first function's calls, each on a permit of its own. The
    // throttle came in the scope's first 100 ms (its first burst, six calls at once): the
    // limiter started at the AWS SDKs' 0.5/s floor until the burst was over, then from the
    // burst's rate (six per 100 ms, times 0.7): the first call waits for that, the others a
    // permit each.
    let mut calls = Calls::new();
    for _ in 0..5 {
        fast_adaptive(&mut calls).await.unwrap();
    }
    let fill_rate = Scope::lookup("retryable-test-adaptive")
        .unwrap()
        .limiter()
        .stats()
        .fill_rate;
    let permit = Duration::from_secs_f64(0.9 / fill_rate);
    assert!(
        calls.at[0] >= Duration::from_millis(100)
            && calls.at.windows(2).all(|pair| pair[1] - pair[0] >= permit),
        "calls were not slowed: {:?} at {fill_rate} permits/s",
        calls.at
    );

    // A function in another scope is not slowed.
    let mut calls = Calls::new();
    for _ in 0..5 {
        fast_adaptive_elsewhere(&mut calls).await.unwrap();
    }
    assert_eq!(calls.at.last(), Some(&Duration::ZERO));
}

#[retryable(
    mode = "standard",
    max_attempts = 1,
    scope = "retryable-test-mixed-modes"
)]
async fn throttled_standard() -> Result<(), StoreError> {
    Err(StoreError::Throttled(None))
}

#[retryable(
    mode = "adaptive",
    max_attempts = 1,
    scope = "retryable-test-mixed-modes"
)]
async fn throttled_adaptive_beside_standard() -> Result<(), StoreError> {
    Err(StoreError::Throttled(None))
}

#[retryable(mode = "standard", scope = "retryable-test-mixed-modes")]
async fn fast_standard(calls: &mut Calls) -> Result<(), StoreError> {
    calls.record();
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn standard_mode_has_no_rate_limiter() {
    let stats = || Scope::lookup("retryable-test-mixed-modes").unwrap().stats();
    // A throttling error in standard mode leaves the scope's rate limiter off...
    assert_eq!(throttled_standard().await, Err(StoreError::Throttled(None)));
    assert_eq!(stats().throttles, 1);
    assert!(!stats().limiter.enabled);

    // ...one in adaptive mode turns it on (so `mode` reaches the strategy)...
    assert_eq!(
        throttled_adaptive_beside_standard().await,
        Err(StoreError::Throttled(None))
    );
    assert!(stats().limiter.enabled);

    // ...and it does not pace the calls of a standard-mode function of the scope, which do
    // not wait for send permits.
    let mut calls = Calls::new();
    for _ in 0..5 {
        fast_standard(&mut calls).await.unwrap();
    }
    assert_eq!(calls.at.last(), Some(&Duration::ZERO));
}

// ---- initial_backoff, max_backoff, jitter ----------------------------------------------------

#[retryable(
    max_attempts = 4,
    initial_backoff = "100ms",
    jitter = "none",
    scope = "retryable-test-initial-backoff"
)]
async fn backoff_from_100ms(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn initial_backoff_is_the_base_of_the_exponential_backoff() {
    let mut calls = Calls::new();
    backoff_from_100ms(&mut calls).await.unwrap_err();
    assert_eq!(
        calls.gaps(),
        [100, 200, 400].map(Duration::from_millis).to_vec()
    );
}

#[retryable(
    max_attempts = 5,
    initial_backoff = "100ms",
    max_backoff = "250ms",
    jitter = "none",
    scope = "retryable-test-max-backoff"
)]
async fn backoff_capped_at_250ms(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn max_backoff_caps_the_backoff() {
    let mut calls = Calls::new();
    backoff_capped_at_250ms(&mut calls).await.unwrap_err();
    assert_eq!(
        calls.gaps(),
        [100, 200, 250, 250].map(Duration::from_millis).to_vec()
    );
}

#[retryable(
    max_attempts = 2,
    initial_backoff = "1s",
    jitter = "equal",
    scope = "retryable-test-jitter"
)]
async fn equal_jitter(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn jitter_spreads_the_backoff() {
    // Twenty failing calls in a row: a scope with the classic fixed quota (100 retries), so
    // that every call gets its retry (the default quota holds one call's retries, then none
    // until calls succeed), held so that the registry keeps it until the function's first call.
    let _classic = Scope::named(
        "retryable-test-jitter",
        &RetryConfig::aws_classic().build().expect("valid"),
    );
    let mut gaps = Vec::new();
    for _ in 0..20 {
        let mut calls = Calls::new();
        equal_jitter(&mut calls).await.unwrap_err();
        gaps.extend(calls.gaps());
    }
    let scope = Scope::lookup("retryable-test-jitter").expect("held");
    assert!(
        scope.config().quota_window().is_none(),
        "the function's scope has the classic fixed quota"
    );
    // Equal jitter: t/2 + U[0,1) * t/2 with t = 1 s (tokio's timer rounds up to the millisecond).
    for gap in &gaps {
        assert!(
            (Duration::from_millis(500)..=Duration::from_secs(1)).contains(gap),
            "{gap:?}"
        );
    }
    assert!(
        gaps.iter().any(|gap| *gap != gaps[0]),
        "no jitter: {gaps:?}"
    );
}

#[retryable(
    preset = "aws-2026",
    max_attempts = 4,
    max_backoff = "50ms",
    jitter = "none",
    scope = "retryable-test-short-max-backoff"
)]
async fn throttled_with_short_cap(calls: &mut Calls) -> Result<(), StoreError> {
    calls.record();
    Err(StoreError::Throttled(None))
}

#[tokio::test(start_paused = true)]
async fn a_max_backoff_below_one_second_also_caps_throttling_backoff() {
    // In `aws-2026`, throttling errors back off from a base of their own (1 s), which no
    // argument sets: a `max_backoff` below it caps it too, instead of making the configuration
    // invalid (which would fall back to the defaults: 3 attempts, seconds apart).
    let mut calls = Calls::new();
    throttled_with_short_cap(&mut calls).await.unwrap_err();
    assert_eq!(
        calls.gaps(),
        [50, 50, 50].map(Duration::from_millis).to_vec()
    );
}

// ---- preset ----------------------------------------------------------------------------------

#[retryable(
    preset = " AWS-2026 ",
    jitter = "none",
    scope = "retryable-test-preset"
)]
async fn from_aws_2026(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[retryable(
    preset = "aws-2026",
    initial_backoff = "10ms",
    max_attempts = 4,
    jitter = "none",
    scope = "retryable-test-preset-tuned"
)]
async fn from_aws_2026_tuned(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn preset_is_the_configuration_the_other_arguments_apply_to() {
    // Trimmed, case-insensitive: `aws-2026`, its 50 ms backoff base (the default's too) and its
    // fixed quota of 500 where a retry costs 14 (the default's follows the traffic: 28 on a new
    // scope, which two retries empty).
    let mut calls = Calls::new();
    from_aws_2026(&mut calls).await.unwrap_err();
    assert_eq!(calls.gaps(), [50, 100].map(Duration::from_millis).to_vec());
    assert_eq!(quota_level("retryable-test-preset"), 500 - 2 * 14);

    // The arguments given replace the preset's values; the rest stays the preset's.
    let mut calls = Calls::new();
    from_aws_2026_tuned(&mut calls).await.unwrap_err();
    assert_eq!(
        calls.gaps(),
        [10, 20, 40].map(Duration::from_millis).to_vec()
    );
    assert_eq!(quota_level("retryable-test-preset-tuned"), 500 - 3 * 14);
}

// ---- timeout and attempt_timeout -------------------------------------------------------------

#[retryable(
    max_attempts = 10,
    initial_backoff = "500ms",
    jitter = "none",
    timeout = "2s",
    scope = "retryable-test-timeout"
)]
async fn slow_and_failing(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    sleep(Duration::from_secs(1)).await;
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn timeout_is_a_deadline_for_starting_attempts() {
    let start = Instant::now();
    let mut calls = Calls::new();
    let error = slow_and_failing(&mut calls).await.unwrap_err();
    // Attempt 1 at 0 s (ends 1 s), attempt 2 at 1.5 s (ends 2.5 s: in flight, not cut); a
    // third would start at 3.5 s, past the 2 s deadline.
    assert_eq!(calls.at, [0, 1500].map(Duration::from_millis).to_vec());
    assert_eq!(error, StoreError::Unavailable(2));
    assert_eq!(start.elapsed(), Duration::from_millis(2500));
}

#[retryable(
    attempt_timeout = "1s",
    initial_backoff = "100ms",
    jitter = "none",
    scope = "retryable-test-attempt-timeout"
)]
async fn hangs_once(calls: &mut Calls) -> Result<u32, StoreError> {
    let attempt = calls.record();
    if attempt == 1 {
        sleep(Duration::from_secs(3600)).await;
    }
    Ok(attempt)
}

#[tokio::test(start_paused = true)]
async fn attempt_timeout_cuts_a_hanging_attempt() {
    let start = Instant::now();
    let mut calls = Calls::new();
    assert_eq!(hangs_once(&mut calls).await, Ok(2));
    assert_eq!(calls.at, [0, 1100].map(Duration::from_millis).to_vec());
    assert_eq!(start.elapsed(), Duration::from_millis(1100));
}

#[retryable(
    attempt_timeout = "1s",
    max_attempts = 2,
    scope = "retryable-test-attempt-timeout-last"
)]
async fn always_hangs() -> Result<(), StoreError> {
    sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn attempt_timeout_error_is_the_functions_error() {
    assert_eq!(always_hangs().await, Err(StoreError::TimedOut));
}

// ---- scope: the quota ------------------------------------------------------------------------

#[retryable(
    max_attempts = 2,
    initial_backoff = "10ms",
    scope = "retryable-test-shared"
)]
async fn shared_a() -> Result<(), StoreError> {
    Err(StoreError::Unavailable(0))
}

#[retryable(
    max_attempts = 2,
    initial_backoff = "10ms",
    scope = "retryable-test-shared"
)]
async fn shared_b() -> Result<(), StoreError> {
    Err(StoreError::Unavailable(0))
}

#[retryable(
    max_attempts = 2,
    initial_backoff = "10ms",
    scope = "retryable-test-separate"
)]
async fn separate() -> Result<(), StoreError> {
    Err(StoreError::Unavailable(0))
}

#[tokio::test(start_paused = true)]
async fn scope_shares_the_quota_between_functions() {
    // A new scope holds the AWS SDKs' 500 tokens. The first function's retry takes 14.
    shared_a().await.unwrap_err();
    assert_eq!(quota_level("retryable-test-shared"), 486);
    // The other function of the scope pays from the same quota.
    shared_b().await.unwrap_err();
    assert_eq!(quota_level("retryable-test-shared"), 472);
    let stats = Scope::lookup("retryable-test-shared").unwrap().stats();
    assert_eq!((stats.retries, stats.quota_exhausted), (2, 0));
    assert_eq!(stats.attempts, 4);

    // Another scope has its own quota.
    separate().await.unwrap_err();
    assert_eq!(quota_level("retryable-test-separate"), 486);
    let stats = Scope::lookup("retryable-test-separate").unwrap().stats();
    assert_eq!((stats.retries, stats.quota_exhausted), (1, 0));
}

#[retryable(max_attempts = 2, initial_backoff = "10ms")]
async fn default_scope() -> Result<(), StoreError> {
    Err(StoreError::Unavailable(0))
}

#[tokio::test(start_paused = true)]
async fn the_default_scope_is_the_functions_path() {
    default_scope().await.unwrap_err();
    let name = concat!(module_path!(), "::default_scope");
    // The call's retry took 14 of the new scope's 500.
    assert_eq!(
        Scope::lookup(name)
            .expect("the scope exists")
            .stats()
            .retries,
        1
    );
    assert_eq!(quota_level(name), 486);
}

// ---- strategy --------------------------------------------------------------------------------

struct Client {
    strategy: StandardStrategy,
    shared: Arc<StandardStrategy>,
    calls: u32,
}

impl Client {
    fn new(scope: &str, max_attempts: u32) -> Self {
        let config = RetryConfig::aws_classic()
            .max_attempts(max_attempts)
            .initial_backoff(Duration::from_millis(10))
            .build()
            .expect("a valid configuration");
        let strategy = StandardStrategy::builder(config.clone())
            .scope(Scope::new(scope, &config))
            .build();
        Self {
            shared: Arc::new(strategy.clone()),
            strategy,
            calls: 0,
        }
    }

    #[retryable(strategy = self.strategy)]
    async fn get(&self, key: &str) -> Result<String, StoreError> {
        let _ = key;
        Err(StoreError::Unavailable(0))
    }

    #[retryable(strategy = self.shared)]
    async fn get_shared(&self) -> Result<String, StoreError> {
        Err(StoreError::Unavailable(0))
    }

    /// `&mut self`: the strategy is cloned at the start of the call, so each attempt can
    /// borrow `self` mutably.
    #[retryable(strategy = self.strategy)]
    async fn bump(&mut self) -> Result<u32, StoreError> {
        self.calls += 1;
        if self.calls < 3 {
            Err(StoreError::Unavailable(self.calls))
        } else {
            Ok(self.calls)
        }
    }
}

#[tokio::test(start_paused = true)]
async fn strategy_is_taken_from_a_self_field() {
    let mut client = Client::new("client", 4);
    assert_eq!(client.get("k").await, Err(StoreError::Unavailable(0)));
    let stats = client.strategy.scope().stats();
    assert_eq!(stats.attempts, 4);
    assert_eq!(stats.retries, 3);

    assert!(client.get_shared().await.is_err());
    assert_eq!(client.strategy.scope().stats().attempts, 8);

    assert_eq!(client.bump().await, Ok(3));
    assert_eq!(client.strategy.scope().stats().attempts, 11);
    // The private scope is not a process-wide one.
    assert!(Scope::lookup("client").is_none());
}

// ---- &mut self -------------------------------------------------------------------------------

struct Counter {
    attempts: u32,
    log: Vec<String>,
}

impl Counter {
    #[retryable(
        max_attempts = 5,
        initial_backoff = "10ms",
        scope = "retryable-test-mut-self"
    )]
    async fn next(&mut self, label: &str) -> Result<u32, StoreError> {
        self.attempts += 1;
        self.log.push(format!("{label} {}", self.attempts));
        if self.attempts < 3 {
            Err(StoreError::Unavailable(self.attempts))
        } else {
            Ok(self.attempts)
        }
    }
}

#[tokio::test(start_paused = true)]
async fn mut_self_state_is_changed_by_each_attempt() {
    let mut counter = Counter {
        attempts: 0,
        log: Vec::new(),
    };
    assert_eq!(counter.next("try").await, Ok(3));
    assert_eq!(counter.attempts, 3);
    assert_eq!(counter.log, ["try 1", "try 2", "try 3"]);
}

// ---- by-value arguments ----------------------------------------------------------------------

#[retryable(
    max_attempts = 3,
    initial_backoff = "10ms",
    scope = "retryable-test-by-value"
)]
async fn consume(
    body: String,
    mut suffix: String,
    sink: &Mutex<Vec<String>>,
) -> Result<usize, StoreError> {
    suffix.push('!');
    let mut sink = sink.lock().expect("not poisoned");
    // Each attempt owns its copy of `body` and `suffix`: it may move or change them.
    sink.push(body + &suffix);
    if sink.len() < 3 {
        Err(StoreError::Unavailable(0))
    } else {
        Ok(sink.len())
    }
}

#[tokio::test(start_paused = true)]
async fn by_value_arguments_are_cloned_for_each_attempt() {
    let sink = Mutex::new(Vec::new());
    let result = consume("hello".to_owned(), " world".to_owned(), &sink).await;
    assert_eq!(result, Ok(3));
    assert_eq!(*sink.lock().unwrap(), ["hello world!"; 3]);
}

#[retryable(
    max_attempts = 3,
    initial_backoff = "10ms",
    scope = "retryable-test-patterns"
)]
async fn patterns(
    (a, b): (u32, u32),
    Wrapper(c): Wrapper,
    calls: &mut Calls,
) -> Result<u32, StoreError> {
    let attempt = calls.record();
    if attempt < 2 {
        return Err(StoreError::Unavailable(attempt));
    }
    Ok(a + b + c)
}

#[derive(Clone)]
struct Wrapper(u32);

#[tokio::test(start_paused = true)]
async fn pattern_arguments_are_rebound_for_each_attempt() {
    let mut calls = Calls::new();
    assert_eq!(patterns((1, 2), Wrapper(3), &mut calls).await, Ok(6));
    assert_eq!(calls.count(), 2);
}

// ---- Send ------------------------------------------------------------------------------------

#[retryable(
    max_attempts = 3,
    initial_backoff = "10ms",
    scope = "retryable-test-spawn"
)]
async fn owned(key: String, calls: Arc<Mutex<u32>>) -> Result<String, StoreError> {
    let attempt = {
        let mut calls = calls.lock().expect("not poisoned");
        *calls += 1;
        *calls
    };
    sleep(Duration::from_millis(1)).await;
    if attempt < 2 {
        Err(StoreError::Unavailable(attempt))
    } else {
        Ok(key)
    }
}

#[tokio::test(start_paused = true)]
async fn annotated_calls_can_be_spawned() {
    let calls = Arc::new(Mutex::new(0));
    let handle = tokio::spawn(owned("k".to_owned(), Arc::clone(&calls)));
    assert_eq!(handle.await.unwrap(), Ok("k".to_owned()));
    assert_eq!(*calls.lock().unwrap(), 2);

    let client = Arc::new(Client::new("client-spawn", 2));
    let handle = tokio::spawn(async move { client.get("k").await });
    assert!(handle.await.unwrap().is_err());
}

// ---- Retry-After -----------------------------------------------------------------------------

#[retryable(
    max_attempts = 2,
    jitter = "none",
    scope = "retryable-test-retry-after"
)]
async fn asks_to_wait(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    if attempt == 1 {
        Err(StoreError::Throttled(Some(Duration::from_secs(3))))
    } else {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn a_servers_retry_after_is_honoured() {
    let mut calls = Calls::new();
    asks_to_wait(&mut calls).await.unwrap();
    assert_eq!(calls.count(), 2);
    assert!(
        calls.gaps()[0] >= Duration::from_secs(3),
        "{:?}",
        calls.gaps()
    );
}

// ---- classifier: a waiter --------------------------------------------------------------------

/// Retries while the job is still pending, an `Ok` value.
#[derive(Clone)]
struct UntilDone;

impl ClassifyRetry<&'static str, StoreError> for UntilDone {
    fn classify(&self, outcome: &Result<&'static str, StoreError>) -> RetryAction {
        match outcome {
            Ok("pending") => RetryAction::retryable(ErrorKind::Transient),
            _ => RetryAction::NoActionIndicated,
        }
    }
    fn name(&self) -> &'static str {
        "until done"
    }
}

#[retryable(
    classifier = UntilDone,
    max_attempts = 10,
    initial_backoff = "10ms",
    scope = "retryable-test-classifier"
)]
async fn job_state(calls: &mut Calls) -> Result<&'static str, StoreError> {
    let attempt = calls.record();
    Ok(if attempt < 4 { "pending" } else { "done" })
}

#[tokio::test(start_paused = true)]
async fn a_custom_classifier_can_retry_ok_values() {
    let mut calls = Calls::new();
    assert_eq!(job_state(&mut calls).await, Ok("done"));
    assert_eq!(calls.count(), 4);
}

struct Poller {
    until_done: UntilDone,
    polls: u32,
}

impl Poller {
    /// `&mut self` with a classifier read from `self`: it is cloned for the call, so each attempt
    /// can borrow `self` mutably.
    #[retryable(
        classifier = self.until_done,
        max_attempts = 10,
        initial_backoff = "10ms",
        scope = "retryable-test-classifier-mut-self"
    )]
    async fn poll(&mut self) -> Result<&'static str, StoreError> {
        self.polls += 1;
        Ok(if self.polls < 3 { "pending" } else { "done" })
    }
}

#[tokio::test(start_paused = true)]
async fn a_classifier_from_a_mut_self_field() {
    let mut poller = Poller {
        until_done: UntilDone,
        polls: 0,
    };
    assert_eq!(poller.poll().await, Ok("done"));
    assert_eq!(poller.polls, 3);
}

// ---- retry_if --------------------------------------------------------------------------------

/// An error type without `RetryInfo`: `retry_if` does not need it.
fn is_conflict(status: &u16) -> bool {
    *status == 409
}

#[retryable(retry_if = is_conflict, max_attempts = 5, initial_backoff = "10ms", scope = "retryable-test-retry-if")]
async fn put(statuses: &mut Vec<u16>, calls: &mut Calls) -> Result<(), u16> {
    calls.record();
    Err(statuses.remove(0))
}

#[tokio::test(start_paused = true)]
async fn retry_if_decides_which_errors_are_retried() {
    let mut calls = Calls::new();
    let mut statuses = vec![409, 409, 400, 409];
    assert_eq!(put(&mut statuses, &mut calls).await, Err(400));
    assert_eq!(calls.count(), 3);
}

// ---- on_retry --------------------------------------------------------------------------------

static RETRIES: Mutex<Vec<(u32, Option<StoreError>, Duration)>> = Mutex::new(Vec::new());

fn record_retry(event: &RetryEvent<'_, StoreError>) {
    RETRIES.lock().expect("not poisoned").push((
        event.attempt(),
        event.error().cloned(),
        event.delay(),
    ));
}

#[retryable(
    on_retry = record_retry,
    max_attempts = 3,
    initial_backoff = "100ms",
    jitter = "none",
    scope = "retryable-test-on-retry"
)]
async fn observed(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn on_retry_sees_attempt_error_and_delay() {
    let mut calls = Calls::new();
    observed(&mut calls).await.unwrap_err();
    assert_eq!(
        *RETRIES.lock().unwrap(),
        [
            (
                1,
                Some(StoreError::Unavailable(1)),
                Duration::from_millis(100)
            ),
            (
                2,
                Some(StoreError::Unavailable(2)),
                Duration::from_millis(200)
            ),
        ]
    );
}

// ---- crate -----------------------------------------------------------------------------------

mod facade {
    pub use retry_core as retry;
}

#[retryable(
    crate = "crate::facade::retry",
    max_attempts = 2,
    initial_backoff = "10ms",
    scope = "retryable-test-crate"
)]
async fn through_facade(calls: &mut Calls) -> Result<(), StoreError> {
    let attempt = calls.record();
    Err(StoreError::Unavailable(attempt))
}

#[tokio::test(start_paused = true)]
async fn crate_names_retry_core_through_another_path() {
    let mut calls = Calls::new();
    assert_eq!(
        through_facade(&mut calls).await,
        Err(StoreError::Unavailable(2))
    );
}

// ---- generics, traits ------------------------------------------------------------------------

trait Store {
    async fn load(&self, key: &str) -> Result<String, StoreError>;
}

struct Flaky {
    calls: Mutex<u32>,
}

impl Store for Flaky {
    #[retryable(initial_backoff = "10ms", scope = "retryable-test-trait")]
    async fn load(&self, key: &str) -> Result<String, StoreError> {
        let mut calls = self.calls.lock().expect("not poisoned");
        *calls += 1;
        if *calls < 2 {
            Err(StoreError::Unavailable(*calls))
        } else {
            Ok(format!("{key}: {}", *calls))
        }
    }
}

#[retryable(initial_backoff = "10ms", scope = "retryable-test-generic")]
async fn load_twice<'a, S>(store: &'a S, key: &'a str) -> Result<String, StoreError>
where
    S: Store + ?Sized,
{
    Ok(format!(
        "{} / {}",
        store.load(key).await?,
        store.load(key).await?
    ))
}

struct Cache<T> {
    items: Vec<T>,
    misses: u32,
}

impl<T: Clone + Send + Sync> Cache<T> {
    /// A method of a generic impl: the function's strategy is one `static` for every `T`.
    #[retryable(initial_backoff = "10ms", scope = "retryable-test-generic-impl")]
    async fn get(&mut self, index: usize) -> Result<T, StoreError> {
        match self.items.get(index) {
            Some(item) if self.misses > 0 => Ok(item.clone()),
            _ => {
                self.misses += 1;
                Err(StoreError::Unavailable(self.misses))
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn trait_impls_and_generic_functions_work() {
    let flaky = Flaky {
        calls: Mutex::new(0),
    };
    assert_eq!(load_twice(&flaky, "k").await, Ok("k: 2 / k: 3".to_owned()));

    let mut numbers = Cache {
        items: vec![1, 2],
        misses: 0,
    };
    assert_eq!(numbers.get(1).await, Ok(2));
    let mut words = Cache {
        items: vec!["a"],
        misses: 0,
    };
    assert_eq!(words.get(0).await, Ok("a"));
    assert_eq!(words.get(5).await, Err(StoreError::Unavailable(4)));
    let stats = Scope::lookup("retryable-test-generic-impl")
        .expect("created")
        .stats();
    assert_eq!(stats.attempts, 7);
}
