//! Retries done right for async Rust: exponential backoff with jitter, a retry quota that stops
//! retry storms, client-side adaptive rate limiting after throttling, and classification of
//! outcomes as retryable or not — the behavior the AWS SDKs converged on, for any async client.
//!
//! # One attribute, one derive
//!
//! `#[derive(RetryInfo)]` lets an error type say which of its values are worth retrying;
//! `#[retryable]` turns an `async fn` returning `Result` into a retry loop over one attempt — its
//! body:
//!
//! ```
//! use retry_core::{RetryInfo, retryable};
//! use std::time::Duration;
//!
//! #[derive(Debug, thiserror::Error, RetryInfo)]
//! enum StoreError {
//!     #[error("slow down")]
//!     #[retry(throttling)] // retried, never sooner than `retry_after`
//!     Throttled {
//!         #[retry(after)]
//!         retry_after: Option<Duration>,
//!     },
//!     #[error("unavailable")]
//!     #[retry(transient)] // retried
//!     Unavailable,
//!     #[error("not found")]
//!     #[retry(fault = "client")] // never retried
//!     NotFound,
//! }
//!
//! struct Store {
//!     fails: std::sync::atomic::AtomicU32,
//! }
//!
//! impl Store {
//!     #[retryable(max_attempts = 5, mode = "adaptive")]
//!     async fn get(&self, key: &str) -> Result<String, StoreError> {
//!         // One attempt: `?` and `return` end the attempt, not the call.
//!         if self.fails.fetch_sub(1, std::sync::atomic::Ordering::Relaxed) > 0 {
//!             return Err(StoreError::Unavailable);
//!         }
//!         Ok(format!("value of {key}"))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let store = Store { fails: 2.into() };
//! assert_eq!(store.get("a").await.unwrap(), "value of a"); // on the third attempt
//! # }
//! ```
//!
//! The attribute's arguments (`max_attempts`, `preset`, `mode`, backoffs, `timeout`, `scope`,
//! `strategy`, `classifier`, `on_retry`, ...) are listed on [`retryable`]; the derive's keys on
//! [`RetryInfo`](macro@RetryInfo). Both are checked at compile time, with errors at the token to
//! fix.
//!
//! # Without macros
//!
//! [`retry`] and [`Retry`] run a closure the same way, under a strategy you build and keep:
//!
//! ```
//! use retry_core::{RetryConfig, StandardStrategy, retry};
//! use std::io;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(4).build().unwrap());
//! let mut failures_left = 2;
//! let value = retry(&strategy, || {
//!     let fail = failures_left > 0;
//!     failures_left -= 1;
//!     async move {
//!         if fail {
//!             Err(io::Error::from(io::ErrorKind::ConnectionReset))
//!         } else {
//!             Ok(42)
//!         }
//!     }
//! })
//! .await;
//! assert_eq!(value.unwrap(), 42);
//! # }
//! ```
//!
//! # The pieces
//!
//! One concept per module:
//! * [`RetryInfo`]: errors describe their own retryability (derive it with feature `macros`);
//! * classifiers ([`ClassifyRetry`], [`ClassifierChain`] and the built-ins) turn an outcome into
//!   a [`RetryAction`];
//! * [`RetryStrategy`] ([`StandardStrategy`], [`AdaptiveStrategy`]) decides whether and when to
//!   retry, from a [`RetryConfig`], with a [`RetryQuota`] and an
//!   [`adaptive::ClientRateLimiter`] shared through a [`Scope`];
//! * [`retry`], [`Retry`] and [`RetryLoop`] drive an operation; `#[retryable]` expands to the same
//!   loop.
//!
//! Time is read through a [`Clock`] ([`TokioClock`] by default), so tests and simulations run the
//! real strategies in virtual time.
//!
//! # Features
//!
//! * `macros` (default): `#[retryable]` and `#[derive(RetryInfo)]`.
//! * `http`: `HttpStatusClassifier` and `parse_retry_after`, on the `http` crate's types;
//!   `HttpStatusError`, `RetryAfter` and `CheckStatus` (an error status as a retryable error).
//! * `reqwest`: `RetryInfo` for `reqwest::Error`, `CheckStatus` for `reqwest::Response`.
//! * `tower`: `tower::RetryLayer`, retries for any tower `Service`, and
//!   `tower::BufferBodyLayer` for request bodies that must be buffered to be sent again; the
//!   classifiers know the errors of tower's `TimeoutLayer` and `LoadShedLayer`.
//! * `hyper-util`: the classifiers know the connect errors of hyper-util's legacy client.
//! * `tonic`: `RetryInfo` for `tonic::Status` (gRFC A6, `grpc-retry-pushback-ms`) and
//!   `GrpcStatusClassifier` for a `Channel` under `RetryLayer`.
//! * `rand`: `RngRandom`, any `rand` generator as the jitter's randomness.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adaptive;
mod backoff;
mod classify;
mod clock;
mod config;
mod driver;
#[cfg(feature = "fleet")]
#[cfg_attr(docsrs, doc(cfg(feature = "fleet")))]
pub mod fleet;
mod info;
mod integrations;
mod jitter;
mod name;
mod observe;
mod quota;
mod random;
mod request_rate;
mod scope;
mod strategy;
mod sync;
mod traffic_quota;

