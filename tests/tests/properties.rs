//! Property tests: backoff delays never exceed `max_backoff`; standard mode never retries
//! sooner than `retry_after` (or refuses when it is too long); the quota stays in
//! `[0, capacity]` and matches a reference model, refill rates below a thousandth of a token per
//! second included; a lone call on a new default scope makes every attempt it asks for; a
//! classifier chain runs in priority order and stops at `RetryForbidden`, as a reference model
//! says; the driver's attempt count and result.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use proptest::prelude::*;
use proptest::sample::select;
use retry_core::backoff::{Backoff, ExponentialBackoff, FixedRandom, Jitter, RandomSource};
use retry_core::classify::{ClassifierChain, ClassifierPriority, FnClassifier};
use retry_core::clock::ManualClock;
use retry_core::quota::RetryQuota;
use retry_core::{
    ClassifyRetry, ErrorKind, Fault, RetryAction, RetryConfig, RetryError, RetryInfo, RetryReason,
    RetrySafety, RetryStrategy, StandardStrategy,
};

/// Any duration, with the edges (zero, `Duration::MAX`) and everyday values well represented.
fn any_duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        (0u64..120_000).prop_map(Duration::from_millis),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(secs, nanos)| Duration::new(secs, nanos)),
    ]
}

/// A jitter draw in `[0, 1]`, the pinned 1.0 and 0.0 included.
fn draw() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), 0.0..1.0f64]
}

fn any_kind() -> impl Strategy<Value = ErrorKind> {
    select(vec![
        ErrorKind::Transient,
        ErrorKind::Timeout,
        ErrorKind::Throttling,
        ErrorKind::Server,
        ErrorKind::Client,
    ])
}

proptest! {
    #[test]
    fn a_delay_never_exceeds_max_backoff(
        initial in any_duration(),
        max in any_duration(),
        previous in any_duration(),
        retry in prop_oneof![1u32..80, any::<u32>()],
        u in draw(),
        jitter in select(Jitter::ALL.to_vec()),
    ) {
        let backoff = ExponentialBackoff::new(initial, max, jitter);
        let delay = backoff.delay(retry, previous, &FixedRandom(u));
        prop_assert!(delay <= max, "{jitter}: {delay:?} > max {max:?}");
        let ceiling = backoff.ceiling(retry);
        prop_assert!(ceiling <= max);
        match jitter {
            Jitter::None => prop_assert_eq!(delay, ceiling),
            Jitter::Full => prop_assert!(delay <= ceiling),
            Jitter::Equal => prop_assert!(delay <= ceiling && delay >= ceiling / 2),
            Jitter::Decorrelated => prop_assert!(delay >= initial.min(max)),
        }
    }

    #[test]
    fn the_ceiling_never_decreases_with_the_retry_number(
        initial in any_duration(),
        max in any_duration(),
        retry in any::<u32>(),
    ) {
        let backoff = ExponentialBackoff::new(initial, max, Jitter::None);
        let next = retry.saturating_add(1);
        prop_assert!(backoff.ceiling(retry) <= backoff.ceiling(next));
    }

    #[test]
    fn standard_mode_never_retries_sooner_than_retry_after(
        initial_ms in 0u64..5_000,
        max_ms in 1u64..30_000,
        retry_after_ms in 0u64..40_000,
        earlier_retries in 0u32..12,
        kind in any_kind(),
        u in draw(),
        jitter in select(Jitter::ALL.to_vec()),
    ) {
        let max = Duration::from_millis(max_ms);
        let initial = Duration::from_millis(initial_ms).min(max);
        let config = RetryConfig::builder()
            .max_attempts(100)
            .quota_capacity(10_000)
            .initial_backoff(initial)
            .throttling_backoff(initial)
            .max_backoff(max)
            .jitter(jitter)
            .build()
            .expect("valid");
        let random: Arc<dyn RandomSource> = Arc::new(FixedRandom(u));
        let strategy = StandardStrategy::builder(config)
            .random(random)
            .clock(Arc::new(ManualClock::new()))
            .build();
        let mut token = strategy.acquire_initial_token();
        for _ in 0..earlier_retries {
            token = strategy
                .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
                .expect("earlier retries are granted");
        }
        let level = strategy.scope().quota().level();
        let retry_after = Duration::from_millis(retry_after_ms);
        match strategy.refresh_retry_token(token, &RetryReason::error_after(kind, retry_after)) {
            Ok(next) => {
                prop_assert!(retry_after <= max, "granted although retry_after > max_backoff");
                prop_assert!(next.delay() >= retry_after, "{:?} < retry_after {retry_after:?}", next.delay());
                prop_assert!(next.delay() <= max);
                strategy.record_failure(next);
            }
            Err(error) => {
                prop_assert!(retry_after > max, "refused although retry_after <= max_backoff: {error}");
                prop_assert_eq!(error, RetryError::RetryAfterTooLong { retry_after, limit: max });
                prop_assert_eq!(strategy.scope().quota().level(), level, "a refusal is not charged");
            }
        }
    }
}

