//! Standard mode: exponential backoff with jitter, a retry quota and a deadline.

use std::sync::Arc;
use std::time::Duration;

use super::{RetryError, RetryStrategy, RetryToken};
use crate::backoff::{Backoff, RandomSource};
use crate::classify::{ErrorKind, RetryReason};
use crate::clock::Nanos;
use crate::config::RetryConfig;
use crate::hedge::{HedgeGrant, HedgeRefusal, ScopeHedging};
use crate::observe;
use crate::quota::RetriedCall;
use crate::scope::Counter;
use crate::scope::Scope;
use crate::scope::outcome::CallOutcome;

/// Standard mode: the AWS SDKs' `standard` retry behavior.
///
/// * at most `max_attempts` attempts; backoff before retry `i` from
///   [`ExponentialBackoff`](crate::backoff::ExponentialBackoff);
/// * a retry takes its cost from the scope's quota (timeouts and throttling may cost more or
///   less); a success after retries returns the last retry's cost (with a `quota_window`, the
///   default: every retry's cost of the call, so that the quota drains only through calls that
///   fail, and while retried calls come back a retry may borrow what the calls in flight hold;
///   a call refused a retry gets its earlier retries' cost back, unless a refused
///   call was already refunded since the scope's last success); a first-try success adds the
///   reward; no quota, no retry. With a `quota_window`, a retry finds at most one token per
///   call the scope made in that window (at least one whole call's retries; at least the AWS
///   SDKs' 500 while the scope is younger than the window), and a call that starts retrying
///   after a window in which no call of the scope did finds at least one whole call's retries;
///   this is sized on the retry path only, with one clock read per call at its first retry:
///   the success path reads no clock;
/// * a server's `retry_after` is never undercut: the delay is `max(backoff, retry_after)`, and a
///   `retry_after` above `max_backoff` stops the retries (with `retry_after_slack` set, as in
///   `aws-2026`, it is clamped to `[t_i, t_i + slack]` instead);
/// * with a `timeout`, no retry is granted that would start after the deadline (in adaptive
///   mode, counting the wait the rate limiter expects for its send permit).
///
/// ```
/// use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, StandardStrategy};
/// use retry_core::backoff::FixedRandom;
/// use std::{sync::Arc, time::Duration};
///
/// let strategy = StandardStrategy::builder(RetryConfig::default())
///     .random(Arc::new(FixedRandom(1.0)))
///     .build();
/// let token = strategy.acquire_initial_token();
/// let token = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Timeout)).unwrap();
/// assert_eq!(token.delay(), Duration::from_millis(50)); // 50 ms x 2^0, jitter drew 1.0
/// assert_eq!(strategy.scope().quota().level(), 486); // a young scope's 500, less this retry's 14
/// strategy.record_success(token); // the retry succeeded: its 14 come back
/// assert_eq!(strategy.scope().quota().level(), 500);
/// ```
#[derive(Debug, Clone)]
pub struct StandardStrategy {
    pub(super) config: RetryConfig,
    pub(super) scope: Scope,
    pub(super) backoff: Arc<dyn Backoff>,
    pub(super) throttling_backoff: Arc<dyn Backoff>,
    pub(super) random: Arc<dyn RandomSource>,
}

impl StandardStrategy {
    /// A standard strategy with a private scope, on tokio's clock.
    pub fn new(config: RetryConfig) -> Self {
        Self::builder(config).build()
    }

    /// The configuration this strategy follows.
    pub fn config(&self) -> &RetryConfig {
        &self.config
    }

    /// The scope whose quota, limiter and counters this strategy uses.
    #[inline]
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    pub(crate) fn now(&self) -> Duration {
        self.scope.clock().now()
    }

    /// Whether an attempt starting `after` from now would be past the call's deadline.
    fn past_deadline(&self, token: &RetryToken, after: Duration) -> Option<RetryError> {
        let timeout = self.config.timeout()?;
        let at = self.now().saturating_add(after);
        (at.saturating_sub(token.started_at.into()) > timeout)
            .then_some(RetryError::DeadlineExceeded { timeout })
    }

