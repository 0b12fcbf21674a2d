//! The response future of [`RetryService`](super::RetryService): one call, all its attempts.

use std::fmt::{self, Debug};
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tower_service::Service;

use super::CopyRequest;
use super::permit_wait::PermitWait;
use super::request_info::{RequestInfo, mark_attempt};
use super::shared::Shared;
use crate::attempt::{self, Attempt, CallStats};
use crate::classify::{ClassifyRetry, ErrorKind, Idempotency, RetryAction, RetryReason};
use crate::driver::{NeverShed, ShedInto, ShedPolicy};
use crate::observe;
use crate::strategy::{RetryStrategy, RetryToken};

pin_project! {
    /// The future of one call to a [`RetryService`](super::RetryService): the first attempt,
    /// then each retry after its backoff and, in adaptive mode, its send permit. Resolves to the
    /// last attempt's own outcome, unchanged, or to the refusal of a call the layer's
    /// [`shed_load`](super::RetryLayer::shed_load) shed before its first attempt.
    ///
    /// Written by hand, so that it can be named as `Service::Future` without a box: the success
    /// path allocates nothing. Dropping it (a cancelled call) settles its token: a retry granted
    /// but not yet sent gives its quota back.
    ///
    /// The wrapped service's response future is polled in the attempt's context (a retry's within
    /// its `retry.attempt` span; with feature `attempt-context`, `attempt::current()` is the
    /// attempt); a call whose retry the strategy refuses logs one warning with its last error.
    ///
    /// # Panics
    ///
    /// If polled again after it completed, like any `async fn`'s future.
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub struct ResponseFuture<Svc, Req, S, C, P, L = NeverShed>
    where
        Svc: Service<Req>,
        S: RetryStrategy,
        L: ShedPolicy,
    {
        #[pin]
        attempt: AttemptState<Svc::Future, L::Refusal, Result<Svc::Response, Svc::Error>>,
        call: Call<Svc, Req, S, C, P, L>,
    }
}

pin_project! {
    #[project = AttemptProj]
    enum AttemptState<F, R, O> {
        /// An attempt is in flight.
        InFlight { #[pin] future: F },
        /// Long polling: the quota refused a retry; the outcome is returned once the backoff
        /// computed for it has been slept.
        Lingering { outcome: Option<O> },
        /// The call was shed before its first attempt: fails with the refusal when polled.
        Refused { refusal: Option<R> },
        /// The next attempt waits for its backoff, its permit, then the service's readiness.
        Waiting,
        /// The call's outcome was returned.
        Done,
    }
}

/// The state of a call between its attempts.
struct Call<Svc, Req, S: RetryStrategy, C, P, L> {
    shared: Arc<Shared<S, C, P, L>>,
    /// The service the retries are sent to, and the request they copy; `None` when the request
    /// could not be copied (no retry), or after the last copy was sent.
    retry: Option<(Svc, Req)>,
    /// The current attempt's token; `None` once the call's outcome is final.
    token: Option<RetryToken>,
    /// Whether the token's send permit was granted: the attempt waits only for the service.
    permitted: bool,
    /// Whether the token's attempt was sent (the service called).
    sent: bool,
    wait: PermitWait,
    /// Long polling: what to sleep before returning the outcome the strategy stopped at.
    linger: Option<Duration>,
    /// The call's idempotency: declared for the layer, or the request's own.
    idempotency: Idempotency,
    /// Why the current attempt is a retry (the kind of the failure before it); `None` for the
    /// first attempt.
    retried_for: Option<ErrorKind>,
    /// The current retry's span; `None` for the first attempt, which gets none.
    span: Option<tracing::Span>,
}

impl<Svc, Req, S, C, P, L> ResponseFuture<Svc, Req, S, C, P, L>
where
    Svc: Service<Req>,
    S: RetryStrategy,
    L: ShedPolicy,
{
    /// A call whose first attempt is in flight, after waiting `waited` for its permit.
    #[inline]
    pub(super) fn sent(
        shared: Arc<Shared<S, C, P, L>>,
        attempt: Svc::Future,
        token: RetryToken,
        retry: Option<(Svc, Req)>,
        idempotency: Idempotency,
        waited: Duration,
    ) -> Self {
        Self {
            attempt: AttemptState::InFlight { future: attempt },
            call: Call {
                shared,
                retry,
                token: Some(token),
                permitted: true,
                sent: true,
                wait: PermitWait::after(waited),
                linger: None,
                idempotency,
                retried_for: None,
                span: None,
            },
        }
    }

    /// A call made without `poll_ready`: its first attempt waits for its permit and for the
    /// service.
    pub(super) fn unready(
        shared: Arc<Shared<S, C, P, L>>,
        service: Svc,
        request: Req,
        token: RetryToken,
        idempotency: Idempotency,
    ) -> Self {
        Self {
            attempt: AttemptState::Waiting,
            call: Call {
                shared,
                retry: Some((service, request)),
                token: Some(token),
                permitted: false,
                sent: false,
                wait: PermitWait::default(),
                linger: None,
                idempotency,
                retried_for: None,
                span: None,
            },
        }
    }

    /// A call `poll_ready` shed (its token abandoned): fails with `refusal` when polled.
    #[cold]
    #[inline(never)]
    pub(super) fn refused(shared: Arc<Shared<S, C, P, L>>, refusal: L::Refusal) -> Self {
        Self {
            attempt: AttemptState::Refused {
                refusal: Some(refusal),
            },
            call: Call {
                shared,
                retry: None,
                token: None,
                permitted: false,
                sent: false,
                wait: PermitWait::default(),
                linger: None,
                idempotency: Idempotency::Undeclared,
                retried_for: None,
                span: None,
            },
        }
    }
}

impl<Svc, Req, S, C, P, L> Future for ResponseFuture<Svc, Req, S, C, P, L>
where
    Svc: Service<Req>,
    Svc::Error: Debug,
    Req: RequestInfo,
    S: RetryStrategy,
    C: ClassifyRetry<Svc::Response, Svc::Error>,
    P: CopyRequest<Req>,
    L: ShedInto<Svc::Error>,
{
    type Output = Result<Svc::Response, Svc::Error>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match this.attempt.as_mut().project() {
                AttemptProj::InFlight { future } => {
                    let outcome = ready!(this.call.in_context(|| future.poll(cx)));
                    if this.call.finish(&outcome).is_break() {
                        if let Some(wait) = this.call.linger.take() {
                            this.call.wait.start_linger(wait);
                            let outcome = Some(outcome);
                            this.attempt.set(AttemptState::Lingering { outcome });
                            continue;
                        }
                        this.attempt.set(AttemptState::Done);
                        return Poll::Ready(outcome);
                    }
                    this.attempt.set(AttemptState::Waiting);
                }
                AttemptProj::Lingering { outcome } => {
                    ready!(this.call.wait.poll_linger(cx));
                    let outcome = outcome.take();
                    this.attempt.set(AttemptState::Done);
                    if let Some(outcome) = outcome {
                        return Poll::Ready(outcome);
                    }
                }
                AttemptProj::Waiting => match ready!(this.call.poll_send(cx)) {
                    Ok(future) => this.attempt.set(AttemptState::InFlight { future }),
                    Err(error) => {
                        this.attempt.set(AttemptState::Done);
                        return Poll::Ready(Err(error));
                    }
                },
                AttemptProj::Refused { refusal } => {
                    let refusal = refusal.take();
                    this.attempt.set(AttemptState::Done);
                    this.call.ended(0);
                    if let Some(refusal) = refusal {
                        return Poll::Ready(Err(L::into_error(refusal)));
                    }
                }
                AttemptProj::Done => {
                    panic!("retry_core::tower::ResponseFuture polled after it completed")
                }
            }
        }
    }
}

