//! Shared state under concurrency: 64+ tasks on a multi-thread runtime and 8 OS threads on one
//! quota (bounds sampled from the tasks, final level equal to what the outcomes imply), and 100
//! callers of an adaptive scope after a throttle in virtual time (the send rate follows the
//! fill rate; no caller starves).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_core::backoff::{FixedRandom, RandomSource};
use retry_core::clock::{Clock, ManualClock};
use retry_core::quota::RetryQuota;
use retry_core::strategy::SendPermit;
use retry_core::{
    AdaptiveStrategy, ErrorKind, RetryConfig, RetryError, RetryReason, RetryStrategy,
    StandardStrategy,
};
use tokio::time::Instant;

/// A standard strategy with a quota of `capacity`, on a manual clock (these tests never sleep:
/// the strategy is called directly).
fn shared_strategy(capacity: u32) -> Arc<StandardStrategy> {
    let config = RetryConfig::aws_classic()
        .quota_capacity(capacity)
        .build()
        .expect("valid");
    let random: Arc<dyn RandomSource> = Arc::new(FixedRandom(1.0));
    Arc::new(
        StandardStrategy::builder(config)
            .random(random)
            .clock(Arc::new(ManualClock::new()))
            .build(),
    )
}

/// What a call does, attempt by attempt.
#[derive(Debug, Clone, Copy)]
enum Script {
    /// Succeeds at once: +1 (the quota never nears its capacity here).
    FirstTry,
    /// A server error, then success: -5 + 5.
    ServerThenOk,
    /// A timeout, a server error, then success: -10 - 5 + 5 (the last retry's cost comes back).
    TimeoutServerThenOk,
    /// Server errors until max_attempts (3): -5 - 5, the third refresh refused.
    ServerUntilRefused,
    /// A non-retryable failure: 0.
    NotRetryable,
    /// Throttled, then success: -5 + 5.
    ThrottledThenOk,
}

impl Script {
    const ALL: [Script; 6] = [
        Script::FirstTry,
        Script::ServerThenOk,
        Script::TimeoutServerThenOk,
        Script::ServerUntilRefused,
        Script::NotRetryable,
        Script::ThrottledThenOk,
    ];

    /// The reference model: (quota change, attempts, retries, success).
    fn model(self) -> (i64, u64, u64, bool) {
        match self {
            Script::FirstTry => (1, 1, 0, true),
            Script::ServerThenOk => (0, 2, 1, true),
            Script::TimeoutServerThenOk => (-10, 3, 2, true),
            Script::ServerUntilRefused => (-10, 3, 2, false),
            Script::NotRetryable => (0, 1, 0, false),
            Script::ThrottledThenOk => (0, 2, 1, true),
        }
    }

    /// The failures before the final outcome.
    fn failures(self) -> &'static [ErrorKind] {
        match self {
            Script::FirstTry | Script::NotRetryable => &[],
            Script::ServerThenOk => &[ErrorKind::Server],
            Script::TimeoutServerThenOk => &[ErrorKind::Timeout, ErrorKind::Server],
            Script::ServerUntilRefused => {
                &[ErrorKind::Server, ErrorKind::Server, ErrorKind::Server]
            }
            Script::ThrottledThenOk => &[ErrorKind::Throttling],
        }
    }
}

