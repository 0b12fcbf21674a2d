//! A long-tail latency model after Dean and Barroso, "The Tail at Scale" (CACM 56(2), 2013):
//! most answers fast, a few much slower, each attempt independently — plus, optionally,
//! replicas that go through slow periods of their own.
//!
//! An attempt's service time is drawn from a mixture:
//!
//! * the **body** (the fast answers): log-normal with median [`body_median`] and shape
//!   [`body_sigma`];
//! * with probability [`slow_share`], independently for every attempt, a **slow** answer:
//!   log-normal with median [`slow_median`] and shape [`slow_sigma`] (a garbage-collection pause,
//!   a compaction, a queue behind a background job: the paper's sources of variability, none of
//!   which follows the request to another replica);
//! * optionally ([`SlowPeriods`]), the answer is served by one of several replicas chosen at
//!   random, and a replica in a slow period multiplies its answers' times by a factor.
//!
//! Independence is what hedging relies on: a second copy of a slow attempt, sent to another
//! replica, is most likely fast. [`TailLatency::paper`] is the reference shape (its figures and
//! why are on the function); [`TailLatency::draw`] draws shapes of the same family, so that a
//! goal is checked over shapes nobody tuned for.
//!
//! [`body_median`]: TailLatency::body_median
//! [`body_sigma`]: TailLatency::body_sigma
//! [`slow_share`]: TailLatency::slow_share
//! [`slow_median`]: TailLatency::slow_median
//! [`slow_sigma`]: TailLatency::slow_sigma

use std::fmt;

use crate::rng::Rng;
use crate::time::{MILLI, Nanos, SECOND};

/// The longest service time a draw may give: an hour (a log-normal's far tail is unbounded).
const LONGEST: f64 = 3600.0 * SECOND as f64;

/// A long-tail latency shape: a log-normal body, a rare slow mode, optional slow replicas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailLatency {
    /// Median of the fast answers.
    pub body_median: Nanos,
    /// Standard deviation of the fast answers' logarithm.
    pub body_sigma: f64,
    /// Probability that an attempt's answer is slow, independently for every attempt.
    pub slow_share: f64,
    /// Median of the slow answers.
    pub slow_median: Nanos,
    /// Standard deviation of the slow answers' logarithm.
    pub slow_sigma: f64,
    /// Replicas that go through slow periods, if any.
    pub slow_periods: Option<SlowPeriods>,
}

/// Replicas that each go through slow periods: an attempt is served by a replica drawn at
/// random (a random load balancer: a hedge may land on the same replica, with probability
/// `1 / replicas`), and a replica in a slow period multiplies its answers' times by `factor`.
///
/// Each replica alternates healthy and slow periods of exponential lengths (means
/// `mean_length × (1 − share) / share` and `mean_length`), so that it is slow `share` of the
/// time; the replicas are independent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowPeriods {
    /// Replicas serving the attempts.
    pub replicas: u32,
    /// Share of the time each replica is slow, in (0, 1).
    pub share: f64,
    /// Mean length of a slow period.
    pub mean_length: Nanos,
    /// Factor on the service time of an attempt a slow replica serves, at least 1.
    pub factor: f64,
}

/// The ranges [`TailLatency::draw`] draws from (log-uniform where marked): the paper's shape,
/// a fast body and a rare slow mode one to three orders of magnitude slower.
pub mod family {
    use crate::time::{MILLI, Nanos, SECOND};

