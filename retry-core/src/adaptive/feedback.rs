//! What feeds the rate limiter: each response (or timeout) to an attempt, which lowers the fill
//! rate on congestion and raises it along CUBIC otherwise, and the samples of idle responses.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::limiter::ClientRateLimiter;
use super::state::LimiterState;

/// What came back for an attempt.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Response {
    /// An answer: a throttle or not.
    Answer { throttled: bool },
    /// No answer within the attempt timeout; `successes` is the scope's count of successful
    /// calls so far (see [`TimeoutEvidence`]).
    Timeout { successes: u64 },
}

/// What the time an answer took (`now - sent_at`) feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnswerTime {
    /// Nothing: the send time is unknown (sent while the limiter was off), no answer came, or
    /// the answer may have come at once whatever the service's pace (a failure: a gateway's
    /// throttle, a full queue's 503).
    Unused,
    /// The scope's response time ([`ResponseTime`](super::response_time::ResponseTime)).
    Measured,
    /// The response time, and the latency judged against its baseline as congestion.
    Judged,
}

impl ClientRateLimiter {
    /// Feeds one response at `now`, to an attempt sent at `sent_at`, to the measured rate and
    /// CUBIC: a throttling response lowers the fill rate (and switches the bucket on), any other
    /// raises it along the CUBIC curve. The bucket is refilled at the old rate before the rate
    /// changes.
    ///
    /// One congestion event lowers the rate once, as in TCP CUBIC (RFC 8312 §4.6 reduces once
    /// per window): a throttle to an attempt sent before the last reduction reports the rate
    /// that was already reduced, and does not lower it again. (The AWS SDKs lower the rate on
    /// every throttling response; a burst of `n` throttled in-flight attempts then cuts the rate
    /// by `0.7^n`, to the 0.5/s floor for a few dozen concurrent callers.) Throttling that does
    /// not depend on the rate (a fixed share throttled whatever is sent) stops lowering it once
    /// the limiter has found so (by counting its throttles against the rate), and the rate goes
    /// back to where the throttling began. An answer that is not a throttle also times the
    /// scope's answers, which a shed call leaves time for before its deadline (see
    /// [`AdaptiveStrategy`](crate::AdaptiveStrategy)).
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// let (sent, now) = (Duration::ZERO, Duration::from_millis(100));
    /// limiter.record_response(true, sent, now);
    /// assert_eq!(limiter.stats().fill_rate, 0.5); // nothing measured yet: the minimum
    /// ```
    pub fn record_response(&self, throttled: bool, sent_at: Duration, now: Duration) {
        self.record(
            Response::Answer { throttled },
            AnswerTime::Measured,
            sent_at,
            now,
            None,
        );
    }

    /// Feeds an attempt sent at `sent_at` that timed out at `now`, where `successes` is the
    /// scope's count of successful calls so far. It lowers the rate like a throttle when the
    /// service answered meanwhile (a queue: successful calls ended meanwhile); otherwise (an outage) it
    /// counts as a failure that is not a throttle. Returns whether it counted as congestion.
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// // A scope's first timeout tells a queue from an outage by nothing: no congestion.
    /// assert!(!limiter.record_timeout(100, ms(0), ms(1_000)));
    /// // Nothing succeeded since: an outage, the limiter stays off.
    /// assert!(!limiter.record_timeout(100, ms(100), ms(1_100)));
    /// // 20 calls succeeded while this attempt waited: a queue.
    /// assert!(limiter.record_timeout(120, ms(200), ms(1_200)));
    /// assert!(limiter.is_enabled());
    /// ```
    pub fn record_timeout(&self, successes: u64, sent_at: Duration, now: Duration) -> bool {
        self.record(
            Response::Timeout { successes },
            AnswerTime::Unused,
            sent_at,
            now,
            None,
        )
    }

