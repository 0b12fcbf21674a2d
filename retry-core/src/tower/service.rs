//! The service [`RetryLayer`](super::RetryLayer) makes.

use std::fmt;
use std::mem;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tower_service::Service;

use super::future::ResponseFuture;
use super::permit_wait::PermitWait;
use super::request_info::{RequestInfo, mark_attempt};
use super::shared::Shared;
use super::{CloneRequest, CopyRequest};
use crate::attempt::{self, Attempt};
use crate::classify::{ClassifyRetry, RetryInfoClassifier};
use crate::driver::{NeverShed, ShedInto, ShedPolicy};
use crate::strategy::{RetryStrategy, RetryToken};

/// A [`Service`] whose calls are retried: made by [`RetryLayer`](super::RetryLayer).
///
/// [`poll_ready`](Service::poll_ready) takes the next call's token and waits for its send permit
/// (adaptive mode) before it asks the wrapped service;
/// [`call`](Service::call) sends the first attempt at once and keeps a copy of the request and a
/// clone of the service for the retries. A call made without `poll_ready` (against tower's contract) still works: its
/// response future waits for the permit and the wrapped service's readiness first.
///
/// With [`shed_load`](super::RetryLayer::shed_load), a call the strategy sheds before its first
/// attempt is refused: `poll_ready` takes the refusal and reports ready, and the next `call`'s
/// future resolves to it at once, the wrapped service not called.
///
/// A clone is not ready: it starts without a token, as tower expects of clones. Dropping a
/// service that was made ready but not called gives its token back, counted as an abandoned
/// call.
pub struct RetryService<
    Svc,
    S: RetryStrategy,
    C = RetryInfoClassifier,
    P = CloneRequest,
    L: ShedPolicy = NeverShed,
> {
    inner: Svc,
    shared: Arc<Shared<S, C, P, L>>,
    /// The next call's token, taken by `poll_ready`.
    token: Option<RetryToken>,
    /// Whether that token's send permit was granted: the first attempt may be sent.
    granted: bool,
    /// Whether the wrapped service said it was ready (the last `poll_ready` returned `Ok`).
    ready: bool,
    /// The next call's refusal, when `poll_ready` shed it (its token already abandoned).
    refused: Option<L::Refusal>,
    wait: PermitWait,
}

impl<Svc, S: RetryStrategy, C, P, L: ShedPolicy> RetryService<Svc, S, C, P, L> {
    pub(super) fn from_shared(inner: Svc, shared: Arc<Shared<S, C, P, L>>) -> Self {
        Self {
            inner,
            shared,
            token: None,
            granted: false,
            ready: false,
            refused: None,
            wait: PermitWait::default(),
        }
    }

    /// The wrapped service.
    pub fn get_ref(&self) -> &Svc {
        &self.inner
    }

    /// The strategy calls run under.
    pub fn strategy(&self) -> &S {
        &self.shared.strategy
    }
}

impl<Svc, S, C, P, L, Req> Service<Req> for RetryService<Svc, S, C, P, L>
where
    Svc: Service<Req> + Clone,
    Svc::Error: fmt::Debug,
    Req: RequestInfo,
    S: RetryStrategy,
    C: ClassifyRetry<Svc::Response, Svc::Error>,
    P: CopyRequest<Req>,
    L: ShedInto<Svc::Error>,
{
    type Response = Svc::Response;
    type Error = Svc::Error;
    type Future = ResponseFuture<Svc, Req, S, C, P, L>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !self.granted {
            ready!(self.poll_permit(cx));
            if self.refused.is_some() {
                // Shed: ready to be called, the call's future fails with the refusal.
                return Poll::Ready(Ok(()));
            }
        }
        let ready = self.inner.poll_ready(cx);
        self.ready = matches!(ready, Poll::Ready(Ok(())));
        ready
    }

    #[inline]
    fn call(&mut self, mut request: Req) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        let ready = mem::take(&mut self.ready);
        self.granted = false;
        let idempotency = shared.idempotency.unwrap_or_else(|| request.idempotency());
        let token = match RetryToken::take(&mut self.token) {
            // Made ready: `poll_ready` asks the inner service only once the permit is granted.
            Some(token) if ready => token,
            // Not made ready: the future waits for the permit and the service itself.
            token => {
                // Or shed by `poll_ready` (its token abandoned): the future fails at once.
                if let Some(refusal) = self.refused.take() {
                    return ResponseFuture::refused(shared, refusal);
                }
                let token = token.unwrap_or_else(|| shared.strategy.acquire_initial_token());
                let inner = self.inner.clone();
                return ResponseFuture::unready(shared, inner, request, token, idempotency);
            }
        };
        let attempt = Attempt::new(token.attempt(), shared.strategy.max_attempts());
        mark_attempt(&mut request, attempt);
        let waited = self.wait.take_waited();
        match shared.copy.copy_request(&request) {
            Some(copy) => {
                // Call the service that was made ready; keep the clone for the next call.
                let clone = self.inner.clone();
                let mut ready = mem::replace(&mut self.inner, clone);
                let future =
                    attempt::in_context(attempt::mark(attempt), None, || ready.call(request));
                let retry = Some((ready, copy));
                ResponseFuture::sent(shared, future, token, retry, idempotency, waited)
            }
            None => {
                let future =
                    attempt::in_context(attempt::mark(attempt), None, || self.inner.call(request));
                ResponseFuture::sent(shared, future, token, None, idempotency, waited)
            }
        }
    }
}

impl<Svc, S: RetryStrategy, C, P, L: ShedPolicy> RetryService<Svc, S, C, P, L> {
    /// Takes the next call's token and waits for its send permit: ready once it is granted, or
    /// once the call is shed (the refusal kept for `call`, the token abandoned).
    fn poll_permit(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.refused.is_some() {
            return Poll::Ready(());
        }
        let Shared {
            strategy, shedding, ..
        } = &*self.shared;
        let token = self
            .token
            .get_or_insert_with(|| strategy.acquire_initial_token());
        match ready!(self.wait.poll(strategy, shedding, token, cx)) {
            Ok(()) => self.granted = true,
            Err(refusal) => {
                if let Some(token) = RetryToken::take(&mut self.token) {
                    strategy.record_shed(token);
                }
                self.wait.take_waited();
                self.refused = Some(refusal);
            }
        }
        Poll::Ready(())
    }
}

impl<Svc: Clone, S: RetryStrategy, C, P, L: ShedPolicy> Clone for RetryService<Svc, S, C, P, L> {
    fn clone(&self) -> Self {
        Self::from_shared(self.inner.clone(), Arc::clone(&self.shared))
    }
}

impl<Svc, S: RetryStrategy, C, P, L: ShedPolicy> Drop for RetryService<Svc, S, C, P, L> {
    fn drop(&mut self) {
        if let Some(token) = RetryToken::take(&mut self.token) {
            self.shared.strategy.abandon(token);
        }
    }
}

impl<Svc: fmt::Debug, S: RetryStrategy, C, P, L: ShedPolicy> fmt::Debug
    for RetryService<Svc, S, C, P, L>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryService")
            .field("inner", &self.inner)
            .field("strategy", &self.shared.strategy)
            .field("token", &self.token)
            .field("granted", &self.granted)
            .field("refused", &self.refused.is_some())
            .finish_non_exhaustive()
    }
}
