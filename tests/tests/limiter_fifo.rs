//! The adaptive limiter serves its waiters first come, first served, whoever gives up: a
//! waiter that cancels (its caller timed out) moves the waiters behind it up by one and no one
//! ahead of anyone. Checked on the limiter by hand, with 500 waiters of whom half cancel in a
//! virtual-time event loop, and through the strategy and the driver with 500 tasks on tokio's
//! paused clock, cancelled by their callers' timeouts at every await.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_core::adaptive::{Admission, ClientRateLimiter, Reservation};
use retry_core::backoff::{RandomSource, SeededRandom};
use retry_core::classify::RetryInfoClassifier;
use retry_core::driver::{NoHook, RetryLoop};
use retry_core::{AdaptiveStrategy, RetryConfig, Scope, StandardStrategy};

fn at(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

fn wait(admission: Admission) -> Reservation {
    match admission {
        Admission::Wait { reservation, .. } => reservation,
        Admission::Granted => panic!("expected to wait, was granted"),
    }
}

/// A limiter switched on at t = 0 with an empty bucket filling at 0.5 permits/s.
fn empty_limiter() -> Arc<ClientRateLimiter> {
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    limiter.record_response(true, Duration::ZERO, Duration::ZERO);
    limiter
}

#[test]
fn a_waiter_giving_up_behind_others_moves_no_one_ahead_of_an_older_waiter() {
    let limiter = empty_limiter();
    let first = wait(limiter.try_acquire(None, Duration::ZERO));
    let second = wait(limiter.try_acquire(None, Duration::ZERO));
    let third = wait(limiter.try_acquire(None, Duration::ZERO));
    drop(third);
    // t = 2 s: one permit. It is the first waiter's, even if the second asks before it does.
    let second = match limiter.try_acquire(Some(second), at(2.0)) {
        Admission::Wait {
            expected,
            reservation,
            ..
        } => {
            assert_eq!(expected, at(2.0), "one waiter ahead: one more permit, 2 s");
            reservation
        }
        Admission::Granted => panic!("the second waiter took the first one's permit"),
    };
    assert!(matches!(
        limiter.try_acquire(Some(first), at(2.0)),
        Admission::Granted
    ));
    assert!(matches!(
        limiter.try_acquire(Some(second), at(4.0)),
        Admission::Granted
    ));
    assert_eq!(limiter.stats().waiting, 0);
}

#[test]
fn a_waiter_giving_up_ahead_moves_the_ones_behind_it_up() {
    let limiter = empty_limiter();
    let first = wait(limiter.try_acquire(None, Duration::ZERO));
    let second = wait(limiter.try_acquire(None, Duration::ZERO));
    let third = wait(limiter.try_acquire(None, Duration::ZERO));
    drop(first);
    assert_eq!(limiter.stats().waiting, 2);
    // t = 2 s: the one permit is now the second waiter's; the third is one behind it.
    let third = match limiter.try_acquire(Some(third), at(2.0)) {
        Admission::Wait {
            expected,
            reservation,
            ..
        } => {
            assert_eq!(expected, at(2.0));
            reservation
        }
        Admission::Granted => panic!("the third waiter took the second one's permit"),
    };
    assert!(matches!(
        limiter.try_acquire(Some(second), at(2.0)),
        Admission::Granted
    ));
    assert!(matches!(
        limiter.try_acquire(Some(third), at(4.0)),
        Admission::Granted
    ));
    // A newcomer finds nobody waiting and the bucket empty: it waits for the next permit.
    let newcomer = wait(limiter.try_acquire(None, at(4.0)));
    assert_eq!(limiter.stats().waiting, 1);
    drop(newcomer);
    assert_eq!(limiter.stats().waiting, 0);
}

/// A limiter filling at `rate` permits/s from an empty bucket at t = 10 s: successes at
/// `rate / 0.7` responses/s for 10 s, then a throttle (the fill rate becomes 0.7 times the
/// measured rate).
fn limiter_at_rate(responses_per_second: f64) -> Arc<ClientRateLimiter> {
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    let count = (responses_per_second * 10.0) as u32;
    for i in 0..count {
        let t = at(f64::from(i) / responses_per_second);
        limiter.record_response(false, t, t);
    }
    limiter.record_response(true, at(10.0), at(10.0));
    // Empty the bucket: it holds what was added since the throttle.
    while matches!(limiter.try_acquire(None, at(10.0)), Admission::Granted) {}
    limiter
}

/// What happened to one waiter of [`serve_in_virtual_time`].
#[derive(Debug, Clone, Copy, Default)]
struct Served {
    /// When it was granted, if it was.
    granted_at: Option<f64>,
}

/// Pairs `(earlier arrival, later arrival)` both granted with the later one granted first,
/// and the largest lead a later arrival had over an earlier one, in seconds.
fn out_of_order(served: &[Served]) -> (usize, f64) {
    let mut pairs = 0;
    let mut worst: f64 = 0.0;
    for (i, early) in served.iter().enumerate() {
        let Some(early_at) = early.granted_at else {
            continue;
        };
        for late in &served[i + 1..] {
            if let Some(late_at) = late.granted_at
                && late_at < early_at
            {
                pairs += 1;
                worst = worst.max(early_at - late_at);
            }
        }
    }
    (pairs, worst)
}

/// 500 callers arrive 10 ms apart at a limiter filling at 0.5 permits/s; every other one gives
/// up after a random patience of 5 to 300 s (its caller's timeout). Each asks when it arrives
/// and again after every wait it is told; one that is still waiting at its deadline drops its
/// reservation. Discrete events in virtual time.
fn serve_in_virtual_time() -> Vec<Served> {
    const WAITERS: usize = 500;
    let limiter = empty_limiter();
    let random = SeededRandom::new(92);
    let mut served = vec![Served::default(); WAITERS];
    // When each waiter gives up, in ns (never, for the patient ones).
    let mut deadline = vec![u64::MAX; WAITERS];
    let mut places: Vec<Option<Reservation>> = (0..WAITERS).map(|_| None).collect();
    // (time in ns, order of scheduling, waiter); a min-heap: events at one instant run in the
    // order they were scheduled, as timers do.
    let mut events = BinaryHeap::new();
    let mut scheduled = 0u64;
    for (waiter, deadline) in deadline.iter_mut().enumerate() {
        let arrival = waiter as f64 * 0.01;
        if waiter % 2 == 1 {
            *deadline = ((arrival + 5.0 + random.next_f64() * 295.0) * 1e9) as u64;
        }
        scheduled += 1;
        events.push(Reverse(((arrival * 1e9) as u64, scheduled, waiter)));
    }
    let mut steps = 0u32;
    while let Some(Reverse((nanos, _, waiter))) = events.pop() {
        steps += 1;
        assert!(
            steps < 5_000_000,
            "the line never empties: at {nanos} ns, waiter {waiter}: {:?}",
            limiter.stats()
        );
        let now = nanos as f64 / 1e9;
        if nanos >= deadline[waiter] {
            places[waiter] = None; // gives the place up
            continue;
        }
        match limiter.try_acquire(places[waiter].take(), Duration::from_nanos(nanos)) {
            Admission::Granted => served[waiter].granted_at = Some(now),
            Admission::Wait {
                wait, reservation, ..
            } => {
                places[waiter] = Some(reservation);
                let wait = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX).max(1);
                let next = nanos.saturating_add(wait).min(deadline[waiter]);
                scheduled += 1;
                events.push(Reverse((next, scheduled, waiter)));
            }
        }
    }
    assert_eq!(limiter.stats().waiting, 0, "every place was settled");
    served
}

