//! The send rate of a scope whose idle responses are sampled, counted from running counts.

/// The span the rate is counted over when the first congestion signal turns the limiter on,
/// in seconds: the last second, or a little more (from the newest count at least this old).
const COUNTING_WINDOW: f64 = 1.0;

/// The shortest span a rate is counted over, in seconds. Within this of its first response a
/// scope has no rate yet (its first requests, sent together, are answered together: a burst,
/// not a rate); a span since a later count that is shorter is taken as this long.
const MIN_SPAN: f64 = 0.1;

/// The responses since the latest count that make its span a rate of its own: the traffic
/// rose within the window (a burst after a pause, a scope's first second), and the rate since
/// the latest count is used when it is the higher.
const MIN_RECENT: u64 = 16;

/// A running count of responses at one time (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Count {
    at: f64,
    responses: u64,
}

/// The rate of responses over about the last second, counted rather than sampled.
///
/// Adaptive mode feeds the limiter only one idle response in
/// [`IDLE_SAMPLE`](super::IDLE_SAMPLE), with the scope's running count of calls ended, and
/// every retried failure: the count of responses is exact whenever the calls ended are read
/// (at each sample, and at each failure fed while the limiter is off), and the rate between
/// two such counts is exact, whatever the sampling's spacing. The AWS SDKs' measured rate, fed
/// by those samples, jumps with their spacing (its half-second buckets from 51/s to 153/s at
/// 100/s) and is 0 until a first bucket closes; the first throttle starts from this rate
/// instead.
///
/// Counting begins at the scope's first response, not at its making: an application makes its
/// client at start-up and calls later, and the idle time before was no traffic (counted from
/// the making, a first burst 2 s later read as 5/s where 150 calls/s came). The first
/// responses are the counts' start: a rate counts those after them (31 responses 1/150 s
/// apart are 150/s, not 155/s).
///
/// Counts are kept three deep: the newest at least [`COUNTING_WINDOW`] older than the one
/// after it (`settled`), that one (`pending`, which takes `settled`'s place once a count comes
/// [`COUNTING_WINDOW`] after it), and the latest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CountedRate {
    /// Responses counted so far.
    responses: u64,
    /// The scope's count of calls ended, when last read.
    ended: u64,
    settled: Count,
    pending: Count,
    latest: Count,
    /// When counting began (seconds): the scope has a rate [`MIN_SPAN`] later.
    started: f64,
    /// The responses counted when counting began: its start, not part of any rate.
    started_with: u64,
}

impl CountedRate {
    /// Nothing counted yet, at `now` (seconds, the scope's making): counting begins with the
    /// first response counted.
    pub(crate) fn new(now: f64) -> Self {
        Self::counting_from(now, 0)
    }

    /// `responses` counted at `now` (seconds), the counts' start.
    fn counting_from(now: f64, responses: u64) -> Self {
        let start = Count { at: now, responses };
        Self {
            responses,
            ended: 0,
            settled: start,
            pending: start,
            latest: start,
            started: now,
            started_with: responses,
        }
    }

    /// Whether a response has been counted: counting has begun.
    pub(crate) fn has_begun(&self) -> bool {
        self.responses > 0
    }

    /// When the first response was counted (seconds), once one was.
    #[cfg(feature = "fleet")]
    pub(crate) fn began_at(&self) -> Option<f64> {
        self.has_begun().then_some(self.started)
    }

    /// When the scope's first burst is over ([`MIN_SPAN`] after counting began), in seconds.
    pub(crate) fn first_burst_ends(&self) -> f64 {
        self.started + MIN_SPAN
    }

    /// Whether the responses counted so far make a rate once the first burst is over: one or
    /// more after the start (the first responses alone are no rate).
    pub(crate) fn makes_a_rate(&self) -> bool {
        self.responses > self.started_with
    }

