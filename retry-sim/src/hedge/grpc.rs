//! gRPC's `hedgingPolicy` with retry throttling (gRFC A6, "gRPC Retry Design"), modelled as
//! the proposal specifies it.
//!
//! * `maxAttempts` copies at most, the original included; the original is sent at once, and
//!   each next copy `hedgingDelay` after the previous one while no answer came;
//! * `nonFatalStatusCodes`: an answer with such a code ends that copy only, and **the next copy
//!   is sent at once** ("Subsequent hedged requests will resume at `hedgingDelay`"); any other
//!   code ends the call. The simulator's failures map to gRPC codes as gRPC's HTTP mapping
//!   does: 503 and 429 → `UNAVAILABLE`, 500 → `INTERNAL`, both in A6's example list, so none
//!   is fatal here;
//! * server pushback (`grpc-retry-pushback-ms`, here a 429's `Retry-After`): the next copy is
//!   sent after that delay, the next ones `hedgingDelay` after it;
//! * the first OK answer wins and the other copies are cancelled; when every copy has failed
//!   and no more may be sent, the call fails (no retries under a hedging policy);
//! * `retryThrottling { maxTokens, tokenRatio }`, one token count per client (per server name):
//!   every failed copy takes 1, every OK adds `tokenRatio`; a hedge is sent only while the
//!   count is above `maxTokens / 2`, and a hedge refused so is not sent, nor are the call's
//!   later ones;
//! * there is no per-attempt timeout: the call's deadline applies to every copy.
//!
//! A pushback that says not to retry (a negative `grpc-retry-pushback-ms`) would stop the
//! call's hedges; the simulated servers never send one.
//!
//! Where grpc-java (`RetriableStream`) differs from the proposal, the proposal is kept: it
//! sends the next copy at once after a non-fatal answer only when the answer carries a pushback
//! (a positive pushback then counts as zero), and a failure that leaves the count at or under
//! the threshold ends the call, in-flight copies included.

use crate::baseline::{Budget, GrpcThrottle, Outcome};
use crate::time::Nanos;

/// A `hedgingPolicy` and the `retryThrottling` beside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrpcHedgingSpec {
    /// `maxAttempts`: copies at most, the original included (gRPC caps it at 5 by default).
    pub max_attempts: u32,
    /// `hedgingDelay`.
    pub delay: Nanos,
    /// `retryThrottling.maxTokens`.
    pub max_tokens: f64,
    /// `retryThrottling.tokenRatio`.
    pub token_ratio: f64,
}

/// One client's (channel's) hedging: its token count.
#[derive(Debug, Clone)]
pub struct GrpcHedging {
    spec: GrpcHedgingSpec,
    throttle: GrpcThrottle,
}

/// One call's copies so far, and whether it may send more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GrpcCall {
    /// Copies sent, the original included.
    pub sent: u32,
    /// No more copies: a hedge was refused by the token count.
    pub frozen: bool,
}

/// What a copy's answer means to a call under the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrpcNext {
    /// The call ends with this answer.
    End,
    /// Wait for the copies in flight.
    Wait,
    /// Send the next copy at this time.
    SendAt(Nanos),
}

impl GrpcHedging {
    /// A channel with a full token count.
    ///
    /// ```
    /// use retry_sim::hedge::grpc::{GrpcHedging, GrpcHedgingSpec};
    /// let spec = GrpcHedgingSpec { max_attempts: 3, delay: 10_000_000, max_tokens: 10.0, token_ratio: 0.1 };
    /// let mut channel = GrpcHedging::new(spec);
    /// let mut call = channel.start();
    /// assert_eq!(channel.first_hedge(&call, 0), Some(10_000_000));
    /// assert!(channel.may_send(&mut call));
    /// assert_eq!(call.sent, 2);
    /// ```
    pub fn new(spec: GrpcHedgingSpec) -> Self {
        Self {
            spec,
            throttle: GrpcThrottle::new(spec.max_tokens, spec.token_ratio),
        }
    }