/// One operation on a quota.
#[derive(Debug, Clone)]
enum QuotaOp {
    Acquire(u32),
    Release(u32),
    /// Move the clock by this many milliseconds.
    Advance(u64),
    Level,
}

fn quota_op() -> impl Strategy<Value = QuotaOp> {
    prop_oneof![
        4 => (0u32..30).prop_map(QuotaOp::Acquire),
        3 => (0u32..30).prop_map(QuotaOp::Release),
        2 => (0u64..3_000).prop_map(QuotaOp::Advance),
        1 => Just(QuotaOp::Level),
    ]
}

/// The reference quota, in thousandths of a token: the refill is credited on every operation as
/// `floor(t * rate)` since the start minus what was credited before, then capped.
struct QuotaModel {
    level: u64,
    capacity: u64,
    /// The refill in thousandths of a token per millisecond (= tokens per second), as the
    /// fraction `numerator / denominator`.
    refill: (u64, u64),
    credited: u64,
    now_ms: u64,
}

impl QuotaModel {
    fn refill(&mut self) {
        let (numerator, denominator) = self.refill;
        let credited = self.now_ms * numerator / denominator;
        let added = credited - self.credited;
        self.credited = credited;
        self.level = (self.level + added).min(self.capacity);
    }
}

/// A refill rate in tokens per second as a fraction: none, whole rates, and rates of `m / 1024`
/// tokens per second (below a thousandth of a token per second for `m = 1`), whose thousandths
/// fall on whole nanoseconds so that the model is exact.
fn refill_rate() -> impl Strategy<Value = Option<(u64, u64)>> {
    prop_oneof![
        Just(None),
        (1u64..5).prop_map(|r| Some((r, 1))),
        select(vec![1u64, 5, 25, 125, 625]).prop_map(|m| Some((m, 1024))),
    ]
}

proptest! {
    #[test]
    fn the_quota_follows_its_model_and_stays_in_bounds(
        capacity in 1u32..200,
        refill in refill_rate(),
        ops in prop::collection::vec(quota_op(), 0..200),
    ) {
        let clock = Arc::new(ManualClock::new());
        let rate = refill.map(|(numerator, denominator)| numerator as f64 / denominator as f64);
        let quota = RetryQuota::new(capacity, rate, clock.clone()).expect("valid refill");
        let mut model = QuotaModel {
            level: u64::from(capacity) * 1000,
            capacity: u64::from(capacity) * 1000,
            // r tokens/s = r thousandths per millisecond.
            refill: refill.unwrap_or((0, 1)),
            credited: 0,
            now_ms: 0,
        };
        for op in ops {
            match op {
                QuotaOp::Acquire(cost) => {
                    model.refill();
                    let cost_milli = u64::from(cost) * 1000;
                    let expected = model.level >= cost_milli;
                    if expected {
                        model.level -= cost_milli;
                    }
                    prop_assert_eq!(quota.try_acquire(cost), expected, "acquire {}", cost);
                }
                QuotaOp::Release(amount) => {
                    model.refill();
                    model.level = (model.level + u64::from(amount) * 1000).min(model.capacity);
                    quota.release(amount);
                }
                QuotaOp::Advance(ms) => {
                    clock.advance(Duration::from_millis(ms));
                    model.now_ms += ms;
                }
                QuotaOp::Level => {}
            }
            model.refill();
            let level = quota.level();
            prop_assert!(level <= capacity, "level {} above capacity {}", level, capacity);
            prop_assert_eq!(u64::from(level), model.level / 1000);
        }
    }
}

