//! A retry quota sized by the scope's traffic (`quota_window`, the `recommended` preset): the
//! retries a client may send follow its call rate, so a fleet's retries during an outage do
//! not grow with the number of clients that carry the same load.

use std::sync::Arc;
use std::time::Duration;

use retry_core::{
    ErrorKind, FixedRandom, ManualClock, RetryConfig, RetryError, RetryReason, RetryStrategy,
    SendPermit, StandardStrategy,
};

/// A strategy on a manual clock with the recommended preset (aws-2026 costs, 60 s window).
fn recommended() -> (StandardStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let config = RetryConfig::recommended().build().expect("valid");
    let strategy = StandardStrategy::builder(config)
        .clock(clock.clone())
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    (strategy, clock)
}

/// `calls_per_sec` successful first attempts each second for `seconds` seconds.
fn traffic(strategy: &StandardStrategy, clock: &ManualClock, calls_per_sec: u32, seconds: u32) {
    let step = Duration::from_secs(1) / calls_per_sec;
    for _ in 0..calls_per_sec * seconds {
        let mut token = strategy.acquire_initial_token();
        assert_eq!(
            strategy.acquire_send_permit(&mut token),
            SendPermit::Granted,
            "standard mode grants"
        );
        strategy.record_success(token);
        clock.advance(step);
    }
}

/// Retries granted to failing calls until the quota refuses one.
fn retries_until_exhausted(strategy: &StandardStrategy) -> u32 {
    let mut retries = 0;
    loop {
        let token = strategy.acquire_initial_token();
        match strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server)) {
            Ok(token) => {
                retries += 1;
                strategy.record_failure(token);
            }
            Err(RetryError::QuotaExhausted { .. }) => return retries,
            Err(other) => panic!("unexpected refusal: {other}"),
        }
    }
}

#[test]
fn the_capacity_follows_the_call_rate() {
    let (strategy, clock) = recommended();
    let quota = strategy.scope().quota();
    assert_eq!(quota.capacity(), 5_000, "full until a rate is measured");
    // 2 calls/s: after the first 1 s period closes, capacity = 2/s * 60 s = 120 (the closing
    // call counts: 3 calls in the first period, 3/s * 60 = 180, then smoothed toward 2/s).
    traffic(&strategy, &clock, 2, 10);
    let capacity = quota.capacity();
    assert!((120..=130).contains(&capacity), "capacity {capacity}");
    assert_eq!(
        quota.level(),
        capacity,
        "the level never exceeds the capacity"
    );
    // An outage: retries cost 14 each, so capacity / 14 retries, then none.
    assert_eq!(retries_until_exhausted(&strategy), capacity / 14);
}

#[test]
fn a_busy_client_keeps_the_configured_capacity_and_a_quiet_one_can_still_retry_once() {
    let (busy, busy_clock) = recommended();
    traffic(&busy, &busy_clock, 100, 5);
    assert_eq!(
        busy.scope().quota().capacity(),
        5_000,
        "100/s * 60 s is capped at 5000"
    );

    let (quiet, quiet_clock) = recommended();
    // One call every 10 s: 0.1/s * 60 s = 6 tokens, below one retry's cost (14).
    for _ in 0..5 {
        traffic(&quiet, &quiet_clock, 1, 1);
        quiet_clock.advance(Duration::from_secs(9));
    }
    assert_eq!(
        quiet.scope().quota().capacity(),
        14,
        "the floor is one retry"
    );
    assert_eq!(retries_until_exhausted(&quiet), 1);
}

#[test]
fn retries_per_client_scale_with_traffic_so_the_fleet_total_does_not_depend_on_client_count() {
    // The same 40 calls/s carried by 2 clients or by 8: the fleet's outage retries match.
    let fleet_retries = |clients: u32| -> u32 {
        (0..clients)
            .map(|_| {
                let (strategy, clock) = recommended();
                traffic(&strategy, &clock, 40 / clients, 10);
                retries_until_exhausted(&strategy)
            })
            .sum()
    };
    let (two, eight) = (fleet_retries(2), fleet_retries(8));
    // 2 x (20/s * 60 s = 1200) / 14 = 2 x 85; 8 x (5/s * 60 s = 300) / 14 = 8 x 21: equal but
    // for whole retries. (The fixed AWS quota gives every client 500 / 14 = 35: 70 vs 280.)
    assert_eq!(two, 2 * 85);
    assert_eq!(eight, 8 * 21);
}

#[test]
fn a_zero_window_is_rejected() {
    let error = RetryConfig::builder()
        .quota_window(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "quota_window must be longer than zero: leave it unset for no limit"
    );
}
