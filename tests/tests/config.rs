//! Every invalid configuration and its exact message: the builder's checks, mode and jitter
//! names, duration strings, and `RetryConfig::from_lookup` naming the faulty variable.

use std::collections::HashMap;
use std::time::Duration;

use retry_core::backoff::Jitter;
use retry_core::config::parse_duration;
use retry_core::{ConfigError, RetryConfig, RetryMode};

fn build_error(builder: retry_core::config::RetryConfigBuilder) -> String {
    builder
        .build()
        .expect_err("the configuration should be rejected")
        .to_string()
}

#[test]
fn zero_max_attempts() {
    assert_eq!(
        build_error(RetryConfig::builder().max_attempts(0)),
        "max_attempts must be at least 1 (1 means no retries), got 0"
    );
    assert_eq!(
        RetryConfig::builder().max_attempts(0).build(),
        Err(ConfigError::MaxAttemptsZero)
    );
    assert_eq!(
        RetryConfig::builder()
            .max_attempts(1)
            .build()
            .map(|c| c.max_attempts()),
        Ok(1)
    );
}

#[test]
fn initial_backoff_above_max_backoff() {
    assert_eq!(
        build_error(RetryConfig::builder().initial_backoff(Duration::from_secs(30))),
        "initial_backoff (30s) must not exceed max_backoff (20s): lower it or raise max_backoff"
    );
    assert_eq!(
        build_error(
            RetryConfig::builder()
                .initial_backoff(Duration::from_millis(1500))
                .max_backoff(Duration::from_secs(1))
                .throttling_backoff(Duration::from_millis(10))
        ),
        "initial_backoff (1.5s) must not exceed max_backoff (1s): lower it or raise max_backoff"
    );
    // Equal is fine.
    assert!(
        RetryConfig::builder()
            .initial_backoff(Duration::from_secs(20))
            .build()
            .is_ok()
    );
}

#[test]
fn throttling_backoff_above_max_backoff() {
    assert_eq!(
        build_error(RetryConfig::builder().throttling_backoff(Duration::from_secs(21))),
        "throttling_backoff (21s) must not exceed max_backoff (20s): lower it or raise max_backoff"
    );
    assert_eq!(
        RetryConfig::builder()
            .throttling_backoff(Duration::from_secs(21))
            .build(),
        Err(ConfigError::BackoffOrder {
            setting: "throttling_backoff",
            initial: Duration::from_secs(21),
            max: Duration::from_secs(20),
        })
    );
}

/// `max_wait` bounds adaptive mode's waits for a send permit; standard mode never waits for one,
/// so a `max_wait` there was accepted and ignored (seen failing first: `build` returned `Ok`).
#[test]
fn max_wait_outside_adaptive_mode() {
    let wait = Duration::from_secs(1);
    assert_eq!(
        RetryConfig::builder().max_wait(wait).build(),
        Err(ConfigError::AdaptiveOnly {
            setting: "max_wait"
        })
    );
    assert_eq!(
        build_error(
            RetryConfig::aws_classic()
                .mode(RetryMode::Standard)
                .max_wait(wait)
        ),
        "max_wait applies to adaptive mode only (standard mode never waits for a send permit: \
         it would be ignored): add .mode(RetryMode::Adaptive), or leave max_wait unset"
    );
    let adaptive = RetryConfig::builder()
        .max_wait(wait)
        .mode(RetryMode::Adaptive);
    assert_eq!(adaptive.build().map(|c| c.max_wait()), Ok(Some(wait)));
}

#[test]
fn zero_timeout() {
    assert_eq!(
        build_error(RetryConfig::builder().timeout(Duration::ZERO)),
        "timeout must be longer than zero: leave it unset for no limit"
    );
    assert!(
        RetryConfig::builder()
            .timeout(Duration::from_nanos(1))
            .build()
            .is_ok()
    );
}

