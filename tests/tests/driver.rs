//! The plain API in virtual time: `retry` and `Retry` (classifier, `on_retry`, attempt timeout)
//! return the last error unchanged, always make one attempt, sleep exactly the backoff, re-check
//! the limiter after waiting while keeping their place in its line, honour `max_wait` (a retry
//! refused up front, no wait longer), and leave the scope consistent when cancelled or when an
//! attempt panics.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_core::adaptive::{Admission, Reservation};
use retry_core::backoff::{FixedRandom, RandomSource};
use retry_core::classify::{ClassifierChain, FnClassifier, RetryInfoClassifier};
use retry_core::strategy::{RetryToken, SendPermit};
use retry_core::{
    AdaptiveStrategy, ClassifyRetry, ErrorKind, Fault, Retry, RetryAction, RetryConfig, RetryError,
    RetryEvent, RetryInfo, RetryMode, RetryReason, RetrySafety, RetryStrategy, StandardStrategy,
    retry,
};
use tokio::time::Instant;

/// A failure whose identity can be checked: `id` and the `marker` allocation are unique to the
/// attempt that made it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("failure #{id}")]
struct Failure {
    id: u32,
    marker: Arc<str>,
    retryable: bool,
    throttling: bool,
    timeout: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn server(id: u32) -> Self {
        Self {
            id,
            marker: format!("attempt-{id}").into(),
            retryable: true,
            throttling: false,
            timeout: false,
            retry_after: None,
        }
    }

    fn throttled(id: u32) -> Self {
        Self {
            throttling: true,
            ..Self::server(id)
        }
    }

    fn fatal(id: u32) -> Self {
        Self {
            retryable: false,
            ..Self::server(id)
        }
    }
}

impl RetryInfo for Failure {
    fn retry_safety(&self) -> RetrySafety {
        if self.retryable {
            RetrySafety::Yes
        } else {
            RetrySafety::No
        }
    }
    fn is_throttling(&self) -> bool {
        self.throttling
    }
    fn is_timeout(&self) -> bool {
        self.timeout
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
    fn fault(&self) -> Fault {
        Fault::Server
    }
}

/// An attempt cut by `attempt_timeout` becomes a retryable timeout.
impl From<tokio::time::error::Elapsed> for Failure {
    fn from(_: tokio::time::error::Elapsed) -> Self {
        Self {
            timeout: true,
            ..Self::server(0)
        }
    }
}

fn pinned_random() -> Arc<dyn RandomSource> {
    Arc::new(FixedRandom(1.0))
}

/// A standard strategy on tokio's (paused) clock with the jitter pinned to 1.0.
fn standard(builder: retry_core::config::RetryConfigBuilder) -> StandardStrategy {
    StandardStrategy::builder(builder.build().expect("valid"))
        .random(pinned_random())
        .build()
}

/// An adaptive strategy on tokio's (paused) clock with the jitter pinned to 1.0.
fn adaptive(builder: retry_core::config::RetryConfigBuilder) -> AdaptiveStrategy {
    AdaptiveStrategy::from_builder(
        StandardStrategy::builder(builder.build().expect("valid")).random(pinned_random()),
    )
}

#[tokio::test(start_paused = true)]
async fn the_last_error_is_returned_unchanged() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(3));
    let attempts = AtomicU32::new(0);
    let last_marker: Mutex<Option<Arc<str>>> = Mutex::new(None);
    let result: Result<(), Failure> = retry(&strategy, || {
        let id = 100 + attempts.fetch_add(1, Ordering::SeqCst);
        let failure = Failure::server(id);
        *last_marker.lock().expect("lock") = Some(Arc::clone(&failure.marker));
        async move { Err(failure) }
    })
    .await;
    let error = result.expect_err("every attempt failed");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert_eq!(error.id, 102, "the third attempt's error");
    let last = last_marker
        .lock()
        .expect("lock")
        .clone()
        .expect("an attempt ran");
    assert!(
        Arc::ptr_eq(&error.marker, &last),
        "the very same value, not a copy or a new one"
    );
    assert_eq!(error.to_string(), "failure #102");
}

