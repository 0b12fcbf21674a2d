//! The fill rate a fleet's lease sets: while a fleet scope's lease is live and the fleet's
//! limiter engaged, the process sends at its share of the fleet's rate. The fleet cuts that
//! rate once per round trip for every process; between two leases the process's first
//! throttle steps its own rate down once, by the local limiter's `BETA`, and the next lease
//! sets the fleet's rate again ([`PINNED_STEP`]).

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::cubic::BETA;
use super::limiter::ClientRateLimiter;
use super::state::LimiterState;

/// The most a pinned limiter's bucket holds: this long at its rate (at least one permit), not
/// the AWS SDKs' whole second. A fleet's share is paced so that the shares sum to the fleet's
/// rate in every instant, not only over a second: a process back from an idle spell would
/// otherwise send a second of its share at once, which a server's bucket smaller than that
/// throttles. On a real clock (fleet-harness, 2 on/off processes against 151/s, a server's
/// bucket of 8) a process at 88/s had 75 of 93 attempts throttled in such a second. What a
/// tenth of a second, not a second, did to the shape sweep's 800 shapes is in
/// `docs/sim/fleet.md`, "A pinned bucket of a tenth of a second".
const PINNED_BURST: Duration = Duration::from_millis(100);

/// What the process's first throttle under a lease does to its pinned rate until the next
/// lease: `BETA` times it (the AWS SDKs' 0.7, the local limiter's own step), once.
///
/// A fleet hears of its overshoot a sync interval or two after it sent it (its processes
/// report their throttles at their next sync, and take the cut rate at the one after), while
/// each process on its own (local mode) steps down at its first throttle. A small fleet with a
/// long sync thus sent more over the limit than the same processes in local mode: in the
/// shape sweep's #73 (3 processes at 0.64 of 219/s, a bucket of 3, a 2.4 s sync) 1.41 times
/// the limit in its busiest second, where local mode sent 0.92 times it; stepped down once per
/// lease, 0.99 times it, with 1.5 % -> 0.1 % of its attempts throttled and 14 % more calls
/// served. On a real clock (fleet-harness, one run per build, `docs/fleet-harness.md`
/// section N) a shape like #420 (8 processes against 98/s, a 4.9 s sync, the limit falling
/// under them) sent 1.80 -> 1.13 times the limit in its busiest second, 2.25 % -> 0.46 % of
/// its attempts throttled, for the same calls; one like #73 went over the limit in neither
/// build, and the step's run served 11 % fewer calls (its cold start held a lower cut). Over
/// the sweep's 800 shapes, fleet mode's busiest second went over 1.10 times the
/// limit in 146 -> 93 of them (over local mode's too in 25 -> 9) and its 429 share over 2 % in
/// 67 -> 51, the calls served within 0.1 % (geometric mean). A step at each throttle (each
/// from an attempt sent after the last step) served 0.2 % fewer calls for 4 fewer shapes over
/// 1.10 times in the first 400 (42); a step of 0.5 once did worse on both, one of 0.85 at
/// each throttle served 0.4 % more and left 50 over (`docs/sim/fleet.md`, "A process's own
/// throttle steps its share down until the next lease").
const PINNED_STEP: f64 = BETA;

impl ClientRateLimiter {
    /// Sets the fill rate to `rate` permits per second (a positive rate as it is, below the
    /// AWS SDKs' floor of 0.5/s too: a fleet's share; 0 as that floor: never blocked) and holds
    /// it there: switches the bucket on, and until [`unpin_rate`](Self::unpin_rate) responses
    /// feed the measurements but move no rate, except for the first throttle of an attempt
    /// sent from now on ([`PINNED_STEP`]). The bucket holds [`PINNED_BURST`] of the rate,
    /// at least a permit. A bucket switched on here starts with a permit:
    /// empty, every process of a fleet would wait a whole period for its first, and the fleet
    /// would go quiet just after its first throttle (and the store measure that quiet).
    pub(crate) fn pin_rate(&self, rate: f64, now: Duration) {
        let mut state = self.lock();
        let now = state.time.at(now);
        let switched_on = !state.enabled;
        if switched_on {
            state.enabled = true;
            state.last_refill = now;
            self.enabled.store(true, Ordering::Release);
        }
        state.pinned = true;
        state.pinned_step_from = Some(now);
        state.provisional = false;
        state.set_rate(rate, now);
        if rate > 0.0 {
            state.fill_rate = rate;
        }
        state.hold_burst_to(PINNED_BURST);
        if switched_on {
            state.capacity = state.max_capacity;
        }
    }

