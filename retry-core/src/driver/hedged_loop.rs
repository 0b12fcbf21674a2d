//! The state of one hedged call: its copies in flight, its hedges, its retries. The loop of the
//! hedging drivers, and of a caller that makes each attempt and keeps its own time.

use std::fmt::{self, Debug};
use std::ops::ControlFlow;
use std::time::Duration;

use super::hook::OnRetry;
use super::retry_step::{TokenSlot, retry_or_give_up, settle_dropped};
use super::shed::{NeverShed, ShedLoad, ShedPolicy};
use crate::attempt::{self, Attempt, CallStats, Mark};
use crate::classify::{ClassifyRetry, ErrorKind, Idempotency, RetryAction, RetryReason};
use crate::clock::Nanos;
use crate::hedge::{HedgeDelay, HedgeRefusal, Hedging, MAX_HEDGES, ScopeHedging};
use crate::load_shed::LoadShed;
use crate::observe;
use crate::strategy::{RetryStrategy, RetryToken, SendPermit};

/// The most copies of a call in flight at once: its first attempt (or a retry) and its hedges.
const MAX_COPIES: usize = MAX_HEDGES as usize + 1;

/// What to do with a copy's outcome, as [`HedgedLoop::finish`] says.
///
/// ```
/// use retry_core::driver::Next;
/// assert_ne!(Next::Return, Next::Wait);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The call is over: return this outcome (after sleeping
    /// [`take_linger`](HedgedLoop::take_linger), a long-polling call's wait). Drop every other
    /// copy in flight: the loop has settled them as cancelled.
    Return,
    /// No copy is in flight and a retry was granted: wait for it
    /// ([`next_wait`](HedgedLoop::next_wait) with `backoff` first), then send it.
    Retry,
    /// Another copy is in flight: drop this outcome and keep waiting for the others (and for
    /// the next hedge, if one is due).
    Wait,
}

/// One copy of the call in flight.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    /// Its attempt number.
    attempt: u32,
    /// When it got its send permit (adaptive mode; zero when the limiter was off).
    sent_at: Nanos,
    /// What it took from the quota: a retry's or a hedge's cost (0 for a first attempt).
    cost: u32,
    /// Whether it is a hedge.
    hedge: bool,
}

/// The copies of a call in flight, in the order they were sent.
#[derive(Debug, Default)]
struct Copies {
    slots: [Option<InFlight>; MAX_COPIES],
}

impl Copies {
    fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    fn push(&mut self, copy: InFlight) {
        if let Some(slot) = self.slots.iter_mut().find(|slot| slot.is_none()) {
            *slot = Some(copy);
        }
    }

    /// Takes the copy of attempt `number` out, if it is in flight.
    fn take(&mut self, number: u32) -> Option<InFlight> {
        self.slots
            .iter_mut()
            .find(|slot| slot.is_some_and(|copy| copy.attempt == number))
            .and_then(Option::take)
    }

    /// Takes every copy out.
    fn drain(&mut self) -> impl Iterator<Item = InFlight> + '_ {
        self.slots.iter_mut().filter_map(Option::take)
    }
}

/// What a dropped call settles: its token and its copies in flight, under its strategy.
struct Flight<S: RetryStrategy> {
    strategy: S,
    /// The call's token: its last copy's attempt; `None` once the call is over.
    token: Option<RetryToken>,
    /// Whether the token's attempt was sent (a retry granted and not sent yet is not).
    sent: bool,
    copies: Copies,
    /// The hedges sent.
    hedges: u32,
    /// Whether the last copy sent is a hedge.
    last_hedge: bool,
}

/// The hedge delay of a call, read once.
#[derive(Debug, Clone, Copy)]
enum Delay {
    /// Not read yet.
    Unread,
    /// A hedge is due this long after the last copy was sent.
    Known(Duration),
    /// No hedge: the percentile is not known yet (too few samples, or no scope to read it from).
    Unknown,
}