#[tokio::test(start_paused = true)]
async fn max_attempts_one_makes_exactly_one_attempt() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(1));
    let attempts = AtomicU32::new(0);
    let start = Instant::now();
    let result: Result<(), Failure> = retry(&strategy, || {
        attempts.fetch_add(1, Ordering::SeqCst);
        async { Err(Failure::server(7)) }
    })
    .await;
    assert_eq!(result.expect_err("failed").id, 7);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(start.elapsed(), Duration::ZERO, "no sleep");
    let stats = strategy.scope().stats();
    assert_eq!((stats.attempts, stats.retries, stats.failures), (1, 0, 1));
    assert_eq!(stats.quota_level, 500, "nothing charged");
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_is_made_even_with_an_empty_quota() {
    let strategy = standard(RetryConfig::aws_classic().quota_capacity(5));
    assert!(strategy.scope().quota().try_acquire(5));
    let attempts = AtomicU32::new(0);
    let result: Result<(), Failure> = retry(&strategy, || {
        let id = attempts.fetch_add(1, Ordering::SeqCst);
        async move { Err(Failure::server(id)) }
    })
    .await;
    // One attempt, and no retry: the quota cannot pay 5.
    assert_eq!(result.expect_err("failed").id, 0);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(strategy.scope().stats().quota_exhausted, 1);
}

#[tokio::test(start_paused = true)]
async fn an_exhausted_quota_ends_the_call_with_its_last_error() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(5).quota_capacity(5));
    let attempts = AtomicU32::new(0);
    let start = Instant::now();
    let result: Result<(), Failure> = retry(&strategy, || {
        let id = attempts.fetch_add(1, Ordering::SeqCst);
        async move { Err(Failure::server(id)) }
    })
    .await;
    // Attempt 0 fails, the retry takes the 5, attempt 1 fails, no quota left.
    assert_eq!(result.expect_err("failed").id, 1);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    assert_eq!(strategy.scope().quota().level(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_non_retryable_error_is_returned_after_one_attempt() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(5));
    let attempts = AtomicU32::new(0);
    let result: Result<(), Failure> = retry(&strategy, || {
        attempts.fetch_add(1, Ordering::SeqCst);
        async { Err(Failure::fatal(42)) }
    })
    .await;
    assert_eq!(result.expect_err("failed").id, 42);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(strategy.scope().stats().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn the_driver_sleeps_exactly_the_backoff_and_retry_after() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(4));
    let start = Instant::now();
    let times = Mutex::new(Vec::new());
    let value = retry(&strategy, || {
        let mut times = times.lock().expect("lock");
        times.push(start.elapsed());
        let attempt = times.len() as u32;
        async move {
            match attempt {
                1 => Err(Failure::server(1)),
                // The server asks for 7 s, more than the 2 s backoff of retry 2.
                2 => Err(Failure {
                    retry_after: Some(Duration::from_secs(7)),
                    ..Failure::throttled(2)
                }),
                _ => Ok(attempt),
            }
        }
    })
    .await;
    assert_eq!(value.expect("third attempt succeeds"), 3);
    // Attempt 1 at 0; backoff 1 s; attempt 2 at 1 s; max(2 s, 7 s); attempt 3 at 8 s.
    assert_eq!(
        *times.lock().expect("lock"),
        [
            Duration::ZERO,
            Duration::from_secs(1),
            Duration::from_secs(8)
        ]
    );
    // The success returned the last retry's cost (5): the quota is full again minus retry 1.
    assert_eq!(strategy.scope().quota().level(), 495);
}

