//! Retries done right for async Rust: exponential backoff with jitter, a retry quota that stops
//! retry storms, client-side adaptive rate limiting after throttling, and classification of
//! outcomes as retryable or not — the behavior the AWS SDKs converged on, for any async client.
//!
//! ```
//! use retry_core::{RetryConfig, RetryInfo, StandardStrategy, retry};
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
//! The pieces, one concept per module:
//! * [`RetryInfo`]: errors describe their own retryability (derive it with feature `macros`);
//! * classifiers ([`ClassifyRetry`], [`ClassifierChain`] and the built-ins) turn an outcome into
//!   a [`RetryAction`];
//! * [`RetryStrategy`] ([`StandardStrategy`], [`AdaptiveStrategy`]) decides whether and when to
//!   retry, from a [`RetryConfig`], with a [`RetryQuota`] and an
//!   [`adaptive::ClientRateLimiter`] shared through a [`Scope`];
//! * [`retry`] and [`Retry`] drive an operation; `#[retryable]` does the same for an `async fn`.
//!
//! Time is read through a [`Clock`] ([`TokioClock`] by default), so tests and simulations run the
//! real strategies in virtual time.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adaptive;
mod backoff;
mod classify;
mod clock;
mod config;
mod driver;
mod info;
mod jitter;
mod observe;
mod quota;
mod random;
mod request_rate;
mod scope;
mod strategy;
mod sync;
mod traffic_quota;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use backoff::{Backoff, ExponentialBackoff};
pub use classify::{
    ClassifierChain, ClassifierPriority, ClassifyRetry, ErrorCodeClassifier, ErrorKind,
    FnClassifier, ProvideErrorCode, RetryAction, RetryIf, RetryInfoClassifier, RetryReason,
    TransientErrorClassifier,
};
#[cfg(feature = "http")]
pub use classify::{HttpStatusClassifier, parse_retry_after};
pub use clock::{Clock, ManualClock, SharedClock, TokioClock};
pub use config::{
    ConfigError, DurationParseError, RetryConfig, RetryConfigBuilder, RetryMode,
    RetryModeParseError, RetryPreset, RetryPresetParseError, defaults, parse_duration,
};
pub use driver::{
    AttemptTimeout, NoAttemptTimeout, NoHook, OnRetry, Ready, Retry, RetryEvent, RetryLoop, retry,
    with_attempt_timeout,
};
pub use info::{Fault, RetryInfo, RetrySafety};
pub use jitter::{Jitter, JitterParseError};
pub use observe::ScopeStats;
pub use quota::RetryQuota;
pub use random::{FixedRandom, RandomSource, SeededRandom, ThreadRandom};
pub use scope::Scope;
pub use strategy::{
    AdaptiveStrategy, ConfiguredStrategy, RetryError, RetryStrategy, RetryToken, SendPermit,
    StandardStrategy, StrategyBuilder, strategy_for,
};

/// `#[retryable(...)]`: retries an `async fn` returning `Result` under a strategy.
#[cfg(feature = "macros")]
pub use retry_macros::retryable;

/// `#[derive(RetryInfo)]`: an error type describes its retryability with `#[retry(...)]`.
#[cfg(feature = "macros")]
pub use retry_macros::RetryInfo;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