#[test]
fn invalid_quota_refill_rates() {
    for (rate, shown) in [
        (f64::NAN, "NaN"),
        (-1.0, "-1"),
        (-0.5, "-0.5"),
        (0.0, "0"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (1e-13, "0.0000000000001"),
    ] {
        assert_eq!(
            build_error(RetryConfig::builder().quota_refill_per_second(rate)),
            format!(
                "quota_refill_per_second must be a finite number of tokens per second, at least \
                 2.3e-13 (slower never refills), got {shown}: leave it unset to turn it off"
            ),
            "rate {rate}"
        );
    }
    assert_eq!(
        RetryConfig::builder()
            .quota_refill_per_second(0.25)
            .build()
            .map(|c| c.quota_refill_per_second()),
        Ok(Some(0.25))
    );
    // The slowest rate honoured, and a rate far below a thousandth of a token per second.
    for rate in [2.4e-13, 0.0005] {
        assert!(
            RetryConfig::builder()
                .quota_refill_per_second(rate)
                .build()
                .is_ok(),
            "{rate}"
        );
    }
}

#[test]
fn zero_quota_capacity() {
    assert_eq!(
        build_error(RetryConfig::builder().quota_capacity(0)),
        "quota capacity must be at least 1: to turn retries off, set max_attempts = 1"
    );
}

#[test]
fn retry_mode_names() {
    for (name, mode) in [
        ("standard", RetryMode::Standard),
        ("adaptive", RetryMode::Adaptive),
        (" Standard ", RetryMode::Standard),
        ("ADAPTIVE", RetryMode::Adaptive),
        ("\tAdaptive\n", RetryMode::Adaptive),
    ] {
        assert_eq!(name.parse::<RetryMode>(), Ok(mode), "{name:?}");
    }
    for (input, shown) in [
        ("legacy", "legacy"),
        (" Legacy ", "Legacy"),
        ("", ""),
        ("standard mode", "standard mode"),
    ] {
        assert_eq!(
            input
                .parse::<RetryMode>()
                .expect_err("rejected")
                .to_string(),
            format!("unknown retry mode `{shown}`: expected \"standard\" or \"adaptive\""),
            "{input:?}"
        );
    }
    assert_eq!(RetryMode::Adaptive.to_string(), "adaptive");
}

#[test]
fn jitter_names() {
    for (name, jitter) in [
        ("none", Jitter::None),
        (" Full ", Jitter::Full),
        ("EQUAL", Jitter::Equal),
        ("Decorrelated", Jitter::Decorrelated),
    ] {
        assert_eq!(name.parse::<Jitter>(), Ok(jitter), "{name:?}");
    }
    for (input, shown) in [
        ("random", "random"),
        (" exponential ", "exponential"),
        ("", ""),
    ] {
        assert_eq!(
            input.parse::<Jitter>().expect_err("rejected").to_string(),
            format!(
                "unknown jitter `{shown}`: expected one of \"none\", \"full\", \"equal\", \"decorrelated\""
            ),
            "{input:?}"
        );
    }
}

#[test]
fn duration_strings() {
    for (input, expected) in [
        ("250ms", Duration::from_millis(250)),
        ("2s", Duration::from_secs(2)),
        ("1m", Duration::from_secs(60)),
        ("1.5s", Duration::from_millis(1500)),
        (" 10us ", Duration::from_micros(10)),
        ("7ns", Duration::from_nanos(7)),
        ("1h", Duration::from_secs(3600)),
        ("0s", Duration::ZERO),
        ("0.25m", Duration::from_secs(15)),
        ("8760h", Duration::from_secs(365 * 24 * 3600)),
    ] {
        assert_eq!(parse_duration(input), Ok(expected), "{input:?}");
    }
}

#[test]
fn invalid_duration_strings() {
    let hint = "write e.g. \"2s\" or \"250ms\" (units: ns, us, ms, s, m, h)";
    for (input, message) in [
        ("", "invalid duration ``: expected a number first"),
        ("2", "invalid duration `2`: missing unit"),
        (
            "-1s",
            "invalid duration `-1s`: a duration cannot be negative",
        ),
        ("5 minutes", "invalid duration `5 minutes`: unknown unit"),
        ("1.2.3s", "invalid duration `1.2.3s`: malformed number"),
        (
            "9999999h",
            "invalid duration `9999999h`: longer than one year",
        ),
        ("ms", "invalid duration `ms`: expected a number first"),
        ("1.s", "invalid duration `1.s`: malformed number"),
        (".5s", "invalid duration `.5s`: malformed number"),
        ("2S", "invalid duration `2S`: unknown unit"),
        ("8761h", "invalid duration `8761h`: longer than one year"),
        (
            "99999999999999999999999999999999999999999s",
            "invalid duration `99999999999999999999999999999999999999999s`: longer than one year",
        ),
    ] {
        assert_eq!(
            parse_duration(input).expect_err("rejected").to_string(),
            format!("{message}; {hint}"),
            "{input:?}"
        );
    }
}

/// `from_lookup` over a fixed set of variables.
fn from_vars(vars: &[(&str, &str)]) -> Result<RetryConfig, ConfigError> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    RetryConfig::from_lookup(|name| vars.get(name).cloned())
}

