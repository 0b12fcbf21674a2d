//! Hedging as `retry-core` charges it (issue 27), over one of its strategies: a hedge is a copy
//! of the attempt in flight, sent after a fixed delay or a percentile of the client's measured
//! latency, and paid like a retry. The client's retries stay the real `RetryLoop`'s; a hedge
//! is charged to the same scope through its public API:
//!
//! * **the quota**: a hedge takes the retry cost from the scope's quota, and only while the
//!   quota keeps half its cap after paying (gRFC A6 stops hedges at half the retry-throttling
//!   bucket): it reads the level and cap a retry would meet ([`Scope::stats`]) and leaves the
//!   bucket at that level less the cost, as a retry's payment does (a traffic-sized quota's
//!   bucket may hold more than its traffic lets a retry find: taking the cost from the bucket
//!   alone would make a hedge free), with
//!   [`RetryQuota::try_acquire`](retry_core::quota::RetryQuota::try_acquire); a hedge
//!   whose answer ends the call in success gets its cost back
//!   ([`RetryQuota::release`](retry_core::quota::RetryQuota::release)), one that lost stays
//!   charged;
//! * **attempts and the deadline**: hedges count toward `max_attempts` with the call's attempts
//!   sent before them, and none is sent past the call's deadline;
//! * **throttling**: a 429 (with its `Retry-After`) stops the call's hedging and pauses the
//!   client's for [`THROTTLE_PAUSE`] or the `Retry-After`, whichever is longer;
//! * **a refused hedge is not sent**, and the call sends no more hedges;
//! * **the percentile** is read from the latency of each hedged call's first attempt (or, when
//!   a hedge answered first, the time the first attempt had been in flight), successes only,
//!   over one to two minutes ([`ScopeLatency`]); a call reads it once, and a client reuses
//!   what it read for [`PERCENTILE_REFRESH`].
//!
//! Where this differs from the runtime's `HedgedLoop` (which the simulator will drive once it
//! lands): the runtime's retry loop counts a call's hedges in its `max_attempts` and backoff
//! exponent, while here the retries after a hedged attempt count only the attempts the loop
//! sent; the quota's traffic bounds are read, not updated, by a hedge's payment; a scope in
//! adaptive mode (a spare permit from the rate limiter) is not modelled, and such a strategy is
//! refused a hedging arm.

use std::fmt;

use retry_core::Scope;

use super::scope_latency::ScopeLatency;
use super::{Answer, Verdict};
use crate::time::{MILLI, Nanos, SECOND};

/// How long a throttle pauses the client's hedges when its `Retry-After` is shorter: 1 s, the
/// AWS SDKs' base backoff for a throttled request (the runtime's `THROTTLE_PAUSE`).
pub const THROTTLE_PAUSE: Nanos = SECOND;

/// How long a percentile read is reused: 1 s (the runtime's, which saves a walk of the
/// histogram per call).
pub const PERCENTILE_REFRESH: Nanos = SECOND;

/// When a hedge is sent after the last copy: a fixed delay, or a percentile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HedgeAfter {
    /// This long after the last copy was sent.
    Fixed(Nanos),
    /// Once the last copy has been in flight longer than this percentile (in (0, 100)) of the
    /// client's measured latency; calls are not hedged before it is known.
    Percentile(f64),
}

/// A hedging policy over one of `retry-core`'s strategies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OursHedgeSpec {
    /// The delay.
    pub after: HedgeAfter,
    /// Hedges per call at most (1 to 4, the runtime's range).
    pub max_hedges: u32,
}

/// The most hedges a call may send (the runtime's `MAX_HEDGES`).
pub const MAX_HEDGES: u32 = 4;

