//! The arguments' values, each read by its own parser: names, durations and numbers with the
//! runtime's rules ([`crate::parse`]), expressions and paths as written. Each mistake is an
//! error at the value that says what to write instead.

use std::fmt::Display;
use std::str::FromStr;
use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::{Expr, ExprPath, Lit, LitInt, LitStr};

use super::args::{Arg, Args, Key};
use crate::diagnostics::Errors;
use crate::parse::duration::parse_duration;
use crate::parse::hedge::{HedgeDelay, MAX_HEDGES, parse_hedge_delay};
use crate::parse::jitter::Jitter;
use crate::parse::mode::RetryMode;
use crate::parse::preset::RetryPreset;
use crate::parse::quota::Quota;
use crate::spans::strip_expr;

/// The values of the arguments that are valid on their own.
#[derive(Default)]
pub(crate) struct Values {
    pub(crate) preset: Option<RetryPreset>,
    pub(crate) max_attempts: Option<u32>,
    pub(crate) mode: Option<RetryMode>,
    pub(crate) initial_backoff: Option<Duration>,
    pub(crate) max_backoff: Option<Duration>,
    pub(crate) jitter: Option<Jitter>,
    pub(crate) timeout: Option<Duration>,
    /// `max_wait = "..."`: the longest an attempt waits for its send permit (adaptive mode).
    pub(crate) max_wait: Option<Duration>,
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) quota: Option<Quota>,
    /// `long_polling = true | false`.
    pub(crate) long_polling: Option<bool>,
    pub(crate) scope: Option<LitStr>,
    pub(crate) strategy: Option<Expr>,
    pub(crate) classifier: Option<Expr>,
    pub(crate) retry_if: Option<ExprPath>,
    pub(crate) on_retry: Option<ExprPath>,
    /// `shed = true | false`.
    pub(crate) shed: Option<bool>,
    /// `idempotent = true | false`.
    pub(crate) idempotent: Option<bool>,
    /// `hedge_after = "50ms" | "p95"`.
    pub(crate) hedge_after: Option<HedgeDelay>,
    /// `max_hedges = N`, 1 to [`MAX_HEDGES`].
    pub(crate) max_hedges: Option<u32>,
    /// `crate = "..."`: the path, located at the string.
    pub(crate) krate: Option<TokenStream>,
}

/// Reads every argument's value; an invalid one is recorded in `errors` and left out.
pub(crate) fn parse(args: &Args, errors: &mut Errors) -> Values {
    let mut values = Values::default();
    for arg in &args.args {
        let v = &mut values;
        let read = match arg.key {
            Key::Preset => name(arg).map(|value| v.preset = Some(value)),
            Key::MaxAttempts => max_attempts(arg).map(|value| v.max_attempts = Some(value)),
            Key::Mode => name(arg).map(|value| v.mode = Some(value)),
            Key::InitialBackoff => duration(arg).map(|value| v.initial_backoff = Some(value)),
            Key::MaxBackoff => duration(arg).map(|value| v.max_backoff = Some(value)),
            Key::Jitter => name(arg).map(|value| v.jitter = Some(value)),
            Key::Timeout => positive_duration(arg, "leave `timeout` out for no deadline")
                .map(|value| v.timeout = Some(value)),
            Key::MaxWait => positive_duration(
                arg,
                "leave `max_wait` out to wait as long as the rate limiter asks",
            )
            .map(|value| v.max_wait = Some(value)),
            Key::AttemptTimeout => positive_duration(
                arg,
                "leave `attempt_timeout` out to let attempts run to completion",
            )
            .map(|value| v.attempt_timeout = Some(value)),
            Key::Quota => quota(arg).map(|value| v.quota = Some(value)),
            Key::LongPolling => boolean(arg).map(|value| v.long_polling = Some(value)),
            Key::Scope => scope(arg).map(|value| v.scope = Some(value)),
            Key::Strategy => {
                v.strategy = Some(arg.value.clone());
                Ok(())
            }
            Key::Classifier => {
                v.classifier = Some(arg.value.clone());
                Ok(())
            }
            Key::RetryIf => path(arg, "fn(&E) -> bool").map(|value| v.retry_if = Some(value)),
            Key::OnRetry => {
                path(arg, "fn(&RetryEvent<'_, E>)").map(|value| v.on_retry = Some(value))
            }
            Key::Shed => boolean(arg).map(|value| v.shed = Some(value)),
            Key::Idempotent => boolean(arg).map(|value| v.idempotent = Some(value)),
            Key::HedgeAfter => hedge_after(arg).map(|value| v.hedge_after = Some(value)),
            Key::MaxHedges => max_hedges(arg).map(|value| v.max_hedges = Some(value)),
            Key::Crate => crate_path(arg).map(|value| v.krate = Some(value)),
        };
        if let Err(error) = read {
            errors.push(error);
        }
    }
    values
}