    fn cost(&self, kind: ErrorKind) -> u32 {
        match kind {
            ErrorKind::Timeout => self.config.timeout_retry_cost(),
            ErrorKind::Throttling => self.config.throttling_retry_cost(),
            _ => self.config.retry_cost(),
        }
    }

    /// The delay before retry number `retry` for `reason`, or why the retry must not happen.
    fn delay(
        &self,
        retry: u32,
        previous: Duration,
        reason: &RetryReason,
    ) -> Result<Duration, RetryError> {
        let backoff = if reason.kind().is_throttling() {
            &self.throttling_backoff
        } else {
            &self.backoff
        };
        let computed = backoff.delay(retry, previous, self.random.as_ref());
        let Some(retry_after) = reason.retry_after() else {
            return Ok(computed);
        };
        match self.config.retry_after_slack() {
            Some(slack) => Ok(retry_after.clamp(computed, computed.saturating_add(slack))),
            None if retry_after > self.config.max_backoff() => Err(RetryError::RetryAfterTooLong {
                retry_after,
                limit: self.config.max_backoff(),
            }),
            None => Ok(computed.max(retry_after)),
        }
    }

    /// `refresh_retry_token`, with `permit_wait(delay)` telling how long the retry is expected
    /// to wait for its send permit after its backoff `delay` (adaptive mode), or why it must not
    /// be made; the deadline covers the backoff and that wait.
    pub(crate) fn refresh_with_permit_wait(
        &self,
        token: RetryToken,
        reason: &RetryReason,
        permit_wait: impl FnOnce(Duration) -> Result<Duration, RetryError>,
    ) -> Result<RetryToken, RetryError> {
        self.count_failed_attempt(reason);
        let (sent, paid) = (token.attempt, token.paid);
        if token.attempt >= self.config.max_attempts() {
            let error = RetryError::MaxAttemptsReached { attempts: sent };
            return Err(self.give_up(sent, paid, error));
        }
        let delay = self
            .delay(token.attempt, token.delay(), reason)
            .map_err(|error| self.give_up(sent, paid, error))?;
        let permit_wait = permit_wait(delay).map_err(|error| self.give_up(sent, paid, error))?;
        if let Some(error) = self.past_deadline(&token, delay.saturating_add(permit_wait)) {
            return Err(self.give_up(sent, paid, error));
        }
        let cost = self.cost(reason.kind());
        if let Err(level) = self.scope.try_acquire_retry(cost, sent == 1) {
            self.scope.count(Counter::QuotaExhausted);
            self.scope.refund_refused(token.paid);
            self.report_quota();
            observe::quota_exhausted(self.scope.name(), cost, level);
            // Long polling: the call still sleeps its backoff before it returns the error.
            let backoff = self.config.long_polling().then_some(delay);
            return Err(self.give_up(
                sent,
                paid,
                RetryError::QuotaExhausted {
                    cost,
                    level,
                    backoff,
                },
            ));
        }
        self.scope.count(Counter::Retry);
        self.scope.meter().retry_granted(reason.kind(), delay);
        self.report_quota();
        observe::retrying(self.scope.name(), sent, reason.kind(), delay, || {
            self.scope.quota_level()
        });
        Ok(RetryToken {
            attempt: sent + 1,
            delay: delay.into(),
            retry_cost: cost,
            paid: token.paid.saturating_add(cost),
            permit_wait: Nanos::ZERO,
            ..token
        })
    }