    /// Gives the rate back to the local rules: with `resume_at`, from that rate (CUBIC goes on
    /// from it as from a rate it regained); without, from the rate in force. Does nothing to a
    /// limiter that is not pinned.
    pub(crate) fn unpin_rate(&self, resume_at: Option<f64>, now: Duration) {
        let mut state = self.lock();
        if !state.pinned {
            return;
        }
        let now = state.time.at(now);
        state.pinned = false;
        let rate = resume_at.unwrap_or(state.fill_rate);
        state.cubic.resume_at(rate, now);
        state.set_rate(rate, now);
    }

    /// Whether a fleet's lease holds the fill rate.
    #[cfg(test)]
    pub(crate) fn is_pinned(&self) -> bool {
        self.lock().pinned
    }
}

impl LimiterState {
    /// A throttle of an attempt sent at `sent_at` to a pinned limiter: the rate steps down to
    /// [`PINNED_STEP`] times it if the attempt was sent since the lease set it and nothing
    /// stepped it since; the bucket keeps [`PINNED_BURST`] of the new rate.
    pub(super) fn step_pinned_rate_down(&mut self, sent_at: f64, now: f64) {
        if !self.pinned_step_from.is_some_and(|from| sent_at >= from) {
            return;
        }
        self.pinned_step_from = None;
        self.refill(now);
        self.fill_rate *= PINNED_STEP;
        self.hold_burst_to(PINNED_BURST);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::limiter::TicketAdmission;
    use crate::adaptive::line::Ticket;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn a_pinned_rate_holds_through_successes() {
        let limiter = ClientRateLimiter::new(Duration::ZERO);
        limiter.pin_rate(40.0, ms(0));
        assert!(limiter.is_enabled());
        for i in 1..50 {
            limiter.record_response(false, ms(10 * i), ms(10 * i + 5));
        }
        assert_eq!(limiter.stats().fill_rate, 40.0);
        limiter.pin_rate(25.0, ms(600));
        assert_eq!(limiter.stats().fill_rate, 25.0);
    }

    #[test]
    fn a_pinned_rate_steps_down_once_on_its_first_throttle_until_the_next_lease() {
        // The shape sweep's #73: 3 processes against 219/s with a 2.4 s sync sent 1.41 times
        // the limit in a second, each process waiting for the fleet's cut.
        let limiter = ClientRateLimiter::new(Duration::ZERO);
        limiter.pin_rate(40.0, ms(1_000));
        // A throttle of an attempt sent before the lease: it met the rate the lease replaced.
        limiter.record_response(true, ms(990), ms(1_010));
        assert_eq!(limiter.stats().fill_rate, 40.0);
        // The first throttle of an attempt sent under the lease: one step down.
        limiter.record_response(true, ms(1_020), ms(1_030));
        assert_eq!(limiter.stats().fill_rate, 40.0 * 0.7);
        assert_eq!(limiter.stats().max_capacity, 40.0 * 0.7 * 0.1);
        // More throttles step nothing more until the next lease.
        for i in 0..20 {
            limiter.record_response(true, ms(1_100 + 10 * i), ms(1_110 + 10 * i));
        }
        assert_eq!(limiter.stats().fill_rate, 40.0 * 0.7);
        // The next lease sets the fleet's rate again, and a throttle steps it once again.
        limiter.pin_rate(40.0, ms(2_000));
        assert_eq!(limiter.stats().fill_rate, 40.0);
        limiter.record_response(true, ms(2_010), ms(2_020));
        assert_eq!(limiter.stats().fill_rate, 40.0 * 0.7);
    }

    #[test]
    fn a_share_below_the_floor_is_honoured_exactly() {
        // 1000 processes sharing 500/s: about 0.5/s each, some less. Floored at 0.5/s, the
        // fleet sent ~590/s into a 500/s limit in the simulator.
        let limiter = ClientRateLimiter::new(Duration::ZERO);
        limiter.pin_rate(0.2, ms(0));
        assert_eq!(limiter.stats().fill_rate, 0.2);
    }

    #[test]
    fn no_share_is_the_floor_not_a_block() {
        let limiter = ClientRateLimiter::new(Duration::ZERO);
        limiter.pin_rate(0.0, ms(0));
        assert_eq!(limiter.stats().fill_rate, 0.5);
        // Its first permit at once, the next one 2 s later: the wait is finite.
        assert!(matches!(
            limiter.acquire(Ticket::NONE, ms(0)),
            TicketAdmission::Granted
        ));
        assert_eq!(limiter.expected_wait(ms(0)), Duration::from_secs(2));
    }

    #[test]
    fn a_bucket_pinned_on_starts_with_a_permit() {
        // Empty, every process of a fleet waited a whole period (1/share, ~2 s at 1000
        // processes) for its first permit after the fleet's first throttle.
        let limiter = ClientRateLimiter::new(Duration::ZERO);
        limiter.pin_rate(0.7, ms(0));
        assert_eq!(limiter.expected_wait(ms(0)), Duration::ZERO);
        // Pinned again while on: no new permit.
        assert!(matches!(
            limiter.acquire(Ticket::NONE, ms(0)),
            TicketAdmission::Granted
        ));
        limiter.pin_rate(0.7, ms(0));
        assert!(limiter.expected_wait(ms(0)) > Duration::ZERO);
    }

    #[test]
    fn a_pinned_bucket_holds_a_tenth_of_a_second_of_its_rate() {
        // fleet-harness, on/off processes against 151/s and a server's bucket of 8: a process
        // back from an off spell sent a whole second of its share (88/s) at once, and the
        // server throttled 75 of 93 attempts in that second.
        let limiter = ClientRateLimiter::new(Duration::ZERO);
        limiter.pin_rate(88.0, ms(0));
        let granted_at = |now| {
            (0..100)
                .take_while(|_| {
                    matches!(limiter.acquire(Ticket::NONE, now), TicketAdmission::Granted)
                })
                .count()
        };
        granted_at(ms(0));
        // Five idle seconds, then a burst of calls: 8.8 permits banked, not 88.
        assert_eq!(granted_at(ms(5_000)), 8);
        assert_eq!(limiter.stats().max_capacity, 8.8);
        // A share under ten a second still banks a permit.
        limiter.pin_rate(3.0, ms(5_000));
        assert_eq!(limiter.stats().max_capacity, 1.0);
        assert_eq!(granted_at(ms(10_000)), 1);
    }

    #[test]
    fn unpinned_the_local_rules_go_on_from_the_given_rate() {
        let limiter = ClientRateLimiter::new(Duration::ZERO);
        limiter.pin_rate(40.0, ms(0));
        limiter.unpin_rate(Some(12.0), ms(1_000));
        assert!(!limiter.is_pinned());
        assert_eq!(limiter.stats().fill_rate, 12.0);
        // The bucket holds the AWS SDKs' second of the rate again, not the pinned tenth.
        assert_eq!(limiter.stats().max_capacity, 12.0);
        // A throttle now cuts the local rate again.
        limiter.record_response(true, ms(1_100), ms(1_200));
        assert!(limiter.stats().fill_rate < 12.0, "{:?}", limiter.stats());
    }
}
