//! Parsing of `#[retry(...)]` attributes into [`Key`]s.
//!
//! This step checks the syntax of each key (does it take a value, is the value well formed); where
//! a key may appear and how keys combine is checked later, in `valid`.

use super::Errors;
use crate::diagnostics::edit_distance;
use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, quote};
use std::fmt;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, Lit, LitStr, Meta, Path, Token};

/// The name of the helper attribute.
const ATTR: &str = "retry";

/// The keys that describe how an error is retried (one category: a variant's keys of this
/// category replace the enum's).
const KIND_KEYS: [&str; 5] = ["retryable", "transient", "throttling", "timeout", "never"];

/// Every key, for "did you mean" suggestions.
const ALL_KEYS: [&str; 9] = [
    "retryable",
    "transient",
    "throttling",
    "timeout",
    "never",
    "fault",
    "transparent",
    "after",
    "crate",
];

/// The list of valid keys printed with an unknown key.
const VALID_KEYS: &str = "`retryable`, `transient`, `throttling`, `timeout`, `never`, \
     `fault = \"client\"`, `fault = \"server\"`, `transparent`, \
     `after` (on a field), `crate = \"path\"` (on the type)";

/// Whether retrying is safe, as computed by the macro (mirrors `retry_core::RetrySafety`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Safety {
    /// `RetrySafety::Yes`.
    Yes,
    /// `RetrySafety::No`.
    No,
    /// `RetrySafety::Maybe` (the trait's default).
    Maybe,
}

/// The side an error is attributed to (mirrors `retry_core::Fault`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FaultSide {
    /// `Fault::Client`.
    Client,
    /// `Fault::Server`.
    Server,
    /// `Fault::Unknown` (the trait's default).
    Unknown,
}

impl fmt::Display for FaultSide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FaultSide::Client => "client",
            FaultSide::Server => "server",
            FaultSide::Unknown => "unknown",
        })
    }
}

impl From<FaultSide> for KeyKind {
    fn from(side: FaultSide) -> Self {
        KeyKind::Fault(side)
    }
}

/// What one key inside `#[retry(...)]` says.
#[derive(Clone)]
pub(crate) enum KeyKind {
    /// `retryable`: safe to retry.
    Retryable,
    /// `transient`: safe to retry, a server fault.
    Transient,
    /// `throttling`: safe to retry, the service asked to slow down, a server fault.
    Throttling,
    /// `timeout`: safe to retry, the attempt timed out, a server fault.
    Timeout,
    /// `never`: must not be retried.
    Never,
    /// `fault = "client" | "server"`.
    Fault(FaultSide),
    /// `transparent`: delegate to the single field.
    Transparent,
    /// `after` (on a field): the field holds the server's `retry_after`.
    After,
    /// `crate = "path"` (on the type): the path of `retry_core`.
    Crate(Path),
}

impl KeyKind {
    /// Whether this key is one of [`KIND_KEYS`].
    pub(crate) fn is_kind(&self) -> bool {
        matches!(
            self,
            KeyKind::Retryable
                | KeyKind::Transient
                | KeyKind::Throttling
                | KeyKind::Timeout
                | KeyKind::Never
        )
    }

    /// Whether this key makes the error safe to retry.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(
            self,
            KeyKind::Retryable | KeyKind::Transient | KeyKind::Throttling | KeyKind::Timeout
        )
    }

    /// The fault this key implies when no `fault = ...` is given.
    pub(crate) fn implied_fault(&self) -> Option<FaultSide> {
        match self {
            KeyKind::Transient | KeyKind::Throttling | KeyKind::Timeout => Some(FaultSide::Server),
            _ => None,
        }
    }
}

/// One key of a `#[retry(...)]` attribute, with the tokens it was written with (for spans).
pub(crate) struct Key {
    /// What the key says.
    pub(crate) kind: KeyKind,
    /// The key's name as written (`throttling`, `fault`, ...).
    pub(crate) name: Ident,
    /// The whole key, value included (`fault = "client"`), for error spans.
    pub(crate) tokens: TokenStream,
}