/// The state of one hedged call ([`hedge`](crate::hedge)): the loop of
/// [`Retry::hedge`](crate::Retry::hedge), `#[retryable(hedge_after = ...)]` and the tower layer's
/// `hedge`, for a caller that makes each attempt itself and keeps its own time (a simulator, a
/// service with its own timer). A separate type from [`RetryLoop`](super::RetryLoop): a call
/// that does not hedge pays nothing for hedging.
///
/// The caller
/// 1. asks [`next_wait`](Self::next_wait) before the first attempt (and after each
///    [`Next::Retry`]), sleeping each wait it gives, until `None`: the attempt is sent, the
///    [`attempt`](Self::attempt) it is;
/// 2. after each copy it sends, arms a timer for [`hedge_wait`](Self::hedge_wait), if it gives
///    one: when the timer fires before any answer ended the call, it asks
///    [`try_hedge`](Self::try_hedge), which charges the hedge to the scope and gives the
///    hedge's attempt to send now (then arms the timer again), or refuses it (no more hedges
///    for the call: it goes on with its copies in flight);
/// 3. hands each copy's outcome to [`finish`](Self::finish) with the copy's attempt, and does
///    what the [`Next`] says: return it (dropping the other copies), retry, or wait for the
///    others.
///
/// The first success, or the first outcome that is not retried, ends the call; a retryable
/// failure ends it only when no other copy is in flight (then it is retried as in
/// [`RetryLoop`](super::RetryLoop)). Hedges and retries share `max_attempts` and the deadline.
/// The call is declared idempotent (a hedge is the request sent twice on purpose) unless
/// [`idempotent(false)`](Self::idempotent) says it is not, and then it sends no hedge.
///
/// Dropping the loop (a cancelled call) settles its copies: each one in flight as a cancelled
/// attempt, a retry granted but not sent abandoned (its quota given back).
///
/// ```
/// use retry_core::driver::{HedgedLoop, Next, NoHook};
/// use retry_core::hedge::Hedging;
/// use retry_core::{RetryConfig, StandardStrategy};
/// use retry_core::classify::RetryInfoClassifier;
/// use std::time::Duration;
///
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let hedging = Hedging::after(Duration::from_millis(50)).unwrap();
/// let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, hedging);
/// assert_eq!(call.next_wait(true), None); // the first attempt: send it now
/// let first = call.attempt().unwrap();
/// assert_eq!(call.hedge_wait(), Some(Duration::from_millis(50)));
/// // 50 ms later, no answer yet: hedge.
/// let hedge = call.try_hedge().unwrap();
/// assert!(hedge.is_hedge());
/// assert_eq!(call.in_flight(), 2);
/// // The hedge answers first: the call is over, the first attempt is dropped.
/// let answer: Result<&str, std::io::Error> = Ok("from the hedge");
/// assert_eq!(call.finish(hedge, &answer), Next::Return);
/// assert_eq!(call.in_flight(), 0);
/// assert_eq!((call.stats().attempts(), call.stats().hedges()), (2, 1));
/// # let _ = first;
/// ```
pub struct HedgedLoop<S: RetryStrategy, C, H, L = NeverShed> {
    /// The strategy, the token and the copies in flight: settled when dropped.
    flight: Flight<S>,
    classifier: C,
    on_retry: H,
    shedding: L,
    idempotency: Idempotency,
    hedging: Hedging,
    /// When the first attempt was sent (the scope's clock), until its latency is recorded or
    /// known not to be.
    first_sent: Option<Duration>,
    /// Whether the call sends no more hedges (one was refused, or a copy was throttled).
    stopped: bool,
    delay: Delay,
    /// Why the next attempt is a retry (the kind of the failure before it); `None` before the
    /// first retry.
    retried_for: Option<ErrorKind>,
    waited: Duration,
    linger: Option<Duration>,
    /// The attempts the call ended after, once it ended.
    ended_after: u32,
}

