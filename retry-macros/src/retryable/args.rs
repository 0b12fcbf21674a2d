//! Parsing: the attribute's arguments, `key = value, ...`, with syn's meta parser.
//!
//! Only syntax is checked here (known keys, each once, each with a value); what the values
//! mean is checked in [`value`](super::value), how they combine in [`rules`](super::rules).

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::{Expr, Ident, Token};

use crate::diagnostics::{Errors, closest, written};
use crate::list::{self, ListSyntax};

/// One argument of `#[retryable(...)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Preset,
    MaxAttempts,
    Mode,
    InitialBackoff,
    MaxBackoff,
    Jitter,
    Timeout,
    MaxWait,
    AttemptTimeout,
    Quota,
    LongPolling,
    Scope,
    Strategy,
    Classifier,
    RetryIf,
    OnRetry,
    Shed,
    Idempotent,
    HedgeAfter,
    MaxHedges,
    Crate,
}

impl Key {
    /// Every argument, in the order the documentation lists them.
    pub(crate) const ALL: [Key; 21] = [
        Key::Preset,
        Key::MaxAttempts,
        Key::Mode,
        Key::InitialBackoff,
        Key::MaxBackoff,
        Key::Jitter,
        Key::Timeout,
        Key::MaxWait,
        Key::AttemptTimeout,
        Key::Quota,
        Key::LongPolling,
        Key::Scope,
        Key::Strategy,
        Key::Classifier,
        Key::RetryIf,
        Key::OnRetry,
        Key::Shed,
        Key::Idempotent,
        Key::HedgeAfter,
        Key::MaxHedges,
        Key::Crate,
    ];

    /// The arguments that configure the function's own strategy: meaningless with `strategy`.
    pub(crate) const TUNING: [Key; 11] = [
        Key::Preset,
        Key::MaxAttempts,
        Key::Mode,
        Key::InitialBackoff,
        Key::MaxBackoff,
        Key::Jitter,
        Key::Timeout,
        Key::MaxWait,
        Key::Quota,
        Key::LongPolling,
        Key::Scope,
    ];

    /// The arguments that need an `async fn`: a blocking attempt cannot be cut short, nor run
    /// beside a hedge. (The pass test's generator skips their blocking form.)
    #[cfg(test)]
    pub(crate) const ASYNC_ONLY: [Key; 3] = [Key::AttemptTimeout, Key::HedgeAfter, Key::MaxHedges];

    /// The name written in the attribute.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Key::Preset => "preset",
            Key::MaxAttempts => "max_attempts",
            Key::Mode => "mode",
            Key::InitialBackoff => "initial_backoff",
            Key::MaxBackoff => "max_backoff",
            Key::Jitter => "jitter",
            Key::Timeout => "timeout",
            Key::MaxWait => "max_wait",
            Key::AttemptTimeout => "attempt_timeout",
            Key::Quota => "quota",
            Key::LongPolling => "long_polling",
            Key::Scope => "scope",
            Key::Strategy => "strategy",
            Key::Classifier => "classifier",
            Key::RetryIf => "retry_if",
            Key::OnRetry => "on_retry",
            Key::Shed => "shed",
            Key::Idempotent => "idempotent",
            Key::HedgeAfter => "hedge_after",
            Key::MaxHedges => "max_hedges",
            Key::Crate => "crate",
        }
    }

    /// A correct use, for "write ... instead" messages.
    pub(crate) fn example(self) -> &'static str {
        match self {
            Key::Preset => "preset = \"aws-2026\"",
            Key::MaxAttempts => "max_attempts = 3",
            Key::Mode => "mode = \"adaptive\"",
            Key::InitialBackoff => "initial_backoff = \"100ms\"",
            Key::MaxBackoff => "max_backoff = \"20s\"",
            Key::Jitter => "jitter = \"full\"",
            Key::Timeout => "timeout = \"30s\"",
            Key::MaxWait => "max_wait = \"500ms\"",
            Key::AttemptTimeout => "attempt_timeout = \"2s\"",
            Key::Quota => "quota = \"off\"",
            Key::LongPolling => "long_polling = true",
            Key::Scope => "scope = \"store\"",
            Key::Strategy => "strategy = self.strategy",
            Key::Classifier => "classifier = MyClassifier",
            Key::RetryIf => "retry_if = is_retryable",
            Key::OnRetry => "on_retry = log_retry",
            Key::Shed => "shed = true",
            Key::Idempotent => "idempotent = true",
            Key::HedgeAfter => "hedge_after = \"p95\"",
            Key::MaxHedges => "max_hedges = 2",
            Key::Crate => "crate = \"::retry_core\"",
        }
    }

    fn from_ident(ident: &Ident) -> Option<Key> {
        let name = ident.unraw().to_string();
        Key::ALL.into_iter().find(|key| key.name() == name)
    }
}

