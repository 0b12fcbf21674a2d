//! The layer that wraps a service in [`RetryService`].

use std::sync::Arc;

use tower_layer::Layer;

use super::shared::Shared;
use super::{CloneRequest, RetryService};
use crate::classify::{Idempotency, RetryInfoClassifier};
use crate::driver::{NeverShed, ShedLoad, ShedPolicy};
use crate::strategy::RetryStrategy;

/// Retries calls to the wrapped [`Service`](tower_service::Service) under a
/// [`RetryStrategy`](crate::RetryStrategy): the tower form of `#[retryable]`.
///
/// * the strategy: any strategy, e.g. [`strategy_for`](crate::strategy_for)`(config, "scope")`
///   to share a process-wide scope with `#[retryable(scope = "scope")]` fns;
/// * the classifier (default [`RetryInfoClassifier`], for errors that implement
///   [`RetryInfo`](crate::RetryInfo)) sees the whole outcome: for HTTP, chain
///   [`HttpStatusClassifier`](crate::http::HttpStatusClassifier) (responses, with `Retry-After`)
///   with [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier) (connection
///   errors), or with [`DynErrorClassifier`](crate::classify::DynErrorClassifier) when the error is
///   a `BoxError`;
/// * the requests are copied for retries with `Clone` (default [`CloneRequest`]), or with the
///   hook given to [`copy_requests_with`](Self::copy_requests_with);
/// * a throttled first attempt waits for its send permit and is always made (default
///   [`NeverShed`](crate::driver::NeverShed)), or, with [`shed_load`](Self::shed_load), fails at
///   once with `Svc::Error::from(LoadShed)` when its permit is expected too late for an answer
///   before the call's deadline or later than `max_wait`.
///
/// The call returns the last attempt's own outcome, unchanged.
///
/// For a per-attempt timeout, put tower's `TimeoutLayer` under this layer. Its error is a
/// `BoxError` (tower's `Elapsed`, or the service's own error boxed), which
/// [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier) cannot take: classify it
/// with [`DynErrorClassifier`](crate::classify::DynErrorClassifier), which retries a cut attempt as
/// a timeout and finds the service's error inside the box (its table lists every error it knows:
/// with feature `hyper-util`, hyper-util's connect errors; tower's `Overloaded`, never retried):
///
/// ```
/// use retry_core::tower::{BoxError, RetryLayer};
/// use retry_core::classify::{ClassifierChain, DynErrorClassifier};
/// use retry_core::http::HttpStatusClassifier;
/// use retry_core::{RetryConfig, strategy_for};
/// use std::time::Duration;
/// use tower::{ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let classifier = ClassifierChain::<http::Response<&str>, BoxError>::new()
///     .with(HttpStatusClassifier::new())
///     .with(DynErrorClassifier);
/// let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
/// let counted = calls.clone();
/// let service = ServiceBuilder::new()
///     .layer(RetryLayer::new(strategy_for(RetryConfig::default(), "docs-timeout")).classifier(classifier))
///     .timeout(Duration::from_secs(1)) // each attempt
///     .service_fn(move |_: ()| {
///         let first = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
///         async move {
///             if first {
///                 std::future::pending::<()>().await; // the first answer never comes
///             }
///             Ok::<_, BoxError>(http::Response::new("fresh"))
///         }
///     });
/// let response = service.oneshot(()).await.unwrap();
/// assert_eq!(*response.body(), "fresh");
/// assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
/// # }
/// ```
///
/// ```
/// use retry_core::tower::RetryLayer;
/// use retry_core::{RetryConfig, strategy_for};
/// use std::io;
/// use tower::{Service, ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let config = RetryConfig::builder().max_attempts(3).build().unwrap();
/// let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
/// let counted = calls.clone();
/// let mut service = ServiceBuilder::new()
///     .layer(RetryLayer::new(strategy_for(config, "docs-tower-layer")))
///     .service_fn(move |name: &'static str| {
///         let attempt = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
///         async move {
///             if attempt < 3 {
///                 Err(io::Error::from(io::ErrorKind::ConnectionRefused))
///             } else {
///                 Ok(format!("hello, {name}"))
///             }
///         }
///     });
/// let reply = service.ready().await.unwrap().call("tower").await.unwrap();
/// assert_eq!(reply, "hello, tower");
/// assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 3);
/// # }
/// ```
#[derive(Debug, Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
#[must_use = "a layer does nothing until it wraps a service: `.layer(service)` or `ServiceBuilder::layer`"]
pub struct RetryLayer<S, C = RetryInfoClassifier, P = CloneRequest, L = NeverShed> {
    strategy: S,
    classifier: C,
    copy: P,
    shedding: L,
    idempotency: Option<Idempotency>,
}

