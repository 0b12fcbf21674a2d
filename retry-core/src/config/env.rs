//! Reading a configuration from environment variables.

use super::{ConfigError, Quota, RetryConfig, RetryConfigBuilder, RetryMode, parse_duration};
use crate::backoff::Jitter;

/// The variables [`RetryConfig::from_env`] reads, in the order it reads them.
pub const ENV_VARIABLES: [&str; 8] = [
    "RETRY_MODE",
    "RETRY_MAX_ATTEMPTS",
    "RETRY_INITIAL_BACKOFF",
    "RETRY_MAX_BACKOFF",
    "RETRY_JITTER",
    "RETRY_TIMEOUT",
    "RETRY_QUOTA",
    "RETRY_QUOTA_CAPACITY",
];

impl RetryConfig {
    /// The default configuration with the settings found in the environment:
    /// `RETRY_MODE` (`standard` / `adaptive`), `RETRY_MAX_ATTEMPTS`, `RETRY_INITIAL_BACKOFF`,
    /// `RETRY_MAX_BACKOFF`, `RETRY_JITTER`, `RETRY_TIMEOUT` (durations such as `250ms`),
    /// `RETRY_QUOTA` (`off`, `traffic` or a number of tokens: see
    /// [`RetryConfigBuilder::quota`]) and `RETRY_QUOTA_CAPACITY`. Unset or empty variables keep
    /// the default. An invalid value is an error naming the variable.
    ///
    /// ```
    /// let config = retry_core::RetryConfig::from_env()?;
    /// # let _ = config;
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn from_env() -> Result<RetryConfig, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`from_env`](Self::from_env), reading variables through `lookup`: for tests, and
    /// for settings kept elsewhere (a profile file, a map).
    ///
    /// ```
    /// use retry_core::{RetryConfig, RetryMode};
    ///
    /// let config = RetryConfig::from_lookup(|name| match name {
    ///     "RETRY_MODE" => Some("Adaptive".into()),
    ///     "RETRY_MAX_ATTEMPTS" => Some("5".into()),
    ///     _ => None,
    /// })?;
    /// assert_eq!(config.mode(), RetryMode::Adaptive);
    /// assert_eq!(config.max_attempts(), 5);
    ///
    /// let error = RetryConfig::from_lookup(|name| (name == "RETRY_MAX_BACKOFF").then(|| "soon".into()))
    ///     .unwrap_err();
    /// assert!(error.to_string().starts_with("environment variable RETRY_MAX_BACKOFF: invalid duration `soon`"));
    ///
    /// let off = RetryConfig::from_lookup(|name| (name == "RETRY_QUOTA").then(|| "off".into()))?;
    /// assert_eq!(off.quota(), retry_core::Quota::Off);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<RetryConfig, ConfigError> {
        let mut builder = RetryConfig::builder();
        let mut initial_given = false;
        for variable in ENV_VARIABLES {
            let Some(value) = lookup(variable).filter(|value| !value.trim().is_empty()) else {
                continue;
            };
            initial_given |= variable == "RETRY_INITIAL_BACKOFF";
            builder = apply(builder, variable, &value).map_err(|error| ConfigError::Env {
                variable,
                error: Box::new(error),
            })?;
        }
        builder.build().map_err(|error| {
            let variable = match &error {
                ConfigError::MaxAttemptsZero => "RETRY_MAX_ATTEMPTS",
                ConfigError::ZeroCapacity => "RETRY_QUOTA_CAPACITY",
                ConfigError::ZeroQuota | ConfigError::QuotaConflict { .. } => "RETRY_QUOTA",
                ConfigError::ZeroDuration { setting: "timeout" } => "RETRY_TIMEOUT",
                // Only initial_backoff can exceed max_backoff here: blame the variable given.
                ConfigError::BackoffOrder { .. } if initial_given => "RETRY_INITIAL_BACKOFF",
                ConfigError::BackoffOrder { .. } => "RETRY_MAX_BACKOFF",
                _ => return error,
            };
            ConfigError::Env {
                variable,
                error: Box::new(error),
            }
        })
    }
}

fn apply(
    builder: RetryConfigBuilder,
    variable: &str,
    value: &str,
) -> Result<RetryConfigBuilder, ConfigError> {
    Ok(match variable {
        "RETRY_MODE" => builder.mode(value.parse::<RetryMode>()?),
        "RETRY_MAX_ATTEMPTS" => builder.max_attempts(parse_number(value)?),
        "RETRY_INITIAL_BACKOFF" => builder.initial_backoff(parse_duration(value)?),
        "RETRY_MAX_BACKOFF" => builder.max_backoff(parse_duration(value)?),
        "RETRY_JITTER" => builder.jitter(value.parse::<Jitter>()?),
        "RETRY_TIMEOUT" => builder.timeout(parse_duration(value)?),
        "RETRY_QUOTA" => builder.quota(value.parse::<Quota>()?),
        "RETRY_QUOTA_CAPACITY" => builder.quota_capacity(parse_number(value)?),
        _ => builder,
    })
}

fn parse_number(value: &str) -> Result<u32, ConfigError> {
    let trimmed = value.trim();
    trimmed.parse().map_err(|_| ConfigError::Number {
        input: trimmed.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_lookup_rejects_an_overflowing_retry_timeout() {
        let error = RetryConfig::from_lookup(|name| {
            (name == "RETRY_TIMEOUT").then(|| "340282366920938463463374607431.9s".to_owned())
        })
        .expect_err("more than a year");
        assert!(
            matches!(
                &error,
                ConfigError::Env {
                    variable: "RETRY_TIMEOUT",
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("longer than one year"),
            "{error}"
        );
    }
}