    /// Body median, log-uniform: 1 ms to 10 ms (a key-value read, the paper's BigTable).
    pub const BODY_MEDIAN: (Nanos, Nanos) = (MILLI, 10 * MILLI);
    /// Body shape, uniform: a body p95 from 1.6 to 3.2 times its median.
    pub const BODY_SIGMA: (f64, f64) = (0.3, 0.7);
    /// Slow share, log-uniform: 0.5 % to 2 %. The paper's hedge after 10 ms sent 2 % more
    /// requests (the top of the range); at least five times the 0.1 % that p99.9 looks at, so
    /// that p99.9 falls in the slow mode ("a few slow", not "a slow one in ten thousand").
    pub const SLOW_SHARE: (f64, f64) = (0.005, 0.02);
    /// Slow median over body median, log-uniform: 50 to 500 (the paper: a 1.8 s p99.9 over
    /// reads of a few milliseconds).
    pub const SLOW_RATIO: (f64, f64) = (50.0, 500.0);
    /// Slow shape, uniform.
    pub const SLOW_SIGMA: (f64, f64) = (0.3, 1.0);
    /// Probability that a drawn shape has slow replicas.
    pub const SLOW_PERIODS_PROBABILITY: f64 = 0.5;
    /// Replicas of a shape with slow periods.
    pub const REPLICAS: u32 = 20;
    /// Share of the time a replica is slow, log-uniform: 0.2 % to 1 %.
    pub const PERIOD_SHARE: (f64, f64) = (0.002, 0.01);
    /// Mean slow period, log-uniform: 1 s to 10 s.
    pub const PERIOD_LENGTH: (Nanos, Nanos) = (SECOND, 10 * SECOND);
    /// Slow replica's factor, log-uniform: 10 to 100.
    pub const PERIOD_FACTOR: (f64, f64) = (10.0, 100.0);
}

impl TailLatency {
    /// The reference shape: a body of median 3 ms (σ 0.5, p95 6.8 ms), and 1.2 % of the
    /// answers slow, of median 600 ms (σ 0.8); no slow replicas.
    ///
    /// It is chosen to give the two figures of "The Tail at Scale" that describe one request:
    /// **2.0 % of the answers slower than 10 ms** (a hedge sent after 10 ms went out for 2 % of
    /// the requests in their BigTable benchmark) and **a p99.9 of 1.8 s** (the 1,800 ms that
    /// hedging after 10 ms cut to 74 ms). The paper measured its p99.9 over a read of 1,000
    /// keys from 100 servers, which waits for the slowest of its reads; this model's p99.9 is
    /// that of one call, the figure a client of one service sees (and the one issue 27's goal
    /// names). Analytically P(> 10 ms) = 0.012 + 0.988 × P(Z > ln(10/3) / 0.5) = 0.0199, and
    /// p99.9 = 600 ms × e^(0.8 z) with P(Z > z) = 0.001 / 0.012, z = 1.383: 1.81 s (the test
    /// draws 10⁶ answers).
    ///
    /// ```
    /// let paper = retry_sim::latency::TailLatency::paper();
    /// assert!(paper.validate().is_ok());
    /// assert_eq!(paper.slow_share, 0.012);
    /// ```
    pub fn paper() -> Self {
        Self {
            body_median: 3 * MILLI,
            body_sigma: 0.5,
            slow_share: 0.012,
            slow_median: 600 * MILLI,
            slow_sigma: 0.8,
            slow_periods: None,
        }
    }

