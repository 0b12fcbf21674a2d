//! Checks that the parsed keys make sense where they are: placement, duplicates, conflicts
//! (`with` beside another describing key included), the field counts of `transparent` and of
//! `#[retry(with = ...)]`, and `#[retry(after)]` fields.

use super::Errors;
use super::ast::{self, Body, Field, Input};
use super::attr::{Attrs, Key, KeyKind};
use crate::diagnostics::written;

/// Where a set of keys was written.
#[derive(Clone, Copy)]
enum Place {
    /// On a struct.
    Struct,
    /// On an enum (defaults for its variants).
    Enum,
    /// On an enum variant.
    Variant,
    /// On a field.
    Field,
}

impl Place {
    /// The item, for messages.
    fn noun(self) -> &'static str {
        match self {
            Place::Struct => "struct",
            Place::Enum => "enum",
            Place::Variant => "variant",
            Place::Field => "field",
        }
    }
}

/// Records every problem of `input` in `errors`.
pub(crate) fn validate(input: &Input<'_>, errors: &mut Errors) {
    match &input.body {
        Body::Struct(fields) => {
            check_keys(&input.attrs, Place::Struct, errors);
            let transparent = ast::transparent(&input.attrs, None).is_some();
            check_fields(fields, transparent, errors);
            check_item(
                &input.attrs,
                None,
                fields,
                "the struct",
                input.ident,
                errors,
            );
        }
        Body::Enum(variants) => {
            check_keys(&input.attrs, Place::Enum, errors);
            for variant in variants {
                check_keys(&variant.attrs, Place::Variant, errors);
                let transparent = ast::transparent(&variant.attrs, Some(&input.attrs)).is_some();
                check_fields(&variant.fields, transparent, errors);
                let what = format!("variant `{}`", variant.ident);
                check_item(
                    &variant.attrs,
                    Some(&input.attrs),
                    &variant.fields,
                    &what,
                    variant.ident,
                    errors,
                );
            }
        }
    }
}

/// Placement, duplicate and conflict checks on the keys of one item.
fn check_keys(attrs: &Attrs, place: Place, errors: &mut Errors) {
    for (i, key) in attrs.keys.iter().enumerate() {
        if let Some(message) = misplaced(key, place) {
            errors.spanned(key, message);
            continue;
        }
        let earlier = &attrs.keys[..i];
        if let Some(first) = earlier.iter().find(|first| first.same_key(key)) {
            let message = match (&first.kind, &key.kind) {
                (KeyKind::Fault(a), KeyKind::Fault(b)) if a != b => format!(
                    "conflicting faults: `{}` is already given for this {}; keep only one `fault`",
                    first.written(),
                    place.noun()
                ),
                (KeyKind::Fault(_), KeyKind::Fault(_)) => format!(
                    "duplicate `fault`: `{}` is already given for this {}; remove this one",
                    first.written(),
                    place.noun()
                ),
                _ => format!(
                    "duplicate `{}`: it is already given for this {}; remove this one",
                    key.name(),
                    place.noun()
                ),
            };
            errors.spanned(key, message);
            continue;
        }
        if let Some(message) = conflict(earlier, key) {
            errors.spanned(key, message);
        }
    }
}

/// Why `key` may not be written at `place`, if it may not.
fn misplaced(key: &Key, place: Place) -> Option<String> {
    let name = key.name();
    match (&key.kind, place) {
        (KeyKind::After | KeyKind::With(_), Place::Field)
        | (KeyKind::Crate(_), Place::Struct | Place::Enum) => None,
        (KeyKind::With(_), Place::Enum) => Some(
            "`with` describes one variant's field, not the whole enum: put it on the variant \
             (`#[retry(with = describe_db)] Db(DbError)`) or on the field"
                .to_owned(),
        ),
        (KeyKind::After, _) => Some(format!(
            "`after` goes on a field, not on the {}: mark the field holding the delay, \
             e.g. `Throttled {{ #[retry(after)] retry_after: Option<Duration> }}`",
            place.noun()
        )),
        (KeyKind::Crate(_), _) => Some(format!(
            "`crate = \"...\"` goes on the enum or struct deriving `RetryInfo`, not on a {}",
            place.noun()
        )),
        (_, Place::Field) => Some(format!(
            "`{name}` goes on the variant (or the struct), not on a field; \
             only `#[retry(after)]` and `#[retry(with = ...)]` are allowed on a field"
        )),
        _ => None,
    }
}

/// Why `key` cannot be combined with the keys written before it on the same item, if it cannot.
fn conflict(earlier: &[Key], key: &Key) -> Option<String> {
    if let Some((with, other)) = beside(earlier, key, |kind| matches!(kind, KeyKind::With(_))) {
        return Some(format!(
            "`{}` describes the error through its function, so it cannot be combined with \
             `{}`; remove `{}` or `with`",
            with.written(),
            other.written(),
            other.written()
        ));
    }
    if let Some((_, other)) = beside(earlier, key, |kind| matches!(kind, KeyKind::Transparent)) {
        return Some(format!(
            "`transparent` delegates every method to the field, so it cannot be combined with \
             `{}`; remove `{}` or `transparent`",
            other.written(),
            other.written()
        ));
    }
    let never = |key: &Key| matches!(key.kind, KeyKind::Never);
    let retryable = |key: &Key| key.kind.is_retryable();
    let other = if never(key) {
        earlier.iter().find(|other| retryable(other))
    } else if retryable(key) {
        earlier.iter().find(|other| never(other))
    } else {
        None
    }?;
    let retried = if never(key) { other } else { key };
    Some(format!(
        "`{}` conflicts with `{}`: a `{}` error is retried, a `never` error is not; \
         remove one of them",
        key.name(),
        other.name(),
        retried.name()
    ))
}

