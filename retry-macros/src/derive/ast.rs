//! The derive input as the macro sees it: the type, its variants and fields, each with its parsed
//! `#[retry(...)]` keys, and how the keys resolve into what each variant reports.

use super::Errors;
use super::attr::{self, Attrs, FaultSide, Key, KeyKind, Safety};
use super::wrapped;
use crate::spans::strip_type;
use proc_macro2::{Span, TokenStream, TokenTree};
use std::collections::BTreeSet;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Index, Member, Type};

/// A struct or enum deriving `RetryInfo`.
pub(crate) struct Input<'a> {
    /// The type's name.
    pub(crate) ident: &'a Ident,
    /// The type's generics, as written.
    pub(crate) generics: &'a Generics,
    /// The type's own `#[retry(...)]` keys (for an enum: defaults for the variants).
    pub(crate) attrs: Attrs,
    /// Whether the type is `#[error(transparent)]` (thiserror's).
    pub(crate) error_transparent: bool,
    /// The fields or variants.
    pub(crate) body: Body<'a>,
}

/// What the type is made of.
pub(crate) enum Body<'a> {
    /// A struct: its fields.
    Struct(Vec<Field<'a>>),
    /// An enum: its variants.
    Enum(Vec<Variant<'a>>),
}

/// One enum variant.
pub(crate) struct Variant<'a> {
    /// The variant's name.
    pub(crate) ident: &'a Ident,
    /// The variant's own `#[retry(...)]` keys.
    pub(crate) attrs: Attrs,
    /// Whether the variant is `#[error(transparent)]` (thiserror's).
    pub(crate) error_transparent: bool,
    /// The variant's fields.
    pub(crate) fields: Vec<Field<'a>>,
}

/// One field of a struct or variant.
pub(crate) struct Field<'a> {
    /// How the field is named in a pattern (`name` or `0`).
    pub(crate) member: Member,
    /// The field's type.
    pub(crate) ty: &'a Type,
    /// The field's `#[retry(...)]` keys.
    pub(crate) attrs: Attrs,
    /// Whether the type mentions one of the type's type parameters.
    pub(crate) contains_generic: bool,
    /// Marked `#[from]` or `#[source]` (thiserror's): the field is the error the item wraps.
    pub(crate) wraps: bool,
}

/// What a `#[retry(after)]` field holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AfterType {
    /// `Duration`: `retry_after()` is `Some(field)`.
    Duration,
    /// `Option<Duration>`: `retry_after()` is the field.
    OptionDuration,
}

