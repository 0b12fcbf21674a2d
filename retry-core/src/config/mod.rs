//! Configuration: the validated settings a strategy is built from.

mod builder;
pub(crate) mod defaults;
mod duration;
mod env;
pub(crate) mod error;
pub(crate) mod mode;
pub(crate) mod preset;
pub(crate) mod quota;
mod quota_settings;
pub(crate) mod retry_config;

#[cfg(test)]
pub(crate) use builder::MIN_REFILL_PER_SECOND;
pub use builder::RetryConfigBuilder;
pub(crate) use builder::is_valid_refill;
pub use duration::{DurationParseError, parse_duration};
pub(crate) use error::ConfigError;
pub(crate) use mode::RetryMode;
pub(crate) use quota::Quota;
pub(crate) use retry_config::RetryConfig;

pub use crate::name::ValueParseError;