    /// A shape drawn from [`family`]'s ranges with `rng` (seeded by the caller: a fixed seed
    /// gives a fixed shape).
    ///
    /// ```
    /// use retry_sim::{latency::TailLatency, rng::Rng};
    /// let a = TailLatency::draw(&mut Rng::new(7));
    /// assert_eq!(a, TailLatency::draw(&mut Rng::new(7)));
    /// assert!(a.validate().is_ok());
    /// ```
    pub fn draw(rng: &mut Rng) -> Self {
        let log_uniform = |rng: &mut Rng, (low, high): (f64, f64)| {
            (low.ln() + rng.next_f64() * (high.ln() - low.ln())).exp()
        };
        let uniform = |rng: &mut Rng, (low, high): (f64, f64)| low + rng.next_f64() * (high - low);
        let nanos = |(low, high): (Nanos, Nanos)| (low as f64, high as f64);
        let body_median = log_uniform(rng, nanos(family::BODY_MEDIAN));
        let body_sigma = uniform(rng, family::BODY_SIGMA);
        let slow_share = log_uniform(rng, family::SLOW_SHARE);
        let slow_median = body_median * log_uniform(rng, family::SLOW_RATIO);
        let slow_sigma = uniform(rng, family::SLOW_SIGMA);
        let slow_periods = rng
            .chance(family::SLOW_PERIODS_PROBABILITY)
            .then(|| SlowPeriods {
                replicas: family::REPLICAS,
                share: log_uniform(rng, family::PERIOD_SHARE),
                mean_length: log_uniform(rng, nanos(family::PERIOD_LENGTH)) as Nanos,
                factor: log_uniform(rng, family::PERIOD_FACTOR),
            });
        Self {
            body_median: body_median as Nanos,
            body_sigma,
            slow_share,
            slow_median: slow_median as Nanos,
            slow_sigma,
            slow_periods,
        }
    }

    /// Checks the numbers, naming the first that is out of range.
    ///
    /// ```
    /// let mut shape = retry_sim::latency::TailLatency::paper();
    /// shape.slow_share = 1.5;
    /// assert!(shape.validate().unwrap_err().contains("slow_share"));
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        let sigma = |name: &str, value: f64| {
            if value.is_finite() && (0.0..=5.0).contains(&value) {
                Ok(())
            } else {
                Err(format!("`{name}` must be between 0 and 5, not {value}"))
            }
        };
        if self.body_median == 0 || self.slow_median == 0 {
            return Err("the body's and the slow answers' medians must be longer than zero".into());
        }
        sigma("sigma", self.body_sigma)?;
        sigma("slow_sigma", self.slow_sigma)?;
        if !(self.slow_share.is_finite() && (0.0..=1.0).contains(&self.slow_share)) {
            return Err(format!(
                "`slow_share` must be between 0 and 1, not {}",
                self.slow_share
            ));
        }
        match self.slow_periods {
            Some(periods) => periods.validate(),
            None => Ok(()),
        }
    }

    /// The mean service time, in seconds (slow periods included).
    ///
    /// ```
    /// let mean = retry_sim::latency::TailLatency::paper().mean_secs();
    /// assert!((mean - 0.0131).abs() < 0.0005, "{mean}");
    /// ```
    pub fn mean_secs(&self) -> f64 {
        let lognormal =
            |median: Nanos, sigma: f64| median as f64 / SECOND as f64 * (sigma * sigma / 2.0).exp();
        let mean = (1.0 - self.slow_share) * lognormal(self.body_median, self.body_sigma)
            + self.slow_share * lognormal(self.slow_median, self.slow_sigma);
        match self.slow_periods {
            Some(periods) => mean * (1.0 + periods.share * (periods.factor - 1.0)),
            None => mean,
        }
    }

    /// One attempt's service time, slow periods aside (see [`ReplicaPhases`] for those).
    ///
    /// ```
    /// use retry_sim::{latency::TailLatency, rng::Rng};
    /// let time = TailLatency::paper().sample(&mut Rng::new(1));
    /// assert!(time > 0);
    /// ```
    pub fn sample(&self, rng: &mut Rng) -> Nanos {
        let (median, sigma) = if rng.chance(self.slow_share) {
            (self.slow_median, self.slow_sigma)
        } else {
            (self.body_median, self.body_sigma)
        };
        (median as f64 * (sigma * rng.normal()).exp()).min(LONGEST) as Nanos
    }

    /// One attempt's service time with the slow replicas drawn independently of time (a
    /// replica is slow with probability `share`): the model without the slow periods' time
    /// correlation, for estimates outside the simulation ([`ideal_hedging`]).
    fn sample_independent(&self, rng: &mut Rng) -> Nanos {
        let time = self.sample(rng);
        match self.slow_periods {
            Some(periods) if rng.chance(periods.share) => {
                (time as f64 * periods.factor).min(LONGEST) as Nanos
            }
            _ => time,
        }
    }
}

