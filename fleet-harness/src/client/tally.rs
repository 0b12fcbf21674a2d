//! A client's counts, by second of the phase: each attempt and throttle counted when it
//! happens, each call when it ends.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::wire::ClientSecond;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A success.
    Success,
    /// A failure after at least one attempt.
    Failure,
    /// Shed before its first attempt.
    Shed,
}

/// The counts of every second not yet taken, from the phase's origin.
#[derive(Debug)]
pub struct Tally {
    client: u32,
    origin: Instant,
    seconds: Mutex<BTreeMap<u64, ClientSecond>>,
}

impl Tally {
    /// Counts for client `client` of a phase whose second 0 starts at `origin`.
    pub fn new(client: u32, origin: Instant) -> Self {
        Self {
            client,
            origin,
            seconds: Mutex::new(BTreeMap::new()),
        }
    }

    /// An attempt is sent now.
    pub fn attempt(&self) {
        self.update(|second| second.attempts += 1);
    }

    /// An attempt was answered 429 now.
    pub fn throttled(&self) {
        self.update(|second| second.throttled += 1);
    }

    /// A call ended now, after `latency`.
    pub fn ended(&self, outcome: Outcome, latency: Duration) {
        self.update(|second| {
            second.calls += 1;
            match outcome {
                Outcome::Success => second.successes += 1,
                Outcome::Failure => second.failures += 1,
                Outcome::Shed => second.shed += 1,
            }
            if outcome != Outcome::Shed {
                let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
                second.latencies_us.push(micros);
            }
        });
    }

    /// Takes the counts of `second` (all zero if nothing happened in it).
    pub fn take(&self, second: u64) -> ClientSecond {
        let mut seconds = self.seconds.lock().unwrap_or_else(PoisonError::into_inner);
        let mut counts = seconds.remove(&second).unwrap_or_default();
        counts.client = self.client;
        counts.second = second;
        counts
    }

    fn update(&self, change: impl FnOnce(&mut ClientSecond)) {
        // Before the origin (a call of a client that started early) counts in second 0.
        let second = Instant::now()
            .saturating_duration_since(self.origin)
            .as_secs();
        let mut seconds = self.seconds.lock().unwrap_or_else(PoisonError::into_inner);
        change(seconds.entry(second).or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn counts_land_in_the_second_they_happen_in() {
        let tally = Tally::new(3, Instant::now());
        tally.attempt();
        tally.throttled();
        tokio::time::advance(Duration::from_millis(1500)).await;
        tally.attempt();
        tally.ended(Outcome::Success, Duration::from_millis(1200));
        tally.ended(Outcome::Shed, Duration::ZERO);
        let first = tally.take(0);
        assert_eq!((first.client, first.second), (3, 0));
        assert_eq!((first.attempts, first.throttled, first.calls), (1, 1, 0));
        let second = tally.take(1);
        assert_eq!(
            (second.attempts, second.calls, second.successes, second.shed),
            (1, 2, 1, 1)
        );
        assert_eq!(
            second.latencies_us,
            [1_200_000],
            "a shed call has no latency"
        );
        assert_eq!(
            tally.take(1),
            ClientSecond {
                client: 3,
                second: 1,
                ..ClientSecond::default()
            }
        );
    }
}
