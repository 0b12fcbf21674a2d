//! Parsing of `#[retry(...)]` attributes into [`Key`]s.
//!
//! Every key is described once, in [`KEYS`]: its name, what follows it, how to write it and the
//! words it is suggested for. This step checks the syntax of each key (does it take a value, is
//! the value well formed); where a key may appear and how keys combine is checked later, in
//! `valid`.

use super::Errors;
use crate::diagnostics::{closest, written};
use crate::list::{self, ListSyntax};
use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, quote};
use std::fmt;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, Lit, LitStr, Meta, Path, Token};

/// The name of the helper attribute.
const ATTR: &str = "retry";

/// One key of `#[retry(...)]`: all that parsing, messages and suggestions know about it.
struct KeyDef {
    /// The name written in the attribute.
    name: &'static str,
    /// What follows the name.
    takes: Takes,
    /// How it is listed among the valid keys.
    listed: &'static str,
    /// How to write it, for messages about a key written wrong.
    usage: &'static str,
    /// Other words users write for it, for which it is suggested.
    aliases: &'static [&'static str],
}

/// What follows a key's name.
enum Takes {
    /// Nothing: the key alone says this.
    Nothing(KeyKind),
    /// `= "text"`, read by this function; its error says what is wrong.
    Text(fn(&LitStr) -> Result<KeyKind, String>),
    /// `= path`, unquoted: the path of a function.
    Path(fn(Path) -> KeyKind),
}

/// Every key of `#[retry(...)]`, in the order the valid keys are listed.
const KEYS: &[KeyDef] = &[
    KeyDef {
        name: "retryable",
        takes: Takes::Nothing(KeyKind::Retryable),
        listed: "`retryable`",
        usage: "write `#[retry(retryable)]`",
        aliases: &["retriable", "retry", "retryable_error"],
    },
    KeyDef {
        name: "transient",
        takes: Takes::Nothing(KeyKind::Transient),
        listed: "`transient`",
        usage: "write `#[retry(transient)]`",
        aliases: &[],
    },
    KeyDef {
        name: "throttling",
        takes: Takes::Nothing(KeyKind::Throttling),
        listed: "`throttling`",
        usage: "write `#[retry(throttling)]`",
        aliases: &[
            "throttle",
            "throttled",
            "throttles",
            "rate_limited",
            "ratelimited",
        ],
    },
    KeyDef {
        name: "timeout",
        takes: Takes::Nothing(KeyKind::Timeout),
        listed: "`timeout`",
        usage: "write `#[retry(timeout)]`",
        aliases: &["timed_out", "timedout", "time_out"],
    },
    KeyDef {
        name: "never",
        takes: Takes::Nothing(KeyKind::Never),
        listed: "`never`",
        usage: "write `#[retry(never)]`",
        aliases: &[
            "no_retry",
            "not_retryable",
            "non_retryable",
            "fatal",
            "permanent",
        ],
    },
    KeyDef {
        name: "fault",
        takes: Takes::Text(fault),
        listed: "`fault = \"client\"`, `fault = \"server\"`",
        usage: "write `fault = \"client\"` or `fault = \"server\"`",
        aliases: &["client", "server", "faults"],
    },
    KeyDef {
        name: "transparent",
        takes: Takes::Nothing(KeyKind::Transparent),
        listed: "`transparent`",
        usage: "write `#[retry(transparent)]` on the variant",
        aliases: &[],
    },
    KeyDef {
        name: "with",
        takes: Takes::Path(KeyKind::With),
        listed: "`with = path` (a `fn(&Field) -> impl RetryInfo`)",
        usage: "write `with = describe_error`, the path of a function \
                `fn(&Field) -> impl RetryInfo` (e.g. returning a `retry_core::classify::RetryDescription`)",
        aliases: &[
            "describe",
            "describe_with",
            "classify",
            "classifier",
            "using",
        ],
    },
    KeyDef {
        name: "after",
        takes: Takes::Nothing(KeyKind::After),
        listed: "`after` (on a field)",
        usage: "write `#[retry(after)]` on the field",
        aliases: &["retry_after", "delay", "backoff"],
    },
    KeyDef {
        name: "crate",
        takes: Takes::Text(crate_path),
        listed: "`crate = \"path\"` (on the type)",
        usage: "write the path of `retry_core` as a string, e.g. `crate = \"::retry_core\"` or \
                `crate = \"my_facade::retry_core\"`",
        aliases: &[],
    },
];

/// The list of valid keys, for messages about an unknown key.
fn valid_keys() -> String {
    let listed: Vec<&str> = KEYS.iter().map(|key| key.listed).collect();
    listed.join(", ")
}