    /// An attempt answered with a retryable failure for `reason`: counted as sent, and as a
    /// throttle when it is one. A throttle, a `Retry-After` or gRPC pushback pauses the hedges of
    /// a scope that hedges (the retry path: a scope none of whose calls hedge pays one load).
    fn count_failed_attempt(&self, reason: &RetryReason) {
        self.scope.count_unsuccessful_attempt();
        if reason.kind().is_throttling() {
            self.scope.count(Counter::Throttle);
        }
        if (reason.kind().is_throttling() || reason.retry_after().is_some())
            && let Some(hedging) = self.scope.hedging(false)
        {
            hedging.throttled(reason.retry_after());
        }
    }

    /// [`acquire_hedge`](RetryStrategy::acquire_hedge): the pause, `max_attempts`, the
    /// deadline, then the quota (see [`pay_hedge`](Self::pay_hedge)).
    pub(crate) fn grant_hedge(
        &self,
        token: &RetryToken,
        hedging: &ScopeHedging,
    ) -> Result<HedgeGrant, HedgeRefusal> {
        hedging.check_pause()?;
        if token.attempt >= self.config.max_attempts() {
            return Err(HedgeRefusal::MaxAttempts);
        }
        if self.past_deadline(token, Duration::ZERO).is_some() {
            return Err(HedgeRefusal::Deadline);
        }
        let cost = self.config.retry_cost();
        self.pay_hedge(cost)?;
        Ok(HedgeGrant::charged(cost))
    }

    /// Takes a hedge's `cost` from the quota ([`Scope::try_acquire_hedge`]): only from what the
    /// quota holds, never borrowed against the calls in flight, and only if the quota keeps half
    /// its cap after paying: gRPC's retry throttling stops hedges at half its token bucket
    /// (gRFC A6), so that hedges never take what retries need in an outage. The cost is then
    /// part of the call's account, as a retry's: the driver adds it to the token's `paid`, and
    /// every end of the call settles it as it settles the retries' (a success under a
    /// `quota_window` gives it back, as the last attempt's cost under a fixed quota when the
    /// hedge won; a failure keeps it). Free when the cost is 0 (`Quota::Off`).
    fn pay_hedge(&self, cost: u32) -> Result<(), HedgeRefusal> {
        if cost == 0 {
            return Ok(());
        }
        let paid = self.scope.try_acquire_hedge(cost);
        self.report_quota();
        paid.map_err(|_| HedgeRefusal::QuotaExhausted)
    }

    /// A hedge granted by the quota that the rate limiter then refused: its cost goes back, and
    /// its call no longer holds it.
    pub(crate) fn return_hedge(&self, grant: HedgeGrant) {
        if grant.cost > 0 {
            self.scope.return_hedge(grant.cost);
            self.report_quota();
        }
    }

    /// The call ends in failure after `sent` attempts (each counted as it failed), its retries
    /// having paid `paid`, for `error`: a refusal of the quota or of the rate limiter is the
    /// client's own limit, no evidence that retried calls fail.
    fn give_up(&self, sent: u32, paid: u32, error: RetryError) -> RetryError {
        let call = match error {
            RetryError::QuotaExhausted { .. } | RetryError::RateLimited { .. } => {
                RetriedCall::Undecided
            }
            _ => RetriedCall::Failed,
        };
        self.scope.end_retried_call(paid, call);
        self.scope.count_failure();
        self.scope.meter().call_ended(CallOutcome::of(&error), sent);
        error
    }

    /// The quota's level and cap to the metrics (on the retry path only).
    fn report_quota(&self) {
        self.scope.meter().quota(|| self.scope.quota_gauges());
    }

    /// A call ended before its token's attempt was sent, with `outcome`: the unsent retry's cost
    /// goes back to the quota.
    fn abandon_with(&self, token: RetryToken, outcome: CallOutcome) {
        let sent = token.attempt - 1;
        self.scope
            .end_retried_call(token.paid, RetriedCall::Undecided);
        self.scope.count_failure();
        self.scope.meter().call_ended(outcome, sent);
        self.scope.quota().release(token.retry_cost);
        if token.retry_cost > 0 {
            self.report_quota();
        }
    }
}