#[tokio::test(start_paused = true)]
async fn retry_with_on_retry_and_attempt_timeout() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(3));
    let events = Mutex::new(Vec::new());
    let attempts = AtomicU32::new(0);
    let start = Instant::now();
    let result = Retry::new(&strategy)
        .on_retry(|event: &RetryEvent<'_, Failure>| {
            events.lock().expect("lock").push((
                event.attempt(),
                event.error().map(|error| (error.id, error.timeout)),
                event.delay(),
                event.reason().kind(),
            ));
        })
        .attempt_timeout(Duration::from_secs(2))
        .run(|| {
            let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                if attempt == 1 {
                    // Hangs: cut after 2 s.
                    std::future::pending::<()>().await;
                }
                Ok::<_, Failure>(attempt)
            }
        })
        .await;
    assert_eq!(result.expect("the second attempt succeeds"), 2);
    // One retry: after attempt 1, cut (a timeout, id 0 from `From<Elapsed>`), 1 s backoff.
    assert_eq!(
        *events.lock().expect("lock"),
        [(
            1,
            Some((0, true)),
            Duration::from_secs(1),
            ErrorKind::Timeout
        )]
    );
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(3),
        "2 s cut + 1 s backoff"
    );
    // The timeout retry cost 10, refunded by the success.
    assert_eq!(strategy.scope().quota().level(), 500);
}

