//! The rules between arguments, all of them: `shed = true` needs a limit to shed on (adaptive
//! mode with a `timeout`, or a given `strategy`), `strategy` excludes the tuning arguments,
//! `classifier` excludes `retry_if`, and `initial_backoff <= max_backoff` once the preset fills
//! in the one not given (the runtime's own check, done at compile time).

use std::time::Duration;

use super::args::{Args, Key};
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
    shed_needs_a_limit(args, values, errors);
}

/// `shed = true` sheds a call whose first attempt's send permit is expected after its deadline:
/// the function's own strategy can only do that in adaptive mode with a `timeout`. (A given
/// `strategy` may shed on its `max_wait` too: not checked.)
fn shed_needs_a_limit(args: &Args, values: &Values, errors: &mut Errors) {
    let Some(shed) = args.get(Key::Shed).filter(|_| values.shed == Some(true)) else {
        return;
    };
    if args.get(Key::Strategy).is_some() {
        return;
    }
    let mode_invalid = args.get(Key::Mode).is_some() && values.mode.is_none();
    let missing = if values.mode != Some(RetryMode::Adaptive) {
        "`mode = \"adaptive\"` (standard mode never sheds a call)"
    } else if args.get(Key::Timeout).is_none() {
        "a deadline, e.g. `timeout = \"2s\"` (a call is shed when its first attempt's send \
         permit is expected after it)"
    } else {
        return;
    };
    if mode_invalid {
        return;
    }
    errors.push(syn::Error::new(
        shed.ident.span(),
        format!("`shed = true` needs {missing}; or remove `shed`"),
    ));
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
