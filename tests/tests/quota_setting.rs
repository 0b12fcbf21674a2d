//! The quota in one setting (`Quota`): the builder's façade over the quota's own settings, its
//! conflicts, `RETRY_QUOTA`, and `#[retryable(quota = ...)]` honoured by the function's
//! strategy (each value changes what the calls get, not only what the configuration says).
//!
//! Strategies run on a manual clock, functions in virtual time (`start_paused`), each with its
//! own scope (scopes are process-wide).

use std::collections::HashMap;
use std::sync::Arc;

use retry_core::clock::ManualClock;
use retry_core::{
    ConfigError, ErrorKind, Quota, RetryConfig, RetryError, RetryInfo, RetrySafety, Scope,
    StandardStrategy, retryable,
};

mod common;

use common::{fail_until_refused, secs};

fn build_error(builder: retry_core::config::RetryConfigBuilder) -> String {
    builder
        .build()
        .expect_err("the configuration should be rejected")
        .to_string()
}

fn on_manual_clock(config: RetryConfig) -> StandardStrategy {
    StandardStrategy::builder(config)
        .clock(Arc::new(ManualClock::new()))
        .build()
}

// ---- the façade -------------------------------------------------------------------------

#[test]
fn off_makes_every_retry_free_and_samples_no_traffic() {
    let off = RetryConfig::builder()
        .quota(Quota::Off)
        .build()
        .expect("valid");
    assert_eq!(
        (
            off.retry_cost(),
            off.timeout_retry_cost(),
            off.throttling_retry_cost()
        ),
        (0, 0, 0)
    );
    assert_eq!(off.quota_window(), None);
    assert_eq!(off.quota(), Quota::Off);
    // Everything else stays the default's.
    assert_eq!(off.max_attempts(), RetryConfig::default().max_attempts());
    assert_eq!(
        off.initial_backoff(),
        RetryConfig::default().initial_backoff()
    );
}

#[test]
fn fixed_is_a_bucket_of_that_many_tokens_full_at_first() {
    let fixed = RetryConfig::builder()
        .quota(Quota::Fixed(2000))
        .build()
        .expect("valid");
    assert_eq!((fixed.quota_capacity(), fixed.quota_window()), (2000, None));
    assert_eq!(fixed.quota(), Quota::Fixed(2000));
    let scope = Scope::new("quota-setting-fixed", &fixed);
    assert_eq!(
        (scope.quota().capacity(), scope.quota().level()),
        (2000, 2000)
    );
    // The costs are the preset's: aws-classic's 5 with a fixed quota of 2000.
    let classic = RetryConfig::aws_classic()
        .quota(Quota::Fixed(2000))
        .build()
        .expect("valid");
    assert_eq!((classic.retry_cost(), classic.quota_capacity()), (5, 2000));
}

#[test]
fn traffic_is_the_default_window_and_cap() {
    let default = RetryConfig::default();
    assert_eq!(default.quota(), Quota::Traffic);
    let classic = RetryConfig::aws_classic()
        .quota(Quota::Traffic)
        .build()
        .expect("valid");
    assert_eq!(classic.quota(), Quota::Traffic);
    assert_eq!(classic.quota_window(), default.quota_window());
    assert_eq!(classic.quota_capacity(), default.quota_capacity());
    // The classic costs stay: only how the quota is sized changed.
    assert_eq!(classic.retry_cost(), 5);
    // Tuned beside it, in any order.
    let tuned = RetryConfig::builder()
        .quota_window(secs(30))
        .quota(Quota::Traffic)
        .quota_capacity(800)
        .build()
        .expect("valid");
    assert_eq!(
        (tuned.quota_window(), tuned.quota_capacity()),
        (Some(secs(30)), 800)
    );
}

#[test]
fn the_quota_is_read_back_from_any_configuration() {
    assert_eq!(
        RetryConfig::aws_classic().build().expect("valid").quota(),
        Quota::Fixed(500)
    );
    assert_eq!(
        RetryConfig::aws_2026().build().expect("valid").quota(),
        Quota::Fixed(500)
    );
    let free = RetryConfig::builder()
        .retry_cost(0)
        .timeout_retry_cost(0)
        .throttling_retry_cost(0)
        .build()
        .expect("valid");
    assert_eq!(free.quota(), Quota::Off);
}