/// What one variant (or the struct) reports, once its keys and the enum's defaults are resolved.
pub(crate) enum Behavior<'a, 'f> {
    /// Every method delegates to this field.
    Transparent(&'f Field<'a>),
    /// No `#[retry(...)]` on an item that wraps an error (thiserror's `#[from]`, `#[source]`,
    /// a field named `source`, `#[error(transparent)]`): every method asks that field, which
    /// must implement `RetryInfo` (else a compile error at the field says what to write).
    Wrapped(&'f Field<'a>),
    /// Every method asks what the user's function (`#[retry(with = path)]`) says of this field.
    With(&'f Field<'a>, &'f syn::Path),
    /// Fixed answers.
    Described(Description<'a, 'f>),
}

/// The fixed answers of a variant that is not transparent.
pub(crate) struct Description<'a, 'f> {
    /// `retry_safety()`.
    pub(crate) safety: Safety,
    /// `is_throttling()`.
    pub(crate) throttling: bool,
    /// `is_timeout()`.
    pub(crate) timeout: bool,
    /// `fault()`.
    pub(crate) fault: FaultSide,
    /// `retry_after()`: the `#[retry(after)]` field, if any.
    pub(crate) after: Option<(&'f Field<'a>, AfterType)>,
}

impl<'a> Input<'a> {
    /// Reads the derive input, given the type's own parsed `#[retry(...)]` keys; `None` (with
    /// an error recorded) for a union.
    pub(crate) fn from_syn(
        node: &'a DeriveInput,
        attrs: Attrs,
        errors: &mut Errors,
    ) -> Option<Self> {
        let params = TypeParams::new(&node.generics);
        let body = match &node.data {
            Data::Struct(data) => Body::Struct(Field::multiple(&data.fields, &params, errors)),
            Data::Enum(data) => Body::Enum(
                data.variants
                    .iter()
                    .map(|variant| Variant {
                        ident: &variant.ident,
                        attrs: attr::parse(&variant.attrs, errors),
                        error_transparent: wrapped::error_transparent(&variant.attrs),
                        fields: Field::multiple(&variant.fields, &params, errors),
                    })
                    .collect(),
            ),
            Data::Union(data) => {
                errors.spanned(
                    data.union_token,
                    "RetryInfo cannot be derived for unions; derive it on an enum or struct",
                );
                return None;
            }
        };
        Some(Input {
            ident: &node.ident,
            generics: &node.generics,
            attrs,
            error_transparent: wrapped::error_transparent(&node.attrs),
            body,
        })
    }
}

impl<'a> Field<'a> {
    /// Reads all fields of a struct or variant.
    fn multiple(fields: &'a Fields, params: &TypeParams<'_>, errors: &mut Errors) -> Vec<Self> {
        fields
            .iter()
            .enumerate()
            .map(|(i, field)| Field {
                member: match &field.ident {
                    Some(ident) => Member::Named(ident.clone()),
                    None => Member::Unnamed(Index {
                        index: u32::try_from(i).unwrap_or(u32::MAX),
                        span: Span::call_site(),
                    }),
                },
                ty: &field.ty,
                attrs: attr::parse(&field.attrs, errors),
                contains_generic: params.mentioned_in(&field.ty),
                wraps: wrapped::marked(&field.attrs),
            })
            .collect()
    }

    /// What the field's type is, if it may be `#[retry(after)]`.
    pub(crate) fn after_type(&self) -> Option<AfterType> {
        let path = last_segment(self.ty)?;
        if path.ident == "Duration" && path.arguments.is_none() {
            return Some(AfterType::Duration);
        }
        if path.ident != "Option" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(args) = &path.arguments else {
            return None;
        };
        let mut args = args.args.iter();
        match (args.next(), args.next()) {
            (Some(syn::GenericArgument::Type(inner)), None) => last_segment(inner)
                .filter(|inner| inner.ident == "Duration" && inner.arguments.is_none())
                .map(|_| AfterType::OptionDuration),
            _ => None,
        }
    }
}

/// The last segment of a plain type path (`std::time::Duration` -> `Duration`).
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match strip_type(ty) {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        _ => None,
    }
}

