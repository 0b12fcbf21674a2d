//! tower: [`RetryLayer`] retries any [`Service`](tower_service::Service) under a strategy, and
//! [`BufferBodyLayer`] makes streaming HTTP request bodies replayable.
//!
//! The layer runs what `#[retryable]` and [`retry`](crate::retry) run: the same
//! [`RetryConfig`](crate::RetryConfig), strategies, [`Scope`](crate::Scope)s (a layer built with
//! [`strategy_for`](crate::strategy_for)`(config, "name")` shares the quota and the rate limiter
//! of every `#[retryable(scope = "name")]` fn) and classifiers, which see responses as well as
//! errors (an HTTP status and its `Retry-After`, a gRPC trailers-only status).
//!
//! In adaptive mode a call's first send permit is awaited in
//! [`poll_ready`](tower_service::Service::poll_ready), so that a throttled client applies
//! back-pressure to whatever drives the service (the smithy-rs RFC "Implementing Adaptive Retry
//! Behavior" gates sending on tower's readiness); a retry's permit is awaited in the response
//! future, after its backoff.

mod buffer_body;
mod copy_request;
mod future;
mod layer;
mod permit_wait;
mod service;
mod shared;
mod shed_policy;

pub use buffer_body::{BoxError, BufferBody, BufferBodyLayer, BufferedRequest};
pub use copy_request::{CloneRequest, CopyRequest};
pub use future::ResponseFuture;
pub use layer::RetryLayer;
pub use service::RetryService;
pub use shed_policy::{NeverShed, ShedInto, ShedLoad, ShedPolicy};
