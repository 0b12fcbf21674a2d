//! Support for the code `#[retryable]` generates. Not public API: no stability guarantees.

pub use std::ops::ControlFlow;
pub use std::sync::LazyLock;
pub use std::time::Duration;

pub use crate::{
    NoHook, RetryConfig, RetryConfigBuilder, RetryIf, RetryInfoClassifier, RetryLoop, RetryMode,
    RetryStrategy, with_attempt_timeout,
};

/// A function's default strategy, built once on first call.
pub type FnStrategy = LazyLock<Box<dyn RetryStrategy>>;

/// The strategy of a `#[retryable]` function without `strategy = ...`: its arguments applied to
/// the default configuration, in the process-wide scope `scope`. The macro checked every value
/// at compile time; should the runtime still reject them, the error is logged and the defaults
/// are used rather than panicking in a user's call.
pub fn default_strategy(
    scope: &str,
    configure: fn(RetryConfigBuilder) -> RetryConfigBuilder,
) -> Box<dyn RetryStrategy> {
    let config = configure(RetryConfig::builder()).build().unwrap_or_else(|error| {
        tracing::error!(target: "retry_core", scope, %error, "invalid #[retryable] configuration: using the defaults");
        RetryConfig::default()
    });
    crate::strategy_for(config, scope)
}
