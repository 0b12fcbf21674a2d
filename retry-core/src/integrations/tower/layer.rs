//! The layer that wraps a service in [`RetryService`].

use std::sync::Arc;

use tower_layer::Layer;

use super::shared::Shared;
use super::{CloneRequest, RetryService};
use crate::{RetryInfoClassifier, RetryStrategy};

/// Retries calls to the wrapped [`Service`](tower_service::Service) under a
/// [`RetryStrategy`](crate::RetryStrategy): the tower form of `#[retryable]`.
///
/// * the strategy: any strategy, e.g. [`strategy_for`](crate::strategy_for)`(config, "scope")`
///   to share a process-wide scope with `#[retryable(scope = "scope")]` fns;
/// * the classifier (default [`RetryInfoClassifier`], for errors that implement
///   [`RetryInfo`](crate::RetryInfo)) sees the whole outcome: for HTTP, chain
///   [`HttpStatusClassifier`](crate::HttpStatusClassifier) (responses, with `Retry-After`) with
///   [`TransientErrorClassifier`](crate::TransientErrorClassifier) (connection errors);
/// * the requests are copied for retries with `Clone` (default [`CloneRequest`]), or with the
///   hook given to [`copy_requests_with`](Self::copy_requests_with).
///
/// The call returns the last attempt's own outcome, unchanged. For a per-attempt timeout, put
/// tower's `TimeoutLayer` under this layer.
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
///                 Err(io::Error::from(io::ErrorKind::ConnectionReset))
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
pub struct RetryLayer<S, C = RetryInfoClassifier, P = CloneRequest> {
    strategy: S,
    classifier: C,
    copy: P,
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
        }
    }
}

impl<S, C, P> RetryLayer<S, C, P> {
    /// Classifies outcomes with `classifier`: anything implementing
    /// [`ClassifyRetry`](crate::ClassifyRetry)`<Response, Error>` of the wrapped service.
    ///
    /// ```
    /// use retry_core::{ClassifierChain, HttpStatusClassifier, RetryConfig, StandardStrategy,
    ///     TransientErrorClassifier, tower::RetryLayer};
    ///
    /// let http = ClassifierChain::<http::Response<()>, std::io::Error>::new()
    ///     .with(HttpStatusClassifier::new())
    ///     .with(TransientErrorClassifier);
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default())).classifier(http);
    /// # let _ = layer;
    /// ```
    pub fn classifier<C2>(self, classifier: C2) -> RetryLayer<S, C2, P> {
        RetryLayer {
            strategy: self.strategy,
            classifier,
            copy: self.copy,
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
    pub fn copy_requests_with<P2>(self, copy: P2) -> RetryLayer<S, C, P2> {
        RetryLayer {
            strategy: self.strategy,
            classifier: self.classifier,
            copy,
        }
    }

    /// The strategy calls run under.
    ///
    /// ```
    /// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy, tower::RetryLayer};
    /// let layer = RetryLayer::new(StandardStrategy::new(RetryConfig::default()));
    /// // A new scope of the default holds one whole call's retries: 2 × 14 tokens.
    /// assert_eq!(layer.strategy().scope().quota().level(), 28);
    /// ```
    pub fn strategy(&self) -> &S {
        &self.strategy
    }
}

impl<Svc, S, C, P> Layer<Svc> for RetryLayer<S, C, P>
where
    S: RetryStrategy + Clone,
    C: Clone,
    P: Clone,
{
    type Service = RetryService<Svc, S, C, P>;

    fn layer(&self, inner: Svc) -> Self::Service {
        RetryService::from_shared(
            inner,
            Arc::new(Shared {
                strategy: self.strategy.clone(),
                classifier: self.classifier.clone(),
                copy: self.copy.clone(),
            }),
        )
    }
}