/// The literal of an argument that takes one.
fn literal(arg: &Arg) -> Option<&Lit> {
    match strip_expr(&arg.value) {
        Expr::Lit(expr) => Some(&expr.lit),
        _ => None,
    }
}

/// What a value is, for "expected ..., found ..." messages.
fn describe(value: &Expr) -> &'static str {
    match strip_expr(value) {
        Expr::Lit(expr) => match expr.lit {
            Lit::Str(_) => "a string",
            Lit::Int(_) => "a whole number",
            Lit::Float(_) => "a decimal number",
            Lit::Bool(_) => "a boolean",
            _ => "a literal of another type",
        },
        Expr::Unary(_) => "a negative number or another expression",
        Expr::Path(_) => "a name",
        _ => "an expression",
    }
}

/// `key = "text"`.
fn string(arg: &Arg) -> syn::Result<&LitStr> {
    match literal(arg) {
        Some(Lit::Str(lit)) => Ok(lit),
        _ => Err(syn::Error::new_spanned(
            &arg.value,
            format!(
                "`{}` takes a string, found {}: write `{}`",
                arg.key.name(),
                describe(&arg.value),
                arg.key.example()
            ),
        )),
    }
}

/// `key = "name"`: a preset, mode or jitter, with the runtime's rules and messages.
fn name<T: FromStr<Err: Display>>(arg: &Arg) -> syn::Result<T> {
    let lit = string(arg)?;
    lit.value()
        .parse()
        .map_err(|error| syn::Error::new(lit.span(), error))
}

/// `key = true | false`.
fn boolean(arg: &Arg) -> syn::Result<bool> {
    match literal(arg) {
        Some(Lit::Bool(lit)) => Ok(lit.value),
        _ => Err(syn::Error::new_spanned(
            &arg.value,
            format!(
                "`{}` takes `true` or `false`, found {}: write `{}`",
                arg.key.name(),
                describe(&arg.value),
                arg.key.example()
            ),
        )),
    }
}

/// `max_attempts = N`, N >= 1.
fn max_attempts(arg: &Arg) -> syn::Result<u32> {
    let Some(Lit::Int(lit)) = literal(arg) else {
        let hint = match literal(arg) {
            Some(Lit::Str(lit)) => format!("max_attempts = {}", lit.value().trim()),
            _ => arg.key.example().to_owned(),
        };
        return Err(syn::Error::new_spanned(
            &arg.value,
            format!(
                "`max_attempts` takes a whole number (the first attempt included), found {}: \
                 write `{hint}`",
                describe(&arg.value)
            ),
        ));
    };
    let value = parse_u32(lit)?;
    if value == 0 {
        return Err(syn::Error::new(
            lit.span(),
            "`max_attempts` must be at least 1 (it counts the first attempt; 1 means no \
             retries): write `max_attempts = 1` to turn retries off",
        ));
    }
    Ok(value)
}