/// `fault = "client" | "server"`.
fn fault(lit: &LitStr) -> Result<KeyKind, String> {
    match lit.value().as_str() {
        "client" => Ok(KeyKind::Fault(FaultSide::Client)),
        "server" => Ok(KeyKind::Fault(FaultSide::Server)),
        other => Err(format!(
            "unknown fault {other:?}: write `fault = \"client\"` or `fault = \"server\"`"
        )),
    }
}

/// `crate = "path"`.
fn crate_path(lit: &LitStr) -> Result<KeyKind, String> {
    lit.parse_with(Path::parse_mod_style)
        .map(KeyKind::Crate)
        .map_err(|_| {
            format!(
                "{:?} is not a path: write the path of `retry_core` as a string, e.g. \
                 `crate = \"::retry_core\"` or `crate = \"my_facade::retry_core\"`",
                lit.value()
            )
        })
}

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

/// What one key inside `#[retry(...)]` says.
#[derive(Clone)]
pub(crate) enum KeyKind {
    /// `retryable`: safe to retry.
    Retryable,
    /// `transient`: safe to retry, no fault implied.
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
    /// `with = path`: the field is described by the user's function `path`.
    With(Path),
    /// `after` (on a field): the field holds the server's `retry_after`.
    After,
    /// `crate = "path"` (on the type): the path of `retry_core`.
    Crate(Path),
}

impl KeyKind {
    /// Whether this key describes the error (a retry key, `fault`, `transparent` or `with`),
    /// as opposed to placing a field (`after`) or naming the runtime (`crate`).
    pub(crate) fn describes(&self) -> bool {
        self.is_kind()
            || matches!(
                self,
                KeyKind::Fault(_) | KeyKind::Transparent | KeyKind::With(_)
            )
    }

    /// The function of `with = path`.
    pub(crate) fn with_path(&self) -> Option<&Path> {
        match self {
            KeyKind::With(path) => Some(path),
            _ => None,
        }
    }

    /// Whether this key says how the error is retried (`retryable`, `transient`,
    /// `throttling`, `timeout`, `never`): a variant's keys of this category replace the
    /// enum's.
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
            KeyKind::Throttling | KeyKind::Timeout => Some(FaultSide::Server),
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
            KeyKind::With(path) => format!("with = {}", written(path)),
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

    /// The `with = path` key, if any.
    pub(crate) fn with(&self) -> Option<&Key> {
        self.find(|kind| matches!(kind, KeyKind::With(_)))
    }

    /// The `after` key, if any.
    pub(crate) fn after(&self) -> Option<&Key> {
        self.find(|kind| matches!(kind, KeyKind::After))
    }

    /// The `crate = "..."` path, if given.
    pub(crate) fn crate_path(&self) -> Option<&Path> {
        self.keys.iter().find_map(|key| match &key.kind {
            KeyKind::Crate(path) => Some(path),
            _ => None,
        })
    }

    /// The first key describing the error (see [`KeyKind::describes`]), if any.
    pub(crate) fn describing_key(&self) -> Option<&Key> {
        self.keys.iter().find(|key| key.kind.describes())
    }
}