impl fmt::Display for TailLatency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |n: Nanos| n as f64 / MILLI as f64;
        write!(
            f,
            "body {:.2} ms (σ {:.2}), {:.2} % slow of {:.0} ms (σ {:.2})",
            ms(self.body_median),
            self.body_sigma,
            self.slow_share * 100.0,
            ms(self.slow_median),
            self.slow_sigma
        )?;
        if let Some(periods) = self.slow_periods {
            write!(
                f,
                "; {} replicas, each slow {:.2} % of the time (periods of {:.1} s) × {:.0}",
                periods.replicas,
                periods.share * 100.0,
                periods.mean_length as f64 / SECOND as f64,
                periods.factor
            )?;
        }
        Ok(())
    }
}

impl SlowPeriods {
    /// Checks the numbers, naming the first that is out of range.
    ///
    /// ```
    /// use retry_sim::latency::SlowPeriods;
    /// let periods = SlowPeriods { replicas: 0, share: 0.01, mean_length: 1, factor: 10.0 };
    /// assert!(periods.validate().unwrap_err().contains("replicas"));
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        if self.replicas == 0 {
            return Err("`slow_replicas` must be at least 1".into());
        }
        if !(self.share.is_finite() && self.share > 0.0 && self.share < 1.0) {
            return Err(format!(
                "`slow_period_share` must be above 0 and below 1, not {}",
                self.share
            ));
        }
        if self.mean_length == 0 {
            return Err("`slow_period_length` must be longer than zero".into());
        }
        if !(self.factor.is_finite() && (1.0..=1e6).contains(&self.factor)) {
            return Err(format!(
                "`slow_period_factor` must be between 1 and 10⁶, not {}",
                self.factor
            ));
        }
        Ok(())
    }
}

/// The replicas' slow periods during a run: each replica's current phase and when it ends,
/// advanced lazily when an attempt reaches it.
#[derive(Debug, Clone)]
pub struct ReplicaPhases {
    periods: SlowPeriods,
    /// Per replica: whether it is slow, and until when.
    phases: Vec<(bool, Nanos)>,
    rng: Rng,
}

impl ReplicaPhases {
    /// The replicas at time 0, each slow with probability `share` (the stationary state).
    ///
    /// ```
    /// use retry_sim::{latency::{ReplicaPhases, SlowPeriods}, rng::Rng};
    /// let periods = SlowPeriods { replicas: 4, share: 0.5, mean_length: 1_000, factor: 10.0 };
    /// let mut replicas = ReplicaPhases::new(periods, Rng::new(1));
    /// let time = replicas.stretch(100, 0);
    /// assert!(time == 100 || time == 1_000);
    /// ```
    pub fn new(periods: SlowPeriods, mut rng: Rng) -> Self {
        let phases = (0..periods.replicas)
            .map(|_| {
                let slow = rng.chance(periods.share);
                let end = rng.exp(Self::mean(&periods, slow));
                (slow, end)
            })
            .collect();
        Self {
            periods,
            phases,
            rng,
        }
    }

    fn mean(periods: &SlowPeriods, slow: bool) -> f64 {
        let length = periods.mean_length as f64;
        if slow {
            length
        } else {
            length * (1.0 - periods.share) / periods.share
        }
    }

    /// `time` as served at `now` by a replica drawn at random: multiplied by the factor when
    /// that replica is in a slow period.
    pub fn stretch(&mut self, time: Nanos, now: Nanos) -> Nanos {
        let replica = self.rng.below(u64::from(self.periods.replicas)) as usize;
        let (mut slow, mut end) = self.phases[replica];
        while end <= now {
            slow = !slow;
            end = end.saturating_add(self.rng.exp(Self::mean(&self.periods, slow)).max(1));
        }
        self.phases[replica] = (slow, end);
        if slow {
            (time as f64 * self.periods.factor).min(LONGEST) as Nanos
        } else {
            time
        }
    }
}

