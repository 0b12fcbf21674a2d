//! Lowering: the checked arguments into what the expansion generates from ([`Config`]), the
//! defaults filled in. Reached only when no argument had an error.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Expr, ExprPath, LitStr};

use super::args::{Args, Key};
use super::value::Values;
use crate::parse::defaults;
use crate::parse::hedge::HedgeDelay;
use crate::parse::jitter::Jitter;
use crate::parse::mode::RetryMode;
use crate::parse::preset::RetryPreset;
use crate::parse::quota::Quota;
use crate::spans::span_range;

/// What the expansion generates from.
pub(crate) struct Config {
    /// The path of `retry_core` in generated code.
    pub(crate) krate: TokenStream,
    pub(crate) strategy: StrategySource,
    pub(crate) classifier: ClassifierSource,
    /// `on_retry = path`.
    pub(crate) on_retry: Option<ExprPath>,
    /// `attempt_timeout = "..."`, with the first and last spans of the argument (key to value).
    pub(crate) attempt_timeout: Option<(Duration, (Span, Span))>,
    /// `shed = true`: the first and last spans of the argument.
    pub(crate) shed: Option<(Span, Span)>,
    /// `hedge_after = "..."` (and `max_hedges`, 1 when not given), with the span of the
    /// `hedge_after` key.
    pub(crate) hedging: Option<(HedgeDelay, u32, Span)>,
    /// `idempotent = true | false`: the call's declared idempotency.
    pub(crate) idempotent: Option<bool>,
    /// Whether a call may have to sleep after its last attempt before returning its error (a
    /// long-polling strategy whose quota refused a retry): with `long_polling = true`, or a
    /// given `strategy`, whose configuration only the run time knows.
    pub(crate) lingers: bool,
}

/// Where a call's strategy comes from.
pub(crate) enum StrategySource {
    /// The function's own strategy: `settings` applied to `preset`'s configuration.
    Default {
        /// `scope = "..."`, else the function's path.
        scope: Option<LitStr>,
        preset: RetryPreset,
        /// The builder calls, in order.
        settings: Vec<Setting>,
    },
    /// `strategy = expr`.
    Expr(Expr),
}

/// One call on the runtime's `RetryConfigBuilder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Setting {
    MaxAttempts(u32),
    Mode(RetryMode),
    InitialBackoff(Duration),
    MaxBackoff(Duration),
    /// A `max_backoff` below the preset's own throttling backoff base lowers it too.
    ThrottlingBackoff(Duration),
    Jitter(Jitter),
    Timeout(Duration),
    MaxWait(Duration),
    Quota(Quota),
    LongPolling(bool),
}

/// How outcomes are classified.
pub(crate) enum ClassifierSource {
    /// `RetryInfoClassifier`: the error type must implement `RetryInfo`.
    RetryInfo,
    /// `classifier = expr`.
    Expr(Expr),
    /// `retry_if = path`.
    RetryIf(ExprPath),
}

/// The configuration of checked arguments.
pub(crate) fn lower(args: &Args, values: Values) -> Config {
    let settings = settings(&values);
    let attempt_timeout = values
        .attempt_timeout
        .zip(args.get(Key::AttemptTimeout))
        .map(|(timeout, arg)| (timeout, (arg.ident.span(), span_range(&arg.value).1)));
    let shed = args
        .get(Key::Shed)
        .filter(|_| values.shed == Some(true))
        .map(|arg| (arg.ident.span(), span_range(&arg.value).1));
    let hedging = values
        .hedge_after
        .zip(args.get(Key::HedgeAfter))
        .map(|(delay, arg)| (delay, values.max_hedges.unwrap_or(1), arg.ident.span()));
    let lingers = values.long_polling == Some(true) || values.strategy.is_some();
    let strategy = match values.strategy {
        Some(strategy) => StrategySource::Expr(strategy),
        None => StrategySource::Default {
            scope: values.scope,
            preset: values.preset.unwrap_or(RetryPreset::Default),
            settings,
        },
    };
    let classifier = match (values.classifier, values.retry_if) {
        (Some(classifier), _) => ClassifierSource::Expr(classifier),
        (None, Some(retry_if)) => ClassifierSource::RetryIf(retry_if),
        (None, None) => ClassifierSource::RetryInfo,
    };
    Config {
        krate: values.krate.unwrap_or_else(|| quote!(::retry_core)),
        strategy,
        classifier,
        on_retry: values.on_retry,
        attempt_timeout,
        shed,
        hedging,
        idempotent: values.idempotent,
        lingers,
    }
}

/// The builder calls of the tuning arguments given.
fn settings(values: &Values) -> Vec<Setting> {
    let throttling_cap = values.max_backoff.filter(|&max| {
        let base = defaults::backoff(values.preset.unwrap_or(RetryPreset::Default));
        base.throttling.is_some_and(|throttling| throttling > max)
    });
    [
        values.max_attempts.map(Setting::MaxAttempts),
        values.mode.map(Setting::Mode),
        values.initial_backoff.map(Setting::InitialBackoff),
        values.max_backoff.map(Setting::MaxBackoff),
        throttling_cap.map(Setting::ThrottlingBackoff),
        values.jitter.map(Setting::Jitter),
        values.timeout.map(Setting::Timeout),
        values.max_wait.map(Setting::MaxWait),
        values.quota.map(Setting::Quota),
        values.long_polling.map(Setting::LongPolling),
    ]
    .into_iter()
    .flatten()
    .collect()
}