impl RetryStrategy for StandardStrategy {
    #[inline(always)]
    fn acquire_initial_token(&self) -> RetryToken {
        // The clock is read only when a deadline needs the start: a clock read costs more than
        // the rest of the success path.
        let started_at = match self.config.timeout() {
            Some(_) => self.now().into(),
            None => Nanos::ZERO,
        };
        RetryToken::initial(started_at)
    }

    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError> {
        self.refresh_with_permit_wait(token, reason, |_| Ok(Duration::ZERO))
    }

    #[inline(always)]
    fn record_success(&self, token: RetryToken) {
        self.scope.count(Counter::Success);
        self.scope
            .meter()
            .call_ended(CallOutcome::Success, token.attempt);
        if token.attempt == 1 {
            self.scope.quota().release(self.config.success_reward());
        } else {
            // Fields, not the token: passing the token out of line would copy it whole with
            // wide loads, which miss store-to-load forwarding (see `RetryToken::take`).
            self.record_success_after_retries(token.paid, token.retry_cost);
        }
    }

    fn record_failure(&self, token: RetryToken) {
        // The last attempt: the strategy was not asked to retry it.
        self.scope.end_retried_call(token.paid, RetriedCall::Failed);
        self.scope.count_unsuccessful_attempt();
        self.scope.count_failure();
        self.scope
            .meter()
            .call_ended(CallOutcome::NotRetryable, token.attempt);
    }

    fn record_cancelled(&self, token: RetryToken) {
        // The attempt in flight; those before it were counted as they failed.
        self.scope
            .end_retried_call(token.paid, RetriedCall::Undecided);
        self.scope.count_unsuccessful_attempt();
        self.scope.count_failure();
        self.scope
            .meter()
            .call_ended(CallOutcome::Cancelled, token.attempt);
    }

    fn abandon(&self, token: RetryToken) {
        // The token's attempt was granted but never sent.
        self.abandon_with(token, CallOutcome::Cancelled);
    }

    fn record_shed(&self, token: RetryToken) {
        self.abandon_with(token, CallOutcome::Shed);
    }

    #[inline(always)]
    fn max_attempts(&self) -> Option<u32> {
        Some(self.config.max_attempts())
    }

    fn scope_name(&self) -> Option<&str> {
        Some(self.scope.name())
    }

    fn acquire_hedge(&self, token: &RetryToken) -> Result<HedgeGrant, HedgeRefusal> {
        let hedging = self.scope_hedging().ok_or(HedgeRefusal::NoHedgeDue)?;
        self.grant_hedge(token, hedging)
    }

    fn record_copy_failure(&self, _copy: &RetryToken, reason: &RetryReason) {
        self.count_failed_attempt(reason);
    }

    fn record_copy_cancelled(&self, _copy: &RetryToken) {
        // Sent, and not the call's success: an attempt, as a cancelled call's is.
        self.scope.count_unsuccessful_attempt();
    }

    fn scope_hedging(&self) -> Option<&ScopeHedging> {
        self.scope.hedging(true)
    }
}

impl StandardStrategy {
    /// [`record_success`](RetryStrategy::record_success) of a call that succeeded after
    /// retries, having paid `paid` for them, the last of which cost `retry_cost`; out of line.
    #[inline(never)]
    fn record_success_after_retries(&self, paid: u32, retry_cost: u32) {
        // The success counts its last attempt; the retries before it were counted as they failed.
        self.scope.count_retried_success();
        self.scope.end_retried_call(paid, RetriedCall::Succeeded);
        // Retries that ended in a success did not storm: a traffic-sized quota gets all of them
        // back, so it drains only through calls that fail. A fixed quota keeps the AWS SDKs'
        // rule (and their published vectors): the last retry's cost.
        let refund = if self.scope.refunds_every_retry() {
            paid
        } else {
            retry_cost
        };
        self.scope.quota().release(refund);
        self.report_quota();
    }
}