/// Parses every `#[retry(...)]` among `attrs`; syntax errors go to `errors`.
pub(crate) fn parse(attrs: &[Attribute], errors: &mut Errors) -> Attrs {
    let syntax = ListSyntax {
        expected_key: "expected a key: write `#[retry(transient)]`, \
                       `#[retry(fault = \"client\")]`, ..."
            .to_owned(),
        expected_comma: "expected `,` between keys: write them as a list, \
                         e.g. `#[retry(throttling, fault = \"server\")]`",
    };
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
        let result = list::parse(list.tokens.clone(), &syntax, |meta| {
            if let Some(key) = parse_key(meta, errors)? {
                parsed.keys.push(key);
            }
            Ok(())
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    parsed
}

/// Parses one key. `Ok(None)`: the key was wrong, its error is in `errors` and its tokens were
/// consumed, so parsing goes on with the next key. `Err`: the attribute cannot be parsed further.
fn parse_key(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Option<Key>> {
    let path = &meta.path;
    let ident = path.get_ident().filter(|_| path.leading_colon.is_none());
    let Some((name, def)) =
        ident.and_then(|ident| Some((ident, KEYS.iter().find(|def| ident == def.name)?)))
    else {
        let rest = skip_value(meta)?;
        let written = written(path);
        let suggestion = ident
            .and_then(|_| suggest(&written))
            .map(|known| format!(" (did you mean `{known}`?)"))
            .unwrap_or_default();
        errors.spanned(
            quote!(#path #rest),
            format!(
                "unknown key `{written}` in `#[retry(...)]`{suggestion}; expected one of: {}",
                valid_keys()
            ),
        );
        return Ok(None);
    };
    match &def.takes {
        Takes::Nothing(kind) => {
            let rest = skip_value(meta)?;
            if !rest.is_empty() {
                let what = if starts_with_eq(&rest) {
                    "value"
                } else {
                    "arguments"
                };
                errors.spanned(
                    quote!(#name #rest),
                    format!("`{name}` takes no {what}: {}", def.usage),
                );
            }
            // A wrong value is reported, but the key still counts: no second error follows
            // from its absence.
            Ok(Some(Key {
                kind: kind.clone(),
                name: name.clone(),
                tokens: name.to_token_stream(),
            }))
        }
        Takes::Path(kind) => {
            let Some((path, tokens)) = path_value(meta, name, def.usage, errors)? else {
                return Ok(None);
            };
            Ok(Some(Key {
                kind: kind(path),
                name: name.clone(),
                tokens,
            }))
        }
        Takes::Text(read) => {
            let Some((lit, tokens)) = string_value(meta, name, def.usage, errors)? else {
                return Ok(None);
            };
            match read(&lit) {
                Ok(kind) => Ok(Some(Key {
                    kind,
                    name: name.clone(),
                    tokens,
                })),
                Err(message) => {
                    errors.spanned(&lit, message);
                    Ok(None)
                }
            }
        }
    }
}

/// Whether skipped tokens started with `=`.
fn starts_with_eq(rest: &TokenStream) -> bool {
    rest.clone()
        .into_iter()
        .next()
        .is_some_and(|tt| matches!(tt, proc_macro2::TokenTree::Punct(p) if p.as_char() == '='))
}

/// A key's `= expr`. Reports a missing value. Returns the expression and the whole key's tokens.
fn expr_value(
    meta: &ParseNestedMeta<'_>,
    name: &Ident,
    usage: &str,
    errors: &mut Errors,
) -> syn::Result<Option<(Expr, TokenStream)>> {
    if !meta.input.peek(Token![=]) {
        let rest = skip_value(meta)?;
        errors.spanned(
            quote!(#name #rest),
            format!("`{name}` needs a value: {usage}"),
        );
        return Ok(None);
    }
    let eq: Token![=] = meta.input.parse()?;
    let value: Expr = meta.input.parse()?;
    let tokens = quote!(#name #eq #value);
    Ok(Some((value, tokens)))
}

/// A key that needs a string value: `key = "..."`. Reports a missing or non-string value.
/// Returns the literal and the whole key's tokens.
fn string_value(
    meta: &ParseNestedMeta<'_>,
    name: &Ident,
    usage: &str,
    errors: &mut Errors,
) -> syn::Result<Option<(LitStr, TokenStream)>> {
    let Some((value, tokens)) = expr_value(meta, name, usage, errors)? else {
        return Ok(None);
    };
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(Some((lit, tokens))),
        other => {
            errors.spanned(&other, format!("`{name}` takes a string: {usage}"));
            Ok(None)
        }
    }
}

/// A key that needs a path: `key = path`. Reports a missing value, a string or another
/// expression. Returns the path and the whole key's tokens.
fn path_value(
    meta: &ParseNestedMeta<'_>,
    name: &Ident,
    usage: &str,
    errors: &mut Errors,
) -> syn::Result<Option<(Path, TokenStream)>> {
    let Some((value, tokens)) = expr_value(meta, name, usage, errors)? else {
        return Ok(None);
    };
    match value {
        Expr::Path(syn::ExprPath {
            qself: None, path, ..
        }) => Ok(Some((path, tokens))),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => {
            errors.spanned(
                &lit,
                format!(
                    "`{name}` takes the function's path unquoted: write `{name} = {}`",
                    lit.value()
                ),
            );
            Ok(None)
        }
        other => {
            errors.spanned(
                &other,
                format!("`{name}` takes the path of a function: {usage}"),
            );
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

/// The key meant by a misspelled one, if any is close: a known alias, else the closest name.
fn suggest(unknown: &str) -> Option<&'static str> {
    let lower = unknown.to_ascii_lowercase();
    KEYS.iter()
        .find(|def| def.aliases.contains(&lower.as_str()))
        .map(|def| def.name)
        .or_else(|| closest(&lower, KEYS.iter().map(|def| def.name)))
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn suggestions() {
        assert_eq!(suggest("throtling"), Some("throttling"));
        assert_eq!(suggest("throttle"), Some("throttling"));
        assert_eq!(suggest("Transiant"), Some("transient"));
        assert_eq!(suggest("retry_after"), Some("after"));
        assert_eq!(suggest("bogus"), None);
    }
}