impl Key {
    /// The key's name, for messages.
    pub(crate) fn name(&self) -> String {
        self.name.to_string()
    }

    /// The key as written, for messages (`fault = "client"`).
    pub(crate) fn written(&self) -> String {
        match &self.kind {
            KeyKind::Fault(side) => format!("fault = \"{side}\""),
            _ => self.name(),
        }
    }

    /// Whether `self` and `other` are the same key (values ignored).
    pub(crate) fn same_key(&self, other: &Key) -> bool {
        std::mem::discriminant(&self.kind) == std::mem::discriminant(&other.kind)
    }
}

impl ToTokens for Key {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.tokens.to_tokens(tokens);
    }
}

/// The keys of all `#[retry(...)]` attributes on one item (type, variant or field), in order.
#[derive(Default)]
pub(crate) struct Attrs {
    /// The keys, in the order written.
    pub(crate) keys: Vec<Key>,
}

impl Attrs {
    /// The first key of the given kind.
    pub(crate) fn find(&self, wanted: impl Fn(&KeyKind) -> bool) -> Option<&Key> {
        self.keys.iter().find(|key| wanted(&key.kind))
    }

    /// The keys of the retry category (`retryable`, `transient`, `throttling`, `timeout`,
    /// `never`).
    pub(crate) fn kinds(&self) -> impl Iterator<Item = &Key> {
        self.keys.iter().filter(|key| key.kind.is_kind())
    }

    /// The first `fault = ...`.
    pub(crate) fn fault(&self) -> Option<FaultSide> {
        self.keys.iter().find_map(|key| match key.kind {
            KeyKind::Fault(side) => Some(side),
            _ => None,
        })
    }

    /// The `transparent` key, if any.
    pub(crate) fn transparent(&self) -> Option<&Key> {
        self.find(|kind| matches!(kind, KeyKind::Transparent))
    }

    /// The `after` key, if any.
    pub(crate) fn after(&self) -> Option<&Key> {
        self.find(|kind| matches!(kind, KeyKind::After))
    }

    /// Whether any key describing the error is present (a retry key, `fault` or `transparent`).
    pub(crate) fn describes(&self) -> bool {
        self.keys.iter().any(|key| {
            key.kind.is_kind() || matches!(key.kind, KeyKind::Fault(_) | KeyKind::Transparent)
        })
    }
}

/// Parses every `#[retry(...)]` among `attrs`; syntax errors go to `errors`.
pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Attrs {
    let mut parsed = Attrs::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident(ATTR)) {
        let list = match &attr.meta {
            Meta::List(list) => list,
            Meta::Path(_) | Meta::NameValue(_) => {
                errors.spanned(
                    attr,
                    "expected keys in parentheses: write `#[retry(transient)]`, \
                     `#[retry(fault = \"client\")]`, ...",
                );
                continue;
            }
        };
        if list.tokens.is_empty() {
            errors.spanned(
                attr,
                "empty `#[retry()]`: add a key such as `#[retry(transient)]`, \
                 or remove the attribute",
            );
            continue;
        }
        let result = list.parse_nested_meta(|meta| {
            if let Some(key) = parse_key(&meta, errors)? {
                parsed.keys.push(key);
            }
            Ok(())
        });
        if let Err(error) = result {
            errors.push(explain_syntax_error(error));
        }
    }
    parsed
}

/// Adds what to write to syn's terse syntax errors inside `#[retry(...)]`.
fn explain_syntax_error(error: syn::Error) -> syn::Error {
    let help = match error.to_string().as_str() {
        "expected `,`" => {
            "expected `,` between keys: write them as a list, \
             e.g. `#[retry(throttling, fault = \"server\")]`"
        }
        "unexpected token in nested attribute, expected ident"
        | "unexpected literal in nested attribute, expected ident"
        | "expected nested attribute" => {
            "expected a key: write `#[retry(transient)]`, \
             `#[retry(fault = \"client\")]`, ..."
        }
        _ => return error,
    };
    syn::Error::new(error.span(), help)
}