impl<Svc, Req, S: RetryStrategy, C, P, L: ShedPolicy> Call<Svc, Req, S, C, P, L> {
    /// Takes one attempt's outcome: `Break` to return it, `Continue` to retry (the retry's
    /// token granted, its backoff still to be slept).
    #[inline]
    fn finish<T, E: Debug>(&mut self, outcome: &Result<T, E>) -> ControlFlow<()>
    where
        C: ClassifyRetry<T, E>,
    {
        let action = self
            .shared
            .classifier
            .classify_for(outcome, self.idempotency);
        // Field by field: the token was just written (see `RetryToken::take`).
        let Some(token) = RetryToken::take(&mut self.token) else {
            return ControlFlow::Break(());
        };
        let attempts = token.attempt();
        match action {
            RetryAction::RetryIndicated(reason) if self.retry.is_some() => {
                return self.retry(token, &reason, outcome.as_ref().err());
            }
            RetryAction::NoActionIndicated | RetryAction::RetryForbidden if outcome.is_ok() => {
                self.shared.strategy.record_success(token);
            }
            _ => self.fail(token),
        }
        self.ended(attempts);
        ControlFlow::Break(())
    }

    /// An outcome that is not retried, out of line (the success path is inlined).
    #[cold]
    #[inline(never)]
    fn fail(&self, token: RetryToken) {
        let attempt = token.attempt();
        self.shared.strategy.record_failure(token);
        observe::not_retried(attempt);
    }

    /// Asks the strategy for a retry of the failure `last` (`None`: a retried `Ok`), out of line.
    #[inline(never)]
    fn retry<E: Debug>(
        &mut self,
        token: RetryToken,
        reason: &RetryReason,
        last: Option<&E>,
    ) -> ControlFlow<()> {
        let attempt = token.attempt();
        match self.shared.strategy.refresh_retry_token(token, reason) {
            Ok(token) => {
                self.token = Some(token);
                self.permitted = false;
                self.sent = false;
                self.retried_for = Some(reason.kind());
                self.wait.backoff_first();
                ControlFlow::Continue(())
            }
            Err(error) => {
                let scope = self.shared.strategy.scope_name();
                observe::gave_up(scope, attempt, &error, last);
                self.linger = error.wait_before_returning();
                self.ended(attempt);
                ControlFlow::Break(())
            }
        }
    }