#[tokio::test(start_paused = true)]
async fn a_classifier_can_retry_ok_values_as_a_waiter() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(5));
    let until_done = FnClassifier::new(
        "until done",
        |outcome: &Result<&str, Failure>| match outcome {
            Ok("pending") => RetryAction::retryable(ErrorKind::Transient),
            _ => RetryAction::NoActionIndicated,
        },
    );
    let events = Mutex::new(Vec::new());
    let polls = AtomicU32::new(0);
    let start = Instant::now();
    let state = Retry::new(&strategy)
        .classifier(until_done)
        .on_retry(|event: &RetryEvent<'_, Failure>| {
            events.lock().expect("lock").push((
                event.attempt(),
                event.error().is_none(),
                event.delay(),
            ));
        })
        .run(|| {
            let poll = polls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, Failure>(if poll < 2 { "pending" } else { "done" }) }
        })
        .await;
    assert_eq!(state.expect("done"), "done");
    assert_eq!(
        *events.lock().expect("lock"),
        [
            (1, true, Duration::from_secs(1)),
            (2, true, Duration::from_secs(2))
        ]
    );
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn a_classifier_chain_can_forbid_what_the_error_allows() {
    let strategy = standard(RetryConfig::aws_classic().max_attempts(5));
    let chain = ClassifierChain::<(), Failure>::new()
        .with(RetryInfoClassifier)
        .with(FnClassifier::new(
            "no retrying 13",
            |outcome: &Result<(), Failure>| match outcome {
                Err(failure) if failure.id == 13 => RetryAction::RetryForbidden,
                _ => RetryAction::NoActionIndicated,
            },
        ));
    assert_eq!(
        chain.classify(&Err(Failure::server(12))),
        RetryAction::retryable(ErrorKind::Server)
    );
    let attempts = AtomicU32::new(0);
    let result = Retry::new(&strategy)
        .classifier(chain)
        .run(|| {
            let id = 12 + attempts.fetch_add(1, Ordering::SeqCst);
            async move { Err::<(), _>(Failure::server(id)) }
        })
        .await;
    // 12 is retried (the error says so), 13 is forbidden by the later classifier.
    assert_eq!(result.expect_err("failed").id, 13);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

/// A strategy that makes the driver wait: each `acquire_send_permit` answers the next scripted
/// wait, and grants once the script is empty. Records when it was asked.
#[derive(Debug)]
struct Gate {
    inner: StandardStrategy,
    waits: Mutex<VecDeque<Duration>>,
    asked: Mutex<Vec<Duration>>,
    start: Instant,
}

impl RetryStrategy for Gate {
    fn acquire_initial_token(&self) -> RetryToken {
        self.inner.acquire_initial_token()
    }
    fn acquire_send_permit(&self, token: &mut RetryToken) -> SendPermit {
        self.asked.lock().expect("lock").push(self.start.elapsed());
        match self.waits.lock().expect("lock").pop_front() {
            Some(wait) => SendPermit::Wait(wait),
            None => self.inner.acquire_send_permit(token),
        }
    }
    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError> {
        let token = self.inner.refresh_retry_token(token, reason)?;
        // The retry will be told to wait 1 s, then be granted.
        self.waits
            .lock()
            .expect("lock")
            .push_back(Duration::from_secs(1));
        Ok(token)
    }
    fn record_success(&self, token: RetryToken) {
        self.inner.record_success(token)
    }
    fn record_failure(&self, token: RetryToken) {
        self.inner.record_failure(token)
    }
    fn abandon(&self, token: RetryToken) {
        self.inner.abandon(token)
    }
}

#[tokio::test(start_paused = true)]
async fn the_driver_asks_again_after_every_wait() {
    let start = Instant::now();
    let gate = Gate {
        inner: standard(RetryConfig::aws_classic()),
        waits: Mutex::new(VecDeque::from([
            Duration::from_millis(300),
            Duration::from_millis(200),
        ])),
        asked: Mutex::new(Vec::new()),
        start,
    };
    let sent = Mutex::new(Vec::new());
    let result = retry(&gate, || {
        let mut sent = sent.lock().expect("lock");
        sent.push(start.elapsed());
        let attempt = sent.len();
        async move {
            if attempt == 1 {
                Err(Failure::server(1))
            } else {
                Ok(attempt)
            }
        }
    })
    .await;
    assert_eq!(result.expect("second attempt succeeds"), 2);
    // First attempt: asked at 0 (wait 300 ms), 0.3 s (wait 200 ms), 0.5 s (granted).
    // Retry: 1 s backoff to 1.5 s, asked (wait 1 s), asked again at 2.5 s (granted).
    let ms = Duration::from_millis;
    assert_eq!(
        *gate.asked.lock().expect("lock"),
        [Duration::ZERO, ms(300), ms(500), ms(1500), ms(2500)]
    );
    assert_eq!(*sent.lock().expect("lock"), [ms(500), ms(2500)]);
}

#[tokio::test(start_paused = true)]
async fn an_adaptive_retry_waits_for_its_permit_and_re_checks() {
    let strategy = adaptive(RetryConfig::aws_classic());
    let start = Instant::now();
    let sent = Mutex::new(Vec::new());
    let result = retry(&strategy, || {
        let mut sent = sent.lock().expect("lock");
        sent.push(start.elapsed());
        let attempt = sent.len();
        async move {
            if attempt == 1 {
                Err(Failure::throttled(1))
            } else {
                Ok(attempt)
            }
        }
    })
    .await;
    assert_eq!(result.expect("the retry succeeds"), 2);
    // The throttle at t = 0 turns the bucket on: empty, 0.5/s. Backoff 1 s; at 1 s the bucket
    // holds 0.5 permits: wait 1 s more, ask again at 2 s: granted.
    assert_eq!(
        *sent.lock().expect("lock"),
        [Duration::ZERO, Duration::from_secs(2)]
    );
    let stats = strategy.scope().limiter().stats();
    assert_eq!(stats.waiting, 0);
    assert!(
        stats.capacity >= 0.0 && stats.capacity < 1e-9,
        "capacity {}",
        stats.capacity
    );
}

#[tokio::test(start_paused = true)]
async fn an_adaptive_retry_keeps_its_place_in_line_while_it_re_checks() {
    let strategy = Arc::new(adaptive(RetryConfig::aws_classic()));
    let start = Instant::now();
    let sent = Arc::new(Mutex::new(Vec::new()));
    // The retried call: throttled at 0 (the bucket turns on, empty, 0.5/s), 1 s backoff; at
    // 1 s it queues for the permit expected at 2 s, re-checking every 500 ms.
    let retried = {
        let (strategy, sent) = (Arc::clone(&strategy), Arc::clone(&sent));
        tokio::spawn(async move {
            let attempts = AtomicU32::new(0);
            retry(&*strategy, || {
                let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
                sent.lock()
                    .expect("lock")
                    .push(("retried", attempt, start.elapsed()));
                async move {
                    if attempt == 1 {
                        Err(Failure::throttled(1))
                    } else {
                        Ok(())
                    }
                }
            })
            .await
        })
    };
    // A newcomer queues at 1.2 s, behind the retry.
    let newcomer = {
        let (strategy, sent) = (Arc::clone(&strategy), Arc::clone(&sent));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1200)).await;
            retry(&*strategy, || {
                sent.lock()
                    .expect("lock")
                    .push(("newcomer", 1, start.elapsed()));
                async { Ok::<_, Failure>(()) }
            })
            .await
        })
    };
    // Two callers that each gave their place up at every re-check would queue behind each
    // other forever: bound the (virtual) time.
    tokio::time::timeout(Duration::from_secs(60), async {
        retried.await.expect("task").expect("the retry succeeds");
        newcomer
            .await
            .expect("task")
            .expect("the newcomer succeeds");
    })
    .await
    .expect("both calls are sent within a minute");
    // The retry keeps its ticket across its re-checks (1.5 s, 2 s): the bucket's first permit,
    // at 2 s, is its own. Had it given its place up at a re-check it would have queued behind
    // the newcomer, who would have been sent first, at 2 s. The newcomer's permit comes later
    // (when exactly depends on the rate the retry's success raised).
    let sent = sent.lock().expect("lock").clone();
    assert_eq!(
        sent[..2],
        [
            ("retried", 1, Duration::ZERO),
            ("retried", 2, Duration::from_secs(2))
        ]
    );
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[2].0, "newcomer");
    assert!(sent[2].2 > Duration::from_secs(2), "{sent:?}");
    assert_eq!(strategy.scope().limiter().stats().waiting, 0);
}

