//! Configuration: the validated settings a strategy is built from.

mod builder;
pub(crate) mod defaults;
mod duration;
mod env;
mod error;
mod mode;
mod preset;
mod quota;
mod quota_settings;
mod retry_config;

#[cfg(test)]
pub(crate) use builder::MIN_REFILL_PER_SECOND;
pub use builder::RetryConfigBuilder;
pub(crate) use builder::is_valid_refill;
pub use duration::{DurationParseError, parse_duration};
pub use error::ConfigError;
pub use mode::RetryMode;
pub use preset::RetryPreset;
pub use quota::Quota;
pub use retry_config::RetryConfig;

pub use crate::name::ValueParseError;