/// Runs one scripted call against `strategy`, yielding between steps so that calls interleave,
/// and checks the level against `[0, capacity]` after every step.
async fn run_script(strategy: &StandardStrategy, script: Script, capacity: u32) {
    let check = |strategy: &StandardStrategy| {
        let level = strategy.scope().quota().level();
        assert!(level <= capacity, "level {level} above capacity {capacity}");
    };
    let mut token = strategy.acquire_initial_token();
    for &kind in script.failures() {
        assert_eq!(
            strategy.acquire_send_permit(&mut token),
            SendPermit::Granted
        );
        tokio::task::yield_now().await;
        match strategy.refresh_retry_token(token, &RetryReason::error(kind)) {
            Ok(next) => token = next,
            Err(error) => {
                assert_eq!(error, RetryError::MaxAttemptsReached { attempts: 3 });
                check(strategy);
                return;
            }
        }
        check(strategy);
        tokio::task::yield_now().await;
    }
    assert_eq!(
        strategy.acquire_send_permit(&mut token),
        SendPermit::Granted
    );
    tokio::task::yield_now().await;
    match script {
        Script::NotRetryable => strategy.record_failure(token),
        _ => strategy.record_success(token),
    }
    check(strategy);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seventy_two_tasks_share_one_scope_and_the_final_level_adds_up() {
    const TASKS: usize = 72;
    const CALLS: usize = 30;
    const CAPACITY: u32 = 100_000;
    // Start half full so that neither bound can clip a change: the final level is then exactly
    // the start plus the sum of the scripted changes, whatever the interleaving.
    const START: u32 = 50_000;
    let strategy = shared_strategy(CAPACITY);
    assert!(strategy.scope().quota().try_acquire(CAPACITY - START));
    let script = |task: usize, call: usize| Script::ALL[(task * 7 + call * 5 + call / 6) % 6];
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let strategy = Arc::clone(&strategy);
            tokio::spawn(async move {
                for call in 0..CALLS {
                    run_script(&strategy, script(task, call), CAPACITY).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a task failed");
    }
    let (mut change, mut attempts, mut retries, mut successes) = (0i64, 0u64, 0u64, 0u64);
    for task in 0..TASKS {
        for call in 0..CALLS {
            let (delta, a, r, ok) = script(task, call).model();
            change += delta;
            attempts += a;
            retries += r;
            successes += u64::from(ok);
        }
    }
    let stats = strategy.scope().stats();
    assert_eq!(i64::from(stats.quota_level), i64::from(START) + change);
    assert_eq!(stats.attempts, attempts);
    assert_eq!(stats.retries, retries);
    assert_eq!(stats.successes, successes);
    assert_eq!(stats.successes + stats.failures, (TASKS * CALLS) as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_tasks_contending_for_a_small_quota_stay_within_bounds() {
    const TASKS: u32 = 64;
    const CALLS: u32 = 50;
    const CAPACITY: u32 = 40;
    let strategy = shared_strategy(CAPACITY);
    let granted_failures = Arc::new(AtomicU32::new(0));
    let refused = Arc::new(AtomicU32::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let strategy = Arc::clone(&strategy);
            let granted_failures = Arc::clone(&granted_failures);
            let refused = Arc::clone(&refused);
            tokio::spawn(async move {
                for call in 0..CALLS {
                    let kind = if (task + call) % 4 == 0 {
                        ErrorKind::Timeout
                    } else {
                        ErrorKind::Server
                    };
                    let token = strategy.acquire_initial_token();
                    let token = match strategy.refresh_retry_token(token, &RetryReason::error(kind))
                    {
                        Ok(token) => token,
                        Err(error) => {
                            assert!(
                                matches!(error, RetryError::QuotaExhausted { .. }),
                                "{error}"
                            );
                            refused.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                    };
                    let level = strategy.scope().quota().level();
                    assert!(
                        level <= CAPACITY - token.retry_cost(),
                        "level {level} while holding {}",
                        token.retry_cost()
                    );
                    tokio::task::yield_now().await;
                    // A few calls (the last one of every eighth task) fail after their retry and
                    // keep its cost; the others succeed (refund) or are abandoned (refund).
                    if call == CALLS - 1 && task % 8 == 0 {
                        granted_failures.fetch_add(token.retry_cost(), Ordering::Relaxed);
                        strategy.record_failure(token);
                    } else if call % 3 == 0 {
                        strategy.abandon(token);
                    } else {
                        strategy.record_success(token);
                    }
                    let level = strategy.scope().quota().level();
                    assert!(level <= CAPACITY, "level {level} above capacity");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a task failed");
    }
    let kept = granted_failures.load(Ordering::Relaxed);
    let stats = strategy.scope().stats();
    assert_eq!(stats.quota_level, CAPACITY - kept);
    assert_eq!(
        stats.quota_exhausted,
        u64::from(refused.load(Ordering::Relaxed))
    );
    assert_eq!(
        stats.retries + stats.quota_exhausted,
        u64::from(TASKS * CALLS)
    );
}

/// A deterministic per-thread generator (xorshift) so that each thread's sequence is fixed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn eight_os_threads_hammering_one_quota_conserve_tokens() {
    const THREADS: u64 = 8;
    const OPERATIONS: usize = 20_000;
    const CAPACITY: u32 = 200;
    let quota = RetryQuota::new(CAPACITY, None, Arc::new(ManualClock::new())).expect("no refill");
    let (kept, acquired): (u32, u32) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let quota = &quota;
                scope.spawn(move || {
                    let mut random = XorShift(0x9E37_79B9_7F4A_7C15 ^ (thread + 1));
                    let mut held: Vec<u32> = Vec::new();
                    let mut acquired = 0;
                    for _ in 0..OPERATIONS {
                        if random.next().is_multiple_of(2) || held.is_empty() {
                            let cost = (random.next() % 15) as u32 + 1;
                            if quota.try_acquire(cost) {
                                held.push(cost);
                                acquired += 1;
                            }
                        } else {
                            let at = (random.next() as usize) % held.len();
                            quota.release(held.swap_remove(at));
                        }
                        let level = quota.level();
                        assert!(level <= CAPACITY, "level {level} above capacity");
                    }
                    // Keep what is still held: it must be missing from the final level.
                    (held.iter().sum::<u32>(), acquired)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a thread panicked"))
            .fold((0, 0), |(k, a), (kept, acquired)| (k + kept, a + acquired))
    });
    assert!(kept <= CAPACITY);
    assert_eq!(quota.level(), CAPACITY - kept);
    assert!(acquired > 1000, "only {acquired} acquisitions succeeded");
}

#[test]
fn os_threads_and_a_moving_clock_credit_the_refill_exactly_once() {
    // Capacity far above what can accumulate, so the cap never clips: the final level must be
    // exactly refill(elapsed) - what the consumers took.
    const CONSUMERS: usize = 6;
    let clock = Arc::new(ManualClock::new());
    let quota = RetryQuota::new(1_000_000, Some(1000.0), clock.clone()).expect("valid refill");
    assert!(quota.try_acquire(1_000_000));
    let taken: u32 = std::thread::scope(|scope| {
        let ticker = {
            let clock = &clock;
            scope.spawn(move || {
                for _ in 0..10_000 {
                    clock.advance(Duration::from_micros(1_001)); // ~1 token a step
                }
            })
        };
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let quota = &quota;
                scope.spawn(move || {
                    let mut taken = 0;
                    for _ in 0..5_000 {
                        if quota.try_acquire(1) {
                            taken += 1;
                        }
                        let _ = quota.level();
                    }
                    taken
                })
            })
            .collect();
        ticker.join().expect("ticker panicked");
        consumers
            .into_iter()
            .map(|consumer| consumer.join().expect("consumer panicked"))
            .sum()
    });
    // 10 000 steps of 1.001 ms = 10.01 s at 1000 tokens/s = 10 010 tokens.
    assert_eq!(clock.now(), Duration::from_micros(10_010_000));
    assert_eq!(quota.level() + taken, 10_010);
}

/// How many callers share the adaptive scope, and how many sends each makes.
const CALLERS: usize = 100;
const ROUNDS: usize = 3;

/// One send: which caller, when it was granted, and how long it waited for its permit.
#[derive(Debug, Clone, Copy)]
struct Grant {
    caller: usize,
    at: Duration,
    waited: Duration,
}

/// An adaptive strategy on tokio's (paused) clock, created at t = 0, right after a throttle:
/// 5 successes at t = 0, then a throttled response at t = 0.5 s. The strategy samples its idle
/// responses, so the throttle starts from the rate counted since the scope's first response,
/// the 5 responses after it over 0.5 s: a fill rate of 10 * 0.7 = 7 permits/s, and 0.5 s *
/// 0.5/s = 0.25 permits in the bucket (filled at the minimum rate until then).
async fn throttled_adaptive_strategy() -> Arc<AdaptiveStrategy> {
    let config = RetryConfig::aws_classic()
        .mode(retry_core::RetryMode::Adaptive)
        .build()
        .expect("valid");
    let random: Arc<dyn RandomSource> = Arc::new(FixedRandom(1.0));
    let strategy = Arc::new(AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config).random(random),
    ));
    // The 5 successes go to the limiter itself: through the strategy, an idle limiter only
    // samples one response in IDLE_SAMPLE.
    let limiter = strategy.scope().limiter();
    for _ in 0..5 {
        limiter.record_response(false, Duration::ZERO, Duration::ZERO);
    }
    tokio::time::advance(Duration::from_millis(500)).await;
    let mut token = strategy.acquire_initial_token();
    assert_eq!(
        strategy.acquire_send_permit(&mut token),
        SendPermit::Granted
    );
    let retry = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
        .expect("granted");
    strategy.abandon(retry);
    strategy
}

#[tokio::test(start_paused = true)]
async fn a_hundred_callers_after_a_throttle_follow_the_fill_rate_and_none_starves() {
    let strategy = throttled_adaptive_strategy().await;
    let start = Instant::now();
    let now = || start.elapsed();

    // The throttle (see throttled_adaptive_strategy): 7 permits/s, 0.25 in the bucket.
    let limiter = strategy.scope().limiter();
    let fill_rate = limiter.stats().fill_rate;
    assert!((fill_rate - 7.0).abs() < 1e-9, "fill rate {fill_rate}");
    assert!((limiter.stats().capacity - 0.25).abs() < 1e-9);
    let throttled_at = now();

    // The callers send ROUNDS first attempts each through the strategy, sleeping every wait
    // the limiter asks for. Their responses are not fed back (the calls are abandoned after the
    // send), so the fill rate stays 7/s and the expected figures are exact.
    let grants = Arc::new(Mutex::new(Vec::with_capacity(CALLERS * ROUNDS)));
    let callers: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let strategy = Arc::clone(&strategy);
            let grants = Arc::clone(&grants);
            tokio::spawn(async move {
                for _ in 0..ROUNDS {
                    let mut token = strategy.acquire_initial_token();
                    let asked = Instant::now();
                    let mut zero_waits = 0;
                    // The caller's place in line is kept in its token between asks.
                    loop {
                        match strategy.acquire_send_permit(&mut token) {
                            SendPermit::Granted => break,
                            SendPermit::Wait(wait) => {
                                if wait.is_zero() {
                                    zero_waits += 1;
                                    assert!(
                                        zero_waits < 1000,
                                        "caller {caller}: told to wait 0 s {zero_waits} times in a row at {:?}: {:?}",
                                        start.elapsed(),
                                        strategy.scope().limiter().stats()
                                    );
                                } else {
                                    zero_waits = 0;
                                }
                                tokio::time::sleep(wait).await;
                            }
                        }
                    }
                    let grant = Grant {
                        caller,
                        at: start.elapsed(),
                        waited: asked.elapsed(),
                    };
                    grants.lock().expect("grants lock").push(grant);
                    strategy.abandon(token);
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.expect("a caller panicked");
    }
    let grants = grants.lock().expect("grants lock").clone();
    let stats = limiter.stats();
    assert_eq!(stats.waiting, 0);
    assert!(stats.capacity >= 0.0);
    assert_eq!(grants.len(), CALLERS * ROUNDS);

    // Send rate: 300 permits from 0.25 in the bucket at 7/s take (300 - 0.25) / 7 = 42.82 s.
    // Each return is rounded up to tokio's millisecond, which delays but loses no permit.
    let last = grants.iter().map(|grant| grant.at).max().expect("grants");
    let expected_end = throttled_at.as_secs_f64() + (300.0 - 0.25) / fill_rate;
    let end = last.as_secs_f64();
    assert!(
        (end - expected_end).abs() < 0.1,
        "last send at {end:.3} s, the fill rate predicts {expected_end:.3} s"
    );
    // And in every 5 s window the sends match 5 s * 7/s = 35 (+- 2 for the edges).
    let mut window_start = throttled_at;
    while window_start + Duration::from_secs(5) <= last {
        let window_end = window_start + Duration::from_secs(5);
        let sends = grants
            .iter()
            .filter(|grant| grant.at > window_start && grant.at <= window_end)
            .count();
        assert!(
            (33..=37).contains(&sends),
            "{sends} sends in ({window_start:?}, {window_end:?}], the fill rate allows 35"
        );
        window_start = window_end;
    }

    // Fairness: the fair share is callers / fill rate = 100 / 7 = 14.3 s per send.
    let fair_share = CALLERS as f64 / fill_rate;
    let longest = grants
        .iter()
        .map(|grant| grant.waited)
        .max()
        .expect("grants")
        .as_secs_f64();
    let mut per_caller = [0usize; CALLERS];
    for grant in &grants {
        per_caller[grant.caller] += 1;
    }
    assert!(
        per_caller.iter().all(|&sends| sends == ROUNDS),
        "{per_caller:?}"
    );
    let ratio = longest / fair_share;
    println!(
        "fairness: longest wait {longest:.3} s, fair share {fair_share:.3} s, ratio {ratio:.3}; \
         last send at {end:.3} s (predicted {expected_end:.3} s)"
    );
    assert!(
        ratio <= 3.0,
        "a caller waited {longest:.3} s, {ratio:.2} times the fair share {fair_share:.3} s"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hundred_retry_callers_recover_after_a_throttle_and_none_starves() {
    let strategy = throttled_adaptive_strategy().await;
    // The same throttle: 7 permits/s, 0.25 in the bucket, at t = 0.5 s.
    let throttled_rate = strategy.scope().limiter().stats().fill_rate;

    // Now the server is healthy: every call succeeds, and every success feeds CUBIC, which
    // raises the rate again (at most to twice the measured rate each time).
    let waits = Arc::new(Mutex::new(Vec::with_capacity(CALLERS * ROUNDS)));
    let callers: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let strategy = Arc::clone(&strategy);
            let waits = Arc::clone(&waits);
            tokio::spawn(async move {
                for round in 0..ROUNDS {
                    let asked = Instant::now();
                    let value = retry_core::retry(&*strategy, || async move {
                        Ok::<_, std::io::Error>((caller, round))
                    })
                    .await;
                    assert_eq!(value.expect("healthy server"), (caller, round));
                    waits.lock().expect("waits lock").push(asked.elapsed());
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.expect("a caller panicked");
    }
    let waits = waits.lock().expect("waits lock").clone();
    assert_eq!(waits.len(), CALLERS * ROUNDS);
    let stats = strategy.scope().stats();
    assert_eq!(stats.successes, (CALLERS * ROUNDS) as u64);
    assert_eq!(stats.limiter.waiting, 0);
    assert!(stats.limiter.capacity >= 0.0);
    assert!(
        stats.limiter.fill_rate > throttled_rate,
        "the rate recovered: {} > {throttled_rate}",
        stats.limiter.fill_rate
    );
    // No caller waits more than 3 times the fair share at the throttled rate.
    let fair_share = CALLERS as f64 / throttled_rate;
    let longest = waits.iter().max().expect("waits").as_secs_f64();
    println!(
        "recovery: longest wait {longest:.3} s, fair share at the throttled rate {fair_share:.3} s, \
         final fill rate {:.2}/s",
        stats.limiter.fill_rate
    );
    assert!(
        longest <= 3.0 * fair_share,
        "a caller waited {longest:.3} s, more than 3 x {fair_share:.3} s"
    );
}