    /// Counts `fed` responses fed one by one, and, with `ended` (the scope's running count of
    /// calls ended, read at `now`, seconds), the calls ended since it was last read. Returns
    /// the calls ended since then. The first responses counted begin the counting at `now`.
    pub(crate) fn count(&mut self, fed: u64, ended: Option<u64>, now: f64) -> u64 {
        let since = ended.map_or(0, |ended| ended.saturating_sub(self.ended));
        if let Some(ended) = ended {
            self.ended = self.ended.max(ended);
        }
        if !self.has_begun() && fed + since > 0 {
            // The first responses: the counts start here, not at the scope's making, and from
            // them (a rate counts the responses after its span's start).
            *self = Self {
                ended: self.ended,
                ..Self::counting_from(now, fed + since)
            };
            return since;
        }
        self.responses += fed + since;
        since
    }

    /// Keeps the count as of `now` (seconds), which must be exact: the calls ended were
    /// just read.
    pub(crate) fn keep(&mut self, now: f64) {
        let here = Count {
            at: now,
            responses: self.responses,
        };
        if now - self.pending.at >= COUNTING_WINDOW {
            self.settled = self.pending;
            self.pending = here;
        }
        self.latest = here;
    }

    /// Responses per second over about the last second, at `now` (seconds, after the counts
    /// kept): since the newest kept count at least [`COUNTING_WINDOW`] old (or the oldest),
    /// or since the latest count when the traffic rose since ([`MIN_RECENT`]) and that is
    /// higher. `None` when no response came after the first ones (they are the start, no rate)
    /// or the first came less than [`MIN_SPAN`] ago: the limiter then starts as the AWS SDKs'
    /// does, from the measured rate (0 before a first half-second closes, so at the 0.5/s
    /// floor); in the scope's first burst, only until the burst is over
    /// ([`first_burst_ends`](Self::first_burst_ends)).
    pub(crate) fn rate(&self, now: f64) -> Option<f64> {
        let base = if now - self.pending.at >= COUNTING_WINDOW {
            self.pending
        } else {
            self.settled
        };
        if !self.makes_a_rate() || now - base.at < MIN_SPAN {
            return None;
        }
        let over = rate_since(self.responses, base, now);
        let recent = self.responses - self.latest.responses;
        Some(if self.latest != base && recent >= MIN_RECENT {
            over.max(rate_since(self.responses, self.latest, now))
        } else {
            over
        })
    }
}