/// Resolves the keys of a struct (`inherited` = `None`) or of a variant (`inherited` = the enum's
/// keys) into what it reports.
///
/// Categories: the retry keys (`retryable`, `transient`, `throttling`, `timeout`, `never`),
/// `fault`, and `transparent`. A variant's keys replace the enum's keys of the same category; a
/// variant with any key of its own does not inherit `transparent`. The fault is, in order: the
/// variant's `fault`, the fault implied by the variant's retry keys, the enum's `fault`, the
/// fault implied by the enum's retry keys (when the variant has none). With no retry key, a client
/// fault is never retried (Smithy's rule).
///
/// A `#[retry(with = path)]` on the item or on one of its fields replaces all of this: every
/// method asks the function (see [`described_with`]).
///
/// An item that wraps an error ([`wrapped::wrapped_field`]: thiserror's `#[from]`, `#[source]`,
/// a field named `source`, `#[error(transparent)]`) and has no `#[retry(...)]` of its own, on a
/// field or inherited, asks that error ([`Behavior::Wrapped`]).
///
/// Returns `None` for a transparent item without exactly one field, or an item with a `with` of
/// its own without exactly one field (validation errors).
pub(crate) fn behavior<'a, 'f>(
    own: &'f Attrs,
    inherited: Option<&Attrs>,
    fields: &'f [Field<'a>],
    error_transparent: bool,
) -> Option<Behavior<'a, 'f>> {
    if let Some((field, path)) = described_with(own, fields) {
        return Some(Behavior::With(field, path));
    }
    if own.with().is_some() {
        return None;
    }
    if transparent(own, inherited).is_some() {
        return match fields {
            [field] => Some(Behavior::Transparent(field)),
            _ => None,
        };
    }
    let said_nothing = own.describing_key().is_none()
        && inherited.is_none_or(|inherited| inherited.describing_key().is_none())
        && fields.iter().all(|field| field.attrs.keys.is_empty());
    if said_nothing && let Some(field) = wrapped::wrapped_field(fields, error_transparent) {
        return Some(Behavior::Wrapped(field));
    }
    let inherited_kinds = || inherited.into_iter().flat_map(Attrs::kinds);
    let own_kinds: Vec<&Key> = own.kinds().collect();
    let kinds: Vec<&Key> = if own_kinds.is_empty() {
        inherited_kinds().collect()
    } else {
        own_kinds.clone()
    };
    let implied = |keys: &[&Key]| keys.iter().find_map(|key| key.kind.implied_fault());
    let fault = own
        .fault()
        .or_else(|| implied(&own_kinds))
        .or_else(|| inherited.and_then(Attrs::fault))
        .or_else(|| implied(&kinds))
        .unwrap_or(FaultSide::Unknown);
    let safety = if kinds.iter().any(|key| key.kind.is_retryable()) {
        Safety::Yes
    } else if kinds.iter().any(|key| matches!(key.kind, KeyKind::Never))
        || fault == FaultSide::Client
    {
        Safety::No
    } else {
        Safety::Maybe
    };
    let has = |wanted: fn(&KeyKind) -> bool| kinds.iter().any(|key| wanted(&key.kind));
    Some(Behavior::Described(Description {
        safety,
        throttling: has(|kind| matches!(kind, KeyKind::Throttling)),
        timeout: has(|kind| matches!(kind, KeyKind::Timeout)),
        fault,
        after: fields.iter().find_map(|field| {
            field.attrs.after()?;
            Some((field, field.after_type()?))
        }),
    }))
}

/// The `#[retry(with = path)]` that describes an item, and the field it is given: the item's own
/// (when the item has exactly one field: else `None`, a validation error), else a field's. A
/// `with` replaces every other description, the enum's defaults included.
pub(crate) fn described_with<'a, 'f>(
    own: &'f Attrs,
    fields: &'f [Field<'a>],
) -> Option<(&'f Field<'a>, &'f syn::Path)> {
    if let Some(key) = own.with() {
        return match fields {
            [field] => Some((field, key.kind.with_path()?)),
            _ => None,
        };
    }
    fields
        .iter()
        .find_map(|field| Some((field, field.attrs.with()?.kind.with_path()?)))
}

/// The `transparent` key that applies to an item: its own, or (when it has no describing key of
/// its own) the enum's.
pub(crate) fn transparent<'k>(own: &'k Attrs, inherited: Option<&'k Attrs>) -> Option<&'k Key> {
    if own.describing_key().is_some() {
        own.transparent()
    } else {
        inherited.and_then(Attrs::transparent)
    }
}

/// The names of a type's type parameters, to tell whether a field type mentions one.
struct TypeParams<'a> {
    /// The parameter names.
    names: BTreeSet<&'a Ident>,
}

impl<'a> TypeParams<'a> {
    /// The type parameters of `generics`.
    fn new(generics: &'a Generics) -> Self {
        TypeParams {
            names: generics.type_params().map(|param| &param.ident).collect(),
        }
    }

    /// Whether `ty` mentions a type parameter anywhere (`T`, `Box<T>`, `&'a [T]`,
    /// `<T as Trait>::Assoc`, ...). Textual, so it may say yes for an unrelated item named like a
    /// parameter; the only effect is a harmless extra bound.
    fn mentioned_in(&self, ty: &Type) -> bool {
        !self.names.is_empty() && self.mentioned_in_tokens(quote::ToTokens::to_token_stream(ty))
    }

    /// Token-level search for a parameter name.
    fn mentioned_in_tokens(&self, tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => self.names.contains(&ident),
            TokenTree::Group(group) => self.mentioned_in_tokens(group.stream()),
            TokenTree::Punct(_) | TokenTree::Literal(_) => false,
        })
    }
}
