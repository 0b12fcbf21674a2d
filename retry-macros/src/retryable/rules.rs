//! The rules between arguments, all of them, checked here and nowhere else:
//!
//! * `strategy` excludes the tuning arguments ([`Key::TUNING`]): the strategy carries its own
//!   configuration;
//! * `classifier` excludes `retry_if` (its shorthand);
//! * `max_wait` needs `mode = "adaptive"`: it bounds the wait for the rate limiter's send
//!   permit, and standard mode never waits for one (the runtime would accept and ignore it);
//! * `shed = true` needs a limit to shed on: adaptive mode with a `timeout` or a `max_wait`, or
//!   a given `strategy` (whose configuration only the run time knows);
//! * `max_hedges` needs `hedge_after` (how long to wait before each hedge);
//! * `hedge_after` excludes `idempotent = false`: a hedge sends the request again while the
//!   first copy may still be processed;
//! * `initial_backoff <= max_backoff` once the preset fills in the one not given (the runtime's
//!   own check, done at compile time).
//!
//! A rule is not checked when a value it reads is itself invalid: that value's own error says
//! what to write.

use std::time::Duration;

use super::args::{Arg, Args, Key};
use super::value::Values;
use crate::diagnostics::Errors;
use crate::parse::defaults;
use crate::parse::mode::RetryMode;
use crate::parse::preset::RetryPreset;

/// Records every rule the arguments break.
pub(crate) fn check(args: &Args, values: &Values, errors: &mut Errors) {
    strategy_excludes_tuning(args, errors);
    classifier_excludes_retry_if(args, errors);
    backoff_order(args, values, errors);
    max_wait_needs_adaptive(args, values, errors);
    shed_needs_a_limit(args, values, errors);
    max_hedges_needs_hedge_after(args, errors);
    hedging_needs_idempotence(args, values, errors);
}

/// `max_hedges` says how many hedges a call sends; without `hedge_after` it sends none, so the
/// value would be accepted and ignored.
fn max_hedges_needs_hedge_after(args: &Args, errors: &mut Errors) {
    if let (Some(max_hedges), None) = (args.get(Key::MaxHedges), args.get(Key::HedgeAfter)) {
        errors.push(error_at(
            max_hedges,
            "`max_hedges` needs `hedge_after`, the delay before each hedge: add e.g. \
             `hedge_after = \"p95\"` or `hedge_after = \"50ms\"`, or remove `max_hedges`",
        ));
    }
}

/// A hedge is the request sent again while the first copy may still be processed: a call
/// declared not idempotent cannot be hedged. Reported at `hedge_after`.
fn hedging_needs_idempotence(args: &Args, values: &Values, errors: &mut Errors) {
    let Some(hedge_after) = args.get(Key::HedgeAfter) else {
        return;
    };
    if values.idempotent == Some(false) {
        errors.push(error_at(
            hedge_after,
            "`hedge_after` sends the request again while the first copy may still be \
             processed, and this call is declared `idempotent = false`: remove `hedge_after`, \
             or declare `idempotent = true` if repeating the request is safe",
        ));
    }
}

/// The mode of the function's own strategy: `None` with a given `strategy` (its mode is the
/// run time's), or when `mode` is invalid (its own error is reported).
fn own_mode(args: &Args, values: &Values) -> Option<RetryMode> {
    if args.get(Key::Strategy).is_some() {
        return None;
    }
    match (args.get(Key::Mode), values.mode) {
        (Some(_), None) => None,
        (_, mode) => Some(mode.unwrap_or(RetryMode::Standard)),
    }
}

/// `max_wait` bounds the wait for adaptive mode's send permit: in standard mode nothing waits
/// for one, so the value would be accepted and ignored.
fn max_wait_needs_adaptive(args: &Args, values: &Values, errors: &mut Errors) {
    let Some(max_wait) = args.get(Key::MaxWait) else {
        return;
    };
    if own_mode(args, values) == Some(RetryMode::Standard) {
        errors.push(error_at(
            max_wait,
            "`max_wait` bounds the wait for adaptive mode's send permit, and standard mode never \
             waits for one: add `mode = \"adaptive\"`, or remove `max_wait`",
        ));
    }
}

