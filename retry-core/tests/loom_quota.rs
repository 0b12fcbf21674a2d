//! Loom model check of the lock-free `RetryQuota`: every interleaving of two or three threads
//! doing `try_acquire` / `release` (and the refill's compare-and-swap) keeps the level within
//! `[0, capacity]` and conserves tokens.
//!
//! Run with:
//! `RUSTFLAGS="--cfg loom" cargo test -p retry-core --no-default-features --release --test loom_quota`
#![cfg(loom)]

use std::sync::Arc;
use std::time::Duration;

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;
use retry_core::clock::{Clock, ManualClock};
use retry_core::quota::RetryQuota;

/// A quota of `capacity` tokens, refilled at `refill` tokens per second, on a manual clock.
fn quota(capacity: u32, refill: Option<f64>) -> (Arc<RetryQuota>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    (
        Arc::new(RetryQuota::new(capacity, refill, clock.clone()).expect("valid refill")),
        clock,
    )
}

/// Two threads compete for a quota that can pay only one of them: exactly one wins, the level
/// never leaves `[0, capacity]`, and what the winner keeps is exactly what is missing.
#[test]
fn only_one_of_two_competing_acquires_wins() {
    loom::model(|| {
        let (quota, _clock) = quota(10, None);
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let quota = Arc::clone(&quota);
                thread::spawn(move || {
                    let won = quota.try_acquire(6);
                    let level = quota.level();
                    assert!(level <= 10, "level {level} above capacity");
                    // A winner sees at most what it left: 10 - 6.
                    if won {
                        assert!(level <= 4, "winner sees level {level}");
                    }
                    won
                })
            })
            .collect();
        let wins = handles
            .into_iter()
            .map(|handle| handle.join().expect("thread panicked"))
            .filter(|won| *won)
            .count();
        assert_eq!(wins, 1);
        assert_eq!(quota.level(), 4);
    });
}

/// Three threads take tokens and give some back (a success's refund); the level stays within
/// `[0, capacity]` and ends at the start level minus exactly what was kept. Three threads of
/// compare-and-swap loops make a large state space (the unbounded search runs for minutes): it
/// is bounded to 4 preemptions, which still covers every way two compare-and-swaps can race.
#[test]
fn acquire_release_by_three_threads_conserves_tokens() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(4);
    builder.check(|| {
        let (quota, _clock) = quota(5, None);
        assert!(quota.try_acquire(2), "the main thread takes 2 first");
        let handles: Vec<_> = [(1, 1), (2, 2), (1, 0)]
            .into_iter()
            .map(|(cost, refund)| {
                let quota = Arc::clone(&quota);
                thread::spawn(move || {
                    if quota.try_acquire(cost) {
                        quota.release(refund);
                        cost - refund
                    } else {
                        0
                    }
                })
            })
            .collect();
        // Read while the threads run: never above capacity, never above the start level.
        let during = quota.level();
        assert!(during <= 3, "level {during} while threads run");
        let kept: u32 = handles
            .into_iter()
            .map(|handle| handle.join().expect("thread panicked"))
            .sum();
        // Level 3 cannot pay 1 + 2 + 1 at once, so an acquire may fail depending on the
        // interleaving; whatever happened, the level is 3 minus what the winners kept.
        assert_eq!(quota.level(), 3 - kept);
    });
}

/// Two threads release more than they took (first-try rewards) into a nearly full quota while
/// one takes: the capacity caps every release, so the level never exceeds it.
#[test]
fn releases_never_exceed_capacity() {
    loom::model(|| {
        let (quota, _clock) = quota(4, None);
        assert!(quota.try_acquire(2));
        let rewarders: Vec<_> = (0..2)
            .map(|_| {
                let quota = Arc::clone(&quota);
                thread::spawn(move || quota.release(2))
            })
            .collect();
        let taker = {
            let quota = Arc::clone(&quota);
            thread::spawn(move || quota.try_acquire(3))
        };
        for rewarder in rewarders {
            rewarder.join().expect("rewarder panicked");
        }
        let took = taker.join().expect("taker panicked");
        let level = quota.level();
        assert!(level <= 4, "level {level} above capacity 4");
        // 2 + 2 + 2 = 6 is capped at 4; a take of 3 leaves 1, or 3 if it came before a
        // reward (capped at 4 after).
        if took {
            assert!(level == 1 || level == 3, "level {level} after a take");
        } else {
            // A take of 3 fails only from level 2 (before any reward).
            assert_eq!(level, 4);
        }
    });
}

/// The refill: two threads read the quota while a third advances the clock by one second. The
/// elapsed interval is credited exactly once whoever wins the compare-and-swap: never twice
/// (a double credit would end above 2) and never lost.
#[test]
fn refill_is_credited_exactly_once() {
    loom::model(|| {
        let (quota, clock) = quota(10, Some(2.0));
        assert!(quota.try_acquire(10));
        let advancer = {
            let clock = Arc::clone(&clock);
            thread::spawn(move || clock.advance(Duration::from_secs(1)))
        };
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let quota = Arc::clone(&quota);
                thread::spawn(move || {
                    let level = quota.level();
                    assert!(level <= 2, "refilled {level} tokens in one second at 2/s");
                })
            })
            .collect();
        advancer.join().expect("advancer panicked");
        for reader in readers {
            reader.join().expect("reader panicked");
        }
        assert_eq!(quota.level(), 2);
    });
}

/// A clock set by hand that may step back (tokio's does, in a later runtime).
#[derive(Debug)]
struct SteppingClock(AtomicU64);

impl SteppingClock {
    fn set(&self, to: Duration) {
        self.0.store(to.as_secs(), Ordering::SeqCst);
    }
}

impl Clock for SteppingClock {
    fn now(&self) -> Duration {
        Duration::from_secs(self.0.load(Ordering::SeqCst))
    }
}

/// The clock steps back 90 s while two threads read the quota: whoever restarts the refill
/// from the new reading, the refill carries on from it (2 s later, 2 tokens at 1/s), neither
/// frozen until the clock catches up nor credited for the time before the step.
#[test]
fn a_clock_stepping_back_under_readers_restarts_the_refill_once() {
    loom::model(|| {
        let clock = Arc::new(SteppingClock(AtomicU64::new(100)));
        let quota = Arc::new(RetryQuota::new(10, Some(1.0), clock.clone()).expect("valid refill"));
        assert!(quota.try_acquire(10));
        clock.set(Duration::from_secs(10));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let quota = Arc::clone(&quota);
                thread::spawn(move || quota.level())
            })
            .collect();
        for reader in readers {
            assert_eq!(reader.join().expect("reader panicked"), 0);
        }
        clock.set(Duration::from_secs(12));
        assert_eq!(quota.level(), 2);
    });
}
