//! Hedged calls on virtual time (`tokio::time::pause`): the first answer wins and the other
//! copies are dropped; a retryable failure waits for the copies in flight; hedges and retries
//! share `max_attempts`, the deadline and the quota; a throttle stops hedging; a call dropped at
//! any moment leaves its scope's books exact; many calls share one scope; the percentile follows
//! the scope's measured latency.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_core::adaptive::CongestionSignals;
use retry_core::backoff::{FixedRandom, Jitter};
use retry_core::hedge::{HedgeConfigError, Hedging, THROTTLE_PAUSE};
use retry_core::strategy::ConfiguredStrategy;
use retry_core::{
    AdaptiveStrategy, ErrorKind, Retry, RetryConfig, RetryInfo, RetryMode, RetryReason,
    RetrySafety, RetryStrategy, Scope, StandardStrategy, attempt, retryable, strategy_for,
};
use retry_tests::hedging_strategy;
use tokio::time::{Instant, sleep};

const MS: Duration = Duration::from_millis(1);

/// What a copy answered.
#[derive(Debug, Clone, PartialEq)]
enum Failure {
    /// Retryable.
    Unavailable,
    /// Not retryable.
    NotFound,
    /// Throttled, with a `Retry-After`.
    Throttled(Option<Duration>),
}

impl RetryInfo for Failure {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            Failure::NotFound => RetrySafety::No,
            _ => RetrySafety::Yes,
        }
    }
    fn is_throttling(&self) -> bool {
        matches!(self, Failure::Throttled(_))
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::Throttled(after) => *after,
            _ => None,
        }
    }
}

/// A standard strategy in a private scope: `max_attempts`, 10 ms backoffs without jitter.
fn standard(max_attempts: u32) -> StandardStrategy {
    let config = RetryConfig::builder()
        .max_attempts(max_attempts)
        .initial_backoff(10 * MS)
        .jitter(Jitter::None)
        .build()
        .expect("a valid config");
    StandardStrategy::new(config)
}

fn after(delay: Duration) -> Hedging {
    Hedging::after(delay).expect("a delay longer than zero")
}

/// Counts the copies of a call that were made, answered, and dropped before they answered.
#[derive(Debug, Default)]
struct Copies {
    made: AtomicU32,
    answered: AtomicU32,
    cancelled: AtomicU32,
}

