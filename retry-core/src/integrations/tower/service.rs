//! The service [`RetryLayer`](super::RetryLayer) makes.

use std::fmt;
use std::mem;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tower_service::Service;

use super::future::ResponseFuture;
use super::permit_wait::PermitWait;
use super::shared::Shared;
use super::{CloneRequest, CopyRequest};
use crate::{ClassifyRetry, RetryInfoClassifier, RetryStrategy, RetryToken};

/// A [`Service`] whose calls are retried: made by [`RetryLayer`](super::RetryLayer).
///
/// [`poll_ready`](Service::poll_ready) takes the next call's token and waits for its send permit
/// (adaptive mode) before it asks the wrapped service;
/// [`call`](Service::call) sends the first attempt at once and keeps a copy of the request and a
/// clone of the service for the retries. A call made without `poll_ready` (against tower's contract) still works: its
/// response future waits for the permit and the wrapped service's readiness first.
///
/// A clone is not ready: it starts without a token, as tower expects of clones. Dropping a
/// service that was made ready but not called gives its token back, counted as an abandoned
/// call.
pub struct RetryService<Svc, S: RetryStrategy, C = RetryInfoClassifier, P = CloneRequest> {
    inner: Svc,
    shared: Arc<Shared<S, C, P>>,
    /// The next call's token, taken by `poll_ready`.
    token: Option<RetryToken>,
    /// Whether that token's send permit was granted: the first attempt may be sent.
    granted: bool,
    /// Whether the wrapped service said it was ready (the last `poll_ready` returned `Ok`).
    ready: bool,
    wait: PermitWait,
}

impl<Svc, S: RetryStrategy, C, P> RetryService<Svc, S, C, P> {
    pub(super) fn from_shared(inner: Svc, shared: Arc<Shared<S, C, P>>) -> Self {
        Self {
            inner,
            shared,
            token: None,
            granted: false,
            ready: false,
            wait: PermitWait::default(),
        }
    }

    /// The wrapped service.
    ///
    /// ```
    /// use retry_core::{RetryConfig, StandardStrategy, tower::RetryLayer};
    /// use tower::Layer;
    /// let service = RetryLayer::new(StandardStrategy::new(RetryConfig::default()))
    ///     .layer(tower::service_fn(|x: u32| async move { Ok::<_, std::io::Error>(x) }));
    /// let _inner = service.get_ref();
    /// ```
    pub fn get_ref(&self) -> &Svc {
        &self.inner
    }

    /// The strategy calls run under.
    ///
    /// ```
    /// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy, tower::RetryLayer};
    /// use tower::Layer;
    /// let classic = RetryConfig::aws_classic().build().unwrap();
    /// let service = RetryLayer::new(StandardStrategy::new(classic))
    ///     .layer(tower::service_fn(|x: u32| async move { Ok::<_, std::io::Error>(x) }));
    /// assert_eq!(service.strategy().scope().quota().capacity(), 500);
    /// ```
    pub fn strategy(&self) -> &S {
        &self.shared.strategy
    }
}

impl<Svc, S, C, P, Req> Service<Req> for RetryService<Svc, S, C, P>
where
    Svc: Service<Req> + Clone,
    S: RetryStrategy,
    C: ClassifyRetry<Svc::Response, Svc::Error>,
    P: CopyRequest<Req>,
{
    type Response = Svc::Response;
    type Error = Svc::Error;
    type Future = ResponseFuture<Svc, Req, S, C, P>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if !self.granted {
            ready!(self.poll_permit(cx));
        }
        let ready = self.inner.poll_ready(cx);
        self.ready = matches!(ready, Poll::Ready(Ok(())));
        ready
    }

    #[inline]
    fn call(&mut self, request: Req) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        let ready = mem::take(&mut self.ready);
        self.granted = false;
        let token = match RetryToken::take(&mut self.token) {
            // Made ready: `poll_ready` asks the inner service only once the permit is granted.
            Some(token) if ready => token,
            // Not made ready: the future waits for the permit and the service itself.
            token => {
                let token = token.unwrap_or_else(|| shared.strategy.acquire_initial_token());
                return ResponseFuture::unready(shared, self.inner.clone(), request, token);
            }
        };
        match shared.copy.copy_request(&request) {
            Some(copy) => {
                // Call the service that was made ready; keep the clone for the next call.
                let clone = self.inner.clone();
                let mut ready = mem::replace(&mut self.inner, clone);
                let attempt = ready.call(request);
                ResponseFuture::sent(shared, attempt, token, Some((ready, copy)))
            }
            None => {
                let attempt = self.inner.call(request);
                ResponseFuture::sent(shared, attempt, token, None)
            }
        }
    }
}

impl<Svc, S: RetryStrategy, C, P> RetryService<Svc, S, C, P> {
    /// Takes the next call's token and waits for its send permit.
    fn poll_permit(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let strategy = &self.shared.strategy;
        let token = self
            .token
            .get_or_insert_with(|| strategy.acquire_initial_token());
        ready!(self.wait.poll(strategy, token, cx));
        self.granted = true;
        Poll::Ready(())
    }
}

impl<Svc: Clone, S: RetryStrategy, C, P> Clone for RetryService<Svc, S, C, P> {
    fn clone(&self) -> Self {
        Self::from_shared(self.inner.clone(), Arc::clone(&self.shared))
    }
}

impl<Svc, S: RetryStrategy, C, P> Drop for RetryService<Svc, S, C, P> {
    fn drop(&mut self) {
        if let Some(token) = RetryToken::take(&mut self.token) {
            self.shared.strategy.abandon(token);
        }
    }
}

impl<Svc: fmt::Debug, S: RetryStrategy, C, P> fmt::Debug for RetryService<Svc, S, C, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryService")
            .field("inner", &self.inner)
            .field("strategy", &self.shared.strategy)
            .field("token", &self.token)
            .field("granted", &self.granted)
            .finish_non_exhaustive()
    }
}