/// `shed = true` sheds a call whose first attempt's send permit is expected after its deadline
/// or later than `max_wait`: the function's own strategy can only do that in adaptive mode with
/// a `timeout` or a `max_wait`. (A given `strategy` is configured at run time: not checked.)
fn shed_needs_a_limit(args: &Args, values: &Values, errors: &mut Errors) {
    let Some(shed) = args.get(Key::Shed).filter(|_| values.shed == Some(true)) else {
        return;
    };
    let missing = match own_mode(args, values) {
        None => return,
        Some(RetryMode::Standard) => "`mode = \"adaptive\"` (standard mode never sheds a call)",
        Some(RetryMode::Adaptive)
            if args.get(Key::Timeout).is_none() && args.get(Key::MaxWait).is_none() =>
        {
            "a limit to shed on: a deadline, e.g. `timeout = \"2s\"`, or a bound on the wait, \
             e.g. `max_wait = \"500ms\"` (a call is shed when its first attempt's send permit is \
             expected after the deadline or later than `max_wait`)"
        }
        Some(RetryMode::Adaptive) => return,
    };
    errors.push(error_at(
        shed,
        &format!("`shed = true` needs {missing}; or remove `shed`"),
    ));
}

/// An error at `arg`'s key.
fn error_at(arg: &Arg, message: &str) -> syn::Error {
    syn::Error::new(arg.ident.span(), message)
}

/// `strategy = ...` carries its own configuration: the arguments that would configure the
/// function's own strategy have nothing to apply to.
fn strategy_excludes_tuning(args: &Args, errors: &mut Errors) {
    if args.get(Key::Strategy).is_none() {
        return;
    }
    for tuning in Key::TUNING.into_iter().filter_map(|key| args.get(key)) {
        errors.push(syn::Error::new(
            tuning.ident.span(),
            format!(
                "`{}` cannot be combined with `strategy = ...`: the strategy carries its own \
                 configuration; configure it where it is built (`RetryConfig::builder()...`), \
                 or remove `strategy` to let `#[retryable]` build one",
                tuning.key.name()
            ),
        ));
    }
}

/// `retry_if = f` is shorthand for `classifier = RetryIf::new(f)`: one or the other. Reported
/// at the one written second.
fn classifier_excludes_retry_if(args: &Args, errors: &mut Errors) {
    let (Some(classifier), Some(retry_if)) = (args.get(Key::Classifier), args.get(Key::RetryIf))
    else {
        return;
    };
    let later = if args.position(Key::RetryIf) > args.position(Key::Classifier) {
        retry_if
    } else {
        classifier
    };
    errors.push(syn::Error::new(
        later.ident.span(),
        "`classifier` and `retry_if` cannot be combined: `retry_if = f` is shorthand for \
         `classifier = RetryIf::new(f)`; keep one of them",
    ));
}

/// `initial_backoff <= max_backoff`, the one not given taken from the preset. Reported at the
/// value of `initial_backoff` (or of `max_backoff` when only it is given). Not checked when one
/// of the values involved is itself invalid (its own error says so).
fn backoff_order(args: &Args, values: &Values, errors: &mut Errors) {
    let initial_arg = args.get(Key::InitialBackoff);
    let max_arg = args.get(Key::MaxBackoff);
    let invalid = (initial_arg.is_some() && values.initial_backoff.is_none())
        || (max_arg.is_some() && values.max_backoff.is_none())
        || (args.get(Key::Preset).is_some() && values.preset.is_none());
    let Some(at) = initial_arg.or(max_arg).filter(|_| !invalid) else {
        return;
    };
    let preset = values.preset.unwrap_or(RetryPreset::Default);
    let base = defaults::backoff(preset);
    let from_base = match values.preset {
        Some(preset) => format!(", from preset `{}`", preset.as_str()),
        None => ", the default".to_owned(),
    };
    let described = |given: Option<Duration>, base: Duration| match given {
        Some(value) => format!("{value:?}"),
        None => format!("{base:?}{from_base}"),
    };
    let initial = values.initial_backoff.unwrap_or(base.initial);
    let max = values.max_backoff.unwrap_or(base.max);
    if initial > max {
        errors.push(syn::Error::new_spanned(
            &at.value,
            format!(
                "initial_backoff ({}) must not exceed max_backoff ({}): lower `initial_backoff` \
                 or raise `max_backoff`",
                described(values.initial_backoff, base.initial),
                described(values.max_backoff, base.max),
            ),
        ));
    }
}