#[tokio::test(start_paused = true)]
async fn max_wait_refuses_a_retry_when_it_is_asked_for_without_waiting() {
    let strategy = adaptive(
        RetryConfig::aws_classic()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_millis(300)),
    );
    let start = Instant::now();
    let attempts = AtomicU32::new(0);
    let events = Mutex::new(Vec::new());
    let result = Retry::new(&strategy)
        .on_retry(|event: &RetryEvent<'_, Failure>| {
            events.lock().expect("lock").push(event.attempt());
        })
        .run(|| {
            let id = attempts.fetch_add(1, Ordering::SeqCst) + 1;
            async move { Err::<(), _>(Failure::throttled(id)) }
        })
        .await;
    // The throttle turns the bucket on, empty, 0.5/s: after the 1 s backoff the permit would
    // be 1 s away, more than 300 ms. `finish` refuses the retry: the throttled error is
    // returned at once, with no backoff slept, no place queued and no quota taken.
    assert_eq!(result.expect_err("refused").id, 1);
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert!(
        events.lock().expect("lock").is_empty(),
        "no retry announced"
    );
    assert_eq!(start.elapsed(), Duration::ZERO, "nothing waited");
    let stats = strategy.scope().stats();
    assert_eq!(stats.rate_limited, 1);
    assert_eq!((stats.retries, stats.failures), (0, 1));
    assert_eq!(stats.quota_level, 500);
    assert_eq!(stats.limiter.waiting, 0);
}