impl OursHedgeSpec {
    /// The policy written `p95`, `10ms`, optionally followed by `x` and `max_hedges`
    /// (`p95x2`), as the name of a hedging arm spells it after `hedge-`.
    ///
    /// ```
    /// use retry_sim::hedge::ours::{HedgeAfter, OursHedgeSpec};
    /// let spec = OursHedgeSpec::parse("p95x2").unwrap();
    /// assert_eq!((spec.after, spec.max_hedges), (HedgeAfter::Percentile(95.0), 2));
    /// assert_eq!(OursHedgeSpec::parse("10ms").unwrap().after, HedgeAfter::Fixed(10_000_000));
    /// assert!(OursHedgeSpec::parse("p100").is_err());
    /// assert!(OursHedgeSpec::parse("10msx5").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, String> {
        let (delay, max_hedges) = match text.rsplit_once('x') {
            Some((delay, count))
                if !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()) =>
            {
                (delay, count.parse::<u32>().map_err(|e| e.to_string())?)
            }
            _ => (text, 1),
        };
        if !(1..=MAX_HEDGES).contains(&max_hedges) {
            return Err(format!(
                "`{text}`: max_hedges must be 1 to {MAX_HEDGES}, not {max_hedges}"
            ));
        }
        let after = match delay.strip_prefix('p') {
            Some(percentile) => match percentile.parse::<f64>() {
                Ok(p) if p > 0.0 && p < 100.0 => HedgeAfter::Percentile(p),
                _ => {
                    return Err(format!(
                        "`{text}`: a percentile is strictly between 0 and 100, e.g. `p95`"
                    ));
                }
            },
            None => match retry_core::config::parse_duration(delay) {
                Ok(delay) if !delay.is_zero() => {
                    HedgeAfter::Fixed(crate::time::from_duration(delay))
                }
                _ => {
                    return Err(format!(
                        "`{text}`: the delay is a duration longer than zero (`10ms`) or a \
                         percentile (`p95`)"
                    ));
                }
            },
        };
        Ok(Self { after, max_hedges })
    }
}

impl fmt::Display for OursHedgeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.after {
            HedgeAfter::Fixed(delay) => write!(
                f,
                "hedged {:.0} ms after each copy",
                delay as f64 / MILLI as f64
            )?,
            HedgeAfter::Percentile(p) => write!(
                f,
                "hedged after the p{p} of the client's first attempts' latency (known from {} \
                 samples)",
                super::scope_latency::min_samples(p)
            )?,
        }
        write!(
            f,
            ", at most {} per call; each hedge pays the retry cost from the quota while it keeps \
             half its cap, refunded if it wins; a 429 stops the call's hedges and pauses the \
             client's",
            self.max_hedges
        )
    }
}

/// What the client's strategy fixes for its hedges.
#[derive(Debug, Clone)]
pub struct OursBudget {
    /// The client's scope: its quota pays the hedges.
    pub scope: Scope,
    /// The retry cost a hedge pays.
    pub retry_cost: u32,
    /// `max_attempts`, shared by the call's attempts and hedges.
    pub max_attempts: u32,
    /// The call's deadline, after its first attempt was sent.
    pub deadline: Nanos,
}

/// Why a due hedge is not sent (the runtime's `HedgeRefusal`, the reasons modelled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A throttle paused the client's hedges.
    Throttled,
    /// The call has sent `max_attempts` attempts and hedges.
    MaxAttempts,
    /// The call is past its deadline.
    Deadline,
    /// The quota cannot pay the retry cost and keep half its cap.
    QuotaExhausted,
}

/// One call's hedging state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OursCall {
    /// When the first attempt was sent.
    first_sent: Nanos,
    /// Attempts and hedges sent.
    sent: u32,
    /// Hedges sent.
    hedges: u32,
    /// No more hedges (refused, or a throttle met).
    stopped: bool,
    /// The call's delay, read when it started; `None`: not hedged (a percentile not known yet).
    delay: Option<Nanos>,
    /// A retry was sent: no latency sample from the call.
    retried: bool,
    /// The first attempt failed: no latency sample from the call.
    first_failed: bool,
}

/// One client's hedging: its budget, its measured latency, the pause a throttle set.
#[derive(Debug, Clone)]
pub struct OursHedging {
    spec: OursHedgeSpec,
    budget: OursBudget,
    latency: ScopeLatency,
    paused_until: Nanos,
    /// The last percentile read, and when.
    cached: Option<(Nanos, Option<Nanos>)>,
}

impl OursHedging {
    /// A client's hedging, no latency measured yet.
    pub fn new(spec: OursHedgeSpec, budget: OursBudget) -> Self {
        Self {
            spec,
            budget,
            latency: ScopeLatency::new(),
            paused_until: 0,
            cached: None,
        }
    }

    /// The delay a call starting at `now` hedges after, if it hedges.
    fn delay(&mut self, now: Nanos) -> Option<Nanos> {
        let percentile = match self.spec.after {
            HedgeAfter::Fixed(delay) => return Some(delay),
            HedgeAfter::Percentile(p) => p,
        };
        match self.cached {
            Some((read_at, delay)) if now.saturating_sub(read_at) < PERCENTILE_REFRESH => delay,
            _ => {
                let delay = self.latency.percentile(now, percentile);
                self.cached = Some((now, delay));
                delay
            }
        }
    }