#[test]
fn from_lookup_reads_every_variable() {
    let config = from_vars(&[
        ("RETRY_MODE", " Adaptive "),
        ("RETRY_MAX_ATTEMPTS", "5"),
        ("RETRY_INITIAL_BACKOFF", "100ms"),
        ("RETRY_MAX_BACKOFF", "1m"),
        ("RETRY_JITTER", "equal"),
        ("RETRY_TIMEOUT", "30s"),
        ("RETRY_QUOTA_CAPACITY", "50"),
        ("RETRY_UNRELATED", "ignored"),
    ])
    .expect("valid");
    assert_eq!(config.mode(), RetryMode::Adaptive);
    assert_eq!(config.max_attempts(), 5);
    assert_eq!(config.initial_backoff(), Duration::from_millis(100));
    assert_eq!(config.max_backoff(), Duration::from_secs(60));
    assert_eq!(config.jitter(), Jitter::Equal);
    assert_eq!(config.timeout(), Some(Duration::from_secs(30)));
    assert_eq!(config.quota_capacity(), 50);
    // Unset and blank variables keep the defaults.
    assert_eq!(from_vars(&[]), Ok(RetryConfig::default()));
    assert_eq!(
        from_vars(&[("RETRY_MODE", "  ")]),
        Ok(RetryConfig::default())
    );
}