impl<S> RetryLayer<S> {
    /// Retries under `strategy`, classifying errors by their [`RetryInfo`](crate::RetryInfo)
    /// and copying requests with `Clone`.
    ///
    /// ```
    /// use retry_core::{RetryConfig, StandardStrategy, tower::RetryLayer};
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default()));
    /// # let _ = layer;
    /// ```
    pub fn new(strategy: S) -> Self {
        Self {
            strategy,
            classifier: RetryInfoClassifier,
            copy: CloneRequest,
            shedding: NeverShed,
            idempotency: None,
        }
    }
}

impl<S, C, P, L> RetryLayer<S, C, P, L> {
    /// Classifies outcomes with `classifier`: anything implementing
    /// [`ClassifyRetry`](crate::ClassifyRetry)`<Response, Error>` of the wrapped service.
    ///
    /// ```
    /// use retry_core::classify::{ClassifierChain, TransientErrorClassifier};
    /// use retry_core::http::HttpStatusClassifier;
    /// use retry_core::{RetryConfig, StandardStrategy, tower::RetryLayer};
    ///
    /// let http = ClassifierChain::<http::Response<()>, std::io::Error>::new()
    ///     .with(HttpStatusClassifier::new())
    ///     .with(TransientErrorClassifier);
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default())).classifier(http);
    /// # let _ = layer;
    /// ```
    pub fn classifier<C2>(self, classifier: C2) -> RetryLayer<S, C2, P, L> {
        RetryLayer {
            strategy: self.strategy,
            classifier,
            copy: self.copy,
            shedding: self.shedding,
            idempotency: self.idempotency,
        }
    }

    /// Copies requests for retries with `copy` (a [`CopyRequest`](super::CopyRequest), e.g. a
    /// closure `Fn(&Req) -> Option<Req>`): for requests that are not `Clone`, or whose body
    /// must be rebuilt. A `None` from it leaves that call without retries.
    ///
    /// ```
    /// use retry_core::{RetryConfig, StandardStrategy, tower::RetryLayer};
    ///
    /// // A request body that is a file path: each attempt opens it again.
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default()))
    ///     .copy_requests_with(|request: &http::Request<std::path::PathBuf>| {
    ///         let mut copy = http::Request::new(request.body().clone());
    ///         *copy.method_mut() = request.method().clone();
    ///         *copy.uri_mut() = request.uri().clone();
    ///         *copy.headers_mut() = request.headers().clone();
    ///         Some(copy)
    ///     });
    /// # let _ = layer;
    /// ```
    pub fn copy_requests_with<P2>(self, copy: P2) -> RetryLayer<S, C, P2, L> {
        RetryLayer {
            strategy: self.strategy,
            classifier: self.classifier,
            copy,
            shedding: self.shedding,
            idempotency: self.idempotency,
        }
    }

    /// Sheds load rather than queue past the deadline (adaptive mode): a call whose first
    /// attempt's send permit is expected too late for an answer before the call's deadline
    /// ([`RetryConfig::timeout`](crate::RetryConfig::timeout), less the time the scope's answers
    /// take: see [`AdaptiveStrategy`](crate::AdaptiveStrategy)) or later than `max_wait` fails
    /// at once with `Svc::Error::from(LoadShed)`, and the
    /// wrapped service never sees it. The strategy is asked before the first attempt waits for
    /// its permit and again after each wait; a shed call's token is abandoned (its place in the
    /// rate limiter's line given up) and counted as rate limited.
    ///
    /// Like tower's own load-shed layer, the service reports itself ready when it sheds (so
    /// that whatever drives it calls it), and the call's response future resolves to the
    /// refusal: [`poll_ready`](tower_service::Service::poll_ready) fails only when the wrapped
    /// service does. Retries are not shed: their waits are bounded by the strategy. Without
    /// this opt-in the first attempt is always made, and the service's error needs no
    /// `From<LoadShed>`.
    ///
    /// ```
    /// use retry_core::tower::RetryLayer;
    /// use retry_core::{AdaptiveStrategy, ErrorKind, LoadShed, RetryConfig, RetryInfo, RetryReason, RetrySafety, RetryStrategy};
    /// use retry_core::adaptive::ShedReason;
    /// use std::time::Duration;
    /// use tower::{ServiceBuilder, ServiceExt};
    ///
    /// #[derive(Debug)]
    /// enum Error {
    ///     Shed(LoadShed),
    /// }
    /// impl From<LoadShed> for Error {
    ///     fn from(shed: LoadShed) -> Self {
    ///         Error::Shed(shed)
    ///     }
    /// }
    /// impl RetryInfo for Error {
    ///     fn retry_safety(&self) -> RetrySafety {
    ///         RetrySafety::No // refused locally: retrying it would only queue it
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let config = RetryConfig::builder().timeout(Duration::from_secs(1)).build().unwrap();
    /// let strategy = AdaptiveStrategy::new(config);
    /// // A throttle switches the rate limiter on: a new call's permit is now 2 s away.
    /// let token = strategy.acquire_initial_token();
    /// let retry = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling));
    /// # if let Ok(retry) = retry { strategy.abandon(retry); }
    ///
    /// let service = ServiceBuilder::new()
    ///     .layer(RetryLayer::new(strategy).shed_load())
    ///     .service_fn(|_: ()| async { Ok::<_, Error>("sent") });
    /// // Its answer would come after the 1 s deadline: refused at once, nothing sent.
    /// let Err(Error::Shed(shed)) = service.oneshot(()).await else { panic!("not shed") };
    /// assert_eq!(shed.reason(), ShedReason::Deadline);
    /// # }
    /// ```
    pub fn shed_load(self) -> RetryLayer<S, C, P, ShedLoad> {
        RetryLayer {
            strategy: self.strategy,
            classifier: self.classifier,
            copy: self.copy,
            shedding: ShedLoad,
            idempotency: self.idempotency,
        }
    }

    /// Declares every call idempotent (`true`) or not (`false`), whatever the requests say: an
    /// error that may have reached the server (a `TimeoutLayer` cut, a connection lost
    /// mid-exchange) is then retried, or never. Without it each request says its own
    /// ([`RequestInfo`](super::RequestInfo)): an `http::Request` as its method is (RFC 9110
    /// §9.2.2).
    ///
    /// ```
    /// use retry_core::{RetryConfig, StandardStrategy, tower::RetryLayer};
    /// // Every operation of this service is idempotent, whatever its HTTP method (PUT-like POSTs).
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default())).idempotent(true);
    /// # let _ = layer;
    /// ```
    pub fn idempotent(self, idempotent: bool) -> Self {
        self.idempotency(Idempotency::declared(idempotent))
    }

    /// Declares every call's [`Idempotency`], whatever the requests say;
    /// [`Idempotency::Undeclared`] turns the inference from the method off (errors that may have
    /// reached the server are retried when the server is at fault, as before).
    ///
    /// ```
    /// use retry_core::classify::Idempotency;
    /// use retry_core::{RetryConfig, StandardStrategy, tower::RetryLayer};
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default()))
    ///     .idempotency(Idempotency::Undeclared);
    /// # let _ = layer;
    /// ```
    pub fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = Some(idempotency);
        self
    }

    /// The strategy calls run under.
    pub fn strategy(&self) -> &S {
        &self.strategy
    }

    /// The layer's settings, for the hedged layer that wraps it.
    pub(super) fn parts(&self) -> (&S, &C, &P, &L, Option<Idempotency>) {
        (
            &self.strategy,
            &self.classifier,
            &self.copy,
            &self.shedding,
            self.idempotency,
        )
    }
}

impl<Svc, S, C, P, L> Layer<Svc> for RetryLayer<S, C, P, L>
where
    S: RetryStrategy + Clone,
    C: Clone,
    P: Clone,
    L: ShedPolicy + Clone,
{
    type Service = RetryService<Svc, S, C, P, L>;

    fn layer(&self, inner: Svc) -> Self::Service {
        RetryService::from_shared(
            inner,
            Arc::new(Shared {
                strategy: self.strategy.clone(),
                classifier: self.classifier.clone(),
                copy: self.copy.clone(),
                shedding: self.shedding.clone(),
                idempotency: self.idempotency,
            }),
        )
    }
}
