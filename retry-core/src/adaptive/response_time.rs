//! How long the scope's answers take, and the time within which the next one is expected: what
//! shedding a call against its deadline must leave for the attempt itself.

use super::latency::LATENCY_GAIN;

/// The gain of the smoothed deviation: each answer moves it this share of the way to its own
/// distance from the smoothed response time. Source: RFC 6298 §2 (TCP's `RTTVAR`,
/// `beta = 1/4`).
pub(crate) const DEVIATION_GAIN: f64 = 1.0 / 4.0;

/// How many smoothed deviations above the smoothed response time an answer is still expected
/// within. Source: RFC 6298 §2 (TCP's retransmission timeout, `RTO = SRTT + K * RTTVAR`,
/// `K = 4`). For service times spread like an exponential, about 2 % of answers come later
/// (the smoothed deviation of an exponential of mean `m` is about `0.74 m`: about `4 m` in
/// all).
pub(crate) const DEVIATIONS: f64 = 4.0;

/// The smoothed time of the scope's answers and its smoothed deviation, as TCP estimates a
/// round trip (RFC 6298 §2: `SRTT`, `RTTVAR`), fed by the answers whose send time is known:
/// adaptive mode's successes (a failure may be answered at once whatever the service's pace:
/// a gateway's throttle, a full queue's 503) and the answers given to
/// [`ClientRateLimiter::record_response`](super::ClientRateLimiter::record_response) that are
/// not throttles. Unlike [`LatencyBaseline`](super::latency::LatencyBaseline), which judges
/// latency as congestion only when the scope's signals include it, this is kept whatever the
/// signals: a call that waits for its permit must leave time for its answer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct ResponseTime {
    /// The smoothed response time, in seconds (`None` before the first answer).
    smoothed: Option<f64>,
    /// The smoothed deviation from it, in seconds.
    deviation: f64,
}

impl ResponseTime {
    /// Feeds the time (seconds) one answer took. The first answer starts both averages, as
    /// RFC 6298 §2.2 starts them (`SRTT = R`, `RTTVAR = R / 2`); each later one moves the
    /// deviation first, from the smoothed time before it (§2.3).
    pub fn record(&mut self, took: f64) {
        let took = took.max(0.0);
        match self.smoothed {
            None => {
                self.smoothed = Some(took);
                self.deviation = took / 2.0;
            }
            Some(smoothed) => {
                self.deviation += DEVIATION_GAIN * ((smoothed - took).abs() - self.deviation);
                self.smoothed = Some(smoothed + LATENCY_GAIN * (took - smoothed));
            }
        }
    }

    /// The time (seconds) within which an answer is expected: the smoothed response time
    /// plus [`DEVIATIONS`] smoothed deviations (`None` before the first answer).
    pub fn expected_within(&self) -> Option<f64> {
        self.smoothed
            .map(|smoothed| smoothed + DEVIATIONS * self.deviation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_expected_before_the_first_answer() {
        assert_eq!(ResponseTime::default().expected_within(), None);
    }

    #[test]
    fn the_first_answer_starts_both_averages_as_rfc_6298_does() {
        let mut time = ResponseTime::default();
        time.record(0.1);
        // SRTT = 0.1, RTTVAR = 0.05: within 0.1 + 4 * 0.05.
        let within = time.expected_within().unwrap();
        assert!((within - 0.3).abs() < 1e-12, "{within}");
    }

    #[test]
    fn steady_answers_are_expected_within_their_own_time() {
        let mut time = ResponseTime::default();
        for _ in 0..200 {
            time.record(0.05);
        }
        let within = time.expected_within().unwrap();
        assert!((within - 0.05).abs() < 1e-6, "{within}");
    }

    #[test]
    fn spread_answers_are_expected_within_about_four_times_their_mean() {
        // Service times spread like an exponential of mean 10 ms (a fixed pseudo-random
        // sequence): about 2 % of them come later than the time expected.
        let mut time = ResponseTime::default();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let (mut later, mut answers) = (0, 0);
        for i in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let uniform = (state >> 11) as f64 / (1u64 << 53) as f64;
            let took = -0.01 * (1.0 - uniform).ln();
            if i >= 100 {
                answers += 1;
                later += usize::from(took > time.expected_within().unwrap());
            }
            time.record(took);
        }
        let share = later as f64 / answers as f64;
        assert!((0.01..0.04).contains(&share), "{share}");
    }

    #[test]
    fn a_slower_service_is_expected_within_longer_at_once() {
        let mut time = ResponseTime::default();
        for _ in 0..100 {
            time.record(0.05);
        }
        // The deviation moves first and fastest: one answer at 1 s adds most of a second.
        time.record(1.0);
        let within = time.expected_within().unwrap();
        assert!(within > 0.9, "{within}");
    }

    #[test]
    fn a_negative_time_counts_as_zero() {
        let mut time = ResponseTime::default();
        time.record(-1.0);
        assert_eq!(time.expected_within(), Some(0.0));
    }
}