#[tokio::test(start_paused = true)]
async fn max_wait_caps_the_wait_of_every_attempt_the_driver_makes() {
    let max_wait = Duration::from_millis(300);
    let strategy = Arc::new(adaptive(
        RetryConfig::aws_classic()
            .mode(RetryMode::Adaptive)
            .max_wait(max_wait),
    ));
    let start = Instant::now();
    let ms = Duration::from_millis;
    // Call A is throttled at 0.25 s, when the bucket turns on with 0.125 permits (0.5/s since
    // 0): its retry's permit would be 0.75 s after its backoff, so it is refused at once.
    let a = {
        let strategy = Arc::clone(&strategy);
        tokio::spawn(async move {
            retry(&*strategy, || async {
                tokio::time::sleep(ms(250)).await;
                Err::<(), _>(Failure::throttled(1))
            })
            .await
        })
    };
    // Call B, also sent at 0, is throttled at 0.75 s (the same congestion event: the rate
    // stays): after its 1 s backoff the bucket should hold 0.875, a 250 ms wait, so the retry
    // is granted. But two callers queue at 1 s and keep their places: at 1.75 s the retry's
    // permit is 2.25 s away. It waits 300 ms, then is sent without one.
    let sent = Arc::new(Mutex::new(Vec::new()));
    let b = {
        let (strategy, sent) = (Arc::clone(&strategy), Arc::clone(&sent));
        tokio::spawn(async move {
            let attempts = AtomicU32::new(0);
            retry(&*strategy, || {
                let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
                sent.lock().expect("lock").push(start.elapsed());
                async move {
                    if attempt == 1 {
                        tokio::time::sleep(ms(750)).await;
                        Err(Failure::throttled(1))
                    } else {
                        Ok(attempt)
                    }
                }
            })
            .await
        })
    };
    // A's throttle was the scope's first response: its first burst, until 0.35 s. A caller
    // asks for a permit at 0.5 s and gives its place up: the burst over with that one response
    // counted (no rate), the limiter goes on from the floor as it started.
    tokio::time::sleep(ms(500)).await;
    let limiter = strategy.scope().limiter();
    drop(limiter.try_acquire(None, strategy.scope().clock().now()));
    assert_eq!(limiter.stats().waiting, 0);
    tokio::time::sleep(ms(500)).await;
    let ahead: Vec<Reservation> = (0..2)
        .map(
            |_| match limiter.try_acquire(None, strategy.scope().clock().now()) {
                Admission::Wait { reservation, .. } => reservation,
                Admission::Granted => panic!("the bucket holds 0.5 at 1 s"),
            },
        )
        .collect();
    assert_eq!(a.await.expect("task").expect_err("refused").id, 1);
    assert_eq!(b.await.expect("task").expect("the retry succeeds"), 2);
    assert_eq!(*sent.lock().expect("lock"), [ms(0), ms(2050)]);
    let stats = strategy.scope().stats();
    assert_eq!(stats.rate_limited, 1, "A's retry only");
    assert_eq!(stats.limiter.waiting, 2, "B gave its place up when sent");
    assert_eq!(stats.limiter.capacity, 1.0, "B took no permit");
    drop(ahead);
    // First attempts are capped too. The bucket's permit is owed to nobody now: a new call
    // takes it at once. The next finds the bucket empty and its permit over 400 ms away (at
    // the 2.33/s that B's success raised the rate to): it waits max_wait and goes without one.
    let before = Instant::now();
    retry(&*strategy, || async { Ok::<_, Failure>(()) })
        .await
        .expect("granted");
    assert_eq!(before.elapsed(), Duration::ZERO);
    retry(&*strategy, || async { Ok::<_, Failure>(()) })
        .await
        .expect("sent after max_wait");
    assert_eq!(before.elapsed(), max_wait);
    assert_eq!(strategy.scope().limiter().stats().waiting, 0);
}

#[tokio::test(start_paused = true)]
async fn cancelled_during_the_backoff_the_retry_is_refunded() {
    let strategy = standard(RetryConfig::aws_classic());
    let attempts = AtomicU32::new(0);
    let call = retry(&strategy, || {
        attempts.fetch_add(1, Ordering::SeqCst);
        async { Err::<(), _>(Failure::server(1)) }
    });
    // The retry took 5 and sleeps 1 s; the call is dropped at 0.5 s.
    let outcome = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(outcome.is_err(), "timed out");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    let stats = strategy.scope().stats();
    assert_eq!(stats.quota_level, 500, "the unsent retry gave its 5 back");
    assert_eq!((stats.retries, stats.failures, stats.successes), (1, 1, 0));
}

#[tokio::test(start_paused = true)]
async fn cancelled_while_waiting_for_a_permit_the_place_is_given_up() {
    let strategy = Arc::new(adaptive(RetryConfig::aws_classic()));
    let call = {
        let strategy = Arc::clone(&strategy);
        async move { retry(&*strategy, || async { Err::<(), _>(Failure::throttled(1)) }).await }
    };
    // Throttled at 0: retry after 1 s backoff, then told to wait 1 s for a permit. Watch the
    // limiter at 1.2 s, drop the call at 1.5 s.
    let watcher = {
        let strategy = Arc::clone(&strategy);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1200)).await;
            (
                strategy.scope().limiter().stats().waiting,
                strategy.scope().quota().level(),
            )
        })
    };
    let outcome = tokio::time::timeout(Duration::from_millis(1500), call).await;
    assert!(outcome.is_err(), "timed out");
    assert_eq!(
        watcher.await.expect("watcher"),
        (1, 495),
        "waiting, retry paid"
    );
    let stats = strategy.scope().stats();
    assert_eq!(stats.limiter.waiting, 0);
    assert_eq!(stats.quota_level, 500);
    assert!(stats.limiter.capacity >= 0.0);
    // The scope still works: a new call waits its turn and is granted.
    let value = retry(&*strategy, || async { Ok::<_, Failure>(5) }).await;
    assert_eq!(value.expect("granted eventually"), 5);
}