/// What ideal hedging does to a shape, estimated from `draws` independent draws (no queueing,
/// slow replicas independent per attempt): the `quantile` of one attempt's time, and of
/// `min(X₁, d + X₂)`, a hedge sent at `d` = the shape's own `hedge_quantile` (an oracle that
/// knows the distribution; no budget, one hedge). Returns `(unhedged, hedged, d)`.
///
/// It is the yardstick for a client's hedging in the simulator: what the best a delay at that
/// percentile can give on this shape.
///
/// ```
/// use retry_sim::{latency::{TailLatency, ideal_hedging}, rng::Rng, time::MILLI};
/// let (unhedged, hedged, delay) =
///     ideal_hedging(&TailLatency::paper(), 0.95, 0.999, 100_000, &mut Rng::new(1));
/// assert!(unhedged > 1_000 * MILLI && hedged < 50 * MILLI && delay < 10 * MILLI);
/// ```
pub fn ideal_hedging(
    shape: &TailLatency,
    hedge_quantile: f64,
    quantile: f64,
    draws: usize,
    rng: &mut Rng,
) -> (Nanos, Nanos, Nanos) {
    let mut first: Vec<Nanos> = (0..draws.max(1))
        .map(|_| shape.sample_independent(rng))
        .collect();
    let mut sorted = first.clone();
    sorted.sort_unstable();
    let at = |sorted: &[Nanos], q: f64| {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    };
    let delay = at(&sorted, hedge_quantile);
    let unhedged = at(&sorted, quantile);
    for time in &mut first {
        let hedge = delay.saturating_add(shape.sample_independent(rng));
        *time = (*time).min(hedge);
    }
    first.sort_unstable();
    (unhedged, at(&first, quantile), delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference shape gives the paper's two per-request figures.
    #[test]
    fn the_paper_shape_has_the_papers_figures() {
        let shape = TailLatency::paper();
        let mut rng = Rng::new(27);
        let mut draws: Vec<Nanos> = (0..1_000_000).map(|_| shape.sample(&mut rng)).collect();
        draws.sort_unstable();
        let above_10ms =
            draws.iter().filter(|&&t| t > 10 * MILLI).count() as f64 / draws.len() as f64;
        let p999 = draws[999_000] as f64 / SECOND as f64;
        assert!((above_10ms - 0.020).abs() < 0.001, "{above_10ms}");
        // The estimate's standard error is about 0.025 s (0.001 of the draws above it).
        assert!((p999 - 1.81).abs() < 0.1, "{p999}");
    }

    /// A replica is slow about `share` of the time, whatever the time it is asked at.
    #[test]
    fn replicas_are_slow_their_share_of_the_time() {
        let periods = SlowPeriods {
            replicas: 10,
            share: 0.05,
            mean_length: SECOND,
            factor: 2.0,
        };
        let mut replicas = ReplicaPhases::new(periods, Rng::new(3));
        let asks = 200_000u64;
        let slow = (0..asks)
            .filter(|&i| replicas.stretch(1, i * 10 * MILLI) == 2)
            .count() as f64;
        let share = slow / asks as f64;
        assert!((share - 0.05).abs() < 0.01, "{share}");
    }

    /// Drawn shapes stay within the family's ranges.
    #[test]
    fn drawn_shapes_stay_in_the_family() {
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            let shape = TailLatency::draw(&mut rng);
            assert!(shape.validate().is_ok());
            let ratio = shape.slow_median as f64 / shape.body_median as f64;
            assert!((49.0..=501.0).contains(&ratio), "{ratio}");
            assert!((0.005..=0.02).contains(&shape.slow_share));
        }
    }
}