/// `hedge_after = "50ms" | "p95"`, with the runtime's rules and messages.
fn hedge_after(arg: &Arg) -> syn::Result<HedgeDelay> {
    let Some(Lit::Str(lit)) = literal(arg) else {
        let hint = match literal(arg) {
            Some(Lit::Int(int)) => format!(
                "`hedge_after = \"{}ms\"` for a fixed delay, or `hedge_after = \"p{}\"` for a \
                 percentile of the scope's latency",
                int.base10_digits(),
                int.base10_digits()
            ),
            _ => "`hedge_after = \"50ms\"` or `hedge_after = \"p95\"`".to_owned(),
        };
        return Err(syn::Error::new_spanned(
            &arg.value,
            format!(
                "`hedge_after` takes a string, a delay or a percentile, found {}: write {hint}",
                describe(&arg.value)
            ),
        ));
    };
    parse_hedge_delay(&lit.value())
        .map_err(|error| syn::Error::new(lit.span(), format!("`hedge_after`: {error}")))
}

/// `max_hedges = N`, 1 <= N <= [`MAX_HEDGES`].
fn max_hedges(arg: &Arg) -> syn::Result<u32> {
    let range = format!(
        "`max_hedges` is a whole number from 1 to {MAX_HEDGES} (gRPC's hedging policy sends at \
         most {} copies of a request)",
        MAX_HEDGES + 1
    );
    let Some(Lit::Int(lit)) = literal(arg) else {
        let hint = match literal(arg) {
            Some(Lit::Str(lit)) => format!("max_hedges = {}", lit.value().trim()),
            _ => arg.key.example().to_owned(),
        };
        return Err(syn::Error::new_spanned(
            &arg.value,
            format!("{range}, found {}: write `{hint}`", describe(&arg.value)),
        ));
    };
    if !matches!(lit.suffix(), "" | "u32") {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`max_hedges` is a `u32`: write `max_hedges = {}` without the `{}` suffix",
                lit.base10_digits(),
                lit.suffix()
            ),
        ));
    }
    match lit.base10_parse::<u32>() {
        Ok(value) if (1..=MAX_HEDGES).contains(&value) => Ok(value),
        _ => Err(syn::Error::new(
            lit.span(),
            format!(
                "{range}, got {}: write e.g. `max_hedges = 2`, or leave it out for one hedge",
                lit.base10_digits()
            ),
        )),
    }
}

/// `quota = "off" | "traffic" | N`, N >= 1 tokens, unquoted.
fn quota(arg: &Arg) -> syn::Result<Quota> {
    match literal(arg) {
        Some(Lit::Str(lit)) => {
            let value = lit.value();
            let trimmed = value.trim();
            if !trimmed.is_empty() && trimmed.bytes().all(|byte| byte.is_ascii_digit()) {
                // The number's own mistakes first, so that the fix offered is valid.
                fixed_quota(trimmed.parse::<u32>().ok(), lit.span())?;
                return Err(syn::Error::new(
                    lit.span(),
                    format!("`quota` takes a number of tokens unquoted: write `quota = {trimmed}`"),
                ));
            }
            value
                .parse()
                .map_err(|error| syn::Error::new(lit.span(), format!("`quota`: {error}")))
        }
        Some(Lit::Int(lit)) => quota_tokens(lit),
        _ => Err(syn::Error::new_spanned(
            &arg.value,
            format!(
                "`quota` takes \"off\", \"traffic\" or a whole number of tokens, found {}: \
                 write `quota = \"off\"`, `quota = \"traffic\"` or `quota = 2000`",
                describe(&arg.value)
            ),
        )),
    }
}

/// `quota = N`: a fixed quota of N tokens, 1 <= N <= `u32::MAX`, whatever the digits.
fn quota_tokens(lit: &LitInt) -> syn::Result<Quota> {
    if !matches!(lit.suffix(), "" | "u32") {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`quota` is a number of tokens (a `u32`): write `quota = {}` without the `{}` \
                 suffix",
                lit.base10_digits(),
                lit.suffix()
            ),
        ));
    }
    fixed_quota(lit.base10_parse::<u32>().ok(), lit.span())
}

/// A fixed quota of `tokens` (`None`: more than a `u32` holds), or the error at `span`.
fn fixed_quota(tokens: Option<u32>, span: Span) -> syn::Result<Quota> {
    match tokens {
        Some(0) => Err(syn::Error::new(
            span,
            "`quota = 0` would refuse every retry: write `quota = \"off\"` for no quota, or \
             `max_attempts = 1` for no retries",
        )),
        Some(tokens) => Ok(Quota::Fixed(tokens)),
        None => Err(syn::Error::new(
            span,
            "`quota` holds at most 4294967295 tokens (a `u32`): write a smaller number such as \
             `quota = 2000`, or `quota = \"off\"` for no quota",
        )),
    }
}

