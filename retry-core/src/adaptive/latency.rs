//! Response latency far above the scope's recent baseline, as a congestion signal.

/// The gain of the smoothed latency: each response moves it this share of the way to its own
/// latency. Source: RFC 6298 §2 (TCP's smoothed round-trip time, `alpha = 1/8`).
pub(crate) const LATENCY_GAIN: f64 = 1.0 / 8.0;

/// The gain of the baseline's slower average: the baseline is the lowest value of an average
/// over about the last 64 responses. Over the smoothed latency's 8, the lowest value would be
/// the low tail of the service's spread, and ordinary responses would look slow (service times
/// spread like an exponential of mean 50 ms give a baseline near 20 ms). (A choice of this
/// crate, from the simulator: S2 brownout 0.79 of capacity with 1/8, 0.82 with 1/64; S3's R95
/// after the throttling ends about 6 s with 1/8, 1 s with 1/64.)
pub(crate) const BASELINE_GAIN: f64 = 1.0 / 64.0;

/// How long the lowest average latency seen stays the baseline, in seconds: the baseline is
/// the minimum over the last one to two windows. BBR keeps its minimum round-trip time for
/// 10 s (`MinRTTFilterLen`, IETF draft "BBR Congestion Control"); a choice of this crate is a
/// longer memory, so that a congestion episode's queue does not become the baseline while it
/// lasts (in the simulator's S2, a 60 s brownout: 0.73 of capacity with 10 s, 0.82 with 30 s,
/// 0.76 with 60 s or 120 s).
pub(crate) const BASELINE_WINDOW: f64 = 30.0;

/// How many times the baseline the smoothed latency (and the response's own) must reach before
/// a response counts as congestion: a queue at the service holding about three service times
/// of work. (A choice of this crate, from the simulator's S2 brownout: in one comparison of 8
/// seeds, 3, 5 and 6 delivered 0.78, 0.79 and 0.76 of capacity, 4 delivered 0.80; see
/// `docs/sim/adaptive.md`.)
pub(crate) const LATENCY_FACTOR: f64 = 4.0;

/// Responses that must have fed the averages before they are compared or kept as a baseline.
const WARM_UP: u32 = 8;

/// The smoothed latency of a scope's responses and its baseline, the lowest average latency of
/// the last [`BASELINE_WINDOW`] to twice that (fed by every judged success once the limiter is
/// on, and by the idle sample of first attempts before): a service whose queue fills answers later and
/// later long before an attempt times out, so a smoothed latency far above the baseline is an
/// earlier sign of congestion than a timeout (as TCP Vegas reads queueing from round-trip
/// times above the lowest seen).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LatencyBaseline {
    /// The smoothed latency, in seconds (`None` before the first response).
    smoothed: Option<f64>,
    /// The baseline's slower average of the latency ([`BASELINE_GAIN`]), in seconds.
    average: f64,
    /// Responses fed so far, up to [`WARM_UP`].
    samples: u32,
    /// The lowest average latency of the current window.
    current_min: f64,
    /// The lowest average latency of the previous window.
    previous_min: f64,
    /// When the current window started, in seconds.
    window_start: f64,
}

impl Default for LatencyBaseline {
    fn default() -> Self {
        Self {
            smoothed: None,
            average: 0.0,
            samples: 0,
            current_min: f64::INFINITY,
            previous_min: f64::INFINITY,
            window_start: f64::NEG_INFINITY,
        }
    }
}

impl LatencyBaseline {
    /// Feeds the latency (seconds) of a response received at `now` (seconds); returns whether
    /// it is congestion: the smoothed latency and this response's own both more than
    /// [`LATENCY_FACTOR`] times the baseline (the baseline before this response), after
    /// a warm-up of a few responses.
    pub fn record(&mut self, latency: f64, now: f64) -> bool {
        let latency = latency.max(0.0);
        let smoothed = match self.smoothed {
            Some(smoothed) => smoothed + LATENCY_GAIN * (latency - smoothed),
            None => latency,
        };
        self.smoothed = Some(smoothed);
        let baseline = self.baseline();
        // Both averages start at the first response, as RFC 6298 §2.2 starts SRTT.
        self.average = match self.samples {
            0 => latency,
            _ => self.average + BASELINE_GAIN * (latency - self.average),
        };
        self.samples = self.samples.saturating_add(1).min(WARM_UP);
        self.roll_window(now);
        if self.samples >= WARM_UP {
            self.current_min = self.current_min.min(self.average);
        }
        match baseline {
            // The response itself must be slow too: once the queue has drained, the smoothed
            // latency takes a few responses to come down, and must not lower the rate again.
            Some(baseline) if self.samples >= WARM_UP => {
                let threshold = LATENCY_FACTOR * baseline;
                smoothed > threshold && latency > threshold
            }
            _ => false,
        }
    }

    /// The smoothed latency, in seconds (`None` before the first response).
    pub fn smoothed(&self) -> Option<f64> {
        self.smoothed
    }