#[test]
fn five_hundred_waiters_half_of_them_giving_up_are_served_in_arrival_order() {
    let served = serve_in_virtual_time();
    let granted = served.iter().filter(|s| s.granted_at.is_some()).count();
    assert!(
        granted > 250,
        "every patient waiter and some impatient ones were served: {granted}"
    );
    let (pairs, worst) = out_of_order(&served);
    assert_eq!(
        (pairs, worst),
        (0, 0.0),
        "pairs served out of arrival order, and the largest lead of a later caller (s)"
    );
}

/// An adaptive strategy in a scope on tokio's (paused) clock, throttled once so that its
/// limiter fills at 0.5 permits/s from an empty bucket. Leaked: the calls' loops outlive their
/// tasks (below).
fn throttled_strategy() -> &'static AdaptiveStrategy {
    let config = RetryConfig::builder()
        .mode(retry_core::RetryMode::Adaptive)
        .build()
        .expect("valid");
    let scope = Scope::new("fifo", &config);
    let strategy = AdaptiveStrategy::from_builder(StandardStrategy::builder(config).scope(scope));
    let limiter = Arc::clone(strategy.scope().limiter());
    let now = strategy.scope().clock().now();
    limiter.record_response(true, now, now);
    assert_eq!(limiter.stats().fill_rate, 0.5);
    Box::leak(Box::new(strategy))
}

