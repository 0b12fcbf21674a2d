//! Validation: what the arguments' values mean, the rules between arguments, and what the
//! function must look like. Every rule of `#[retryable]` lives here.
//!
//! Values are checked with the macro's copies of the runtime's parsers ([`crate::parse`],
//! tested against the originals), so a value accepted here is a value the runtime accepts, and
//! the messages are the runtime's.

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{
    Expr, ExprPath, FnArg, GenericArgument, Lit, LitInt, LitStr, PathArguments, ReceiverKind,
    ReturnType, Type,
};

use super::Errors;
use super::args::{Arg, Args, Key, RetryableFn};

use crate::parse::preset::RetryPreset;
use crate::parse::{defaults, duration, jitter, mode};

/// The validated arguments.
pub(crate) struct Config {
    /// The path of `retry_core` in generated code.
    pub(crate) krate: TokenStream,
    pub(crate) strategy: StrategySource,
    pub(crate) classifier: ClassifierSource,
    /// `on_retry = path`.
    pub(crate) on_retry: Option<ExprPath>,
    /// `attempt_timeout = "..."`, with the span of the argument.
    pub(crate) attempt_timeout: Option<(Duration, (Span, Span))>,
}

/// Where a call's strategy comes from.
pub(crate) enum StrategySource {
    /// The function's own strategy, built once from the tuning arguments.
    Default {
        /// `scope = "..."`, else the function's path.
        scope: Option<LitStr>,
        /// The `RetryPreset` variant the configuration starts from.
        preset: &'static str,
        /// The builder calls, in order.
        settings: Vec<Setting>,
    },
    /// `strategy = expr`.
    Expr(Expr),
}