#[test]
fn an_off_configuration_turned_back_on_gets_the_default_costs() {
    let off = RetryConfig::builder()
        .quota(Quota::Off)
        .build()
        .expect("valid");
    let on = off
        .to_builder()
        .quota(Quota::Traffic)
        .build()
        .expect("valid");
    assert_eq!(on, RetryConfig::default());
    let fixed = off
        .to_builder()
        .quota(Quota::Fixed(100))
        .build()
        .expect("valid");
    assert_eq!((fixed.retry_cost(), fixed.quota()), (14, Quota::Fixed(100)));
}

// ---- conflicts: errors at build() naming both, whatever the order ----------------------------

#[test]
fn off_with_a_cost_is_an_error_naming_both() {
    let message = "quota(Quota::Off) conflicts with retry_cost: with the quota off a retry costs \
                   nothing; remove it, or choose `Quota::Fixed(n)` or `Quota::Traffic`";
    assert_eq!(
        build_error(RetryConfig::builder().quota(Quota::Off).retry_cost(5)),
        message
    );
    assert_eq!(
        build_error(RetryConfig::builder().retry_cost(5).quota(Quota::Off)),
        message
    );
    assert!(
        build_error(
            RetryConfig::builder()
                .throttling_retry_cost(1)
                .quota(Quota::Off)
        )
        .starts_with("quota(Quota::Off) conflicts with throttling_retry_cost:")
    );
    // A cost of 0 agrees with it.
    let agreed = RetryConfig::builder()
        .quota(Quota::Off)
        .timeout_retry_cost(0)
        .build();
    assert_eq!(agreed.map(|config| config.quota()), Ok(Quota::Off));
}

#[test]
fn off_with_a_sizing_setting_is_an_error_naming_both() {
    for (builder, setting) in [
        (RetryConfig::builder().quota_capacity(100), "quota_capacity"),
        (
            RetryConfig::builder().quota_window(secs(10)),
            "quota_window",
        ),
        (
            RetryConfig::builder().quota_refill_per_second(1.0),
            "quota_refill_per_second",
        ),
        (RetryConfig::builder().success_reward(2), "success_reward"),
    ] {
        assert_eq!(
            build_error(builder.quota(Quota::Off)),
            format!(
                "quota(Quota::Off) conflicts with {setting}: with the quota off there is no \
                 quota to size; remove it, or choose `Quota::Fixed(n)` or `Quota::Traffic`"
            )
        );
    }
}

#[test]
fn fixed_with_a_window_or_another_capacity_is_an_error_naming_both() {
    assert_eq!(
        build_error(
            RetryConfig::builder()
                .quota_window(secs(10))
                .quota(Quota::Fixed(100))
        ),
        "quota(Quota::Fixed(100)) conflicts with quota_window: a fixed quota is not sized by \
         traffic; remove quota_window, or choose `Quota::Traffic`"
    );
    assert_eq!(
        build_error(
            RetryConfig::builder()
                .quota(Quota::Fixed(100))
                .quota_capacity(200)
        ),
        "quota(Quota::Fixed(100)) conflicts with quota_capacity: the fixed quota sets the \
         capacity; remove quota_capacity"
    );
    // The same capacity agrees; costs, reward and refill tune the bucket.
    let tuned = RetryConfig::builder()
        .quota(Quota::Fixed(100))
        .quota_capacity(100)
        .retry_cost(10)
        .success_reward(2)
        .quota_refill_per_second(0.5)
        .build()
        .expect("valid");
    assert_eq!(
        (tuned.quota(), tuned.retry_cost(), tuned.success_reward()),
        (Quota::Fixed(100), 10, 2)
    );
}

#[test]
fn a_quota_whose_retries_are_all_free_is_an_error() {
    for quota in [Quota::Traffic, Quota::Fixed(100)] {
        assert_eq!(
            build_error(
                RetryConfig::builder()
                    .retry_cost(0)
                    .timeout_retry_cost(0)
                    .throttling_retry_cost(0)
                    .quota(quota)
            ),
            format!(
                "quota(Quota::{quota:?}) conflicts with retry_cost: every retry costs 0, so \
                 the quota would never refuse one; choose `Quota::Off`, or give retries a cost"
            )
        );
    }
}

#[test]
fn a_fixed_quota_of_zero_tokens_is_an_error() {
    assert_eq!(
        RetryConfig::builder().quota(Quota::Fixed(0)).build(),
        Err(ConfigError::ZeroQuota)
    );
    assert_eq!(
        build_error(RetryConfig::builder().quota(Quota::Fixed(0))),
        "a fixed quota of 0 tokens would refuse every retry: use Quota::Off for no quota, or \
         set max_attempts = 1 for no retries"
    );
}