impl<S: RetryStrategy, C, H> HedgedLoop<S, C, H> {
    /// Acquires the call's first token. The call is declared idempotent.
    pub fn new(strategy: S, classifier: C, on_retry: H, hedging: Hedging) -> Self {
        let token = strategy.acquire_initial_token();
        Self {
            flight: Flight {
                strategy,
                token: Some(token),
                sent: false,
                copies: Copies::default(),
                hedges: 0,
                last_hedge: false,
            },
            classifier,
            on_retry,
            shedding: NeverShed,
            idempotency: Idempotency::Idempotent,
            hedging,
            first_sent: None,
            stopped: false,
            delay: Delay::Unread,
            retried_for: None,
            waited: Duration::ZERO,
            linger: None,
            ended_after: 0,
        }
    }

    /// Sheds load rather than queue past the deadline, as
    /// [`RetryLoop::shed_load`](super::RetryLoop::shed_load) does: ask
    /// [`try_shed`](Self::try_shed) before the first attempt waits for its permit.
    pub fn shed_load(self) -> HedgedLoop<S, C, H, ShedLoad> {
        self.with_shedding(ShedLoad)
    }
}

impl<S: RetryStrategy, C, H, L> HedgedLoop<S, C, H, L> {
    /// The loop under the shedding policy `shedding`.
    pub(crate) fn with_shedding<L2>(self, shedding: L2) -> HedgedLoop<S, C, H, L2> {
        HedgedLoop {
            flight: self.flight,
            classifier: self.classifier,
            on_retry: self.on_retry,
            shedding,
            idempotency: self.idempotency,
            hedging: self.hedging,
            first_sent: self.first_sent,
            stopped: self.stopped,
            delay: self.delay,
            retried_for: self.retried_for,
            waited: self.waited,
            linger: self.linger,
            ended_after: self.ended_after,
        }
    }

    /// Declares whether the call is idempotent: `false` sends no hedge (each hedge due is
    /// refused, [`HedgeRefusal::NotIdempotent`]) and classifies errors that may have reached the
    /// server as a call not idempotent ([`Idempotency`]).
    pub fn idempotent(self, idempotent: bool) -> Self {
        self.idempotency(Idempotency::declared(idempotent))
    }

