//! Parsing: the attribute's arguments (`key = value, ...`) and the function it is placed on.
//!
//! Only syntax is checked here (known keys, each once, each with a value); what the values mean
//! is checked in [`valid`](super::valid).

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Expr, Ident, Signature, Token, Visibility, braced};

use super::Errors;
use crate::diagnostics::edit_distance;

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
    AttemptTimeout,
    Scope,
    Strategy,
    Classifier,
    RetryIf,
    OnRetry,
    Crate,
}

impl Key {
    /// Every argument, in the order the documentation lists them.
    pub(crate) const ALL: [Key; 14] = [
        Key::Preset,
        Key::MaxAttempts,
        Key::Mode,
        Key::InitialBackoff,
        Key::MaxBackoff,
        Key::Jitter,
        Key::Timeout,
        Key::AttemptTimeout,
        Key::Scope,
        Key::Strategy,
        Key::Classifier,
        Key::RetryIf,
        Key::OnRetry,
        Key::Crate,
    ];

    /// The arguments that configure the function's own strategy: meaningless with `strategy`.
    pub(crate) const TUNING: [Key; 8] = [
        Key::Preset,
        Key::MaxAttempts,
        Key::Mode,
        Key::InitialBackoff,
        Key::MaxBackoff,
        Key::Jitter,
        Key::Timeout,
        Key::Scope,
    ];

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
            Key::AttemptTimeout => "attempt_timeout",
            Key::Scope => "scope",
            Key::Strategy => "strategy",
            Key::Classifier => "classifier",
            Key::RetryIf => "retry_if",
            Key::OnRetry => "on_retry",
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
            Key::AttemptTimeout => "attempt_timeout = \"2s\"",
            Key::Scope => "scope = \"store\"",
            Key::Strategy => "strategy = self.strategy",
            Key::Classifier => "classifier = MyClassifier",
            Key::RetryIf => "retry_if = is_retryable",
            Key::OnRetry => "on_retry = log_retry",
            Key::Crate => "crate = \"::retry_core\"",
        }
    }

    fn from_ident(ident: &Ident) -> Option<Key> {
        let name = ident.unraw().to_string();
        Key::ALL.into_iter().find(|key| key.name() == name)
    }
}

/// The list of valid arguments, for error messages.
pub(crate) fn valid_keys() -> String {
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

/// The attribute's arguments: known keys, each at most once, each with a value.
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
pub(crate) fn parse_args(tokens: TokenStream, errors: &mut Errors) -> Args {
    let parser = |input: ParseStream| parse_arg_list(input, errors);
    match parser.parse2(tokens) {
        Ok(args) => args,
        Err(error) => {
            errors.push(error);
            Args::default()
        }
    }
}

fn parse_arg_list(input: ParseStream, errors: &mut Errors) -> syn::Result<Args> {
    let mut args = Args::default();
    while !input.is_empty() {
        let lookahead = input.lookahead1();
        if !lookahead.peek(Ident::peek_any) {
            return Err(input.error(format!(
                "expected an argument such as `max_attempts = 5`; the arguments are: {}",
                valid_keys()
            )));
        }
        let ident = input.call(Ident::parse_any)?;
        let value = if input.peek(Token![=]) {
            let eq: Token![=] = input.parse()?;
            if input.is_empty() || input.peek(Token![,]) {
                errors.push(missing_value(&ident, Some(&eq)));
                None
            } else {
                Some(input.parse::<Expr>()?)
            }
        } else if input.is_empty() || input.peek(Token![,]) {
            errors.push(missing_value(&ident, None));
            None
        } else {
            let next = input.cursor().token_tree().map(|(token, _)| token);
            return Err(syn::Error::new_spanned(
                quote::quote!(#ident #next),
                format!(
                    "expected `=` after `{}`: write `{}`",
                    ident.unraw(),
                    example_for(&ident)
                ),
            ));
        };
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        let Some(key) = Key::from_ident(&ident) else {
            errors.push(unknown_key(&ident));
            continue;
        };
        if args.get(key).is_some() {
            errors.push(syn::Error::new(
                ident.span(),
                format!(
                    "duplicate argument `{}`: give each argument once; remove this one",
                    key.name()
                ),
            ));
            continue;
        }
        if let Some(value) = value {
            args.args.push(Arg { key, ident, value });
        }
    }
    Ok(args)
}

fn example_for(ident: &Ident) -> String {
    match Key::from_ident(ident) {
        Some(key) => key.example().to_owned(),
        None => format!("{} = ...", ident.unraw()),
    }
}

fn missing_value(ident: &Ident, eq: Option<&Token![=]>) -> syn::Error {
    let message = match Key::from_ident(ident) {
        Some(key) => format!(
            "missing value for `{}`: write `{}`",
            key.name(),
            key.example()
        ),
        None => return unknown_key(ident),
    };
    syn::Error::new_spanned(quote::quote!(#ident #eq), message)
}

fn unknown_key(ident: &Ident) -> syn::Error {
    let name = ident.unraw().to_string();
    let suggestion = Key::ALL
        .iter()
        .map(|key| (edit_distance(&name, key.name()), key.name()))
        .filter(|(distance, key)| *distance <= key.len().max(3) / 3)
        .min()
        .map(|(_, key)| format!(" (did you mean `{key}`?)"))
        .unwrap_or_default();
    syn::Error::new(
        ident.span(),
        format!(
            "unknown argument `{name}` in `#[retryable(...)]`{suggestion}; expected one of: {}",
            valid_keys()
        ),
    )
}

/// The function the attribute is placed on, as written. The body is kept as tokens (not parsed
/// into statements), so the user's code reaches the compiler untouched.
pub(crate) struct RetryableFn {
    pub(crate) attrs: Vec<Attribute>,
    /// Inner attributes of the body (`#![allow(...)]`): moved to the function.
    pub(crate) inner_attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    /// The statements of the body.
    pub(crate) body: TokenStream,
    /// The span of the body's braces.
    pub(crate) body_span: Span,
}

/// Parses the annotated item as a function with a body; anything else is an error spanned at
/// the item's keyword.
pub(crate) fn parse_fn(item: TokenStream) -> syn::Result<RetryableFn> {
    let parser = |input: ParseStream| {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let fn_like = input.peek(Token![fn])
            || input.peek(Token![async])
            || input.peek(Token![const])
            || input.peek(Token![unsafe])
            || input.peek(Token![extern]);
        if !fn_like {
            return Err(not_a_fn(input));
        }
        let sig: Signature = input.parse()?;
        if input.peek(Token![;]) {
            return Err(syn::Error::new_spanned(
                &sig.ident,
                "`#[retryable]` needs a function body: put it on the method of the `impl`, not \
                 on the trait's declaration",
            ));
        }
        let content;
        let brace = braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let body: TokenStream = content.parse()?;
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the function"));
        }
        Ok(RetryableFn {
            attrs,
            inner_attrs,
            vis,
            sig,
            body,
            body_span: brace.span.join(),
        })
    };
    parser.parse2(item)
}

fn not_a_fn(input: ParseStream) -> syn::Error {
    let found = input
        .cursor()
        .token_tree()
        .map(|(token, _)| token)
        .map(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => format!("`{ident}`"),
            other => format!("`{other}`"),
        })
        .unwrap_or_else(|| "nothing".to_owned());
    input.error(format!(
        "`#[retryable]` can only be placed on an `async fn`, found {found}: put it on the \
         `async fn` that makes the call (`#[retryable] async fn get(...) -> Result<T, E> {{ ... }}`)"
    ))
}
