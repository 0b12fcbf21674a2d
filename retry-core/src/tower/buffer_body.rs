//! Buffering streaming HTTP request bodies, so that a retry can send them again.

use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::Body;
use http_body_util::{BodyExt, Full, Limited};
use tower_layer::Layer;
use tower_service::Service;

/// The boxed error of [`BufferBody`] (tower's convention): the body's own error, the limit
/// exceeded ([`http_body_util::LengthLimitError`]), or the wrapped service's error.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An HTTP request whose body is in memory: `Clone`, so [`RetryLayer`](super::RetryLayer)'s
/// default [`CloneRequest`](super::CloneRequest) copies it for each retry (cloning the body
/// shares its bytes).
pub type BufferedRequest = http::Request<Full<Bytes>>;

/// Collects each request's body into memory, up to `limit` bytes, and passes the request on as
/// a [`BufferedRequest`]: put it above [`RetryLayer`](super::RetryLayer) when the body is a
/// stream that cannot be sent twice, such as a tonic `Channel`'s request bodies. A body longer
/// than `limit` fails the call with [`http_body_util::LengthLimitError`] before anything is
/// sent. Trailers of the request body are not kept.
///
/// ```
/// use bytes::Bytes;
/// use http_body_util::{BodyExt, StreamBody};
/// use retry_core::tower::{BufferBodyLayer, BufferedRequest};
/// use tower::{ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let service = ServiceBuilder::new()
///     .layer(BufferBodyLayer::new(1024))
///     .service_fn(|request: BufferedRequest| async move {
///         // A buffered body cannot fail: its error is `Infallible`.
///         request.into_body().collect().await.map(|body| body.to_bytes().len())
///     });
/// let chunks = ["hello ", "world"].map(|chunk| Ok::<_, std::io::Error>(http_body::Frame::data(Bytes::from(chunk))));
/// let request = http::Request::new(StreamBody::new(futures_util::stream::iter(chunks)));
/// assert_eq!(service.oneshot(request).await.unwrap(), 11);
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct BufferBodyLayer {
    limit: usize,
}

impl BufferBodyLayer {
    /// Buffers bodies of at most `limit` bytes.
    ///
    /// ```
    /// let layer = retry_core::tower::BufferBodyLayer::new(4 * 1024 * 1024);
    /// # let _ = layer;
    /// ```
    pub fn new(limit: usize) -> Self {
        Self { limit }
    }
}

impl<S> Layer<S> for BufferBodyLayer {
    type Service = BufferBody<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BufferBody {
            inner,
            limit: self.limit,
        }
    }
}

/// The service [`BufferBodyLayer`] makes.
#[derive(Debug, Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct BufferBody<S> {
    inner: S,
    limit: usize,
}

impl<S, B> Service<http::Request<B>> for BufferBody<S>
where
    S: Service<BufferedRequest> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    /// Boxed: collecting a body allocates anyway, and the future is an `async` block.
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        // Call the service that was made ready; keep the clone for the next call.
        let clone = self.inner.clone();
        let mut ready = mem::replace(&mut self.inner, clone);
        let limit = self.limit;
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let bytes = Limited::new(body, limit).collect().await?.to_bytes();
            let request = http::Request::from_parts(parts, Full::new(bytes));
            ready.call(request).await.map_err(Into::into)
        })
    }
}
