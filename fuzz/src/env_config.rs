//! `RetryConfig::from_lookup`: the environment configuration.
//!
//! Input: `NAME=value` lines ([`crate::lines`]); the lookup hands `from_lookup` the first value
//! of the name it asks for (invalid UTF-8 replaced), whatever the name, so a variable added to
//! `from_lookup` is fuzzed as soon as a seed or libFuzzer's mutations name it.

use std::cell::RefCell;
use std::time::Duration;

use retry_core::backoff::Jitter;
use retry_core::config::parse_duration;
use retry_core::{ConfigError, Quota, RetryConfig, RetryMode};

use crate::decimal::{Decimal, digits};
use crate::lines;

/// The variables `from_lookup` documents, in the order it documents them.
pub const VARIABLES: [&str; 8] = [
    MODE,
    MAX_ATTEMPTS,
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    JITTER,
    TIMEOUT,
    QUOTA,
    QUOTA_CAPACITY,
];
const MODE: &str = "RETRY_MODE";
const MAX_ATTEMPTS: &str = "RETRY_MAX_ATTEMPTS";
const INITIAL_BACKOFF: &str = "RETRY_INITIAL_BACKOFF";
const MAX_BACKOFF: &str = "RETRY_MAX_BACKOFF";
const JITTER: &str = "RETRY_JITTER";
const TIMEOUT: &str = "RETRY_TIMEOUT";
const QUOTA: &str = "RETRY_QUOTA";
const QUOTA_CAPACITY: &str = "RETRY_QUOTA_CAPACITY";

/// The value an input gives `name`: its first `name=` line, if any.
fn value_of(data: &[u8], name: &str) -> Option<String> {
    lines::first(data, name).map(|value| String::from_utf8_lossy(value).into_owned())
}

/// A value that counts as given: unset and blank values keep the default.
fn given(data: &[u8], name: &str) -> Option<String> {
    value_of(data, name).filter(|value| !value.trim().is_empty())
}

/// The reference model of the documented variables: the configuration they make, or every
/// variable at fault (a value its own parser rejects, or one a check of the whole configuration
/// rejects: zero attempts, zero capacity, a zero timeout, an initial backoff above the maximum,
/// a quota that a given capacity contradicts).
pub fn reference(data: &[u8]) -> Result<RetryConfig, Vec<&'static str>> {
    let mut builder = RetryConfig::builder();
    let mut faults = Vec::new();
    let mut fault_unless = |variable, ok: bool| {
        if !ok {
            faults.push(variable);
        }
    };
    if let Some(value) = given(data, MODE) {
        match value.parse::<RetryMode>() {
            Ok(mode) => builder = builder.mode(mode),
            Err(_) => fault_unless(MODE, false),
        }
    }
    if let Some(value) = given(data, MAX_ATTEMPTS) {
        match whole_number(&value) {
            Some(attempts) => {
                fault_unless(MAX_ATTEMPTS, attempts > 0);
                builder = builder.max_attempts(attempts);
            }
            None => fault_unless(MAX_ATTEMPTS, false),
        }
    }
    let mut initial = None;
    let mut max = None;
    for (variable, slot) in [(INITIAL_BACKOFF, &mut initial), (MAX_BACKOFF, &mut max)] {
        if let Some(value) = given(data, variable) {
            match parse_duration(&value) {
                Ok(duration) => *slot = Some(duration),
                Err(_) => fault_unless(variable, false),
            }
        }
    }
    if let Some(value) = given(data, JITTER) {
        match value.parse::<Jitter>() {
            Ok(jitter) => builder = builder.jitter(jitter),
            Err(_) => fault_unless(JITTER, false),
        }
    }
    if let Some(value) = given(data, TIMEOUT) {
        match parse_duration(&value) {
            Ok(timeout) => {
                fault_unless(TIMEOUT, timeout > Duration::ZERO);
                builder = builder.timeout(timeout);
            }
            Err(_) => fault_unless(TIMEOUT, false),
        }
    }
    let quota = given(data, QUOTA).and_then(|value| {
        let quota = quota(&value);
        fault_unless(QUOTA, quota.is_some());
        quota
    });
    let mut capacity = None;
    if let Some(value) = given(data, QUOTA_CAPACITY) {
        match whole_number(&value) {
            Some(tokens) => {
                fault_unless(QUOTA_CAPACITY, tokens > 0);
                capacity = Some(tokens);
                builder = builder.quota_capacity(tokens);
            }
            None => fault_unless(QUOTA_CAPACITY, false),
        }
    }
    if let Some(quota) = quota {
        // Off sizes nothing; a fixed quota is its own capacity.
        let contradicted = match quota {
            Quota::Off => capacity.is_some(),
            Quota::Fixed(tokens) => capacity.is_some_and(|capacity| capacity != tokens),
            _ => false,
        };
        fault_unless(QUOTA, !contradicted);
        builder = builder.quota(quota);
    }
    let defaults = RetryConfig::default();
    let initial_value = initial.unwrap_or(defaults.initial_backoff());
    let max_value = max.unwrap_or(defaults.max_backoff());
    if initial_value > max_value {
        // Either given variable can be lowered or raised to fix it.
        fault_unless(INITIAL_BACKOFF, initial.is_none());
        fault_unless(MAX_BACKOFF, max.is_none());
    }
    builder = builder
        .initial_backoff(initial_value)
        .max_backoff(max_value);
    if faults.is_empty() {
        Ok(builder.build().expect("no fault: the builder accepts it"))
    } else {
        Err(faults)
    }
}