/// Responses per second from `from` until `now`, `responses` counted by then.
fn rate_since(responses: u64, from: Count, now: f64) -> f64 {
    (responses - from.responses) as f64 / (now - from.at).max(MIN_SPAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `per_second` responses a second from 0, counted every `every` seconds before `until`,
    /// then at `until` (not kept: a throttle, whose rate is asked for next).
    fn steady(per_second: f64, every: f64, until: f64) -> CountedRate {
        let ended = |t: f64| (t * per_second).round() as u64;
        let mut counted = CountedRate::new(0.0);
        // The first response, at 0 (adaptive mode feeds it): the count begins.
        counted.count(1, None, 0.0);
        counted.keep(0.0);
        let mut t = every;
        while t < until - 1e-9 {
            counted.count(0, Some(ended(t)), t);
            counted.keep(t);
            t += every;
        }
        counted.count(0, Some(ended(until)), until);
        counted
    }

    #[test]
    fn a_steady_rate_is_counted_whatever_the_counts_spacing() {
        for every in [0.01, 0.3, 0.7, 2.5] {
            let rate = steady(100.0, every, 10.0).rate(10.0).expect("counted");
            assert!((rate - 100.0).abs() < 1e-6, "every {every} s: {rate}");
        }
    }

    #[test]
    fn the_window_is_the_last_second_or_a_little_more() {
        // 10/s until 10 s, then 50/s, counted every 0.25 s: at 11 s the window starts at
        // 10 s at the latest and 9.75 s at the earliest.
        let mut counted = steady(10.0, 0.25, 10.0);
        counted.keep(10.0);
        for step in 1..=4 {
            let t = 10.0 + f64::from(step) * 0.25;
            counted.count(0, Some(100 + step as u64 * 12), t);
            counted.keep(t);
        }
        let rate = counted.rate(11.0).expect("counted");
        assert!((40.0..=50.0).contains(&rate), "{rate}");
    }

    #[test]
    fn responses_fed_one_by_one_count_with_the_calls_ended() {
        let mut counted = CountedRate::new(0.0);
        assert_eq!(counted.count(1, None, 0.0), 0);
        assert_eq!(counted.count(1, Some(30), 1.0), 30);
        // A count read late (another thread read a higher one first) takes nothing back.
        assert_eq!(counted.count(0, Some(20), 1.5), 0);
        assert_eq!(counted.count(0, Some(40), 2.0), 10);
        counted.keep(2.0);
        assert_eq!(counted.rate(2.0), Some(20.5), "41 after the first over 2 s");
    }

    #[test]
    fn the_rate_since_the_latest_count_wins_after_a_pause() {
        // 1/s for a minute, counted every 30 s, a pause, then 100/s from 90 s: counted at
        // 90.2 s (20 calls ended, all after the pause), throttled at 90.4 s.
        let mut counted = steady(1.0, 30.0, 60.0);
        counted.keep(60.0);
        counted.count(0, Some(60 + 20), 90.2);
        counted.keep(90.2);
        counted.count(1, Some(60 + 39), 90.4);
        let rate = counted.rate(90.4).expect("counted");
        assert!((rate - 100.0).abs() < 1e-6, "{rate}");
    }

    #[test]
    fn a_first_response_or_a_first_burst_is_no_rate() {
        let mut counted = CountedRate::new(5.0);
        counted.count(1, Some(0), 5.0);
        assert_eq!(counted.rate(7.0), None, "one response");
        counted.count(1, Some(20), 5.0);
        assert_eq!(
            counted.rate(5.0 + MIN_SPAN / 2.0),
            None,
            "a scope's first burst"
        );
        let rate = counted.rate(5.0 + MIN_SPAN * 4.0).expect("counted");
        // 22 responses, 21 after the first.
        assert!((rate - 21.0 / (MIN_SPAN * 4.0)).abs() < 1e-9, "{rate}");
    }

    #[test]
    fn counting_begins_at_the_first_response_not_at_the_scopes_making() {
        // Made at start-up, its first calls 2 s later: 11 responses by 2.05 s, 31 by 2.2 s (30
        // after the first).
        let mut counted = CountedRate::new(0.0);
        assert!(!counted.has_begun());
        counted.count(0, Some(0), 1.0);
        assert!(!counted.has_begun(), "no call had ended");
        counted.count(0, Some(1), 2.0);
        counted.keep(2.0);
        assert!(counted.has_begun());
        assert_eq!(counted.first_burst_ends(), 2.0 + MIN_SPAN);
        counted.count(1, Some(10), 2.05);
        assert_eq!(counted.rate(2.05), None, "the first burst");
        counted.count(0, Some(30), 2.2);
        let rate = counted.rate(2.2).expect("counted");
        assert!((rate - 30.0 / 0.2).abs() < 1e-6, "{rate}");
    }

    #[test]
    fn responses_counted_together_at_the_start_are_no_rate_until_one_comes_after() {
        // Three calls had ended when the count was first read: they are its start.
        let mut counted = CountedRate::new(0.0);
        counted.count(0, Some(3), 1.0);
        counted.keep(1.0);
        assert!(!counted.makes_a_rate());
        assert_eq!(counted.rate(1.5), None, "nothing after the start");
        counted.count(0, Some(4), 1.5);
        assert!(counted.makes_a_rate());
        assert_eq!(
            counted.rate(1.5),
            Some(2.0),
            "one after the start over 0.5 s"
        );
    }

    #[test]
    fn a_short_span_since_the_latest_count_is_taken_as_the_shortest() {
        // 20 responses 10 ms after a count, 2 s into the scope's traffic.
        let mut counted = CountedRate::new(0.0);
        counted.count(0, Some(1), 0.0);
        counted.count(0, Some(100), 2.0);
        counted.keep(2.0);
        counted.count(0, Some(120), 2.01);
        let rate = counted.rate(2.01).expect("counted");
        assert!((rate - 20.0 / MIN_SPAN).abs() < 1e-9, "{rate}");
    }
}
