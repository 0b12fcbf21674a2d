//! The static split's gate (`split` phases): a process's fixed share of the server's limit,
//! enforced before each attempt as a per-process `governor` (GCRA, the generic cell rate
//! algorithm of ITU-T I.371) sized by hand would: one send every `1 / rate` seconds, a burst of
//! `tolerance` ahead of that pace, and an attempt whose turn would come after `max_wait` not
//! sent.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// A process's share of the limit.
#[derive(Debug)]
pub struct SplitGate {
    interval: Duration,
    tolerance: Duration,
    /// When the next send is due at the share's pace (the theoretical arrival time).
    due: Mutex<Option<Instant>>,
}

impl SplitGate {
    /// A gate at `rate` sends per second (positive and finite: the options are checked) with
    /// a burst of `burst` sends.
    pub fn new(rate: f64, burst: f64) -> Self {
        let interval = Duration::from_secs_f64(1.0 / rate);
        Self {
            interval,
            tolerance: interval.mul_f64((burst - 1.0).max(0.0)),
            due: Mutex::new(None),
        }
    }

    /// Takes the next turn to send, asked at `now`: the wait until it comes, or `None` (nothing
    /// taken) if it would come more than `max_wait` after `now`.
    pub fn turn(&self, now: Instant, max_wait: Duration) -> Option<Duration> {
        let mut due = self.due.lock().unwrap_or_else(PoisonError::into_inner);
        let at = due.map_or(now, |due| due.max(now));
        // The send may go as far ahead of its pace as the tolerance allows.
        let earliest = at.checked_sub(self.tolerance).unwrap_or(now);
        let wait = earliest.max(now).saturating_duration_since(now);
        if wait > max_wait {
            return None;
        }
        *due = Some(at + self.interval);
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_are_paced_at_the_share_after_the_burst() {
        let gate = SplitGate::new(50.0, 3.0);
        let now = Instant::now();
        let long = Duration::from_secs(10);
        // The burst: 3 sends at once.
        let waits: Vec<Duration> = (0..5).filter_map(|_| gate.turn(now, long)).collect();
        assert_eq!(
            waits,
            [
                Duration::ZERO,
                Duration::ZERO,
                Duration::ZERO,
                Duration::from_millis(20),
                Duration::from_millis(40)
            ]
        );
    }

    #[test]
    fn a_turn_later_than_max_wait_is_refused_and_takes_nothing() {
        let gate = SplitGate::new(10.0, 1.0);
        let now = Instant::now();
        let wait = Duration::from_millis(100);
        assert_eq!(gate.turn(now, wait), Some(Duration::ZERO));
        assert_eq!(gate.turn(now, wait), Some(Duration::from_millis(100)));
        assert_eq!(gate.turn(now, wait), None);
        // Refusing took no turn: 200 ms later the next one is at once.
        assert_eq!(
            gate.turn(now + Duration::from_millis(200), wait),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn one_second_sends_the_share_and_its_burst() {
        let gate = SplitGate::new(50.0, 5.0);
        let start = Instant::now();
        // An attempt every millisecond for a second, none waiting.
        let sent = (0..1000)
            .filter(|ms| {
                gate.turn(start + Duration::from_millis(*ms), Duration::ZERO)
                    .is_some()
            })
            .count();
        assert_eq!(sent, 50 + 4);
    }
}
