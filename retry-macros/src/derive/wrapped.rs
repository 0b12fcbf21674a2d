//! Which field of a variant (or struct) is the error it wraps, by thiserror's conventions: a
//! field marked `#[from]` or `#[source]`, else a field named `source`, else the single field of
//! an `#[error(transparent)]` item.
//!
//! A variant that wraps an error and says nothing with `#[retry(...)]` asks that error
//! (see [`super::ast::behavior`]): were it `RetrySafety::Maybe` instead, a retryable error inside
//! (a 503 in an `HttpStatusError`) would never be retried, and nothing would say so.

use syn::{Attribute, Member};

use super::ast::Field;

/// Whether a field's attributes mark it as the wrapped error: `#[from]` or `#[source]`.
pub(crate) fn marked(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .any(|attr| attr.path().is_ident("from") || attr.path().is_ident("source"))
}

/// Whether `attrs` hold `#[error(transparent)]`.
pub(crate) fn error_transparent(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("error")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "transparent")
    })
}

/// The field an item wraps: the first `#[from]` / `#[source]` field, else a field named
/// `source`, else the only field of an `#[error(transparent)]` item.
pub(crate) fn wrapped_field<'a, 'f>(
    fields: &'f [Field<'a>],
    error_transparent: bool,
) -> Option<&'f Field<'a>> {
    let named_source =
        |field: &&Field<'_>| matches!(&field.member, Member::Named(name) if name == "source");
    let transparent = match fields {
        [field] if error_transparent => Some(field),
        _ => None,
    };
    fields
        .iter()
        .find(|field| field.wraps)
        .or_else(|| fields.iter().find(named_source))
        .or(transparent)
}