// ---- RETRY_QUOTA ------------------------------------------------------------------------

fn from_env(vars: &[(&str, &str)]) -> Result<RetryConfig, String> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect();
    RetryConfig::from_lookup(|name| vars.get(name).cloned()).map_err(|error| error.to_string())
}

#[test]
fn retry_quota_takes_off_traffic_or_a_number() {
    let quota = |value| from_env(&[("RETRY_QUOTA", value)]).map(|config| config.quota());
    assert_eq!(quota("off"), Ok(Quota::Off));
    assert_eq!(quota(" OFF "), Ok(Quota::Off));
    assert_eq!(quota("traffic"), Ok(Quota::Traffic));
    assert_eq!(quota("2000"), Ok(Quota::Fixed(2000)));
    assert_eq!(
        from_env(&[("RETRY_QUOTA", "off")]),
        Ok(RetryConfig::builder()
            .quota(Quota::Off)
            .build()
            .expect("valid"))
    );
}

#[test]
fn an_invalid_retry_quota_is_an_error_naming_the_variable() {
    assert_eq!(
        from_env(&[("RETRY_QUOTA", "unlimited")]),
        Err(
            "environment variable RETRY_QUOTA: invalid quota `unlimited`: expected \"off\", \
             \"traffic\" or a number of tokens such as 2000"
                .to_owned()
        )
    );
    assert_eq!(
        from_env(&[("RETRY_QUOTA", "0")]),
        Err(
            "environment variable RETRY_QUOTA: invalid quota `0`: a quota of 0 tokens would \
             refuse every retry; write \"off\" for no quota, or set max_attempts to 1 for no \
             retries"
                .to_owned()
        )
    );
    // Out of range at any number of digits.
    for value in ["4294967296", &"9".repeat(40)] {
        assert_eq!(
            from_env(&[("RETRY_QUOTA", value)]),
            Err(format!(
                "environment variable RETRY_QUOTA: invalid quota `{value}`: at most 4294967295 \
                 tokens; write \"off\" for no quota"
            ))
        );
    }
    assert_eq!(
        from_env(&[("RETRY_QUOTA", "-5")]).map(|config| config.quota()),
        Err(
            "environment variable RETRY_QUOTA: invalid quota `-5`: expected \"off\", \
             \"traffic\" or a number of tokens such as 2000"
                .to_owned()
        )
    );
}

#[test]
fn retry_quota_against_retry_quota_capacity() {
    assert_eq!(
        from_env(&[("RETRY_QUOTA", "2000"), ("RETRY_QUOTA_CAPACITY", "100")]),
        Err(
            "environment variable RETRY_QUOTA: quota(Quota::Fixed(2000)) conflicts with \
             quota_capacity: the fixed quota sets the capacity; remove quota_capacity"
                .to_owned()
        )
    );
    assert!(
        from_env(&[("RETRY_QUOTA", "off"), ("RETRY_QUOTA_CAPACITY", "100")])
            .expect_err("a conflict")
            .starts_with(
                "environment variable RETRY_QUOTA: quota(Quota::Off) conflicts with quota_capacity"
            )
    );
    // A cap for the traffic-sized quota.
    let capped =
        from_env(&[("RETRY_QUOTA", "traffic"), ("RETRY_QUOTA_CAPACITY", "100")]).expect("valid");
    assert_eq!(
        (capped.quota(), capped.quota_capacity()),
        (Quota::Traffic, 100)
    );
}

// ---- what the strategy does with each value ---------------------------------------------------

#[test]
fn with_the_quota_off_a_strategy_never_refuses_a_retry() {
    let config = RetryConfig::builder()
        .quota(Quota::Off)
        .max_attempts(10)
        .build()
        .expect("valid");
    let strategy = on_manual_clock(config);
    // 100 calls failing every attempt: 900 retries, where the default's quota would have
    // refused most of them.
    for _ in 0..100 {
        let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
        assert_eq!(steps.len(), 9);
        assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 10 });
    }
    assert_eq!(strategy.scope().stats().quota_exhausted, 0);
}