/// `RETRY_QUOTA`: `off` or `traffic` (ASCII case ignored), or `1*DIGIT` tokens from 1 to
/// `u32::MAX` (no sign), surrounding whitespace ignored.
fn quota(value: &str) -> Option<Quota> {
    let text = value.trim();
    if text.eq_ignore_ascii_case("off") {
        return Some(Quota::Off);
    }
    if text.eq_ignore_ascii_case("traffic") {
        return Some(Quota::Traffic);
    }
    match digits(text.as_bytes(), u64::from(u32::MAX)) {
        Decimal::AtMost(0) | Decimal::NotDigits | Decimal::Above => None,
        Decimal::AtMost(tokens) => Some(Quota::Fixed(
            u32::try_from(tokens).expect("at most u32::MAX"),
        )),
    }
}

/// A `u32` written `["+"] 1*DIGIT`, surrounding whitespace ignored (Rust's integer syntax).
fn whole_number(value: &str) -> Option<u32> {
    let text = value.trim();
    let text = text.strip_prefix('+').unwrap_or(text);
    match digits(text.as_bytes(), u64::from(u32::MAX)) {
        Decimal::AtMost(number) => Some(u32::try_from(number).expect("at most u32::MAX")),
        Decimal::NotDigits | Decimal::Above => None,
    }
}

/// `from_lookup` on an input's variables:
/// * it reads every documented variable (when it succeeds);
/// * it builds a valid configuration or fails with [`ConfigError::Env`], naming a variable that
///   was given a value and whose message begins with that name;
/// * a blank value is the same as an unset one;
/// * when only documented variables are given, it agrees with [`reference`]: the same
///   configuration, or an error naming one of the variables at fault.
pub fn check(data: &[u8]) {
    let asked = RefCell::new(Vec::<String>::new());
    let result = RetryConfig::from_lookup(|name| {
        asked.borrow_mut().push(name.to_owned());
        value_of(data, name)
    });
    let asked = asked.into_inner();
    match &result {
        Ok(config) => {
            for variable in VARIABLES {
                assert!(
                    asked.iter().any(|name| name == variable),
                    "{variable} never read"
                );
            }
            check_valid(config);
        }
        Err(ConfigError::Env { variable, error }) => {
            assert!(
                given(data, variable).is_some(),
                "{variable} blamed but not given: {error}"
            );
            let message = result.as_ref().expect_err("an error").to_string();
            assert!(
                message.starts_with(&format!("environment variable {variable}: ")),
                "{message}"
            );
        }
        Err(other) => panic!("an error that names no variable: {other:?}"),
    }
    let without_blanks = RetryConfig::from_lookup(|name| given(data, name));
    assert_eq!(
        result, without_blanks,
        "a blank value is not the same as unset"
    );

    let only_documented = asked
        .iter()
        .all(|name| VARIABLES.contains(&name.as_str()) || given(data, name).is_none());
    if only_documented {
        match (&result, reference(data)) {
            (Ok(config), Ok(expected)) => assert_eq!(config, &expected),
            (Err(ConfigError::Env { variable, .. }), Err(faults)) => assert!(
                faults.contains(variable),
                "{variable} blamed, the faults are {faults:?}"
            ),
            (result, expected) => {
                panic!("from_lookup gave {result:?}, the reference {expected:?}")
            }
        }
    }
}

/// What `RetryConfigBuilder::build` promises of every configuration it returns.
fn check_valid(config: &RetryConfig) {
    assert!(config.max_attempts() >= 1, "{config:?}");
    assert!(
        config.initial_backoff() <= config.max_backoff(),
        "{config:?}"
    );
    assert!(
        config.throttling_backoff() <= config.max_backoff(),
        "{config:?}"
    );
    assert_ne!(config.timeout(), Some(Duration::ZERO), "{config:?}");
    assert!(config.quota_capacity() >= 1, "{config:?}");
}