/// The `crate = "path"` of the type's attributes, or `::retry_core`. Errors are reported by
/// [`parse`], not here.
pub(crate) fn crate_path(attrs: &[Attribute]) -> Path {
    let mut ignored = Errors::default();
    parse(attrs, &mut ignored)
        .keys
        .into_iter()
        .find_map(|key| match key.kind {
            KeyKind::Crate(path) => Some(path),
            _ => None,
        })
        .unwrap_or_else(|| syn::parse_quote!(::retry_core))
}

/// Parses one key. `Ok(None)`: the key was wrong, its error is in `errors` and its tokens were
/// consumed, so parsing goes on with the next key. `Err`: the attribute cannot be parsed further.
fn parse_key(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Option<Key>> {
    let path = &meta.path;
    let name = match path.get_ident() {
        Some(ident) if path.leading_colon.is_none() => ident.clone(),
        _ => {
            let rest = skip_value(meta)?;
            errors.spanned(
                quote!(#path #rest),
                format!(
                    "unknown key `{}` in `#[retry(...)]`; expected one of: {VALID_KEYS}",
                    path.to_token_stream().to_string().replace(' ', "")
                ),
            );
            return Ok(None);
        }
    };
    let key = name.to_string();
    let kind = match key.as_str() {
        "retryable" => flag(meta, &name, KeyKind::Retryable, errors)?,
        "transient" => flag(meta, &name, KeyKind::Transient, errors)?,
        "throttling" => flag(meta, &name, KeyKind::Throttling, errors)?,
        "timeout" => flag(meta, &name, KeyKind::Timeout, errors)?,
        "never" => flag(meta, &name, KeyKind::Never, errors)?,
        "transparent" => flag(meta, &name, KeyKind::Transparent, errors)?,
        "after" => flag(meta, &name, KeyKind::After, errors)?,
        "fault" => match string_value(meta, &name, FAULT_HELP, errors)? {
            Some((lit, tokens)) => match lit.value().as_str() {
                "client" => return Ok(Some(key_with(FaultSide::Client.into(), name, tokens))),
                "server" => return Ok(Some(key_with(FaultSide::Server.into(), name, tokens))),
                other => {
                    errors.spanned(&lit, format!("unknown fault {other:?}: {FAULT_HELP}"));
                    None
                }
            },
            None => None,
        },
        "crate" => match string_value(meta, &name, CRATE_HELP, errors)? {
            Some((lit, tokens)) => match lit.parse_with(Path::parse_mod_style) {
                Ok(path) => return Ok(Some(key_with(KeyKind::Crate(path), name, tokens))),
                Err(_) => {
                    errors.spanned(
                        &lit,
                        format!("{:?} is not a path: {CRATE_HELP}", lit.value()),
                    );
                    None
                }
            },
            None => None,
        },
        _ => {
            let rest = skip_value(meta)?;
            let suggestion = suggest(&key)
                .map(|known| format!(" (did you mean `{known}`?)"))
                .unwrap_or_default();
            errors.spanned(
                quote!(#name #rest),
                format!(
                    "unknown key `{key}` in `#[retry(...)]`{suggestion}; \
                     expected one of: {VALID_KEYS}"
                ),
            );
            None
        }
    };
    Ok(kind.map(|kind| key_with(kind, name.clone(), name.to_token_stream())))
}

/// How to write `fault`.
const FAULT_HELP: &str = "write `fault = \"client\"` or `fault = \"server\"`";

/// How to write `crate`.
const CRATE_HELP: &str = "write the path of `retry_core` as a string, \
     e.g. `crate = \"::retry_core\"` or `crate = \"my_facade::retry_core\"`";

/// Builds a [`Key`].
fn key_with(kind: KeyKind, name: Ident, tokens: TokenStream) -> Key {
    Key { kind, name, tokens }
}

/// A key without a value (`throttling`). A value or argument list is reported and skipped; the
/// key still counts, so no second error follows from its absence.
fn flag(
    meta: &ParseNestedMeta<'_>,
    name: &Ident,
    kind: KeyKind,
    errors: &mut Errors,
) -> syn::Result<Option<KeyKind>> {
    let rest = skip_value(meta)?;
    if !rest.is_empty() {
        let what = if meta_had_eq(&rest) {
            "value"
        } else {
            "arguments"
        };
        let example = if KIND_KEYS.contains(&name.to_string().as_str()) {
            format!("`#[retry({name})]`")
        } else if name == "after" {
            "`#[retry(after)]` on the field".to_owned()
        } else {
            format!("`#[retry({name})]` on the variant")
        };
        errors.spanned(
            quote!(#name #rest),
            format!("`{name}` takes no {what}: write {example}"),
        );
    }
    Ok(Some(kind))
}

/// Whether skipped tokens started with `=`.
fn meta_had_eq(rest: &TokenStream) -> bool {
    rest.clone()
        .into_iter()
        .next()
        .is_some_and(|tt| matches!(tt, proc_macro2::TokenTree::Punct(p) if p.as_char() == '='))
}

/// A key that needs a string value: `key = "..."`. Reports a missing or non-string value.
/// Returns the literal and the whole key's tokens.
fn string_value(
    meta: &ParseNestedMeta<'_>,
    name: &Ident,
    help: &str,
    errors: &mut Errors,
) -> syn::Result<Option<(LitStr, TokenStream)>> {
    if !meta.input.peek(Token![=]) {
        let rest = skip_value(meta)?;
        errors.spanned(
            quote!(#name #rest),
            format!("`{name}` needs a value: {help}"),
        );
        return Ok(None);
    }
    let eq: Token![=] = meta.input.parse()?;
    let value: Expr = meta.input.parse()?;
    let tokens = quote!(#name #eq #value);
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(Some((lit, tokens))),
        other => {
            errors.spanned(&other, format!("`{name}` takes a string: {help}"));
            Ok(None)
        }
    }
}

/// Consumes what follows a key up to the next `,`: `= expr` or `(...)`. Returns those tokens.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<TokenStream> {
    let input = meta.input;
    if input.peek(Token![=]) {
        let eq: Token![=] = input.parse()?;
        let value: Expr = input.parse()?;
        Ok(quote!(#eq #value))
    } else if input.peek(syn::token::Paren) {
        let group: proc_macro2::Group = input.parse()?;
        Ok(group.into_token_stream())
    } else {
        Ok(TokenStream::new())
    }
}

/// The known key closest to a misspelled one, if any is close.
fn suggest(unknown: &str) -> Option<&'static str> {
    let lower = unknown.to_ascii_lowercase();
    let alias = match lower.as_str() {
        "retriable" | "retry" | "retryable_error" => Some("retryable"),
        "throttle" | "throttled" | "throttles" | "rate_limited" | "ratelimited" => {
            Some("throttling")
        }
        "timed_out" | "timedout" | "time_out" => Some("timeout"),
        "no_retry" | "not_retryable" | "non_retryable" | "fatal" | "permanent" => Some("never"),
        "retry_after" | "delay" | "backoff" => Some("after"),
        "client" | "server" | "faults" => Some("fault"),
        _ => None,
    };
    alias.or_else(|| {
        ALL_KEYS
            .iter()
            .map(|known| (edit_distance(&lower, known), *known))
            .filter(|(distance, known)| *distance <= known.len() / 3)
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, known)| known)
    })
}

#[cfg(test)]
mod tests {
    use super::suggest;
    use crate::diagnostics::edit_distance;

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(suggest("throtling"), Some("throttling"));
        assert_eq!(suggest("throttle"), Some("throttling"));
        assert_eq!(suggest("transiant"), Some("transient"));
        assert_eq!(suggest("retry_after"), Some("after"));
        assert_eq!(suggest("bogus"), None);
    }
}