#[test]
fn a_fixed_quota_pays_for_exactly_its_tokens() {
    let config = RetryConfig::builder()
        .quota(Quota::Fixed(28))
        .max_attempts(10)
        .build()
        .expect("valid");
    let strategy = on_manual_clock(config);
    // 28 tokens, 14 a retry: two retries, then the quota refuses, and nothing refills it.
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
    assert_eq!(steps.iter().map(|step| step.2).collect::<Vec<_>>(), [14, 0]);
    assert_eq!(
        refusal,
        RetryError::QuotaExhausted {
            cost: 14,
            level: 0,
            backoff: None
        }
    );
    let (steps, _) = fail_until_refused(&strategy, ErrorKind::Server);
    assert!(steps.is_empty());
}

// ---- #[retryable(quota = ...)] ----------------------------------------------------------------

#[derive(Debug, PartialEq)]
struct Unavailable;

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

#[retryable(
    quota = "off",
    max_attempts = 4,
    initial_backoff = "1ms",
    scope = "quota-setting-attr-off"
)]
async fn unavailable_without_quota(attempts: &mut u32) -> Result<(), Unavailable> {
    *attempts += 1;
    Err(Unavailable)
}

#[retryable(
    quota = 28,
    max_attempts = 4,
    initial_backoff = "1ms",
    scope = "quota-setting-attr-fixed"
)]
async fn unavailable_with_28_tokens(attempts: &mut u32) -> Result<(), Unavailable> {
    *attempts += 1;
    Err(Unavailable)
}

/// `unavailable_with_28_tokens` in a scope of its own, for the comparison with `quota = "off"`.
#[retryable(
    quota = 28,
    max_attempts = 4,
    initial_backoff = "1ms",
    scope = "quota-setting-attr-fixed-beside-off"
)]
async fn unavailable_beside_off(attempts: &mut u32) -> Result<(), Unavailable> {
    *attempts += 1;
    Err(Unavailable)
}

#[retryable(
    preset = "aws-classic",
    quota = "traffic",
    max_attempts = 4,
    initial_backoff = "1ms",
    scope = "quota-setting-attr-traffic"
)]
async fn unavailable_classic_by_traffic(attempts: &mut u32) -> Result<(), Unavailable> {
    *attempts += 1;
    Err(Unavailable)
}

/// The attempts each of `calls` calls of `call` made.
async fn attempts_per_call<F>(calls: usize, mut call: F) -> Vec<u32>
where
    F: AsyncFnMut(&mut u32) -> Result<(), Unavailable>,
{
    let mut made = Vec::new();
    for _ in 0..calls {
        let mut attempts = 0;
        assert_eq!(call(&mut attempts).await, Err(Unavailable));
        made.push(attempts);
    }
    made
}

#[tokio::test(start_paused = true)]
async fn quota_off_lets_every_call_make_every_attempt() {
    // 30 calls failing every attempt: a quota of 28 tokens is empty after the first call's
    // two retries; with the quota off each call still makes its 4 attempts.
    let fixed = attempts_per_call(30, unavailable_beside_off).await;
    assert_eq!(fixed[..3], [3, 1, 1]);
    assert!(
        fixed[1..].iter().all(|&attempts| attempts == 1),
        "{fixed:?}"
    );
    let off = attempts_per_call(30, unavailable_without_quota).await;
    assert!(off.iter().all(|&attempts| attempts == 4), "{off:?}");
    let scope = Scope::lookup("quota-setting-attr-off").expect("the function's scope");
    assert_eq!(scope.stats().quota_exhausted, 0);
}

#[tokio::test(start_paused = true)]
async fn quota_n_is_a_fixed_bucket_of_n_tokens() {
    let mut attempts = 0;
    let _ = unavailable_with_28_tokens(&mut attempts).await;
    let scope = Scope::lookup("quota-setting-attr-fixed").expect("the function's scope");
    assert_eq!(scope.quota().capacity(), 28);
    // Full at first (28): the call's two retries took 14 each, and the third was refused.
    assert_eq!(attempts, 3);
    assert_eq!(scope.quota().level(), 0);
    assert_eq!(scope.stats().quota_exhausted, 1);
}

#[tokio::test(start_paused = true)]
async fn quota_traffic_replaces_a_presets_fixed_bucket() {
    let mut attempts = 0;
    let _ = unavailable_classic_by_traffic(&mut attempts).await;
    // A lone call makes every attempt it asks for.
    assert_eq!(attempts, 4);
    let scope = Scope::lookup("quota-setting-attr-traffic").expect("the function's scope");
    // aws-classic's fixed bucket holds 500; the traffic-sized quota is capped at the
    // default's cap instead.
    assert_eq!(
        scope.quota().capacity(),
        RetryConfig::default().quota_capacity()
    );
}
