//! A process-wide scope outlives the runtime it was first used in: the next runtime's clock
//! (the next `#[tokio::test(start_paused = true)]`, say) reads earlier than the last time the
//! scope saw. Its rate limiter must go on from there, not wait for the clock to catch up.

use std::time::Duration;

use retry_core::{RetryConfig, RetryInfo, RetryMode, RetrySafety, retry, strategy_for};

/// An error that is throttling, or not retryable.
#[derive(Debug)]
struct Throttled(bool);

impl RetryInfo for Throttled {
    fn retry_safety(&self) -> RetrySafety {
        if self.0 {
            RetrySafety::Yes
        } else {
            RetrySafety::No
        }
    }
    fn is_throttling(&self) -> bool {
        self.0
    }
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

fn adaptive() -> RetryConfig {
    RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid")
}

/// One call whose first attempt is throttled and whose retry succeeds: switches the scope's
/// limiter on (0.5 permits/s from an empty bucket).
async fn throttle_once(strategy: &retry_core::strategy::ConfiguredStrategy) {
    let mut attempts = 0;
    let outcome = retry(strategy, || {
        attempts += 1;
        let throttled = attempts == 1;
        async move {
            if throttled {
                Err(Throttled(true))
            } else {
                Ok(())
            }
        }
    })
    .await;
    assert!(outcome.is_ok());
    assert!(strategy.scope().limiter().is_enabled());
}

/// How long (virtual time) one call takes in a fresh paused runtime.
fn one_call_in_a_new_runtime(strategy: &retry_core::strategy::ConfiguredStrategy) -> Duration {
    paused_runtime().block_on(async {
        let start = tokio::time::Instant::now();
        let outcome = retry(strategy, || async { Ok::<_, Throttled>(()) }).await;
        assert!(outcome.is_ok());
        start.elapsed()
    })
}

#[test]
fn a_scope_first_used_in_a_runtime_that_then_ran_an_hour_does_not_freeze_the_next() {
    let strategy = strategy_for(adaptive(), "clock-step-back-after");
    paused_runtime().block_on(async {
        let _ = strategy.scope().clock().now(); // first used here, at this runtime's start
        tokio::time::advance(Duration::from_secs(3600)).await;
        throttle_once(&strategy).await;
    });
    // The bucket is empty and fills at 0.5/s: the next permit is at most 2 s away.
    let took = one_call_in_a_new_runtime(&strategy);
    assert!(
        took <= Duration::from_secs(2),
        "the call waited {took:?} for its permit"
    );
}

#[test]
fn a_scope_first_used_an_hour_into_a_runtime_does_not_freeze_the_next() {
    let runtime = paused_runtime();
    let strategy = runtime.block_on(async {
        tokio::time::advance(Duration::from_secs(3600)).await;
        let strategy = strategy_for(adaptive(), "clock-step-back-late");
        throttle_once(&strategy).await;
        strategy
    });
    drop(runtime);
    let took = one_call_in_a_new_runtime(&strategy);
    assert!(
        took <= Duration::from_secs(2),
        "the call waited {took:?} for its permit"
    );
    // And time goes on in the runtime after that too.
    let took = one_call_in_a_new_runtime(&strategy);
    assert!(took <= Duration::from_secs(2), "then {took:?}");
}

#[test]
fn the_limiter_takes_a_step_back_as_no_time_passing_and_goes_on_from_there() {
    use retry_core::adaptive::{Admission, ClientRateLimiter};
    let hour = Duration::from_secs(3600);
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    limiter.record_response(true, hour, hour); // on at 1 h, filling at 0.5 permits/s
    // The bucket refilled to its capacity of 1 over the hour: take that permit.
    assert!(matches!(
        limiter.try_acquire(None, hour),
        Admission::Granted
    ));
    // The clock now reads 0: the permit is 2 s of the new readings away, not an hour.
    let reservation = match limiter.try_acquire(None, Duration::ZERO) {
        Admission::Wait {
            expected,
            reservation,
            ..
        } => {
            assert_eq!(expected, Duration::from_secs(2));
            reservation
        }
        Admission::Granted => panic!("the bucket was empty"),
    };
    assert!(matches!(
        limiter.try_acquire(Some(reservation), Duration::from_secs(2)),
        Admission::Granted
    ));
    // Successes on the new readings raise the rate along CUBIC's curve from the throttle.
    let before = limiter.stats().fill_rate;
    for tenth in 30..60 {
        let t = Duration::from_millis(100 * tenth);
        limiter.record_response(false, t, t);
    }
    assert!(limiter.stats().fill_rate > before, "{:?}", limiter.stats());
}
