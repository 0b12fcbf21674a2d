//! [`HedgedRetryLayer`]: [`RetryLayer`] with hedging ([`hedge`](crate::hedge)), made by
//! [`RetryLayer::hedge`]; its service [`HedgedRetryService`] and response future
//! [`HedgedResponseFuture`].

use std::fmt::{self, Debug};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use super::hedged_copies::CopySender;
use super::layer::RetryLayer;
use super::request_info::RequestInfo;
use super::shared::Shared;
use super::{CopyRequest, ResponseFuture};
use crate::classify::{ClassifyRetry, Idempotency};
use crate::driver::hedged::Hedged;
use crate::driver::{HedgedLoop, NoHook, ShedInto, ShedPolicy};
use crate::hedge::Hedging;
use crate::strategy::RetryStrategy;

/// [`RetryLayer`] with hedging: made by [`RetryLayer::hedge`], with the layer's strategy,
/// classifier, copy hook, shedding policy and declared idempotency.
///
/// A call whose request is idempotent (declared for the layer with
/// [`RetryLayer::idempotent`], or inferred from its HTTP method, RFC 9110 §9.2.2) is hedged: when
/// no copy in flight has answered within the delay, another copy of the request (made by the copy
/// hook: `Clone`, [`copy_requests_with`](RetryLayer::copy_requests_with), or a
/// [`BufferedRequest`](super::BufferedRequest)) is sent to a clone of the service, charged to the
/// scope as a retry; the first answer that ends the call wins and the other copies' futures are
/// dropped (an HTTP client closes their connections). Any other call (a `POST`, a request the
/// hook cannot copy) is retried exactly as under [`RetryLayer`], never hedged.
///
/// Each copy waits for its clone of the service to be ready;
/// [`poll_ready`](Service::poll_ready) asks the wrapped service. In adaptive mode a hedged
/// call's first send permit is awaited in its response future, not in `poll_ready`.
///
/// ```
/// use retry_core::hedge::Hedging;
/// use retry_core::tower::RetryLayer;
/// use retry_core::{RetryConfig, strategy_for};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tower::{ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let layer = RetryLayer::new(strategy_for(RetryConfig::default(), "docs-tower-hedge"))
///     .hedge(Hedging::after(Duration::from_millis(50)).unwrap());
/// let copies = Arc::new(AtomicU32::new(0));
/// let counted = copies.clone();
/// let service = ServiceBuilder::new().layer(layer).service_fn(move |_: http::Request<()>| {
///     let copy = counted.fetch_add(1, Ordering::SeqCst) + 1;
///     async move {
///         // The first copy lands on a slow replica; the hedge, 50 ms later, on a fast one.
///         let took = if copy == 1 { 2_000 } else { 20 };
///         tokio::time::sleep(Duration::from_millis(took)).await;
///         Ok::<_, std::io::Error>(http::Response::new(copy))
///     }
/// });
/// let started = tokio::time::Instant::now();
/// let response = service.oneshot(http::Request::get("/item").body(()).unwrap()).await.unwrap();
/// assert_eq!(*response.body(), 2);
/// assert_eq!(started.elapsed(), Duration::from_millis(70));
/// # }
/// ```
#[derive(Debug, Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
#[must_use = "a layer does nothing until it wraps a service: `.layer(service)` or `ServiceBuilder::layer`"]
pub struct HedgedRetryLayer<S, C, P, L> {
    retry: RetryLayer<S, C, P, L>,
    hedging: Hedging,
}

impl<S, C, P, L> RetryLayer<S, C, P, L> {
    /// Hedges the idempotent calls ([`hedge`](crate::hedge)): see [`HedgedRetryLayer`]. Set the
    /// other options first: they are kept.
    ///
    /// ```
    /// use retry_core::hedge::Hedging;
    /// use retry_core::{RetryConfig, StandardStrategy, tower::RetryLayer};
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default()))
    ///     .hedge(Hedging::at_percentile(95.0).unwrap());
    /// # let _ = layer;
    /// ```
    pub fn hedge(self, hedging: Hedging) -> HedgedRetryLayer<S, C, P, L> {
        HedgedRetryLayer {
            retry: self,
            hedging,
        }
    }
}

impl<S, C, P, L> HedgedRetryLayer<S, C, P, L> {
    /// The hedging of the layer's calls.
    pub fn hedging(&self) -> Hedging {
        self.hedging
    }
}

impl<Svc, S, C, P, L> Layer<Svc> for HedgedRetryLayer<S, C, P, L>
where
    S: RetryStrategy + Clone,
    C: Clone,
    P: Clone,
    L: ShedPolicy + Clone,
{
    type Service = HedgedRetryService<Svc, S, C, P, L>;

    fn layer(&self, inner: Svc) -> Self::Service {
        let (strategy, classifier, copy, shedding, idempotency) = self.retry.parts();
        HedgedRetryService {
            inner,
            shared: Arc::new(Shared {
                strategy: Arc::new(strategy.clone()),
                classifier: Arc::new(classifier.clone()),
                copy: copy.clone(),
                shedding: shedding.clone(),
                idempotency,
            }),
            hedging: self.hedging,
        }
    }
}

/// The settings of a hedged layer's calls: the strategy and the classifier shared by `Arc`, so
/// that a hedged call's loop holds them by value for two reference counts.
type HedgedShared<S, C, P, L> = Shared<Arc<S>, Arc<C>, P, L>;

/// A [`Service`] whose idempotent calls are hedged and every call retried: made by
/// [`HedgedRetryLayer`].
pub struct HedgedRetryService<Svc, S, C, P, L> {
    inner: Svc,
    shared: Arc<HedgedShared<S, C, P, L>>,
    hedging: Hedging,
}