proptest! {
    #[test]
    fn a_lone_call_on_a_new_default_scope_makes_every_attempt_it_asks_for(
        max_attempts in 1u32..=10,
        failures in prop::collection::vec((any_kind(), 0u64..30_000), 9),
    ) {
        let clock = Arc::new(ManualClock::new());
        let config = RetryConfig::builder().max_attempts(max_attempts).build().expect("valid");
        let strategy = StandardStrategy::builder(config).clock(clock.clone()).build();
        let mut token = strategy.acquire_initial_token();
        // Each attempt fails with any kind (a timeout costs the most, 14), and the next retry
        // comes up to 30 s later, so the scope measures its (lone) traffic in between.
        for (kind, after_ms) in failures.iter().take(max_attempts as usize - 1) {
            clock.advance(Duration::from_millis(*after_ms));
            token = match strategy.refresh_retry_token(token, &RetryReason::error(*kind)) {
                Ok(token) => token,
                Err(error) => return Err(TestCaseError::fail(format!("refused: {error}"))),
            };
        }
        prop_assert_eq!(token.attempt(), max_attempts);
        let refusal = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server));
        prop_assert_eq!(refusal.unwrap_err(), RetryError::MaxAttemptsReached { attempts: max_attempts });
    }
}

/// A generated classifier: where it runs (a built-in's priority shifted by a few steps) and
/// what it says.
#[derive(Debug, Clone)]
struct GeneratedClassifier {
    base: usize,
    shift: i32,
    verdict: RetryAction,
}

const BASES: [(ClassifierPriority, i32); 4] = [
    (ClassifierPriority::http_status(), 0),
    (ClassifierPriority::error_code(), 9),
    (ClassifierPriority::retry_info(), 10),
    (ClassifierPriority::transient_error(), 20),
];

impl GeneratedClassifier {
    fn priority(&self) -> ClassifierPriority {
        let mut priority = BASES[self.base].0;
        for _ in 0..self.shift.unsigned_abs() {
            priority = if self.shift > 0 {
                ClassifierPriority::run_after(priority)
            } else {
                ClassifierPriority::run_before(priority)
            };
        }
        priority
    }

    /// The model's number for the priority: the documented reference values.
    fn value(&self) -> i32 {
        BASES[self.base].1 + self.shift
    }
}

fn verdict() -> impl Strategy<Value = RetryAction> {
    prop_oneof![
        3 => Just(RetryAction::NoActionIndicated),
        1 => Just(RetryAction::RetryForbidden),
        2 => any_kind().prop_map(RetryAction::retryable),
        1 => (any_kind(), 0u64..10_000)
            .prop_map(|(kind, ms)| RetryAction::retryable_after(kind, Duration::from_millis(ms))),
    ]
}

fn generated_classifier() -> impl Strategy<Value = GeneratedClassifier> {
    (0usize..4, -3i32..=3, verdict()).prop_map(|(base, shift, verdict)| GeneratedClassifier {
        base,
        shift,
        verdict,
    })
}