/// The list of valid arguments, for error messages.
fn valid_keys() -> String {
    let keys: Vec<String> = Key::ALL
        .iter()
        .map(|key| format!("`{}`", key.example()))
        .collect();
    keys.join(", ")
}

/// One `key = value` argument.
pub(crate) struct Arg {
    pub(crate) key: Key,
    /// The key as written, for spans.
    pub(crate) ident: Ident,
    pub(crate) value: Expr,
}

/// The attribute's arguments, in the order written: known keys, each at most once, each with
/// a value.
#[derive(Default)]
pub(crate) struct Args {
    pub(crate) args: Vec<Arg>,
}

impl Args {
    /// The argument `key`, if given.
    pub(crate) fn get(&self, key: Key) -> Option<&Arg> {
        self.args.iter().find(|arg| arg.key == key)
    }

    /// Where `key` was written among the arguments.
    pub(crate) fn position(&self, key: Key) -> Option<usize> {
        self.args.iter().position(|arg| arg.key == key)
    }
}

/// Parses the attribute's arguments. Problems with single arguments (unknown, duplicate, no
/// value) are recorded and the argument skipped; a syntax error ends the parse.
pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> Args {
    let syntax = ListSyntax {
        expected_key: format!(
            "expected an argument such as `max_attempts = 5`; the arguments are: {}",
            valid_keys()
        ),
        expected_comma: "expected `,` between arguments: write them as a list, e.g. \
                         `#[retryable(max_attempts = 5, mode = \"adaptive\")]`",
    };
    let mut args = Args::default();
    let parsed = list::parse(tokens, &syntax, |meta| {
        let Some(arg) = parse_arg(meta, errors)? else {
            return Ok(());
        };
        if args.get(arg.key).is_some() {
            errors.push(syn::Error::new(
                arg.ident.span(),
                format!(
                    "duplicate argument `{}`: give each argument once; remove this one",
                    arg.key.name()
                ),
            ));
        } else {
            args.args.push(arg);
        }
        Ok(())
    });
    if let Err(error) = parsed {
        errors.push(error);
    }
    args
}

/// One `key = value`. `Ok(None)`: the argument is unusable, its error recorded and its tokens
/// read. `Err`: the list cannot be read further.
fn parse_arg(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Option<Arg>> {
    let input = meta.input;
    let Some(ident) = meta
        .path
        .get_ident()
        .filter(|_| meta.path.leading_colon.is_none())
    else {
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            input.parse::<Expr>()?;
        }
        let path = &meta.path;
        let written = written(path);
        errors.push(syn::Error::new_spanned(
            path,
            format!(
                "unknown argument `{written}` in `#[retryable(...)]`; expected one of: {}",
                valid_keys()
            ),
        ));
        return Ok(None);
    };
    if !input.peek(Token![=]) {
        if input.is_empty() || input.peek(Token![,]) {
            errors.push(missing_value(ident, None));
            return Ok(None);
        }
        let next = input.cursor().token_tree().map(|(token, _)| token);
        let example = match Key::from_ident(ident) {
            Some(key) => key.example().to_owned(),
            None => format!("{} = ...", ident.unraw()),
        };
        return Err(syn::Error::new_spanned(
            quote!(#ident #next),
            format!("expected `=` after `{}`: write `{example}`", ident.unraw()),
        ));
    }
    let eq: Token![=] = input.parse()?;
    if input.is_empty() || input.peek(Token![,]) {
        errors.push(missing_value(ident, Some(&eq)));
        return Ok(None);
    }
    let value: Expr = input.parse()?;
    let Some(key) = Key::from_ident(ident) else {
        errors.push(unknown_key(ident));
        return Ok(None);
    };
    Ok(Some(Arg {
        key,
        ident: ident.clone(),
        value,
    }))
}

fn missing_value(ident: &Ident, eq: Option<&Token![=]>) -> syn::Error {
    let Some(key) = Key::from_ident(ident) else {
        return unknown_key(ident);
    };
    syn::Error::new_spanned(
        quote!(#ident #eq),
        format!(
            "missing value for `{}`: write `{}`",
            key.name(),
            key.example()
        ),
    )
}

fn unknown_key(ident: &Ident) -> syn::Error {
    let name = ident.unraw().to_string();
    let suggestion = closest(&name, Key::ALL.map(Key::name))
        .map(|key| format!(" (did you mean `{key}`?)"))
        .unwrap_or_default();
    syn::Error::new(
        ident.span(),
        format!(
            "unknown argument `{name}` in `#[retryable(...)]`{suggestion}; expected one of: {}",
            valid_keys()
        ),
    )
}