/// A key that describes the item alone (of a kind `alone` accepts: `with`, `transparent`) and
/// another describing key beside it, `key` being one of the two and the other written before it.
fn beside<'k>(
    earlier: &'k [Key],
    key: &'k Key,
    alone: fn(&KeyKind) -> bool,
) -> Option<(&'k Key, &'k Key)> {
    if alone(&key.kind) {
        Some((key, earlier.iter().find(|other| other.kind.describes())?))
    } else if key.kind.describes() {
        Some((earlier.iter().find(|other| alone(&other.kind))?, key))
    } else {
        None
    }
}

/// Keys on fields; `#[retry(after)]` fields: right type (unless the item is transparent, which
/// is an error of its own), at most one.
fn check_fields(fields: &[Field<'_>], transparent: bool, errors: &mut Errors) {
    let mut first_after: Option<&Field<'_>> = None;
    for field in fields {
        check_keys(&field.attrs, Place::Field, errors);
        let Some(after) = field.attrs.after() else {
            continue;
        };
        if !transparent && field.after_type().is_none() {
            let ty = written(field.ty);
            errors.spanned(
                field.ty,
                format!(
                    "`#[retry(after)]` needs a field of type `Duration` or `Option<Duration>`, \
                     found `{ty}`: store the delay as a `std::time::Duration` \
                     (or `Option<Duration>`), or remove `#[retry(after)]`"
                ),
            );
        }
        match first_after {
            Some(first) => errors.spanned(
                after,
                format!(
                    "only one field can be `#[retry(after)]`, and `{}` already is; \
                     remove this one",
                    member_name(first)
                ),
            ),
            None => first_after = Some(field),
        }
    }
}

/// Checks that need the whole item: a `with` on the item needs exactly one field, and at most
/// one field has a `with` (see [`check_with`]); when no `with` describes the item,
/// `transparent` needs exactly one field and no `after`.
fn check_item(
    own: &Attrs,
    inherited: Option<&Attrs>,
    fields: &[Field<'_>],
    what: &str,
    ident: &syn::Ident,
    errors: &mut Errors,
) {
    if check_with(own, fields, what, errors) {
        return;
    }
    let Some(transparent) = ast::transparent(own, inherited) else {
        return;
    };
    if fields.len() != 1 {
        let count = match fields.len() {
            0 => "none".to_owned(),
            n => n.to_string(),
        };
        let own_key = own.transparent().is_some();
        let message = if own_key {
            format!(
                "`#[retry(transparent)]` needs exactly one field to delegate to, but {what} has \
                 {count}; keep only the inner error as its field, or describe it with keys such \
                 as `#[retry(transient)]` instead"
            )
        } else {
            format!(
                "{what} inherits `#[retry(transparent)]` from the enum, which needs exactly one \
                 field, but it has {count}; give it its own keys, e.g. `#[retry(never)]`"
            )
        };
        if own_key {
            errors.spanned(transparent, message);
        } else {
            errors.spanned(ident, message);
        }
    }
    for field in fields {
        if let Some(after) = field.attrs.after() {
            errors.spanned(
                after,
                format!(
                    "`#[retry(after)]` cannot be used in a transparent {}: `retry_after()` is \
                     delegated to the field; remove `#[retry(after)]`",
                    if inherited.is_some() {
                        "variant"
                    } else {
                        "struct"
                    }
                ),
            );
        }
    }
}

/// Checks `#[retry(with = ...)]` in an item: on the item, it needs exactly one field; on a
/// field, it is the item's only description; no `#[retry(after)]` beside it. Returns whether
/// a `with` describes the item (then `transparent` is not checked: it does not apply).
fn check_with(own: &Attrs, fields: &[Field<'_>], what: &str, errors: &mut Errors) -> bool {
    let field_withs: Vec<&Key> = fields.iter().filter_map(|f| f.attrs.with()).collect();
    let own_with = own.with();
    if own_with.is_none() && field_withs.is_empty() {
        return false;
    }
    if let Some(with) = own_with {
        match fields.len() {
            0 => errors.spanned(
                with,
                format!(
                    "`with` describes the value of a field, but {what} has none: describe it \
                     with keys such as `#[retry(transient)]` instead"
                ),
            ),
            1 => {}
            n => errors.spanned(
                with,
                format!(
                    "`with` on {what}, which has {n} fields: put `#[retry(with = ...)]` on the \
                     field it describes"
                ),
            ),
        }
    }
    for (index, with) in field_withs.iter().enumerate() {
        if index > 0 {
            errors.spanned(
                with,
                format!(
                    "only one field of {what} can be described `with` a function, and an \
                     earlier field already is; remove this one"
                ),
            );
        } else if let Some(own_key) = own.describing_key() {
            errors.spanned(
                with,
                format!(
                    "{what} is described by its own `{}` and by this field's `with`; keep one",
                    own_key.written()
                ),
            );
        }
    }
    for after in fields.iter().filter_map(|field| field.attrs.after()) {
        errors.spanned(
            after,
            "`#[retry(after)]` cannot be combined with `with`: `retry_after()` is what the \
             function says; remove `#[retry(after)]`",
        );
    }
    true
}

/// The field's name for messages (`retry_after` or `0`).
fn member_name(field: &Field<'_>) -> String {
    match &field.member {
        syn::Member::Named(ident) => ident.to_string(),
        syn::Member::Unnamed(index) => index.index.to_string(),
    }
}