proptest! {
    #[test]
    fn a_chain_runs_in_priority_order_and_stops_at_retry_forbidden(
        classifiers in prop::collection::vec(generated_classifier(), 0..12),
    ) {
        let calls: Vec<Arc<AtomicUsize>> =
            classifiers.iter().map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut chain = ClassifierChain::<(), ()>::new();
        for (index, generated) in classifiers.iter().enumerate() {
            let verdict = generated.verdict;
            let count = Arc::clone(&calls[index]);
            let order = Arc::clone(&order);
            chain = chain.with(
                FnClassifier::new("generated", move |_: &Result<(), ()>| {
                    count.fetch_add(1, Ordering::SeqCst);
                    order.lock().expect("order").push(index);
                    verdict
                })
                .with_priority(generated.priority()),
            );
        }
        prop_assert_eq!(chain.len(), classifiers.len());

        // The model: a stable sort by priority value, then a fold where a verdict other than
        // NoActionIndicated overrides, and RetryForbidden ends the chain.
        let mut sorted: Vec<usize> = (0..classifiers.len()).collect();
        sorted.sort_by_key(|&index| classifiers[index].value());
        let mut expected = RetryAction::NoActionIndicated;
        let mut expected_order = Vec::new();
        for &index in &sorted {
            expected_order.push(index);
            match classifiers[index].verdict {
                RetryAction::NoActionIndicated => {}
                RetryAction::RetryForbidden => {
                    expected = RetryAction::RetryForbidden;
                    break;
                }
                action => expected = action,
            }
        }

        prop_assert_eq!(chain.classify(&Err(())), expected);
        prop_assert_eq!(&*order.lock().expect("order"), &expected_order);
        for (index, count) in calls.iter().enumerate() {
            let expected_calls = usize::from(expected_order.contains(&index));
            prop_assert_eq!(count.load(Ordering::SeqCst), expected_calls, "classifier {}", index);
        }
        if let Some(&first) = sorted.first() {
            prop_assert_eq!(chain.priority(), classifiers[first].priority());
        }
    }
}

/// An attempt's outcome in the driver property.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Ok,
    Retryable,
    Fatal,
}

#[derive(Debug, PartialEq)]
struct AttemptError {
    attempt: usize,
    retryable: bool,
}

impl RetryInfo for AttemptError {
    fn retry_safety(&self) -> RetrySafety {
        if self.retryable {
            RetrySafety::Yes
        } else {
            RetrySafety::No
        }
    }
    fn fault(&self) -> Fault {
        Fault::Server
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_driver_returns_the_last_attempt_outcome(
        outcomes in prop::collection::vec(select(vec![Outcome::Ok, Outcome::Retryable, Outcome::Fatal]), 1..8),
        max_attempts in 1u32..8,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime");
        let config = RetryConfig::builder().max_attempts(max_attempts).build().expect("valid");
        let random: Arc<dyn RandomSource> = Arc::new(FixedRandom(1.0));
        let result = runtime.block_on(async {
            let strategy = StandardStrategy::builder(config).random(random).build();
            let mut attempt = 0;
            let result = retry_core::retry(&strategy, || {
                let this = attempt;
                attempt += 1;
                // Past the script every attempt fails retryably.
                let outcome = outcomes.get(this).copied().unwrap_or(Outcome::Retryable);
                async move {
                    match outcome {
                        Outcome::Ok => Ok(this),
                        Outcome::Retryable => Err(AttemptError { attempt: this, retryable: true }),
                        Outcome::Fatal => Err(AttemptError { attempt: this, retryable: false }),
                    }
                }
            })
            .await;
            (result, attempt)
        });
        // The model: attempts stop at the first Ok or Fatal, or at max_attempts.
        let mut expected_attempts = 0;
        let mut expected = None;
        for index in 0..max_attempts as usize {
            expected_attempts += 1;
            let outcome = outcomes.get(index).copied().unwrap_or(Outcome::Retryable);
            expected = Some(match outcome {
                Outcome::Ok => Ok(index),
                Outcome::Retryable => Err(AttemptError { attempt: index, retryable: true }),
                Outcome::Fatal => Err(AttemptError { attempt: index, retryable: false }),
            });
            if outcome != Outcome::Retryable {
                break;
            }
        }
        let (result, attempts) = result;
        prop_assert!(attempts >= 1);
        prop_assert_eq!(attempts, expected_attempts);
        prop_assert_eq!(Some(result), expected);
    }
}
