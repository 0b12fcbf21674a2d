//! Whether an attempt timeout reports a queue at the service (congestion) or an outage.

/// What a scope's rate limiter knows of the service's answers, to tell an attempt timeout that
/// reports a queue from one that reports an outage.
///
/// A service whose queue is too long still answers the attempts that got through while others
/// time out: sending slower shortens the queue, so such a timeout is congestion, as TCP takes a
/// loss for one. A service that answers nothing (down, unreachable, a blackhole) times every
/// attempt out: there is no queue that sending slower would shorten, and lowering the rate at
/// each timeout only leaves the client at the minimum rate when the service comes back (in the
/// simulator's S1 blackhole, 2.8 to 4.4 s before 95 % of calls succeed again, against none for
/// a client that does not lower its rate). The retry quota is what protects a service that is
/// down.
///
/// So a timeout is congestion only when the service answered meanwhile:
/// * once the limiter is on (it sees every response): an answer arrived after the timed-out
///   attempt was sent;
/// * before (it samples the idle responses, with no clock read for the others): the scope's
///   count of successful calls grew since the previous timeout. A scope's first timeout is
///   never congestion: one timeout alone does not tell a queue from an outage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TimeoutEvidence {
    /// When the latest answer arrived, in seconds (fed once the limiter is on).
    last_answer_at: f64,
    /// The scope's count of successful calls at the previous timeout (`None` before any).
    successes_at_last_timeout: Option<u64>,
}

impl Default for TimeoutEvidence {
    fn default() -> Self {
        Self {
            last_answer_at: f64::NEG_INFINITY,
            successes_at_last_timeout: None,
        }
    }
}

impl TimeoutEvidence {
    /// An answer (any response but a timeout) arrived at `now`, in seconds.
    pub fn record_answer(&mut self, now: f64) {
        self.last_answer_at = self.last_answer_at.max(now);
    }

    /// Records the timeout of an attempt sent at `sent_at` (seconds) and returns whether it is
    /// congestion, given the scope's count of successful calls so far (`successes`) and whether
    /// the limiter is on (`limiter_on`: then every answer was fed to
    /// [`record_answer`](Self::record_answer)).
    pub fn record_timeout(&mut self, sent_at: f64, successes: u64, limiter_on: bool) -> bool {
        let previous = self.successes_at_last_timeout.replace(successes);
        if limiter_on {
            self.last_answer_at > sent_at
        } else {
            previous.is_some_and(|previous| successes > previous)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_never_congestion() {
        let mut evidence = TimeoutEvidence::default();
        evidence.record_answer(10.0);
        // Every attempt sent since 10 s times out; the successes stopped at 500.
        for i in 0..100 {
            let sent_at = 10.0 + f64::from(i) * 0.1;
            assert!(!evidence.record_timeout(sent_at + 1e-3, 500, false));
            assert!(!evidence.record_timeout(sent_at + 1e-3, 500, true));
        }
    }

    #[test]
    fn a_queue_is_congestion_while_the_service_answers_others() {
        let mut evidence = TimeoutEvidence::default();
        assert!(!evidence.record_timeout(0.0, 10, false));
        for i in 1..100u32 {
            let now = f64::from(i) * 0.1;
            evidence.record_answer(now);
            // Sent a second ago, timed out now, answers in between.
            assert!(evidence.record_timeout(now - 1.0, 10 + u64::from(i), false));
            assert!(evidence.record_timeout(now - 1.0, 10 + u64::from(i), true));
        }
    }
}

/// The examples of this file's items, which are internal to the crate.
#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn timeout_evidence() {
        let mut evidence = TimeoutEvidence::default();
        // Before the limiter is on: a first timeout tells nothing, a second one after more
        // successful calls is a queue, one after no success an outage.
        assert!(!evidence.record_timeout(0.0, 100, false));
        assert!(evidence.record_timeout(0.1, 130, false));
        assert!(!evidence.record_timeout(0.2, 130, false));
        // Once the limiter is on: an answer at 1.5 s is after an attempt sent at 1.0 s.
        evidence.record_answer(1.5);
        assert!(evidence.record_timeout(1.0, 130, true));
        assert!(!evidence.record_timeout(2.0, 130, true));
    }

    #[test]
    fn record_answer() {
        let mut evidence = TimeoutEvidence::default();
        evidence.record_answer(3.0);
        assert!(evidence.record_timeout(2.5, 0, true));
    }

    #[test]
    fn record_timeout() {
        let mut evidence = TimeoutEvidence::default();
        assert!(!evidence.record_timeout(0.0, 7, true)); // nothing answered at all
    }
}