fn parse_u32(lit: &LitInt) -> syn::Result<u32> {
    if !matches!(lit.suffix(), "" | "u32") {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`max_attempts` is a `u32`: write `max_attempts = {}` without the `{}` suffix",
                lit.base10_digits(),
                lit.suffix()
            ),
        ));
    }
    lit.base10_parse::<u32>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            "`max_attempts` does not fit in a `u32`: write a small number such as \
             `max_attempts = 5`",
        )
    })
}

/// A duration string, with the runtime's rules.
fn duration(arg: &Arg) -> syn::Result<Duration> {
    let name = arg.key.name();
    let lit = match literal(arg) {
        Some(Lit::Str(lit)) => lit,
        Some(Lit::Int(int)) => {
            let digits = int.base10_digits();
            return Err(syn::Error::new(
                int.span(),
                format!(
                    "`{name}` takes a duration string with a unit, found a number: write \
                     `{name} = \"{digits}s\"` or `{name} = \"{digits}ms\"`"
                ),
            ));
        }
        _ => {
            return Err(syn::Error::new_spanned(
                &arg.value,
                format!(
                    "`{name}` takes a duration string such as \"2s\" or \"250ms\", found {}: \
                     write `{}`",
                    describe(&arg.value),
                    arg.key.example()
                ),
            ));
        }
    };
    parse_duration(&lit.value())
        .map_err(|error| syn::Error::new(lit.span(), format!("`{name}`: {error}")))
}

/// A duration string that must not be zero; `instead` says what to do for none.
fn positive_duration(arg: &Arg, instead: &str) -> syn::Result<Duration> {
    let value = duration(arg)?;
    if value.is_zero() {
        return Err(syn::Error::new_spanned(
            &arg.value,
            format!(
                "`{}` must be longer than zero: write e.g. `{}`, or {instead}",
                arg.key.name(),
                arg.key.example()
            ),
        ));
    }
    Ok(value)
}

/// `scope = "name"`, not blank.
fn scope(arg: &Arg) -> syn::Result<LitStr> {
    let lit = string(arg)?;
    if lit.value().trim().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            "`scope` must not be empty: write `scope = \"store\"`, or leave it out to use the \
             function's path",
        ));
    }
    Ok(lit.clone())
}

/// `key = path::to::function`.
fn path(arg: &Arg, signature: &str) -> syn::Result<ExprPath> {
    match strip_expr(&arg.value) {
        Expr::Path(path) => Ok(path.clone()),
        other => Err(syn::Error::new_spanned(
            other,
            format!(
                "`{}` takes the path of a function `{signature}`, found {}: define the function \
                 and write `{}`",
                arg.key.name(),
                describe(other),
                arg.key.example()
            ),
        )),
    }
}

/// `crate = "path"`: the path, located at the string with the macro's hygiene (it is generated
/// code).
fn crate_path(arg: &Arg) -> syn::Result<TokenStream> {
    let Some(Lit::Str(lit)) = literal(arg) else {
        return Err(syn::Error::new_spanned(
            &arg.value,
            format!(
                "`crate` takes the path of `retry_core` as a string, found {}: write \
                 `crate = \"::retry_core\"`",
                describe(&arg.value)
            ),
        ));
    };
    match lit.parse::<syn::Path>() {
        Ok(path) if path.segments.iter().all(|s| s.arguments.is_none()) => {
            let at = Span::call_site().located_at(lit.span());
            Ok(path
                .into_token_stream()
                .into_iter()
                .map(|mut token| {
                    token.set_span(at);
                    token
                })
                .collect())
        }
        _ => Err(syn::Error::new(
            lit.span(),
            format!(
                "`crate = {:?}` is not a path: write the path under which `retry_core` is \
                 reachable, e.g. `crate = \"::retry_core\"` or `crate = \"my_facade::retry\"`",
                lit.value()
            ),
        )),
    }
}