impl<Svc, S, C, P, L> HedgedRetryService<Svc, S, C, P, L> {
    /// The wrapped service.
    pub fn get_ref(&self) -> &Svc {
        &self.inner
    }

    /// The strategy calls run under.
    pub fn strategy(&self) -> &S {
        &self.shared.strategy
    }
}

impl<Svc: Clone, S, C, P, L> Clone for HedgedRetryService<Svc, S, C, P, L> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
            hedging: self.hedging,
        }
    }
}

impl<Svc: Debug, S: Debug, C, P, L> Debug for HedgedRetryService<Svc, S, C, P, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HedgedRetryService")
            .field("inner", &self.inner)
            .field("strategy", &self.shared.strategy)
            .field("hedging", &self.hedging)
            .finish_non_exhaustive()
    }
}

impl<Svc, S, C, P, L, Req> Service<Req> for HedgedRetryService<Svc, S, C, P, L>
where
    Svc: Service<Req> + Clone,
    Svc::Error: Debug,
    Req: RequestInfo,
    S: RetryStrategy,
    C: ClassifyRetry<Svc::Response, Svc::Error>,
    P: CopyRequest<Req>,
    L: ShedInto<Svc::Error> + Clone,
{
    type Response = Svc::Response;
    type Error = Svc::Error;
    type Future = HedgedResponseFuture<Svc, Req, S, C, P, L>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        let idempotency = shared.idempotency.unwrap_or_else(|| request.idempotency());
        let mut copies = CopySender {
            shared: Arc::clone(&shared),
            service: self.inner.clone(),
            request: Some(request),
            next: None,
        };
        let hedged = idempotency == Idempotency::Idempotent
            && copies.request.as_ref().is_some_and(|request| {
                copies.next = shared.copy.copy_request(request);
                copies.next.is_some()
            });
        if !hedged {
            // Not idempotent, or not copyable: retried as under `RetryLayer`, never hedged.
            let token = shared.strategy.acquire_initial_token();
            let (service, request) = (copies.service, copies.request);
            let Some(request) = request else {
                unreachable!("retry_core: a request taken before it was sent")
            };
            let plain = ResponseFuture::unready(shared, service, request, token, idempotency);
            return HedgedResponseFuture {
                call: CallKind::Plain { future: plain },
            };
        }
        let call = HedgedLoop::new(
            Arc::clone(&shared.strategy),
            Arc::clone(&shared.classifier),
            NoHook,
            self.hedging,
        )
        .with_shedding(shared.shedding.clone());
        HedgedResponseFuture {
            call: CallKind::Hedged {
                future: Box::pin(Hedged::new(call, copies)),
            },
        }
    }
}

/// The hedged call of a [`HedgedRetryService`], boxed: the hedged path's one allocation.
type HedgedCall<Svc, Req, S, C, P, L> =
    Pin<Box<Hedged<Arc<S>, Arc<C>, NoHook, L, CopySender<Svc, Req, Arc<S>, Arc<C>, P, L>>>>;

pin_project! {
    /// The future of one call to a [`HedgedRetryService`]: a hedged call, or, for a request
    /// that is not idempotent or cannot be copied, [`RetryLayer`]'s own call. Resolves to the
    /// outcome that ended the call, unchanged. Dropping it drops every copy in flight.
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub struct HedgedResponseFuture<Svc, Req, S, C, P, L>
    where
        Svc: Service<Req>,
        Svc: Clone,
        Req: RequestInfo,
        S: RetryStrategy,
        P: CopyRequest<Req>,
        L: ShedPolicy,
    {
        #[pin]
        call: CallKind<Svc, Req, S, C, P, L>,
    }
}

pin_project! {
    #[project = CallKindProj]
    enum CallKind<Svc, Req, S, C, P, L>
    where
        Svc: Service<Req>,
        Svc: Clone,
        Req: RequestInfo,
        S: RetryStrategy,
        P: CopyRequest<Req>,
        L: ShedPolicy,
    {
        /// A hedged call.
        Hedged { future: HedgedCall<Svc, Req, S, C, P, L> },
        /// A call retried, never hedged.
        Plain { #[pin] future: ResponseFuture<Svc, Req, Arc<S>, Arc<C>, P, L> },
    }
}

impl<Svc, Req, S, C, P, L> Future for HedgedResponseFuture<Svc, Req, S, C, P, L>
where
    Svc: Service<Req> + Clone,
    Svc::Error: Debug,
    Req: RequestInfo,
    S: RetryStrategy,
    C: ClassifyRetry<Svc::Response, Svc::Error>,
    P: CopyRequest<Req>,
    L: ShedInto<Svc::Error>,
{
    type Output = Result<Svc::Response, Svc::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().call.project() {
            CallKindProj::Hedged { future } => future
                .as_mut()
                .poll(cx)
                .map(|(outcome, _stats, _linger)| outcome),
            CallKindProj::Plain { future } => future.poll(cx),
        }
    }
}

impl<Svc, Req, S, C, P, L> Debug for HedgedResponseFuture<Svc, Req, S, C, P, L>
where
    Svc: Service<Req> + Clone,
    Req: RequestInfo,
    S: RetryStrategy,
    P: CopyRequest<Req>,
    L: ShedPolicy,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.call {
            CallKind::Hedged { .. } => f.write_str("HedgedResponseFuture::Hedged"),
            CallKind::Plain { future } => f
                .debug_tuple("HedgedResponseFuture::Plain")
                .field(future)
                .finish(),
        }
    }
}