    /// A call's first attempt is sent at `now`: its state.
    pub fn start(&mut self, now: Nanos) -> OursCall {
        OursCall {
            first_sent: now,
            sent: 1,
            hedges: 0,
            stopped: false,
            delay: self.delay(now),
            retried: false,
            first_failed: false,
        }
    }

    /// The call's retry is sent.
    pub fn retry_sent(&self, call: &mut OursCall) {
        call.sent += 1;
        call.retried = true;
    }

    /// When the call's next hedge is due, a copy sent at `now`, if one may follow.
    pub fn next_due(&self, call: &OursCall, now: Nanos) -> Option<Nanos> {
        if call.stopped || call.hedges >= self.spec.max_hedges {
            return None;
        }
        call.delay.map(|delay| now.saturating_add(delay))
    }

    /// A hedge of the call is due at `now`: paid for and counted, or refused (and the call
    /// sends no more).
    pub fn acquire(&mut self, call: &mut OursCall, now: Nanos) -> Result<(), Refusal> {
        let paid = self.pay(call, now);
        match paid {
            Ok(()) => {
                call.sent += 1;
                call.hedges += 1;
            }
            Err(_) => call.stopped = true,
        }
        paid
    }

    fn pay(&self, call: &OursCall, now: Nanos) -> Result<(), Refusal> {
        if now < self.paused_until {
            return Err(Refusal::Throttled);
        }
        if call.sent >= self.budget.max_attempts {
            return Err(Refusal::MaxAttempts);
        }
        if now >= call.first_sent.saturating_add(self.budget.deadline) {
            return Err(Refusal::Deadline);
        }
        let cost = self.budget.retry_cost;
        if cost == 0 {
            return Ok(());
        }
        let stats = self.budget.scope.stats();
        if stats.quota_level < cost.saturating_add(stats.quota_capacity / 2) {
            return Err(Refusal::QuotaExhausted);
        }
        // As a retry pays: the bucket's level becomes what a retry finds, less the cost (a
        // traffic-sized quota's bucket may hold more than its traffic lets a retry find).
        let quota = self.budget.scope.quota();
        let after = stats.quota_level - cost;
        let level = quota.level();
        if level >= after {
            if !quota.try_acquire(level - after) {
                return Err(Refusal::QuotaExhausted);
            }
        } else {
            quota.release(after - level);
        }
        Ok(())
    }

