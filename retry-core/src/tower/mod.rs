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
//!
//! Idempotency: over `http` requests the layer infers it from the method (RFC 9110 §9.2.2: a POST
//! that timed out or whose connection was reset after it was sent is not sent again, a PUT is),
//! through [`RequestInfo`], unless [`RetryLayer::idempotent`] declares it. A refused connection is
//! retried whatever the method, a 4xx response other than 408 and 429 never. A retry runs in its `retry.attempt` span; with feature
//! `attempt-context`, each attempt runs in its context (`attempt::current()`) and an
//! `http::Request` carries its [`Attempt`](crate::attempt::Attempt) in its extensions.
//!
//! Hedging ([`hedge`](crate::hedge)): [`RetryLayer::hedge`] makes a [`HedgedRetryLayer`], which
//! sends another copy of an idempotent request (declared, or inferred from its method) when no
//! copy has answered within the delay, charged to the scope like a retry; the first answer wins
//! and the other copies' futures are dropped. Other requests are retried as by [`RetryLayer`].
//!
//! Load shedding is opt-in, as for `#[retryable(shed = true)]` and
//! [`Retry::shed_load`](crate::Retry::shed_load): with [`RetryLayer::shed_load`] a call whose first
//! attempt's permit is expected after its deadline or later than `max_wait` fails at once with
//! `Svc::Error::from(`[`LoadShed`](crate::LoadShed)`)`, the wrapped service never called. As with
//! tower's own load-shed layer, `poll_ready` then reports ready and the call's response future
//! resolves to the refusal. The policy is a type parameter (the drivers'
//! [`ShedPolicy`](crate::driver::ShedPolicy): the default [`NeverShed`](crate::driver::NeverShed),
//! or [`ShedLoad`](crate::driver::ShedLoad)): a layer that does not shed asks nothing of the
//! service's error type, and its first attempt is always made.

mod buffer_body;
mod copy_request;
mod future;
mod hedged;
mod hedged_copies;
mod layer;
mod layer_errors;
mod permit_wait;
mod request_info;
mod service;
mod shared;

pub use buffer_body::{BoxError, BufferBody, BufferBodyLayer, BufferedRequest};
pub use copy_request::{CloneRequest, CopyRequest};
pub use future::ResponseFuture;
pub use hedged::{HedgedResponseFuture, HedgedRetryLayer, HedgedRetryService};
pub use layer::RetryLayer;
pub use request_info::RequestInfo;
pub use service::RetryService;