/// Marks a copy cancelled unless it answered.
struct Cancelled<'a> {
    copies: &'a Copies,
    answered: bool,
}

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.copies.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Copies {
    /// A copy (numbered from 1 in the order made) that takes `took(copy)` and answers
    /// `answer(copy)`.
    fn copy<T: 'static>(
        &self,
        took: impl Fn(u32) -> Duration,
        answer: impl Fn(u32) -> Result<T, Failure>,
    ) -> impl Future<Output = Result<T, Failure>> + '_ {
        let copy = self.made.fetch_add(1, Ordering::SeqCst) + 1;
        let took = took(copy);
        let answer = answer(copy);
        async move {
            let mut guard = Cancelled {
                copies: self,
                answered: false,
            };
            sleep(took).await;
            guard.answered = true;
            self.answered.fetch_add(1, Ordering::SeqCst);
            answer
        }
    }

    fn counts(&self) -> (u32, u32, u32) {
        (
            self.made.load(Ordering::SeqCst),
            self.answered.load(Ordering::SeqCst),
            self.cancelled.load(Ordering::SeqCst),
        )
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_first_answer_wins_and_the_slow_copy_is_dropped() {
    let strategy = standard(3);
    let copies = Copies::default();
    let started = Instant::now();
    let (answer, stats) = Retry::new(&strategy)
        .hedge(after(50 * MS))
        .expect("an idempotent call")
        .run_with_stats(|| {
            copies.copy(
                |copy| if copy == 1 { 2_000 * MS } else { 20 * MS },
                Ok::<u32, Failure>,
            )
        })
        .await;
    assert_eq!(answer, Ok(2));
    assert_eq!(
        started.elapsed(),
        70 * MS,
        "the hedge at 50 ms, answered 20 ms later"
    );
    assert_eq!(
        copies.counts(),
        (2, 1, 1),
        "the slow copy dropped when the hedge answered"
    );
    assert_eq!(
        (stats.attempts(), stats.hedges(), stats.retries()),
        (2, 1, 0)
    );
    let scope = strategy.scope().stats();
    assert_eq!((scope.attempts, scope.successes, scope.failures), (2, 1, 0));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_call_answered_before_the_delay_sends_no_hedge() {
    let strategy = standard(3);
    let copies = Copies::default();
    let answer = Retry::new(&strategy)
        .hedge(after(50 * MS))
        .expect("an idempotent call")
        .run(|| copies.copy(|_| 49 * MS, Ok::<u32, Failure>))
        .await;
    assert_eq!(answer, Ok(1));
    assert_eq!(copies.counts(), (1, 1, 0));
    assert_eq!(strategy.scope().stats().attempts, 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_retryable_failure_waits_for_the_copy_in_flight() {
    let strategy = standard(3);
    let copies = Copies::default();
    let started = Instant::now();
    let answer = Retry::new(&strategy)
        .hedge(after(50 * MS))
        .expect("an idempotent call")
        .run(|| {
            copies.copy(
                |copy| if copy == 1 { 100 * MS } else { 200 * MS },
                |copy| {
                    if copy == 1 {
                        Err(Failure::Unavailable)
                    } else {
                        Ok(copy)
                    }
                },
            )
        })
        .await;
    assert_eq!(answer, Ok(2));
    assert_eq!(
        started.elapsed(),
        250 * MS,
        "the hedge's answer, not a retry"
    );
    assert_eq!(copies.counts(), (2, 2, 0));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_answer_that_is_not_retried_ends_the_call() {
    let strategy = standard(3);
    let copies = Copies::default();
    let answer = Retry::new(&strategy)
        .hedge(after(50 * MS))
        .expect("an idempotent call")
        .run(|| {
            copies.copy(
                |copy| if copy == 1 { 1_000 * MS } else { 10 * MS },
                |copy| {
                    if copy == 1 {
                        Ok(copy)
                    } else {
                        Err(Failure::NotFound)
                    }
                },
            )
        })
        .await;
    assert_eq!(answer, Err(Failure::NotFound));
    assert_eq!(copies.counts(), (2, 1, 1));
    assert_eq!(strategy.scope().stats().failures, 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn when_every_copy_fails_the_call_backs_off_retries_and_hedges_the_retry() {
    let strategy = standard(4);
    let copies = Copies::default();
    let started = Instant::now();
    let (answer, stats) = Retry::new(&strategy)
        .hedge(after(50 * MS).with_max_hedges(2).unwrap())
        .expect("an idempotent call")
        .run_with_stats(|| {
            copies.copy(
                |copy| match copy {
                    1 => 60 * MS,    // fails at 60 ms
                    2 => 10 * MS,    // the hedge, sent at 50 ms, fails at 60 ms too
                    3 => 1_000 * MS, // the retry is slow
                    _ => 5 * MS,     // its hedge is quick
                },
                |copy| {
                    if copy < 3 {
                        Err(Failure::Unavailable)
                    } else {
                        Ok(copy)
                    }
                },
            )
        })
        .await;
    assert_eq!(answer, Ok(4));
    // Both copies failed at 60 ms; a backoff of 20 ms (the second: the hedge counts), the retry
    // at 80 ms, its hedge at 130 ms, answered at 135 ms.
    assert_eq!(started.elapsed(), 135 * MS);
    assert_eq!(
        (stats.attempts(), stats.hedges(), stats.retries()),
        (4, 2, 1)
    );
    assert_eq!(stats.waited(), 20 * MS);
    assert_eq!(copies.counts(), (4, 3, 1));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn max_hedges_caps_the_copies_of_a_call() {
    for max_hedges in 1..=4 {
        let strategy = standard(10);
        let copies = Copies::default();
        let started = Instant::now();
        let (answer, stats) = Retry::new(&strategy)
            .hedge(after(10 * MS).with_max_hedges(max_hedges).unwrap())
            .expect("an idempotent call")
            .run_with_stats(|| copies.copy(|_| 1_000 * MS, Ok::<u32, Failure>))
            .await;
        assert_eq!(
            answer,
            Ok(1),
            "max_hedges = {max_hedges}: the first copy answers first"
        );
        assert_eq!(started.elapsed(), 1_000 * MS);
        assert_eq!(
            copies.counts(),
            (max_hedges + 1, 1, max_hedges),
            "max_hedges = {max_hedges}: made, answered, dropped"
        );
        assert_eq!(
            (stats.attempts(), stats.hedges()),
            (max_hedges + 1, max_hedges)
        );
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn hedges_and_retries_share_max_attempts_and_the_deadline() {
    let strategy = standard(2);
    let copies = Copies::default();
    let answer = Retry::new(&strategy)
        .hedge(after(10 * MS).with_max_hedges(4).unwrap())
        .expect("an idempotent call")
        .run(|| copies.copy(|_| 100 * MS, |_| Err::<u32, _>(Failure::Unavailable)))
        .await;
    assert_eq!(answer, Err(Failure::Unavailable));
    assert_eq!(
        copies.counts(),
        (2, 2, 0),
        "max_attempts = 2: one hedge, no retry"
    );

    let config = RetryConfig::builder()
        .timeout(25 * MS)
        .jitter(Jitter::None)
        .build()
        .unwrap();
    let strategy = StandardStrategy::new(config);
    let copies = Copies::default();
    let answer = Retry::new(&strategy)
        .hedge(after(10 * MS).with_max_hedges(4).unwrap())
        .expect("an idempotent call")
        .run(|| copies.copy(|_| 1_000 * MS, Ok::<u32, Failure>))
        .await;
    assert_eq!(answer, Ok(1));
    assert_eq!(
        copies.counts().0,
        3,
        "hedges at 10 and 20 ms; none after the 25 ms deadline"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_throttled_copy_stops_the_calls_hedges_and_pauses_the_scopes() {
    let strategy = standard(3);
    let hedging = after(10 * MS).with_max_hedges(3).unwrap();
    let copies = Copies::default();
    let answer = Retry::new(&strategy)
        .hedge(hedging)
        .expect("an idempotent call")
        .run(|| {
            copies.copy(
                |copy| if copy == 1 { 15 * MS } else { 100 * MS },
                |copy| {
                    if copy == 1 {
                        Err(Failure::Throttled(None))
                    } else {
                        Ok(copy)
                    }
                },
            )
        })
        .await;
    assert_eq!(answer, Ok(2));
    assert_eq!(
        copies.counts().0,
        2,
        "the hedge at 10 ms; none after the throttle at 15 ms"
    );
    // Another call of the scope, within the pause: no hedge.
    let copies = Copies::default();
    Retry::new(&strategy)
        .hedge(hedging)
        .expect("an idempotent call")
        .run(|| copies.copy(|_| 100 * MS, Ok::<u32, Failure>))
        .await
        .unwrap();
    assert_eq!(copies.counts().0, 1);
    sleep(THROTTLE_PAUSE).await;
    let copies = Copies::default();
    Retry::new(&strategy)
        .hedge(hedging)
        .expect("an idempotent call")
        .run(|| {
            copies.copy(
                |copy| if copy == 1 { 100 * MS } else { 5 * MS },
                Ok::<u32, Failure>,
            )
        })
        .await
        .unwrap();
    assert_eq!(copies.counts().0, 2, "hedging again after the pause");
}

#[test]
fn a_call_declared_not_idempotent_cannot_be_hedged() {
    let strategy = standard(3);
    let error = Retry::new(&strategy)
        .idempotent(false)
        .hedge(after(10 * MS))
        .expect_err("hedging a call declared not idempotent");
    assert_eq!(error, HedgeConfigError::NotIdempotent);
    assert_eq!(
        error.to_string(),
        "a hedge sends the request again while the first copy may still be processed: a call \
         declared idempotent(false) cannot be hedged; remove .hedge(...) or declare the call \
         idempotent"
    );
    assert!(
        Retry::new(&strategy)
            .idempotent(true)
            .hedge(after(10 * MS))
            .is_ok()
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn each_copy_knows_it_is_a_hedge() {
    let strategy = standard(3);
    let seen = std::sync::Mutex::new(Vec::new());
    let answer = Retry::new(&strategy)
        .hedge(after(10 * MS))
        .expect("an idempotent call")
        .run(|| {
            let at_call = attempt::current().unwrap();
            let seen = &seen;
            async move {
                let in_future = attempt::current().unwrap();
                seen.lock().unwrap().push((at_call, in_future));
                sleep(if in_future.is_hedge() { MS } else { 100 * MS }).await;
                Ok::<_, Failure>(attempt::current().unwrap())
            }
        })
        .await
        .unwrap();
    assert!(answer.is_hedge() && answer.number() == 2);
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 2);
    for (at_call, in_future) in seen {
        assert_eq!(at_call, in_future);
    }
    assert!(attempt::current().is_none());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_attempt_timeout_cuts_each_copy() {
    #[derive(Debug)]
    struct Cut;
    impl RetryInfo for Cut {
        fn retry_safety(&self) -> RetrySafety {
            RetrySafety::Yes
        }
    }
    impl From<tokio::time::error::Elapsed> for Cut {
        fn from(_: tokio::time::error::Elapsed) -> Self {
            Cut
        }
    }
    let strategy = standard(2);
    let started = Instant::now();
    let answer: Result<(), Cut> = Retry::new(&strategy)
        .attempt_timeout(30 * MS)
        .hedge(after(10 * MS))
        .expect("an idempotent call")
        .run(std::future::pending)
        .await;
    assert!(answer.is_err());
    // The first copy cut at 30 ms (the hedge still in flight), the hedge at 40 ms: no attempt
    // left.
    assert_eq!(started.elapsed(), 40 * MS);
}

/// How the scope's books stand: attempts, successes, failures, the quota's level, the limiter's
/// waiters.
fn books(scope: &Scope) -> (u64, u64, u64, u32, u32) {
    let stats = scope.stats();
    (
        stats.attempts,
        stats.successes,
        stats.failures,
        scope.quota().level(),
        stats.limiter.waiting,
    )
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_call_dropped_at_any_moment_leaves_the_books_exact() {
    // Copy 1 fails at 30 ms, its hedge (10 ms) at 40 ms; the retry after a 20 ms backoff at
    // 60 ms; its hedge at 70 ms; both answer at 160 ms. Dropped every 5 ms along the way.
    for dropped_at in (0..=170).step_by(5) {
        let strategy = hedging_strategy(4);
        let copies = Copies::default();
        let hedging = after(10 * MS).with_max_hedges(2).unwrap();
        let call = Retry::new(&strategy)
            .hedge(hedging)
            .expect("an idempotent call")
            .run(|| {
                copies.copy(
                    |copy| if copy <= 2 { 30 * MS } else { 100 * MS },
                    |copy| {
                        if copy <= 2 {
                            Err(Failure::Unavailable)
                        } else {
                            Ok(copy)
                        }
                    },
                )
            });
        let ended = tokio::time::timeout(Duration::from_millis(dropped_at), call).await;
        let (made, answered, cancelled) = copies.counts();
        assert_eq!(
            made,
            answered + cancelled,
            "at {dropped_at} ms: every copy settled"
        );
        let (attempts, successes, failures, level, waiting) = books(strategy.scope());
        assert_eq!(
            u64::from(made),
            attempts,
            "at {dropped_at} ms: every copy counted once"
        );
        assert_eq!(
            successes + failures,
            1,
            "at {dropped_at} ms: the call ended once"
        );
        assert_eq!(ended.is_ok(), successes == 1, "at {dropped_at} ms");
        assert_eq!(waiting, 0);
        // Paid (14 each, the default costs): every hedge sent and the retry once it was
        // granted; a retry granted and not sent is given back. The retry and its hedge tie at
        // 160 ms, and the retry, polled first, wins: a success refunds it (the winner's cost,
        // a fixed quota's rule); the hedge that lost stays charged.
        let hedges = u32::from(made >= 2) + u32::from(made >= 4);
        let retries = u32::from(made >= 3);
        let paid = 14 * (hedges + retries);
        let refunded = if successes == 1 { 14 } else { 0 };
        assert_eq!(
            level,
            500 - paid + refunded,
            "at {dropped_at} ms ({made} copies)"
        );
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn two_hundred_calls_share_one_scope_and_its_books_add_up() {
    let strategy = Arc::new(strategy_for(
        RetryConfig::builder()
            .jitter(Jitter::None)
            .initial_backoff(5 * MS)
            .build()
            .unwrap(),
        "hedging-two-hundred",
    ));
    let made = Arc::new(AtomicU32::new(0));
    let mut tasks = Vec::new();
    for call in 0..200u64 {
        let strategy = Arc::clone(&strategy);
        let made = Arc::clone(&made);
        tasks.push(tokio::spawn(async move {
            // Calls arrive 1 ms apart; one in ten lands on a slow server (a mixture, as the
            // paper's), one in twenty fails once.
            sleep(MS * (call as u32)).await;
            let hedging = Hedging::after(30 * MS).unwrap();
            let mut copy = 0;
            Retry::new(&*strategy)
                .hedge(hedging)
                .expect("an idempotent call")
                .run_with_stats(|| {
                    made.fetch_add(1, Ordering::SeqCst);
                    copy += 1;
                    let slow = (call + copy) % 10 == 0;
                    let fail = call % 20 == 7 && copy == 1;
                    async move {
                        sleep(if slow { 500 * MS } else { 10 * MS }).await;
                        if fail {
                            Err(Failure::Unavailable)
                        } else {
                            Ok(call)
                        }
                    }
                })
                .await
        }));
    }
    let mut attempts = 0;
    for (call, task) in tasks.into_iter().enumerate() {
        let (answer, stats) = task.await.unwrap();
        assert_eq!(answer, Ok(call as u64));
        attempts += u64::from(stats.attempts());
    }
    let scope = strategy.scope().stats();
    assert_eq!(scope.successes, 200);
    assert_eq!(scope.attempts, attempts);
    assert_eq!(scope.attempts, u64::from(made.load(Ordering::SeqCst)));
    assert!(attempts > 200, "{attempts}: some calls hedged");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_percentile_hedges_once_the_scope_has_its_samples() {
    // A fixed quota, the same at every age: the default's young scope would hedge too, but
    // after its window it waits until its level holds half a cap sized by the traffic.
    let strategy = hedging_strategy(3);
    let p95 = Hedging::at_percentile(95.0).unwrap();
    let copies = Copies::default();
    // 200 calls: 190 answer in 10 ms, 10 in 50 ms. None hedges: the percentile is unknown.
    for call in 0..200u32 {
        Retry::new(&strategy)
            .hedge(p95)
            .expect("an idempotent call")
            .run(|| {
                copies.copy(
                    |_| if call % 20 == 0 { 50 * MS } else { 10 * MS },
                    Ok::<u32, Failure>,
                )
            })
            .await
            .unwrap();
    }
    assert_eq!(copies.counts().0, 200);
    let measured = strategy.scope_hedging().unwrap();
    assert_eq!(measured.samples(), 200);
    let p95_latency = measured.latency(95.0).unwrap();
    assert!(
        p95_latency >= 10 * MS && p95_latency <= 10 * MS * 9 / 8,
        "{p95_latency:?}"
    );
    // A slow call is hedged at the p95 (read at most once a second), on tokio's millisecond
    // timer.
    sleep(Duration::from_secs(1)).await;
    let copies = Copies::default();
    let started = Instant::now();
    let answer = Retry::new(&strategy)
        .hedge(p95)
        .expect("an idempotent call")
        .run(|| {
            copies.copy(
                |copy| if copy == 1 { 1_000 * MS } else { 10 * MS },
                Ok::<u32, Failure>,
            )
        })
        .await;
    assert_eq!(answer, Ok(2));
    let hedged_at = started.elapsed() - 10 * MS;
    assert!(
        hedged_at >= p95_latency && hedged_at <= p95_latency + MS,
        "{hedged_at:?}"
    );
}

/// An adaptive strategy whose limiter a throttle switched on.
fn throttled_adaptive() -> AdaptiveStrategy {
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("a valid config");
    let strategy = AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config).random(Arc::new(FixedRandom(0.0))),
    )
    .congestion(CongestionSignals::Throttling);
    let token = strategy.acquire_initial_token();
    if let Ok(retry) =
        strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
    {
        strategy.abandon(retry);
    }
    strategy
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_scope_held_to_its_rate_sends_no_hedge() {
    let strategy = throttled_adaptive();
    assert!(strategy.scope().limiter().is_enabled());
    sleep(THROTTLE_PAUSE).await;
    let copies = Copies::default();
    let answer = Retry::new(&strategy)
        .hedge(after(10 * MS))
        .expect("an idempotent call")
        .run(|| copies.copy(|_| 100 * MS, Ok::<u32, Failure>))
        .await;
    assert_eq!(answer, Ok(1));
    assert_eq!(copies.counts().0, 1, "no spare permit: no hedge");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_configured_strategy_hedges_in_either_mode() {
    for mode in [RetryMode::Standard, RetryMode::Adaptive] {
        let config = RetryConfig::builder().mode(mode).build().unwrap();
        let strategy: ConfiguredStrategy = strategy_for(config, &format!("hedging-{mode:?}"));
        let copies = Copies::default();
        let answer = Retry::new(&strategy)
            .hedge(after(10 * MS))
            .expect("an idempotent call")
            .run(|| {
                copies.copy(
                    |copy| if copy == 1 { 100 * MS } else { MS },
                    Ok::<u32, Failure>,
                )
            })
            .await;
        assert_eq!(answer, Ok(2), "{mode:?}");
    }
}

// ---- `#[retryable(hedge_after = ..., max_hedges = ...)]` ------------------------------------

/// A hedged call can be spawned: its future is `Send` when its copies are.
fn assert_send<T: Send>(_: &T) {}

/// A client whose methods hedge, as the attribute writes it.
struct Client {
    copies: Copies,
}

impl Client {
    /// The first copy takes 1 s, the others 5 ms; `key` by value (cloned for each copy).
    #[retryable(
        hedge_after = "20ms",
        max_hedges = 2,
        scope = "hedging-attribute-fixed"
    )]
    async fn fetch(&self, key: String) -> Result<String, Failure> {
        let copy = self
            .copies
            .copy(|copy| if copy == 1 { 1_000 * MS } else { 5 * MS }, Ok)
            .await?;
        assert!(attempt::current().is_some_and(|at| at.is_hedge() == (copy > 1)));
        Ok(format!("{key} from copy {copy}"))
    }

    /// Every copy slow, each failing: hedges and retries share `max_attempts = 4`.
    #[retryable(
        hedge_after = "10ms",
        max_hedges = 4,
        max_attempts = 4,
        idempotent = true
    )]
    async fn unavailable(&self) -> Result<u32, Failure> {
        self.copies
            .copy(|_| 100 * MS, |_| Err(Failure::Unavailable))
            .await
    }

    /// Hedged at the scope's p90: the first attempt takes `took`, a hedge 10 ms. A fixed quota,
    /// full from the start (see `a_percentile_hedges_once_the_scope_has_its_samples`).
    #[retryable(hedge_after = "p90", scope = "hedging-attribute-p90", quota = 500)]
    async fn at_p90(&self, took: Duration) -> Result<u32, Failure> {
        let hedge = attempt::current().is_some_and(|at| at.is_hedge());
        let took = if hedge { 10 * MS } else { took };
        self.copies.copy(|_| took, Ok).await
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_attribute_hedges_and_the_first_answer_wins() {
    let client = Client {
        copies: Copies::default(),
    };
    let started = Instant::now();
    let call = client.fetch("k".to_owned());
    assert_send(&call);
    let answer = call.await;
    assert_eq!(answer, Ok("k from copy 2".to_owned()));
    assert_eq!(
        started.elapsed(),
        25 * MS,
        "hedged at 20 ms, answered 5 ms later"
    );
    assert_eq!(
        client.copies.counts(),
        (2, 1, 1),
        "the hedge answered before a second hedge was due; the first copy was dropped"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_attributes_hedges_and_retries_share_max_attempts() {
    let client = Client {
        copies: Copies::default(),
    };
    assert_eq!(client.unavailable().await, Err(Failure::Unavailable));
    assert_eq!(
        client.copies.counts(),
        (4, 4, 0),
        "the first attempt and 3 hedges: max_attempts = 4"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_attributes_percentile_follows_the_scopes_latency() {
    let client = Client {
        copies: Copies::default(),
    };
    // Until the scope has its samples (100 for p90: 10 above it), no hedge: 90 calls answer in
    // 10 ms, 10 in 50 ms.
    for call in 1..=100 {
        let took = if call % 10 == 0 { 50 * MS } else { 10 * MS };
        assert_eq!(client.at_p90(took).await, Ok(call));
    }
    let before = client.copies.counts().0;
    assert_eq!(before, 100, "no hedge before the percentile is known");
    // The percentile is read at most once a second.
    sleep(Duration::from_secs(1)).await;
    let started = Instant::now();
    client.at_p90(1_000 * MS).await.expect("a success");
    let took = started.elapsed();
    assert!(
        took >= 20 * MS && took <= 10 * MS * 9 / 8 + 11 * MS,
        "hedged at the scope's p90 (10 to 11.25 ms), answered 10 ms later: {took:?}"
    );
    assert_eq!(client.copies.counts().0, before + 2);
}

/// A trait whose implementation hedges, under `#[async_trait]`.
#[async_trait::async_trait]
trait Fetch {
    async fn fetch(&self) -> Result<u32, Failure>;
}

#[async_trait::async_trait]
impl Fetch for Client {
    #[retryable(hedge_after = "20ms", scope = "hedging-attribute-async-trait")]
    async fn fetch(&self) -> Result<u32, Failure> {
        self.copies
            .copy(|copy| if copy == 1 { 1_000 * MS } else { 5 * MS }, Ok)
            .await
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_async_trait_method_hedges() {
    let client = Client {
        copies: Copies::default(),
    };
    let started = Instant::now();
    assert_eq!(Fetch::fetch(&client).await, Ok(2));
    assert_eq!(started.elapsed(), 25 * MS);
    assert_eq!(client.copies.counts(), (2, 1, 1));
}
