//! tower's `hedge` middleware (`tower::hedge::Hedge`, tower 0.5), modelled: one hedge per
//! call after a percentile of the latencies a rotating histogram holds, no budget.
//!
//! What the model keeps from tower's source (`tower/src/hedge/`):
//!
//! * `Hedge::new(service, policy, min_data_points, latency_percentile, period)`: one histogram
//!   per `Hedge` service (here, per client), shared by the original and the hedge;
//! * `RotatingHistogram`: a *read* histogram (the last full period) and a *write* histogram
//!   (the current one); every `period` the write one becomes the read one and a fresh one is
//!   written; after two periods without a read or a write both are cleared;
//! * the latency of a **successful** response is recorded in whole milliseconds, rounded up
//!   (the `Latency` layer records after the inner future returned `Ok`; an error, or a copy
//!   dropped because the other won, records nothing), the hedge's from its own send;
//! * when a call starts: no hedge unless the read histogram holds `min_data_points`
//!   (`SelectPolicy::clone_request`); the delay is the read histogram's
//!   `value_at_quantile(latency_percentile)` (`DelayPolicy`), computed then;
//! * after the delay the hedge is sent (`Policy::can_retry`, true here: tower has no budget);
//! * the first copy to complete wins, **whatever it returns**: `Select` polls both futures and
//!   returns the first ready one, an error included; the other is dropped.
//!
//! One difference: tower's histogram is an `hdrhistogram` with 3 significant digits, exact for
//! the whole milliseconds below 2,048 ms it holds here; the model keeps exact counts.

use std::collections::BTreeMap;

use crate::time::{MILLI, Nanos};

/// A tower `Hedge` layer's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TowerHedgeSpec {
    /// `latency_percentile`: the quantile of the read histogram the hedge waits, in (0, 1].
    pub percentile: f64,
    /// `min_data_points`: no hedge while the read histogram holds fewer latencies.
    pub min_data_points: u64,
    /// `period`: how often the histograms rotate.
    pub period: Nanos,
}

/// One latency histogram of whole milliseconds.
#[derive(Debug, Clone, Default)]
struct Millis {
    counts: BTreeMap<u64, u64>,
    total: u64,
}

impl Millis {
    /// hdrhistogram's `value_at_quantile`: the smallest recorded value whose cumulative count
    /// reaches `ceil(q × total)` (at least 1); 0 when empty.
    fn value_at_quantile(&self, q: f64) -> u64 {
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (&value, &count) in &self.counts {
            seen += count;
            if seen >= rank {
                return value;
            }
        }
        0
    }
}

/// One client's `Hedge` layer: its rotating histogram.
///
/// ```
/// use retry_sim::hedge::tower::{TowerHedge, TowerHedgeSpec};
/// use retry_sim::time::{MILLI, SECOND};
/// let spec = TowerHedgeSpec { percentile: 0.9, min_data_points: 10, period: 10 * SECOND };
/// let mut tower = TowerHedge::new(spec);
/// for i in 0..10 {
///     tower.record_success(if i < 8 { MILLI } else { 10 * MILLI }, SECOND);
/// }
/// assert_eq!(tower.delay(5 * SECOND), None); // still in the write histogram
/// assert_eq!(tower.delay(10 * SECOND), Some(10 * MILLI)); // rotated: p90 of the last period
/// ```
#[derive(Debug, Clone)]
pub struct TowerHedge {
    spec: TowerHedgeSpec,
    read: Millis,
    write: Millis,
    last_rotation: Nanos,
}

impl TowerHedge {
    /// A layer created at time 0 with empty histograms.
    pub fn new(spec: TowerHedgeSpec) -> Self {
        Self {
            spec,
            read: Millis::default(),
            write: Millis::default(),
            last_rotation: 0,
        }
    }

    /// `RotatingHistogram::maybe_rotate`, at `now`.
    fn rotate(&mut self, now: Nanos) {
        let period = self.spec.period.max(1);
        let rotations = now.saturating_sub(self.last_rotation) / period;
        if rotations >= 2 {
            self.read = Millis::default();
            self.write = Millis::default();
        } else if rotations == 1 {
            self.read = std::mem::take(&mut self.write);
        }
        self.last_rotation += period * rotations;
    }

    /// A call starting at `now`: its hedge's delay, or `None` when it gets no hedge (fewer
    /// than `min_data_points` latencies in the read histogram).
    pub fn delay(&mut self, now: Nanos) -> Option<Nanos> {
        self.rotate(now);
        (self.read.total >= self.spec.min_data_points)
            .then(|| self.read.value_at_quantile(self.spec.percentile) * MILLI)
    }

    /// A copy sent `latency` ago succeeded at `now`: its latency in whole milliseconds,
    /// rounded up, goes into the write histogram.
    pub fn record_success(&mut self, latency: Nanos, now: Nanos) {
        self.rotate(now);
        let millis = latency.div_ceil(MILLI);
        *self.write.counts.entry(millis).or_insert(0) += 1;
        self.write.total += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    fn spec() -> TowerHedgeSpec {
        TowerHedgeSpec {
            percentile: 0.95,
            min_data_points: 10,
            period: 10 * SECOND,
        }
    }

    /// Two periods without a read or a write clear both histograms: no more hedges.
    #[test]
    fn two_quiet_periods_clear_the_histograms() {
        let mut tower = TowerHedge::new(spec());
        for _ in 0..20 {
            tower.record_success(3 * MILLI, SECOND);
        }
        assert_eq!(tower.delay(11 * SECOND), Some(3 * MILLI));
        // Nothing recorded in [10 s, 20 s): the read histogram is empty from 20 s.
        assert_eq!(tower.delay(21 * SECOND), None);
        for _ in 0..20 {
            tower.record_success(3 * MILLI, 22 * SECOND);
        }
        assert_eq!(tower.delay(55 * SECOND), None, "cleared after two periods");
    }

    /// Latencies are recorded in whole milliseconds, rounded up.
    #[test]
    fn latencies_round_up_to_a_millisecond() {
        let mut tower = TowerHedge::new(spec());
        for _ in 0..10 {
            tower.record_success(2 * MILLI + 1, 0);
        }
        assert_eq!(tower.delay(10 * SECOND), Some(3 * MILLI));
    }
}