    /// The baseline: the lowest average latency ([`BASELINE_GAIN`]) of the last one to two windows (`None`
    /// before the first response).
    pub fn baseline(&self) -> Option<f64> {
        let baseline = self.current_min.min(self.previous_min);
        baseline.is_finite().then_some(baseline)
    }

    /// Starts a new window when the current one is [`BASELINE_WINDOW`] old; after two windows
    /// without a response, the old minimum is forgotten too.
    fn roll_window(&mut self, now: f64) {
        let age = now - self.window_start;
        if age < BASELINE_WINDOW {
            return;
        }
        self.previous_min = if age < 2.0 * BASELINE_WINDOW {
            self.current_min
        } else {
            f64::INFINITY
        };
        self.current_min = f64::INFINITY;
        self.window_start = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `count` responses of `latency`, `step` seconds apart from `start`; the verdicts.
    fn feed(baseline: &mut LatencyBaseline, latency: f64, start: f64, count: u32) -> Vec<bool> {
        (0..count)
            .map(|i| baseline.record(latency, start + f64::from(i) * 0.1))
            .collect()
    }

    #[test]
    fn a_steady_latency_is_never_congestion() {
        let mut latency = LatencyBaseline::default();
        assert!(feed(&mut latency, 0.05, 0.0, 1000).iter().all(|c| !c));
    }

    #[test]
    fn a_spread_of_service_times_is_never_congestion() {
        // Service times spread like an exponential of mean 50 ms (a fixed pseudo-random
        // sequence), 100 responses a second for ten minutes: no queue, no congestion.
        let mut latency = LatencyBaseline::default();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for i in 0..60_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let uniform = (state >> 11) as f64 / (1u64 << 53) as f64;
            let service = -0.05 * (1.0 - uniform).ln();
            assert!(
                !latency.record(service, f64::from(i) * 0.01),
                "response {i}"
            );
        }
    }

    #[test]
    fn a_latency_four_times_the_baseline_is_congestion_once_smoothed() {
        let mut latency = LatencyBaseline::default();
        feed(&mut latency, 0.05, 0.0, 20);
        // 0.3 s = 6x: the smoothed latency passes 0.2 s after a few responses, not the first.
        let verdicts = feed(&mut latency, 0.3, 2.0, 10);
        assert!(!verdicts[0], "one slow response is noise");
        assert!(verdicts[9], "a sustained queue is congestion");
        // 0.15 s = 3x, sustained: below the factor, never congestion.
        let mut latency = LatencyBaseline::default();
        feed(&mut latency, 0.05, 0.0, 20);
        assert!(feed(&mut latency, 0.15, 2.0, 50).iter().all(|c| !c));
    }

    #[test]
    fn a_fast_response_is_not_congestion_while_the_smoothed_latency_comes_down() {
        let mut latency = LatencyBaseline::default();
        feed(&mut latency, 0.05, 0.0, 20);
        assert!(feed(&mut latency, 1.0, 2.0, 10)[9]);
        // The queue has drained: the smoothed latency is still far above 0.2 s, the
        // responses are not.
        assert!(latency.smoothed().unwrap() > 0.5);
        assert!(feed(&mut latency, 0.05, 3.0, 3).iter().all(|c| !c));
    }

    #[test]
    fn no_verdict_before_the_warm_up() {
        let mut latency = LatencyBaseline::default();
        let verdicts = feed(&mut latency, 0.01, 0.0, 2);
        assert!(verdicts.iter().all(|c| !c));
        let verdicts = feed(&mut latency, 1.0, 0.2, (WARM_UP - 3).max(1));
        assert!(verdicts.iter().all(|c| !c), "{verdicts:?}");
    }

    #[test]
    fn the_baseline_forgets_a_minimum_older_than_two_windows() {
        let mut latency = LatencyBaseline::default();
        feed(&mut latency, 0.05, 0.0, 20);
        // A lasting rise (a slower service, not a queue) becomes the new baseline.
        feed(&mut latency, 0.5, 2.0, 900);
        let baseline = latency.baseline().unwrap();
        assert!((baseline - 0.5).abs() < 1e-3, "{baseline}");
        assert!(!latency.record(0.5, 100.0));
    }
}

/// The examples of this file's items, which are internal to the crate.
#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn latency_baseline() {
        let mut latency = LatencyBaseline::default();
        for i in 0..20 {
            assert!(!latency.record(0.05, f64::from(i) * 0.1)); // 50 ms: the baseline
        }
        assert!((latency.baseline().unwrap() - 0.05).abs() < 1e-9);
        // The service's queue fills: 1 s responses soon count as congestion.
        let congested = (0..5).map(|i| latency.record(1.0, 2.0 + f64::from(i) * 0.1));
        assert!(congested.last().unwrap());
    }

    #[test]
    fn record() {
        let mut latency = LatencyBaseline::default();
        assert!(!latency.record(5.0, 0.0)); // no baseline yet: never congestion
    }
}