    /// The call's idempotency: only an [`Idempotent`](Idempotency::Idempotent) call sends hedges.
    pub(crate) fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = idempotency;
        self
    }

    /// The last copy sent, or the attempt about to be sent: its number, the most attempts, and
    /// whether it is a hedge. `None` once the call is over.
    pub fn attempt(&self) -> Option<Attempt> {
        let token = self.flight.token.as_ref()?;
        let hedge = self.flight.sent && self.flight.last_hedge;
        Some(Attempt::copy(
            token.attempt(),
            self.flight.strategy.max_attempts(),
            hedge,
        ))
    }

    /// The copies in flight.
    pub fn in_flight(&self) -> usize {
        self.flight.copies.len()
    }

    /// The hedges the call sent so far.
    pub fn hedges(&self) -> u32 {
        self.flight.hedges
    }

    /// As [`RetryLoop::try_shed`](super::RetryLoop::try_shed): whether the strategy sheds the
    /// call before its first attempt (a shed call's token is abandoned); `None` once an attempt
    /// was sent, and for retries.
    pub fn try_shed(&mut self) -> Option<LoadShed> {
        let refusal = self.flight.refuse(&ShedLoad)?;
        self.ended(0);
        Some(refusal)
    }

    /// The loop's own shedding policy's refusal, if it sheds the call now (see
    /// [`try_shed`](Self::try_shed)); never for a loop that does not shed.
    pub(crate) fn refuse(&mut self) -> Option<L::Refusal>
    where
        L: ShedPolicy,
    {
        let refusal = self.flight.refuse(&self.shedding)?;
        self.ended(0);
        Some(refusal)
    }

    /// Before the first attempt and after each [`Next::Retry`]: the next wait before the attempt
    /// may be sent, `None` once it may (it is then in flight: [`attempt`](Self::attempt) is it).
    /// Ask with `backoff` first, then without it after each wait, as
    /// [`RetryLoop::next_wait`](super::RetryLoop::next_wait). `None` too once the call is over,
    /// or while its attempt is in flight.
    pub fn next_wait(&mut self, backoff: bool) -> Option<Duration> {
        if self.flight.sent {
            return None;
        }
        let token = self.flight.token.as_mut()?;
        if backoff && token.has_delay() {
            return Some(token.delay());
        }
        if let SendPermit::Wait(wait) = self.flight.strategy.acquire_send_permit(token) {
            return Some(wait);
        }
        self.flight.sent = true;
        self.flight.last_hedge = false;
        let copy = InFlight {
            attempt: token.attempt(),
            sent_at: token.sent_at,
            cost: token.retry_cost(),
            hedge: false,
        };
        self.flight.copies.push(copy);
        if copy.attempt == 1 {
            let delay = self.hedging.delay();
            if self.idempotency != Idempotency::Idempotent {
                self.first_sent = self.flight.strategy.scope_hedging().map(ScopeHedging::now);
                self.refused(HedgeRefusal::NotIdempotent);
            } else {
                self.first_sent = self
                    .flight
                    .strategy
                    .scope_hedging()
                    .map(|hedging| hedging.first_attempt_sent(delay));
            }
        }
        None
    }

    /// After each copy is sent: how long after it the next hedge is due, if one may be: the call
    /// is idempotent, has a copy in flight, has hedges left under `max_hedges`, has not stopped
    /// hedging, and its delay is known (a percentile once the scope has its samples, read once
    /// per call). `None`: no hedge to wait for.
    pub fn hedge_wait(&mut self) -> Option<Duration> {
        if self.flight.token.is_none()
            || self.stopped
            || self.flight.hedges >= self.hedging.max_hedges()
            || self.flight.copies.len() == 0
            || self.idempotency != Idempotency::Idempotent
        {
            return None;
        }
        match self.delay() {
            Delay::Known(delay) => Some(delay),
            Delay::Unread | Delay::Unknown => None,
        }
    }

    /// The call's hedge delay, read on first use.
    fn delay(&mut self) -> Delay {
        if let Delay::Unread = self.delay {
            self.delay = match self.hedging.delay() {
                HedgeDelay::After(delay) => Delay::Known(delay),
                HedgeDelay::Percentile(percentile) => self
                    .flight
                    .strategy
                    .scope_hedging()
                    .and_then(|hedging| hedging.call_delay(percentile))
                    .map_or(Delay::Unknown, Delay::Known),
            };
        }
        self.delay
    }

    /// When a hedge is due ([`hedge_wait`](Self::hedge_wait) elapsed with no answer that ended the
    /// call): asks the strategy for it ([`RetryStrategy::acquire_hedge`]), and gives the hedge's
    /// attempt, to be sent now, or why it is not sent. A refused hedge stops the call's
    /// hedging; the call goes on with its copies in flight. [`HedgeRefusal::NoHedgeDue`] when
    /// `hedge_wait` would give no hedge.
    pub fn try_hedge(&mut self) -> Result<Attempt, HedgeRefusal> {
        let Some(delay) = self.hedge_wait() else {
            if self.flight.token.is_some()
                && !self.stopped
                && self.flight.copies.len() > 0
                && self.idempotency != Idempotency::Idempotent
            {
                return Err(self.refused(HedgeRefusal::NotIdempotent));
            }
            return Err(HedgeRefusal::NoHedgeDue);
        };
        let Some(token) = self.flight.token.as_mut() else {
            return Err(HedgeRefusal::NoHedgeDue);
        };
        let scope = self.flight.strategy.scope_hedging();
        let budgeted = match scope.map(|hedging| hedging.take_budget(self.hedging.delay())) {
            Some(Err(refusal)) => return Err(self.refused(refusal)),
            Some(Ok(taken)) => taken,
            None => false,
        };
        let grant = match self.flight.strategy.acquire_hedge(token) {
            Ok(grant) => grant,
            Err(refusal) => {
                if let (true, Some(hedging)) = (budgeted, scope) {
                    hedging.refund_budget();
                }
                return Err(self.refused(refusal));
            }
        };
        token.attempt = token.attempt.saturating_add(1);
        token.retry_cost = grant.cost;
        token.paid = token.paid.saturating_add(grant.cost);
        token.sent_at = grant.sent_at;
        token.delay = Nanos::ZERO;
        let attempt = token.attempt;
        self.flight.copies.push(InFlight {
            attempt,
            sent_at: grant.sent_at,
            cost: grant.cost,
            hedge: true,
        });
        self.flight.hedges += 1;
        self.flight.last_hedge = true;
        if let Some(hedging) = self.flight.strategy.scope_hedging() {
            hedging.meter().sent();
        }
        observe::hedging(self.flight.strategy.scope_name(), attempt, delay);
        Ok(Attempt::copy(
            attempt,
            self.flight.strategy.max_attempts(),
            true,
        ))
    }

    /// The call sends no more hedges: no copy of its request is left to send (a driver's own
    /// reason, not the strategy's: not counted).
    pub(crate) fn stop_hedging(&mut self) {
        self.stopped = true;
    }

    /// After [`Next::Retry`], before the retry is sent: it will not be (no copy of the request
    /// is left to send). Its token is abandoned (its quota given back); the call ends after the
    /// attempts it sent.
    pub(crate) fn give_up_unsent(&mut self) {
        let Some(token) = RetryToken::take(&mut self.flight.token) else {
            return;
        };
        let sent = token.attempt().saturating_sub(1);
        self.flight.strategy.abandon(token);
        self.ended(sent);
    }

    /// A hedge due and not sent, for `refusal`: the call sends no more, and the refusal is
    /// counted.
    #[cold]
    fn refused(&mut self, refusal: HedgeRefusal) -> HedgeRefusal {
        self.stopped = true;
        if let Some(hedging) = self.flight.strategy.scope_hedging() {
            hedging.meter().refused(refusal);
        }
        observe::not_hedged(self.flight.strategy.scope_name(), refusal);
        refusal
    }

    /// Takes the outcome of the copy `copy` (its attempt, as [`attempt`](Self::attempt) or
    /// [`try_hedge`](Self::try_hedge) gave it) and says what to do ([`Next`]). Every reason to
    /// stop is decided here, as in [`RetryLoop::finish`](super::RetryLoop::finish); a call whose
    /// retry the strategy refuses ends with one WARN event naming its last error. The outcome of
    /// a copy not in flight (answered already, never sent) is ignored: [`Next::Wait`] while the
    /// call goes on, [`Next::Return`] once it is over.
    pub fn finish<T, E: Debug>(&mut self, copy: Attempt, outcome: &Result<T, E>) -> Next
    where
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
    {
        if self.flight.token.is_none() {
            return Next::Return;
        }
        let Some(answered) = self.flight.copies.take(copy.number()) else {
            return Next::Wait;
        };
        // Classify with the copy out of the list: should the classifier panic, the drop settles
        // the others and the call.
        let action = self.classifier.classify_for(outcome, self.idempotency);
        match action {
            RetryAction::RetryIndicated(reason) => self.failed(answered, reason, outcome),
            _ => {
                self.end(answered, outcome.is_ok());
                Next::Return
            }
        }
    }

    /// A copy failed with a retryable error for `reason`.
    fn failed<T, E: Debug>(
        &mut self,
        answered: InFlight,
        reason: RetryReason,
        outcome: &Result<T, E>,
    ) -> Next
    where
        H: OnRetry<E>,
    {
        if reason.kind().is_throttling() || reason.retry_after().is_some() {
            // Throttling, a Retry-After, gRPC pushback: no more hedges for this call.
            self.stopped = true;
        }
        if answered.attempt == 1 {
            // A failure says nothing of the service's latency.
            self.first_sent = None;
        }
        if self.flight.copies.len() > 0 {
            self.flight
                .strategy
                .record_copy_failure(&copy_token(answered), &reason);
            return Next::Wait;
        }
        self.retry(answered, reason, outcome)
    }

    /// The last copy in flight failed for `reason`: the call's retry, or its end.
    fn retry<T, E: Debug>(
        &mut self,
        answered: InFlight,
        reason: RetryReason,
        outcome: &Result<T, E>,
    ) -> Next
    where
        H: OnRetry<E>,
    {
        let Some(mut token) = RetryToken::take(&mut self.flight.token) else {
            return Next::Return;
        };
        token.sent_at = answered.sent_at;
        let slot = TokenSlot {
            token: &mut self.flight.token,
            sent: &mut self.flight.sent,
        };
        let strategy = &self.flight.strategy;
        let error = outcome.as_ref().err();
        match retry_or_give_up(strategy, &self.on_retry, slot, token, reason, error) {
            ControlFlow::Continue(kind) => {
                self.retried_for = Some(kind);
                Next::Retry
            }
            ControlFlow::Break(gave_up) => {
                self.linger = gave_up.linger;
                if let Some(wait) = gave_up.linger {
                    self.count_wait(wait);
                }
                self.ended(gave_up.attempts);
                Next::Return
            }
        }
    }

    /// `answered` ended the call, in success or not: the other copies are cancelled, the
    /// latency measured, the call's token settled.
    fn end(&mut self, answered: InFlight, success: bool) {
        let hedging = self.flight.strategy.scope_hedging();
        for loser in self.flight.copies.drain() {
            self.flight
                .strategy
                .record_copy_cancelled(&copy_token(loser));
            if let Some(hedging) = hedging {
                hedging.meter().cancelled();
            }
        }
        if let (Some(hedging), Some(sent)) = (hedging, self.first_sent.take()) {
            // The first attempt's latency, or, when another copy ended the call first, the time
            // it had been in flight then (above the percentile it was hedged at).
            hedging.record_latency(sent);
            if answered.hedge {
                hedging.meter().won();
            }
        } else if let (Some(hedging), true) = (hedging, answered.hedge) {
            hedging.meter().won();
        }
        let Some(mut token) = RetryToken::take(&mut self.flight.token) else {
            return;
        };
        // The winner's send time for the limiter. The token's `paid` holds every retry and hedge
        // of the call, as the strategy settles them: a success under a traffic-sized quota gives
        // them all back; under a fixed quota, the winner's cost alone (the AWS SDKs' last retry),
        // so a hedge that lost stays charged there.
        token.sent_at = answered.sent_at;
        token.retry_cost = answered.cost;
        let attempts = token.attempt();
        if success {
            self.flight.strategy.record_success(token);
        } else {
            self.flight.strategy.record_failure(token);
            observe::not_retried(attempts);
        }
        self.ended(attempts);
    }

    /// The call ended after `attempts` attempts: kept for [`stats`](Self::stats) and reported
    /// to the capture running on this thread, if any (feature `attempt-context`).
    fn ended(&mut self, attempts: u32) {
        self.ended_after = attempts;
        attempt::record(|| self.stats());
    }

    /// Counts `wait` in the call's waits.
    pub(crate) fn count_wait(&mut self, wait: Duration) {
        self.waited = self.waited.saturating_add(wait);
    }

    /// Once `finish` ended the call, how long to sleep before returning its outcome (a
    /// long-polling call whose retry the quota refused), taken: asked again, `None`. As
    /// [`RetryLoop::take_linger`](super::RetryLoop::take_linger).
    pub fn take_linger(&mut self) -> Option<Duration> {
        self.linger.take()
    }

    /// The time the call has waited, as scheduled by the driver that counts its waits (the
    /// hedging drivers of the crate do; a driver that keeps its own time does not).
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// What the call did, once [`finish`](Self::finish) (or a refusal before its first attempt)
    /// ended it: its attempts, its hedges among them, and its waits.
    pub fn stats(&self) -> CallStats {
        CallStats::hedged(self.ended_after, self.waited, self.flight.hedges)
    }

    /// The context a copy of attempt `attempt` runs in: its mark, and its span (a hedge's, a
    /// retry's; none for the first attempt, nor when no subscriber records it).
    pub(crate) fn context_of(&self, attempt: Attempt) -> (Mark, Option<tracing::Span>) {
        let span = if attempt.is_hedge() {
            let delay = match self.delay {
                Delay::Known(delay) => delay,
                Delay::Unread | Delay::Unknown => Duration::ZERO,
            };
            Some(observe::hedge_span(
                attempt,
                delay,
                self.flight.strategy.scope_name(),
            ))
        } else {
            self.retried_for.map(|reason| {
                let delay = self
                    .flight
                    .token
                    .as_ref()
                    .map_or(Duration::ZERO, RetryToken::delay);
                observe::attempt_span(attempt, reason, delay, self.flight.strategy.scope_name())
            })
        };
        (
            attempt::mark(attempt),
            span.filter(|span| !span.is_disabled()),
        )
    }
}