    /// A call's state once its original is sent.
    pub fn start(&self) -> GrpcCall {
        GrpcCall {
            sent: 1,
            frozen: false,
        }
    }

    fn potential(&self, call: &GrpcCall) -> bool {
        !call.frozen && call.sent < self.spec.max_attempts
    }

    /// When the call's first hedge is due, its original sent at `now`.
    pub fn first_hedge(&self, call: &GrpcCall, now: Nanos) -> Option<Nanos> {
        self.next_after_send(call, now)
    }

    /// When the copy after one sent at `now` is due, if the call may send more.
    pub fn next_after_send(&self, call: &GrpcCall, now: Nanos) -> Option<Nanos> {
        self.potential(call)
            .then(|| now.saturating_add(self.spec.delay))
    }

    /// A hedge is due: whether it is sent (the count above the threshold); a refused one
    /// freezes the call's hedging.
    pub fn may_send(&mut self, call: &mut GrpcCall) -> bool {
        if !self.potential(call) {
            return false;
        }
        if self.throttle.allow_retry(0) {
            call.sent += 1;
            true
        } else {
            call.frozen = true;
            false
        }
    }

    /// A copy answered at `now`: OK (`None`) or a non-fatal failure with its pushback.
    /// `in_flight` is how many other copies still wait for an answer.
    pub fn on_answer(
        &mut self,
        call: &mut GrpcCall,
        failure: Option<Option<Nanos>>,
        in_flight: usize,
        now: Nanos,
    ) -> GrpcNext {
        let Some(pushback) = failure else {
            self.throttle.on_response(Outcome::Success, now);
            return GrpcNext::End;
        };
        self.throttle
            .on_response(Outcome::Failure { accepted: false }, now);
        if self.potential(call) {
            return GrpcNext::SendAt(now.saturating_add(pushback.unwrap_or(0)));
        }
        if in_flight > 0 {
            GrpcNext::Wait
        } else {
            GrpcNext::End
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MILLI, SECOND};

    fn spec() -> GrpcHedgingSpec {
        GrpcHedgingSpec {
            max_attempts: 3,
            delay: 10 * MILLI,
            max_tokens: 10.0,
            token_ratio: 0.1,
        }
    }

    /// A non-fatal answer sends the next copy at once; a pushback, after it; the last copy's
    /// failure ends the call.
    #[test]
    fn non_fatal_answers_shortcut_the_delay() {
        let mut channel = GrpcHedging::new(spec());
        let mut call = channel.start();
        assert_eq!(
            channel.on_answer(&mut call, Some(None), 0, SECOND),
            GrpcNext::SendAt(SECOND)
        );
        assert!(channel.may_send(&mut call));
        assert_eq!(
            channel.on_answer(&mut call, Some(Some(SECOND)), 0, SECOND),
            GrpcNext::SendAt(2 * SECOND)
        );
        assert!(channel.may_send(&mut call));
        assert_eq!(channel.next_after_send(&call, 2 * SECOND), None);
        assert_eq!(
            channel.on_answer(&mut call, Some(None), 0, 2 * SECOND),
            GrpcNext::End
        );
    }

    /// Five failures leave 5 tokens, not above 10 / 2: the next hedge is refused and the call
    /// sends no more; an OK adds a tenth of a token and lets hedges through again.
    #[test]
    fn the_token_count_stops_hedges() {
        let mut channel = GrpcHedging::new(spec());
        for _ in 0..5 {
            let mut call = channel.start();
            channel.on_answer(&mut call, Some(None), 1, 0);
        }
        let mut call = channel.start();
        assert!(!channel.may_send(&mut call));
        assert!(call.frozen);
        assert_eq!(channel.next_after_send(&call, 0), None);
        let mut ok = channel.start();
        assert_eq!(channel.on_answer(&mut ok, None, 0, 0), GrpcNext::End);
        let mut call = channel.start();
        assert!(channel.may_send(&mut call));
    }
}