    /// A copy of the call answered at `now` (`hedge`: a hedge's, not an attempt the loop
    /// sent); `in_flight` other copies wait for theirs.
    pub fn answer(
        &mut self,
        call: &mut OursCall,
        answer: Answer,
        hedge: bool,
        in_flight: usize,
        now: Nanos,
    ) -> Verdict {
        if let Answer::Ok { .. } = answer {
            if hedge && self.budget.retry_cost > 0 {
                self.budget.scope.quota().release(self.budget.retry_cost);
            }
            if !call.retried && !call.first_failed {
                self.latency
                    .record(now, now.saturating_sub(call.first_sent));
            }
            return Verdict::Final;
        }
        if let Answer::Failed {
            pushback: Some(after),
        } = answer
        {
            call.stopped = true;
            let until = now.saturating_add(after.max(THROTTLE_PAUSE));
            self.paused_until = self.paused_until.max(until);
        }
        if !hedge && !call.retried {
            call.first_failed = true;
        }
        if in_flight > 0 {
            Verdict::Wait
        } else {
            Verdict::Final
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::SimClock;
    use retry_core::{RetryConfig, RetryStrategy, StandardStrategy};
    use std::sync::Arc;

    fn client(after: HedgeAfter) -> (OursHedging, Arc<SimClock>) {
        let clock = Arc::new(SimClock::new());
        let strategy = StandardStrategy::builder(RetryConfig::default())
            .clock(clock.clone())
            .build();
        let budget = OursBudget {
            scope: strategy.scope().clone(),
            retry_cost: RetryConfig::default().retry_cost(),
            max_attempts: RetryStrategy::max_attempts(&strategy).unwrap_or(3),
            deadline: 10 * SECOND,
        };
        let spec = OursHedgeSpec {
            after,
            max_hedges: 2,
        };
        (OursHedging::new(spec, budget), clock)
    }

    /// A hedge pays the retry cost; a winning hedge gets it back, a losing one does not.
    #[test]
    fn a_hedge_is_paid_and_refunded_only_if_it_wins() {
        let (mut hedging, _clock) = client(HedgeAfter::Fixed(10 * MILLI));
        let scope = hedging.budget.scope.clone();
        let level = || scope.quota().level();
        let before = level();
        let mut call = hedging.start(0);
        assert_eq!(hedging.next_due(&call, 0), Some(10 * MILLI));
        assert_eq!(hedging.acquire(&mut call, 10 * MILLI), Ok(()));
        assert_eq!(level(), before - 14);
        let ok = Answer::Ok { latency: MILLI };
        assert_eq!(
            hedging.answer(&mut call, ok, true, 1, 11 * MILLI),
            Verdict::Final
        );
        assert_eq!(level(), before);
        let mut lost = hedging.start(SECOND);
        assert_eq!(hedging.acquire(&mut lost, SECOND), Ok(()));
        hedging.answer(&mut lost, ok, false, 1, SECOND + MILLI);
        assert_eq!(level(), before - 14);
    }

    /// Hedges and attempts share `max_attempts` (3 by default); a refused hedge stops the
    /// call's hedging.
    #[test]
    fn hedges_share_max_attempts() {
        let (mut hedging, _clock) = client(HedgeAfter::Fixed(MILLI));
        let mut call = hedging.start(0);
        hedging.retry_sent(&mut call);
        assert_eq!(hedging.acquire(&mut call, MILLI), Ok(()));
        assert_eq!(hedging.next_due(&call, MILLI), Some(2 * MILLI));
        assert_eq!(
            hedging.acquire(&mut call, 2 * MILLI),
            Err(Refusal::MaxAttempts)
        );
        assert_eq!(hedging.next_due(&call, 2 * MILLI), None);
    }

    /// A 429 stops the call's hedges and pauses the client's for the longer of 1 s and its
    /// `Retry-After`.
    #[test]
    fn a_throttle_pauses_the_clients_hedges() {
        let (mut hedging, _clock) = client(HedgeAfter::Fixed(MILLI));
        let mut call = hedging.start(0);
        let throttled = Answer::Failed {
            pushback: Some(2 * SECOND),
        };
        assert_eq!(
            hedging.answer(&mut call, throttled, false, 0, 0),
            Verdict::Final
        );
        assert_eq!(hedging.next_due(&call, 0), None);
        let mut next = hedging.start(SECOND);
        assert_eq!(hedging.acquire(&mut next, SECOND), Err(Refusal::Throttled));
        let mut later = hedging.start(2 * SECOND);
        assert_eq!(hedging.acquire(&mut later, 2 * SECOND), Ok(()));
    }

    /// A hedge is refused when paying would leave the quota under half its cap.
    #[test]
    fn hedges_keep_half_the_quota_for_retries() {
        let (mut hedging, _clock) = client(HedgeAfter::Fixed(MILLI));
        let stats = hedging.budget.scope.stats();
        let spare = (stats.quota_level - stats.quota_capacity / 2) / 14;
        for i in 0..spare {
            let mut call = hedging.start(0);
            assert_eq!(hedging.acquire(&mut call, 0), Ok(()), "hedge {i}");
        }
        let mut call = hedging.start(0);
        assert_eq!(hedging.acquire(&mut call, 0), Err(Refusal::QuotaExhausted));
        assert!(hedging.budget.scope.stats().quota_level >= stats.quota_capacity / 2);
    }

    /// A percentile is not known before 200 samples (p95), then read from the first attempts'
    /// successes; a call whose first attempt failed records nothing.
    #[test]
    fn the_percentile_comes_from_first_attempts_that_succeeded() {
        let (mut hedging, _clock) = client(HedgeAfter::Percentile(95.0));
        let ok = Answer::Ok { latency: 0 };
        for i in 0..200 {
            let mut call = hedging.start(i * MILLI);
            assert_eq!(call.delay, None);
            hedging.answer(&mut call, ok, false, 0, i * MILLI + 4 * MILLI);
        }
        let mut failed = hedging.start(2 * SECOND);
        let error = Answer::Failed { pushback: None };
        hedging.answer(&mut failed, error, false, 0, 2 * SECOND + 100 * MILLI);
        let call = hedging.start(2 * SECOND);
        let delay = call.delay.expect("200 samples");
        assert!((4 * MILLI..=4 * MILLI * 9 / 8).contains(&delay), "{delay}");
    }
}