/// A copy's own token, for the strategy's records of it.
fn copy_token(copy: InFlight) -> RetryToken {
    RetryToken {
        attempt: copy.attempt,
        retry_cost: copy.cost,
        paid: 0,
        delay: Nanos::ZERO,
        started_at: Nanos::ZERO,
        sent_at: copy.sent_at,
        permit_wait: Nanos::ZERO,
        ticket: crate::adaptive::Ticket::NONE,
    }
}

impl<S: RetryStrategy> Flight<S> {
    /// `shedding`'s refusal of the call, if it sheds it before its first attempt: then its
    /// token is abandoned.
    fn refuse<P: ShedPolicy>(&mut self, shedding: &P) -> Option<P::Refusal> {
        let token = self.token.as_ref()?;
        if self.sent || token.attempt() != 1 {
            return None;
        }
        let refusal = shedding.shed(&self.strategy, token)?;
        if let Some(token) = RetryToken::take(&mut self.token) {
            self.strategy.record_shed(token);
        }
        Some(refusal)
    }
}

impl<S: RetryStrategy> Drop for Flight<S> {
    /// A call dropped before it ended: each copy in flight a cancelled attempt (one of them as
    /// the call's), a retry granted and not sent abandoned.
    fn drop(&mut self) {
        let Some(mut token) = RetryToken::take(&mut self.token) else {
            return;
        };
        let mut copies = std::mem::take(&mut self.copies);
        let hedging = self.strategy.scope_hedging().filter(|_| self.hedges > 0);
        let mut copies = copies.drain();
        let Some(last) = copies.next() else {
            settle_dropped(&self.strategy, token, false);
            return;
        };
        for copy in copies {
            self.strategy.record_copy_cancelled(&copy_token(copy));
            if let Some(hedging) = hedging {
                hedging.meter().cancelled();
            }
        }
        if let Some(hedging) = hedging {
            hedging.meter().cancelled();
        }
        token.sent_at = last.sent_at;
        settle_dropped(&self.strategy, token, true);
    }
}

impl<S: RetryStrategy, C, H, L> Debug for HedgedLoop<S, C, H, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HedgedLoop")
            .field("strategy", &self.flight.strategy)
            .field("hedging", &self.hedging)
            .field("token", &self.flight.token)
            .field("copies", &self.flight.copies)
            .field("hedges", &self.flight.hedges)
            .field("stopped", &self.stopped)
            .finish_non_exhaustive()
    }
}