#[test]
fn from_lookup_errors_name_the_variable() {
    for (vars, message) in [
        (
            &[("RETRY_MODE", "legacy")][..],
            "environment variable RETRY_MODE: unknown retry mode `legacy`: expected \"standard\" or \"adaptive\"",
        ),
        (
            &[("RETRY_MAX_ATTEMPTS", "three")][..],
            "environment variable RETRY_MAX_ATTEMPTS: invalid number `three`: expected a whole number such as 3",
        ),
        (
            &[("RETRY_MAX_ATTEMPTS", "0")][..],
            "environment variable RETRY_MAX_ATTEMPTS: max_attempts must be at least 1 (1 means no retries), got 0",
        ),
        (
            &[("RETRY_INITIAL_BACKOFF", "2")][..],
            "environment variable RETRY_INITIAL_BACKOFF: invalid duration `2`: missing unit; write e.g. \"2s\" or \"250ms\" (units: ns, us, ms, s, m, h)",
        ),
        (
            &[("RETRY_MAX_BACKOFF", "soon")][..],
            "environment variable RETRY_MAX_BACKOFF: invalid duration `soon`: expected a number first; write e.g. \"2s\" or \"250ms\" (units: ns, us, ms, s, m, h)",
        ),
        (
            &[("RETRY_JITTER", "random")][..],
            "environment variable RETRY_JITTER: unknown jitter `random`: expected one of \"none\", \"full\", \"equal\", \"decorrelated\"",
        ),
        (
            &[("RETRY_TIMEOUT", "0s")][..],
            "environment variable RETRY_TIMEOUT: timeout must be longer than zero: leave it unset for no limit",
        ),
        (
            &[("RETRY_QUOTA_CAPACITY", "0")][..],
            "environment variable RETRY_QUOTA_CAPACITY: quota capacity must be at least 1: to turn retries off, set max_attempts = 1",
        ),
        (
            &[("RETRY_QUOTA_CAPACITY", "-5")][..],
            "environment variable RETRY_QUOTA_CAPACITY: invalid number `-5`: expected a whole number such as 3",
        ),
        (
            &[("RETRY_INITIAL_BACKOFF", "30s")][..],
            "environment variable RETRY_INITIAL_BACKOFF: initial_backoff (30s) must not exceed max_backoff (20s): lower it or raise max_backoff",
        ),
        (
            &[("RETRY_MAX_BACKOFF", "20ms")][..],
            "environment variable RETRY_MAX_BACKOFF: initial_backoff (50ms) must not exceed max_backoff (20ms): lower it or raise max_backoff",
        ),
        (
            &[("RETRY_INITIAL_BACKOFF", "3s"), ("RETRY_MAX_BACKOFF", "2s")][..],
            "environment variable RETRY_INITIAL_BACKOFF: initial_backoff (3s) must not exceed max_backoff (2s): lower it or raise max_backoff",
        ),
    ] {
        let error = from_vars(vars).expect_err("rejected");
        assert_eq!(error.to_string(), message, "{vars:?}");
        assert!(
            matches!(error, ConfigError::Env { .. }),
            "{vars:?}: not wrapped with the variable: {error:?}"
        );
    }
    // The first invalid variable in reading order is the one reported.
    let error =
        from_vars(&[("RETRY_JITTER", "random"), ("RETRY_MODE", "legacy")]).expect_err("rejected");
    assert!(
        error
            .to_string()
            .starts_with("environment variable RETRY_MODE:"),
        "{error}"
    );
}

#[test]
fn from_lookup_accepts_a_max_backoff_below_the_one_second_throttling_base() {
    // The environment cannot set the throttling backoff: the default's base of 1 s yields to a
    // max_backoff set lower, so the environment stays valid.
    let config = from_vars(&[
        ("RETRY_INITIAL_BACKOFF", "100ms"),
        ("RETRY_MAX_BACKOFF", "500ms"),
    ])
    .expect("a valid environment");
    assert_eq!(config.max_backoff(), Duration::from_millis(500));
    assert_eq!(config.initial_backoff(), Duration::from_millis(100));
    assert_eq!(config.throttling_backoff(), Duration::from_millis(500));
}

#[test]
fn a_max_backoff_below_one_second_from_the_environment_is_the_builders_and_caps_every_delay() {
    use retry_core::{ErrorKind, RetryReason, RetryStrategy, StandardStrategy};
    let from_env = from_vars(&[
        ("RETRY_MAX_ATTEMPTS", "4"),
        ("RETRY_MAX_BACKOFF", "300ms"),
        ("RETRY_JITTER", "none"),
    ])
    .expect("a valid environment");
    let built = RetryConfig::builder()
        .max_attempts(4)
        .max_backoff(Duration::from_millis(300))
        .jitter(Jitter::None)
        .build()
        .expect("valid");
    assert_eq!(from_env, built, "the same configuration as the builder's");
    // The delays a strategy on it computes: server errors 50, 100, 200 ms; throttling errors
    // from the 1 s base, capped at 300 ms from the first.
    for (kind, expected) in [
        (ErrorKind::Server, [50, 100, 200]),
        (ErrorKind::Throttling, [300, 300, 300]),
    ] {
        let strategy = StandardStrategy::new(from_env.clone());
        let mut token = strategy.acquire_initial_token();
        let mut delays = Vec::new();
        for _ in 0..3 {
            token = strategy
                .refresh_retry_token(token, &RetryReason::error(kind))
                .expect("a lone call makes every attempt");
            delays.push(token.delay());
        }
        strategy.abandon(token);
        assert_eq!(delays, expected.map(Duration::from_millis), "{kind:?}");
    }
}