    /// [`record_response`](Self::record_response), where a response whose latency
    /// (`now - sent_at`) brings the smoothed latency above 4 times its baseline (the
    /// least smoothed latency of the last 30 to 60 s) counts as a throttle: the rate falls while the
    /// service's queue is still short, before its attempts time out. Returns whether the
    /// response counted as congestion (a throttle, or latency).
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// for i in 0..20 {
    ///     // 50 ms responses: the baseline.
    ///     assert!(!limiter.record_response_judging_latency(false, ms(100 * i), ms(100 * i + 50)));
    /// }
    /// assert!(!limiter.is_enabled());
    /// let slow = (20..30).map(|i| limiter.record_response_judging_latency(false, ms(100 * i), ms(100 * i + 900)));
    /// assert!(slow.last().unwrap());
    /// assert!(limiter.is_enabled());
    /// ```
    pub fn record_response_judging_latency(
        &self,
        throttled: bool,
        sent_at: Duration,
        now: Duration,
    ) -> bool {
        self.record(
            Response::Answer { throttled },
            AnswerTime::Judged,
            sent_at,
            now,
            None,
        )
    }

    /// Feeds one response: [`record_response`](Self::record_response),
    /// [`record_response_judging_latency`](Self::record_response_judging_latency) or
    /// [`record_timeout`](Self::record_timeout); `time` says what the answer's time feeds (an
    /// answer that is not a throttle, the scope's response time; judged, a latency far above
    /// the baseline is a throttle). Adaptive mode gives `ended` while the limiter
    /// is off, the scope's count of calls ended so far: its idle responses are sampled
    /// ([`record_idle_sample`](Self::record_idle_sample)), and the first congestion starts from
    /// the rate counted with it. Returns whether the response counted as congestion.
    pub(crate) fn record(
        &self,
        response: Response,
        time: AnswerTime,
        sent_at: Duration,
        now: Duration,
        ended: Option<u64>,
    ) -> bool {
        let mut state = self.lock();
        let now = state.time.at(now);
        let sent_at = state.time.earlier(sent_at);
        let throttled = match response {
            Response::Answer { throttled } => {
                state.timeouts.record_answer(now);
                throttled
            }
            Response::Timeout { successes } => {
                let enabled = state.enabled;
                state.timeouts.record_timeout(sent_at, successes, enabled)
            }
        };
        if time != AnswerTime::Unused && matches!(response, Response::Answer { throttled: false }) {
            state.response_time.record(now - sent_at);
        }
        let slow = time == AnswerTime::Judged && state.latency.record(now - sent_at, now);
        let congested = throttled || slow;
        state.measured.record(now);
        state.sampled |= ended.is_some();
        self.count_responses(&mut state, 1, ended, now);
        if state.pinned {
            // A fleet's lease sets the rate: the fleet cuts it once per round trip for every
            // process, and a throttle here reaches it with the next report. Until then, the
            // process's first throttle steps its own rate down once.
            #[cfg(feature = "fleet")]
            if throttled {
                state.step_pinned_rate_down(sent_at, now);
            }
            return congested;
        }
        if state.enabled {
            state.restart_if_provisional(now);
        }
        let was_holding = state.dependence.is_holding();
        let lower = if !state.enabled {
            congested
        } else if slow && !throttled {
            let sending = state.sending_rate();
            state.dependence.record(false, sent_at, sending);
            // A slow response reports the queue at the service; after a reduction, the queue
            // standing then takes about the latency of that moment to drain, and attempts sent
            // meanwhile still find it: they report the reduced rate too. A queue always
            // shrinks when the rate falls: a fixed share's hold does not apply.
            sent_at >= state.cubic.last_throttle_time() && sent_at >= state.queue_drained_at
        } else {
            // Every other answer goes to the rule that tells a rate limit from a fixed share.
            let sending = state.sending_rate();
            state.dependence.record(throttled, sent_at, sending)
        };
        if !was_holding && state.dependence.is_holding() {
            // The throttling does not depend on the rate: the episode's cuts bought nothing,
            // and the rate resumes where they began.
            if let Some(start_rate) = state.dependence.start_rate() {
                state.cubic.resume_at(start_rate, now);
            }
        }
        if congested && !lower {
            // A throttle in flight before the last cut, weighed far down, or held through:
            // the rate stays.
            if ended.is_some() {
                state.counted.keep(now);
            }
            return congested;
        }
        let new_rate = if lower {
            // The congestion that switches the limiter on starts from the rate measured then,
            // as in the AWS SDKs, when every response was fed; when the idle ones were
            // sampled, from the rate counted over the last second (the measured one followed
            // the samples), which the measured rate then starts over from. Counted nothing
            // yet (a scope's first burst), it starts as the AWS SDKs do, provisionally.
            if !state.enabled && state.sampled {
                match state.counted.rate(now) {
                    Some(counted) => state.measured.restart(counted, now),
                    None => state.provisional = now < state.counted.first_burst_ends(),
                }
            }
            let measured = state.measured.rate();
            let rate_to_use = if state.enabled {
                measured.min(state.fill_rate)
            } else {
                measured
            };
            if state.enabled {
                state.empty_bucket(now);
            } else {
                state.enabled = true;
                self.enabled.store(true, Ordering::Release);
            }
            state.lower_rate(rate_to_use, now)
        } else {
            state.cubic.on_success(now)
        };
        if ended.is_some() {
            state.counted.keep(now);
        }
        let measured = state.measured.rate();
        state.set_rate(new_rate.min(2.0 * measured), now);
        congested
    }