/// One call on `RetryConfigBuilder`.
pub(crate) enum Setting {
    MaxAttempts(u32),
    /// The `RetryMode` variant.
    Mode(&'static str),
    InitialBackoff(Duration),
    MaxBackoff(Duration),
    /// A `max_backoff` below the preset's own throttling backoff base lowers it too.
    ThrottlingBackoff(Duration),
    /// The `Jitter` variant.
    Jitter(&'static str),
    Timeout(Duration),
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

/// Checks every argument's value and the rules between arguments. `None` when an argument is
/// unusable (its error is recorded); rule violations are recorded but still give a `Config`, so
/// the function can be checked too.
pub(crate) fn validate_args(args: &Args, errors: &mut Errors) -> Option<Config> {
    let mut ok = true;
    let mut fail = |errors: &mut Errors, error: syn::Error| {
        errors.push(error);
        ok = false;
    };

    let preset = match args.get(Key::Preset) {
        Some(arg) => match string(arg).and_then(|lit| {
            lit.value()
                .parse::<RetryPreset>()
                .map_err(|error| syn::Error::new(lit.span(), error))
        }) {
            Ok(preset) => Some(preset),
            Err(error) => {
                fail(errors, error);
                None
            }
        },
        None => None,
    };
    let base = defaults::backoff(preset.unwrap_or(RetryPreset::Default));
    let from_base = match preset {
        Some(preset) => format!(", from preset `{}`", preset.as_str()),
        None => ", the default".to_owned(),
    };

    let mut settings = Vec::new();
    let mut initial_backoff = None;
    let mut max_backoff = None;
    for key in [
        Key::MaxAttempts,
        Key::Mode,
        Key::InitialBackoff,
        Key::MaxBackoff,
        Key::Jitter,
        Key::Timeout,
    ] {
        let Some(arg) = args.get(key) else { continue };
        let setting = match key {
            Key::MaxAttempts => max_attempts(arg).map(Setting::MaxAttempts),
            Key::Mode => string(arg).and_then(|lit| {
                lit.value()
                    .parse::<mode::RetryMode>()
                    .map(|mode| Setting::Mode(mode.variant()))
                    .map_err(|error| syn::Error::new(lit.span(), error))
            }),
            Key::InitialBackoff => duration(arg).map(|(value, _)| {
                initial_backoff = Some((value, arg));
                Setting::InitialBackoff(value)
            }),
            Key::MaxBackoff => duration(arg).map(|(value, _)| {
                max_backoff = Some((value, arg));
                Setting::MaxBackoff(value)
            }),
            Key::Jitter => string(arg).and_then(|lit| {
                lit.value()
                    .parse::<jitter::Jitter>()
                    .map(|jitter| Setting::Jitter(jitter.variant()))
                    .map_err(|error| syn::Error::new(lit.span(), error))
            }),
            Key::Timeout => {
                positive_duration(arg, "leave `timeout` out for no deadline").map(Setting::Timeout)
            }
            _ => continue,
        };
        match setting {
            Ok(setting) => settings.push(setting),
            Err(error) => fail(errors, error),
        }
    }

    // initial_backoff <= max_backoff, the missing one taking the preset's value.
    if initial_backoff.is_some() || max_backoff.is_some() {
        let (initial, initial_given) = match initial_backoff {
            Some((value, _)) => (value, ""),
            None => (base.initial, from_base.as_str()),
        };
        let (max, max_given) = match max_backoff {
            Some((value, _)) => (value, ""),
            None => (base.max, from_base.as_str()),
        };
        if let (Some(throttling), Some(_)) = (base.throttling, max_backoff)
            && throttling > max
        {
            settings.push(Setting::ThrottlingBackoff(max));
        }
        if initial > max {
            let at = initial_backoff.or(max_backoff).map(|(_, arg)| arg);
            if let Some(arg) = at {
                fail(
                    errors,
                    syn::Error::new_spanned(
                        &arg.value,
                        format!(
                            "initial_backoff ({initial:?}{initial_given}) must not exceed \
                             max_backoff ({max:?}{max_given}): lower `initial_backoff` or \
                             raise `max_backoff`"
                        ),
                    ),
                );
            }
        }
    }

    let scope = match args.get(Key::Scope) {
        Some(arg) => match string(arg) {
            Ok(lit) if lit.value().trim().is_empty() => {
                fail(
                    errors,
                    syn::Error::new(
                        lit.span(),
                        "`scope` must not be empty: write `scope = \"store\"`, or leave it out \
                         to use the function's path",
                    ),
                );
                None
            }
            Ok(lit) => Some(lit.clone()),
            Err(error) => {
                fail(errors, error);
                None
            }
        },
        None => None,
    };

    let strategy = match args.get(Key::Strategy) {
        Some(arg) => {
            for key in Key::TUNING {
                if let Some(tuning) = args.get(key) {
                    fail(
                        errors,
                        syn::Error::new(
                            tuning.ident.span(),
                            format!(
                                "`{}` cannot be combined with `strategy = ...`: the strategy \
                                 carries its own configuration; configure it where it is built \
                                 (`RetryConfig::builder()...`), or remove `strategy` to let \
                                 `#[retryable]` build one",
                                key.name()
                            ),
                        ),
                    );
                }
            }
            StrategySource::Expr(arg.value.clone())
        }
        None => StrategySource::Default {
            scope,
            preset: preset.unwrap_or(RetryPreset::Default).variant(),
            settings,
        },
    };

    let classifier = match (args.get(Key::Classifier), args.get(Key::RetryIf)) {
        (Some(classifier), Some(retry_if)) => {
            let later = if args.position(Key::RetryIf) > args.position(Key::Classifier) {
                retry_if
            } else {
                classifier
            };
            fail(
                errors,
                syn::Error::new(
                    later.ident.span(),
                    "`classifier` and `retry_if` cannot be combined: `retry_if = f` is \
                     shorthand for `classifier = RetryIf::new(f)`; keep one of them",
                ),
            );
            ClassifierSource::RetryInfo
        }
        (Some(classifier), None) => ClassifierSource::Expr(classifier.value.clone()),
        (None, Some(retry_if)) => match path(retry_if, "fn(&E) -> bool") {
            Ok(path) => ClassifierSource::RetryIf(path),
            Err(error) => {
                fail(errors, error);
                ClassifierSource::RetryInfo
            }
        },
        (None, None) => ClassifierSource::RetryInfo,
    };

    let on_retry = match args.get(Key::OnRetry) {
        Some(arg) => match path(arg, "fn(&RetryEvent<'_, E>)") {
            Ok(path) => Some(path),
            Err(error) => {
                fail(errors, error);
                None
            }
        },
        None => None,
    };

    let attempt_timeout = match args.get(Key::AttemptTimeout) {
        Some(arg) => match positive_duration(
            arg,
            "leave `attempt_timeout` out to let attempts run to completion",
        ) {
            Ok(value) => Some((value, (arg.ident.span(), span_range(&arg.value).1))),
            Err(error) => {
                fail(errors, error);
                None
            }
        },
        None => None,
    };

    let krate = match args.get(Key::Crate) {
        Some(arg) => match crate_path(arg) {
            Ok(path) => path,
            Err(error) => {
                fail(errors, error);
                return None;
            }
        },
        None => quote!(::retry_core),
    };

    ok.then_some(Config {
        krate,
        strategy,
        classifier,
        on_retry,
        attempt_timeout,
    })
}

/// The literal of an argument that takes one.
fn literal(arg: &Arg) -> Option<&Lit> {
    match &arg.value {
        Expr::Lit(expr) => Some(&expr.lit),
        Expr::Group(group) => match &*group.expr {
            Expr::Lit(expr) => Some(&expr.lit),
            _ => None,
        },
        _ => None,
    }
}

/// What a value is, for "expected ..., found ..." messages.
fn describe(value: &Expr) -> &'static str {
    match value {
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

/// A duration string, with the runtime's parser.
fn duration(arg: &Arg) -> syn::Result<(Duration, &LitStr)> {
    let lit = match literal(arg) {
        Some(Lit::Str(lit)) => lit,
        Some(Lit::Int(int)) => {
            return Err(syn::Error::new(
                int.span(),
                format!(
                    "`{}` takes a duration string with a unit, found a number: write `{} = \
                     \"{}s\"` or `{} = \"{}ms\"`",
                    arg.key.name(),
                    arg.key.name(),
                    int.base10_digits(),
                    arg.key.name(),
                    int.base10_digits()
                ),
            ));
        }
        _ => {
            return Err(syn::Error::new_spanned(
                &arg.value,
                format!(
                    "`{}` takes a duration string such as \"2s\" or \"250ms\", found {}: write \
                     `{}`",
                    arg.key.name(),
                    describe(&arg.value),
                    arg.key.example()
                ),
            ));
        }
    };
    duration::parse_duration(&lit.value())
        .map(|value| (value, lit))
        .map_err(|error| syn::Error::new(lit.span(), format!("`{}`: {error}", arg.key.name())))
}

/// A duration string that must not be zero.
fn positive_duration(arg: &Arg, instead: &str) -> syn::Result<Duration> {
    let (value, lit) = duration(arg)?;
    if value.is_zero() {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`{}` must be longer than zero: write e.g. `{}`, or {instead}",
                arg.key.name(),
                arg.key.example()
            ),
        ));
    }
    Ok(value)
}

/// `key = path::to::function`.
fn path(arg: &Arg, signature: &str) -> syn::Result<ExprPath> {
    match &arg.value {
        Expr::Path(path) => Ok(path.clone()),
        Expr::Group(group) if matches!(&*group.expr, Expr::Path(_)) => match &*group.expr {
            Expr::Path(path) => Ok(path.clone()),
            _ => unreachable!(),
        },
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

/// `crate = "path"`: the path, spanned at the string.
fn crate_path(arg: &Arg) -> syn::Result<TokenStream> {
    let lit = match literal(arg) {
        Some(Lit::Str(lit)) => lit,
        _ => {
            return Err(syn::Error::new_spanned(
                &arg.value,
                format!(
                    "`crate` takes the path of `retry_core` as a string, found {}: write \
                     `crate = \"::retry_core\"`",
                    describe(&arg.value)
                ),
            ));
        }
    };
    match lit.parse::<syn::Path>() {
        Ok(path) if path.segments.iter().all(|s| s.arguments.is_none()) => {
            // Located at the string, with the macro's hygiene: the path is generated code.
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

/// What the function looks like, as far as the expansion cares.
pub(crate) struct FnShape {
    /// Whether the method takes `&mut self`.
    pub(crate) mut_self: bool,
    /// The declared return type.
    pub(crate) output: Type,
    /// The `E` of `Result<T, E>`, when written out.
    pub(crate) error_type: Option<Type>,
}

/// Checks that the function can be rewritten: `async`, `self` by reference, a `Result` return
/// type.
pub(crate) fn validate_fn(function: &RetryableFn, errors: &mut Errors) -> Option<FnShape> {
    let sig = &function.sig;
    let mut ok = true;
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            format!(
                "`#[retryable]` functions must be `async`: write `async fn {}(...)`; to retry \
                 a synchronous call, wrap it in an `async fn`",
                sig.ident
            ),
        );
        ok = false;
    }
    let mut mut_self = false;
    for input in &sig.inputs {
        let FnArg::Receiver(receiver) = input else {
            continue;
        };
        match &receiver.kind {
            ReceiverKind::Reference(_, _, mutability) => mut_self = mutability.is_some(),
            ReceiverKind::Typed(_, ty) if matches!(strip_group(ty), Type::Reference(_)) => {
                if let Type::Reference(reference) = strip_group(ty) {
                    mut_self = reference.mutability.is_some();
                }
            }
            _ => {
                errors.spanned(
                    receiver,
                    "retryable methods cannot take `self` by value: take `&self` or `&mut self` \
                     (each attempt needs `self` again)",
                );
                ok = false;
            }
        }
    }
    let output = match &sig.output {
        ReturnType::Type(_, ty) => {
            if is_result(ty) {
                Some((**ty).clone())
            } else {
                errors.spanned(
                    ty,
                    format!(
                        "`#[retryable]` functions must return a `Result`, found `{}`: write \
                         `-> Result<{}, E>` where `E` is the error to retry on",
                        ty.to_token_stream(),
                        ty.to_token_stream()
                    ),
                );
                None
            }
        }
        ReturnType::Default => {
            errors.push(syn::Error::new(
                sig.paren_token.span.close(),
                "`#[retryable]` functions must return a `Result`: add a return type such as \
                 `-> Result<T, E>` after the arguments",
            ));
            None
        }
    };
    let output = output?;
    ok.then(|| FnShape {
        mut_self,
        error_type: result_error_type(&output),
        output,
    })
}

fn strip_group(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => strip_group(&group.elem),
        Type::Paren(paren) => strip_group(&paren.elem),
        other => other,
    }
}

/// Whether `ty` is written as a `Result`: a path whose last segment is `Result` or ends in
/// `Result` (an alias such as `io::Result<T>` or `StoreResult<T>`). Checked textually, so the
/// error comes before type checking and points at the return type.
fn is_result(ty: &Type) -> bool {
    match strip_group(ty) {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident.to_string().ends_with("Result")),
        _ => false,
    }
}

/// The `E` of a return type written `Result<T, E>`.
fn result_error_type(ty: &Type) -> Option<Type> {
    let Type::Path(path) = strip_group(ty) else {
        return None;
    };
    let segment = path.path.segments.last()?;
    if segment.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(arguments) = &segment.arguments else {
        return None;
    };
    let types: Vec<&Type> = arguments
        .args
        .iter()
        .filter_map(|argument| match argument {
            GenericArgument::Type(ty) => Some(ty),
            _ => None,
        })
        .collect();
    match types[..] {
        [_, error] if arguments.args.len() == 2 => Some(error.clone()),
        _ => None,
    }
}

/// The first and last spans of `tokens`, to span generated code over the user's tokens.
pub(crate) fn span_range(tokens: &impl ToTokens) -> (Span, Span) {
    let mut iter = tokens.to_token_stream().into_iter();
    let first = iter
        .next()
        .map_or_else(Span::call_site, |token| token.span());
    let last = iter.last().map_or(first, |token| token.span());
    (first, last)
}