#[tokio::test(start_paused = true)]
async fn cancelled_during_a_sent_retry_the_cost_stays_spent() {
    let strategy = standard(RetryConfig::aws_classic());
    let attempts = AtomicU32::new(0);
    let call = retry(&strategy, || {
        let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if attempt == 2 {
                std::future::pending::<()>().await;
            }
            Err::<(), _>(Failure::server(attempt))
        }
    });
    // Attempt 2 starts at 1 s and hangs; dropped at 3 s.
    assert!(
        tokio::time::timeout(Duration::from_secs(3), call)
            .await
            .is_err()
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    let stats = strategy.scope().stats();
    assert_eq!(
        stats.quota_level, 495,
        "the retry was sent: its cost is not refunded"
    );
    assert_eq!(stats.failures, 1);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_attempt_poisons_nothing() {
    let strategy = Arc::new(adaptive(RetryConfig::aws_classic()));
    let handle = {
        let strategy = Arc::clone(&strategy);
        tokio::spawn(async move {
            let attempts = AtomicU32::new(0);
            retry(&*strategy, || {
                let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    assert!(attempt < 2, "attempt {attempt} panics");
                    Err::<(), _>(Failure::throttled(attempt))
                }
            })
            .await
        })
    };
    let error = handle.await.expect_err("the task panicked");
    assert!(error.is_panic());
    // The scope is readable and consistent: the retry (5) was sent, then its attempt panicked.
    let stats = strategy.scope().stats();
    assert_eq!(stats.quota_level, 495);
    assert_eq!((stats.attempts, stats.retries, stats.failures), (2, 1, 1));
    assert_eq!(stats.limiter.waiting, 0);
    assert!(stats.limiter.enabled);
    // The same strategy works afterwards, limiter included.
    let value = retry(&*strategy, || async { Ok::<_, Failure>("after") }).await;
    assert_eq!(value.expect("works"), "after");
    assert_eq!(strategy.scope().stats().successes, 1);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_on_retry_hook_gives_the_unsent_retry_back() {
    let strategy = Arc::new(standard(RetryConfig::aws_classic()));
    let handle = {
        let strategy = Arc::clone(&strategy);
        tokio::spawn(async move {
            Retry::new(&*strategy)
                .on_retry(|_: &RetryEvent<'_, Failure>| panic!("hook panics"))
                .run(|| async { Err::<(), _>(Failure::server(1)) })
                .await
        })
    };
    assert!(handle.await.expect_err("the task panicked").is_panic());
    // The retry was granted (5 taken) but never sent: like a cancelled one, it is refunded.
    let stats = strategy.scope().stats();
    assert_eq!(stats.quota_level, 500);
    assert_eq!(stats.failures, 1, "the call is counted as failed");
}

#[tokio::test(start_paused = true)]
async fn a_panicking_classifier_still_settles_the_call() {
    let strategy = Arc::new(standard(RetryConfig::aws_classic()));
    let handle = {
        let strategy = Arc::clone(&strategy);
        tokio::spawn(async move {
            let panicky = FnClassifier::new("panics", |_: &Result<(), Failure>| -> RetryAction {
                panic!("classifier panics")
            });
            Retry::new(&*strategy)
                .classifier(panicky)
                .run(|| async { Err::<(), _>(Failure::server(1)) })
                .await
        })
    };
    assert!(handle.await.expect_err("the task panicked").is_panic());
    let stats = strategy.scope().stats();
    assert_eq!(
        (stats.attempts, stats.failures, stats.quota_level),
        (1, 1, 500)
    );
}