/// Support for the code the macros generate. Named after the crate's version: `retry-macros`
/// names it after its own, so macros of another version than this runtime do not compile.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_0_1_0;

pub use adaptive::{LoadShed, ShedReason};
pub use backoff::{Backoff, ExponentialBackoff};
pub use classify::{
    ClassifierChain, ClassifierPriority, ClassifyRetry, ErrorCodeClassifier, ErrorKind,
    FnClassifier, ProvideErrorCode, RetryAction, RetryIf, RetryInfoClassifier, RetryReason,
    TransientErrorClassifier,
};
pub use classify::{DynErrorClassifier, RetryDescription};
#[cfg(feature = "http")]
pub use classify::{HttpStatusClassifier, parse_retry_after};
pub use clock::{Clock, ManualClock, SharedClock, TokioClock};
pub use config::{
    ConfigError, DurationParseError, Quota, QuotaParseError, RetryConfig, RetryConfigBuilder,
    RetryMode, RetryModeParseError, RetryPreset, RetryPresetParseError, defaults, parse_duration,
};
pub use driver::{
    AttemptLimit, AttemptTimeout, Linger, NoAttemptTimeout, NoHook, OnRetry, Ready, Retry,
    RetryEvent, RetryLoop, TryReady, retry, retry_or_shed, with_attempt_timeout,
};
pub use driver::{Sleeper, ThreadSleeper, retry_blocking, with_sleeper};
pub use info::{Fault, RetryInfo, RetrySafety};
#[cfg(feature = "tonic")]
pub use integrations::GrpcStatusClassifier;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use integrations::tower;
#[cfg(feature = "http")]
pub use integrations::{CheckStatus, HttpStatusError, RetryAfter};
pub use jitter::{Jitter, JitterParseError};
pub use observe::ScopeStats;
pub use quota::RetryQuota;
#[cfg(feature = "rand")]
pub use random::RngRandom;
pub use random::{FixedRandom, RandomSource, SeededRandom, ThreadRandom};
pub use scope::Scope;
pub use strategy::{
    AdaptiveStrategy, ConfiguredStrategy, RetryError, RetryStrategy, RetryToken, SendPermit,
    StandardStrategy, StrategyBuilder, strategy_for,
};

/// `#[retryable(...)]`: retries an `async fn` (or a blocking `fn`) returning a `Result` under a
/// strategy.
#[cfg(feature = "macros")]
pub use retry_macros::retryable;

/// `#[derive(RetryInfo)]`: an error type describes its retryability with `#[retry(...)]`.
#[cfg(feature = "macros")]
pub use retry_macros::RetryInfo;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