    /// Feeds one sampled response while the limiter is off (adaptive mode samples its idle
    /// responses this way, instead of feeding each one), under one lock:
    ///
    /// * the count the first congestion's rate is counted from, and the measured rate: `ended`
    ///   is the number of calls the scope has ended so far, read at `now`; the calls since the
    ///   previous count are counted at `now`. From the first sample on, the limiter counts its
    ///   starting rate instead of taking the measured one (see [`ClientRateLimiter`]);
    /// * with `sent_at` (a served attempt sent then, answered at `now`), the latency baseline
    ///   ([`record_response_judging_latency`](Self::record_response_judging_latency)'s), so
    ///   that the baseline is the service's before any congestion.
    ///
    /// Switches nothing on: while the limiter is off, throttles and timeouts do. Once they
    /// have, every response goes through [`record_response`](Self::record_response) instead,
    /// and this does nothing.
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// limiter.record_idle_sample(10, None, ms(100));
    /// limiter.record_idle_sample(20, Some(ms(950)), ms(1000)); // 20 over 1 s, one in 50 ms
    /// assert!((limiter.stats().measured_rate - 16.0).abs() < 1e-9); // 20/s smoothed by 0.8
    /// assert!(!limiter.is_enabled());
    /// ```
    pub fn record_idle_sample(&self, ended: u64, sent_at: Option<Duration>, now: Duration) {
        let mut state = self.lock();
        if state.enabled {
            return;
        }
        let now = state.time.at(now);
        state.sampled = true;
        let since = self.count_responses(&mut state, 0, Some(ended), now);
        state.counted.keep(now);
        state.measured.record_many(now, since);
        if let Some(sent_at) = sent_at {
            let sent_at = state.time.earlier(sent_at);
            state.latency.record(now - sent_at, now);
        }
    }

    /// Counts responses towards the rate a first congestion starts from
    /// ([`CountedRate::count`](super::counted_rate::CountedRate::count)), and notes once the
    /// count has begun ([`awaits_first_response`](Self::awaits_first_response)). Returns the
    /// calls ended since the scope's count was last read.
    fn count_responses(
        &self,
        state: &mut LimiterState,
        fed: u64,
        ended: Option<u64>,
        now: f64,
    ) -> u64 {
        let since = state.counted.count(fed, ended, now);
        if state.counted.has_begun() && self.awaits_first_response() {
            self.counting.store(true, Ordering::Relaxed);
        }
        since
    }
}