    /// The current attempt: its number and the strategy's most attempts.
    #[inline(always)]
    fn attempt(&self) -> Attempt {
        let number = self.token.as_ref().map_or(0, RetryToken::attempt);
        Attempt::new(number, self.shared.strategy.max_attempts())
    }

    /// Runs `f`, a step of the current attempt, in its context (and a retry's span).
    #[inline(always)]
    fn in_context<R>(&self, f: impl FnOnce() -> R) -> R {
        attempt::in_context(attempt::mark(self.attempt()), self.span.as_ref(), f)
    }

    /// The call ended after `attempts` attempts: its stats to the enclosing capture, if any.
    #[inline(always)]
    fn ended(&self, attempts: u32) {
        attempt::record(|| {
            let linger = self.linger.unwrap_or_default();
            CallStats::new(attempts, self.wait.waited().saturating_add(linger))
        });
    }

    /// The span of the retry about to be sent, out of line (a first attempt gets none).
    #[cold]
    #[inline(never)]
    fn start_span(&mut self, reason: ErrorKind) {
        let delay = self
            .token
            .as_ref()
            .map_or(Duration::ZERO, RetryToken::delay);
        let scope = self.shared.strategy.scope_name();
        self.span = Some(observe::attempt_span(self.attempt(), reason, delay, scope));
    }

    /// Waits for the next attempt's backoff, permit and service, then sends it, the request
    /// marked with its attempt and the service called in the attempt's context.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<Result<Svc::Future, Svc::Error>>
    where
        Svc: Service<Req>,
        Req: RequestInfo,
        P: CopyRequest<Req>,
        L: ShedInto<Svc::Error>,
    {
        if !self.permitted {
            let Some(token) = self.token.as_mut() else {
                unreachable_state()
            };
            let Shared {
                strategy, shedding, ..
            } = &*self.shared;
            if let Err(refusal) = ready!(self.wait.poll(strategy, shedding, token, cx)) {
                // A first attempt made without `poll_ready`, shed: nothing sent.
                if let Some(token) = self.token.take() {
                    strategy.record_shed(token);
                }
                self.ended(0);
                return Poll::Ready(Err(L::into_error(refusal)));
            }
            self.permitted = true;
        }
        let Some((service, _)) = self.retry.as_mut() else {
            unreachable_state()
        };
        if let Err(error) = ready!(service.poll_ready(cx)) {
            // The service failed before the attempt was sent: the call ends with its error, and
            // the token is abandoned (an unsent retry's cost goes back).
            if let Some(token) = self.token.take() {
                self.shared.strategy.abandon(token);
            }
            return Poll::Ready(Err(error));
        }
        let Some((mut service, request)) = self.retry.take() else {
            unreachable_state()
        };
        if let Some(reason) = self.retried_for {
            self.start_span(reason);
        }
        let attempt = self.attempt();
        let future = match self.shared.copy.copy_request(&request) {
            Some(mut copy) => {
                mark_attempt(&mut copy, attempt);
                let future = self.in_context(|| service.call(copy));
                self.retry = Some((service, request));
                future
            }
            // It cannot be copied again: send the kept request itself, and retry no more.
            None => {
                let mut request = request;
                mark_attempt(&mut request, attempt);
                self.in_context(|| service.call(request))
            }
        };
        self.sent = true;
        Poll::Ready(Ok(future))
    }
}

impl<Svc, Req, S: RetryStrategy, C, P, L> Call<Svc, Req, S, C, P, L> {
    /// The call was dropped before its outcome was final (cancelled), out of line.
    #[cold]
    #[inline(never)]
    fn settle_cancelled(&mut self) {
        if let Some(token) = self.token.take() {
            if self.sent {
                // Dropped while an attempt was in flight: it was made, its end is unknown.
                self.shared.strategy.record_cancelled(token);
            } else {
                self.shared.strategy.abandon(token);
            }
        }
    }
}

/// A future in the waiting state always has a token and a service: `finish` grants a retry only
/// with both, and `unready` starts with both.
#[cold]
fn unreachable_state() -> ! {
    unreachable!("retry_core::tower::ResponseFuture waits for an attempt it cannot send")
}

impl<Svc, Req, S: RetryStrategy, C, P, L> Drop for Call<Svc, Req, S, C, P, L> {
    #[inline]
    fn drop(&mut self) {
        if self.token.is_some() {
            self.settle_cancelled();
        }
    }
}

impl<Svc, Req, S, C, P, L> Debug for ResponseFuture<Svc, Req, S, C, P, L>
where
    Svc: Service<Req>,
    S: RetryStrategy,
    L: ShedPolicy,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.attempt {
            AttemptState::InFlight { .. } => "in flight",
            AttemptState::Lingering { .. } => "lingering",
            AttemptState::Refused { .. } => "refused",
            AttemptState::Waiting => "waiting",
            AttemptState::Done => "done",
        };
        f.debug_struct("ResponseFuture")
            .field("state", &state)
            .field("token", &self.call.token)
            .finish_non_exhaustive()
    }
}