type Loop = RetryLoop<'static, AdaptiveStrategy, RetryInfoClassifier, NoHook>;

#[tokio::test(start_paused = true)]
async fn callers_through_the_driver_are_served_in_order_whoever_times_out() {
    // 300 calls start 10 ms apart; every other one runs under a timeout of 5 to 300 s, which
    // cancels it while it waits for its permit. Each records when its first attempt was let
    // through. The granted calls' loops are kept until the end, unanswered, so that no
    // response moves the fill rate: the order is the line's alone.
    const CALLS: usize = 300;
    let strategy = throttled_strategy();
    let random = SeededRandom::new(93);
    let start = tokio::time::Instant::now();
    let served: Arc<Mutex<Vec<Served>>> = Arc::new(Mutex::new(vec![Served::default(); CALLS]));
    let in_flight: Arc<Mutex<Vec<Loop>>> = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::with_capacity(CALLS);
    for call in 0..CALLS {
        let patience =
            (call % 2 == 1).then(|| Duration::from_secs_f64(5.0 + random.next_f64() * 295.0));
        let served = Arc::clone(&served);
        let in_flight = Arc::clone(&in_flight);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10 * call as u64)).await;
            let attempt = async {
                let mut retry: Loop = RetryLoop::new(strategy, RetryInfoClassifier, NoHook);
                retry.ready().await;
                served.lock().expect("not poisoned")[call].granted_at =
                    Some(start.elapsed().as_secs_f64());
                in_flight.lock().expect("not poisoned").push(retry);
            };
            match patience {
                Some(patience) => {
                    let _ = tokio::time::timeout(patience, attempt).await;
                }
                None => attempt.await,
            }
        }));
    }
    for task in tasks {
        task.await.expect("no panic");
    }
    assert_eq!(strategy.scope().limiter().stats().waiting, 0);
    let served = served.lock().expect("not poisoned").clone();
    let granted = served.iter().filter(|s| s.granted_at.is_some()).count();
    let gave_up = CALLS - granted;
    assert!(
        granted >= CALLS / 2 && gave_up > 50,
        "{granted} granted, {gave_up} gave up"
    );
    let (pairs, worst) = out_of_order(&served);
    assert_eq!(
        (pairs, worst),
        (0, 0.0),
        "out-of-order pairs, largest lead (s)"
    );
    drop(in_flight);
}

#[test]
fn threads_waiting_and_giving_up_at_random_leave_no_place_behind() {
    // Eight OS threads, each a stream of callers on one manual clock: ask, wait (or give up)
    // and come back; the limiter's line must empty, and never grant more than it refilled.
    let limiter = limiter_at_rate(100.0);
    let clock = Arc::new(retry_core::clock::ManualClock::new());
    clock.set(at(10.0));
    let grants = std::thread::scope(|threads| {
        let handles: Vec<_> = (0..8u64)
            .map(|thread| {
                let limiter = Arc::clone(&limiter);
                let clock = Arc::clone(&clock);
                threads.spawn(move || {
                    let random = SeededRandom::new(thread);
                    let mut grants = 0u32;
                    for _ in 0..2000 {
                        let mut place = None;
                        for _ in 0..4 {
                            // 10 µs a step: 64 000 steps move the clock well under STEP_BACK (1 s), so a
                            // thread that read it before another locked is never taken for a step back.
                            clock.advance(Duration::from_micros(10));
                            use retry_core::clock::Clock;
                            match limiter.try_acquire(place.take(), clock.now()) {
                                Admission::Granted => {
                                    grants += 1;
                                    break;
                                }
                                Admission::Wait { reservation, .. } => {
                                    if random.next_f64() < 0.5 {
                                        place = Some(reservation); // comes back
                                    } else {
                                        break; // gives up: the reservation drops
                                    }
                                }
                            }
                        }
                    }
                    grants
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("no panic"))
            .sum::<u32>()
    });
    let stats = limiter.stats();
    assert_eq!(stats.waiting, 0, "no place left behind");
    use retry_core::clock::Clock;
    let elapsed = clock.now().as_secs_f64() - 10.0;
    let refilled = stats.fill_rate * elapsed + stats.max_capacity;
    assert!(
        f64::from(grants) <= refilled.ceil(),
        "{grants} grants, at most {refilled} refilled in {elapsed} s: {stats:?}"
    );
    assert!(stats.capacity >= 0.0);
    assert!(grants > 0);
}
