//! Helpers shared by the strategy tests: durations, pinned strategies, and a call that fails
//! until the strategy refuses.

#![allow(dead_code)] // Each test file uses its own subset.

pub mod fault_server;
pub mod shed;

use std::time::Duration;

use retry_core::strategy::SendPermit;
use retry_core::{ErrorKind, RetryError, RetryReason, RetryStrategy, StandardStrategy};

/// `s` seconds.
pub const fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// `m` milliseconds.
pub const fn ms(m: u64) -> Duration {
    Duration::from_millis(m)
}

/// The quota's level.
pub fn level(strategy: &StandardStrategy) -> u32 {
    strategy.scope().quota().level()
}

/// One granted retry: its attempt number, its delay and the quota level after it.
pub type Step = (u32, Duration, u32);

/// Makes a call whose every attempt fails with `kind` until the strategy refuses: returns each
/// granted retry as (attempt, delay, quota level) and the refusal.
pub fn fail_until_refused(strategy: &StandardStrategy, kind: ErrorKind) -> (Vec<Step>, RetryError) {
    let mut token = strategy.acquire_initial_token();
    let mut steps = Vec::new();
    loop {
        assert_eq!(
            strategy.acquire_send_permit(&mut token),
            SendPermit::Granted,
            "standard mode always grants"
        );
        match strategy.refresh_retry_token(token, &RetryReason::error(kind)) {
            Ok(next) => {
                steps.push((next.attempt(), next.delay(), level(strategy)));
                token = next;
            }
            Err(error) => return (steps, error),
        }
    }
}
