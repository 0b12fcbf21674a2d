//! Code generation: the `impl RetryInfo`, overriding only the methods whose answers differ from
//! the trait's defaults.

use super::Errors;
use super::ast::{self, AfterType, Behavior, Body, Field, Input};
use super::attr::{FaultSide, Safety};
use crate::runtime::private_module;
use crate::spans::{respan, span_range};
use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, quote};
use std::collections::BTreeSet;
use syn::spanned::Spanned;
use syn::{DeriveInput, Path, WherePredicate};

/// The name the generated patterns bind the field they read to.
const BINDING: &str = "__retry_field";

/// The `impl` for a valid input.
pub(crate) fn expand(input: &Input<'_>, krate: &Path) -> TokenStream {
    let items: Vec<Item<'_, '_>> = match &input.body {
        Body::Struct(fields) => vec![Item {
            pattern: quote!(Self),
            behavior: ast::behavior(&input.attrs, None, fields, input.error_transparent),
        }],
        Body::Enum(variants) => variants
            .iter()
            .map(|variant| {
                let ident = variant.ident;
                Item {
                    pattern: quote!(Self::#ident),
                    behavior: ast::behavior(
                        &variant.attrs,
                        Some(&input.attrs),
                        &variant.fields,
                        variant.error_transparent,
                    ),
                }
            })
            .collect(),
    };
    let is_struct = matches!(input.body, Body::Struct(_));

    let methods = Method::ALL
        .iter()
        .filter_map(|method| method_body(*method, &items, is_struct, krate));

    let mut generics = input.generics.clone();
    let mut seen = BTreeSet::new();
    for item in &items {
        if let Some(Behavior::Transparent(field) | Behavior::Wrapped(field)) = &item.behavior {
            let ty = field.ty;
            if field.contains_generic && seen.insert(ty.to_token_stream().to_string()) {
                let predicate: WherePredicate = syn::parse_quote!(#ty: #krate::RetryInfo);
                generics.make_where_clause().predicates.push(predicate);
            }
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let ident = input.ident;
    quote! {
        #[automatically_derived]
        #[allow(unused_qualifications, clippy::match_same_arms)]
        impl #impl_generics #krate::RetryInfo for #ident #ty_generics #where_clause {
            #(#methods)*
        }
    }
}

/// The `impl` emitted beside the errors of an invalid input: every method defaulted, the type's
/// own generics kept, so code using the type as a `RetryInfo` raises no second error.
pub(crate) fn fallback(input: &DeriveInput, krate: &Path, errors: Errors) -> TokenStream {
    let errors = errors.to_compile_errors();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #errors

        #[automatically_derived]
        #[allow(unused_qualifications)]
        impl #impl_generics #krate::RetryInfo for #ident #ty_generics #where_clause {}
    }
}

/// One arm of the generated `match self`: a variant, or the struct itself.
struct Item<'a, 'f> {
    /// The path to match (`Self::Variant` or `Self`), completed with `{ .. }`.
    pattern: TokenStream,
    /// What it reports (`None` only for an invalid input, which is never expanded).
    behavior: Option<Behavior<'a, 'f>>,
}

/// The five methods of `RetryInfo`.
#[derive(Clone, Copy)]
enum Method {
    /// `retry_safety`.
    RetrySafety,
    /// `is_throttling`.
    IsThrottling,
    /// `is_timeout`.
    IsTimeout,
    /// `retry_after`.
    RetryAfter,
    /// `fault`.
    Fault,
}

/// What one item answers for one method.
enum Answer<'a, 'f> {
    /// A constant expression; `default` when it is the trait's default.
    Const { value: TokenStream, default: bool },
    /// An expression of a field bound to a name.
    FromField {
        /// The field.
        field: &'f Field<'a>,
        /// The name the field is bound to.
        binding: syn::Ident,
        /// The expression, in terms of the binding (a `&FieldType`).
        value: TokenStream,
    },
}

impl Method {
    /// All methods, in the trait's order.
    const ALL: [Method; 5] = [
        Method::RetrySafety,
        Method::IsThrottling,
        Method::IsTimeout,
        Method::RetryAfter,
        Method::Fault,
    ];

    /// The method's signature.
    fn signature(self, krate: &Path) -> TokenStream {
        match self {
            Method::RetrySafety => quote!(fn retry_safety(&self) -> #krate::RetrySafety),
            Method::IsThrottling => quote!(fn is_throttling(&self) -> ::core::primitive::bool),
            Method::IsTimeout => quote!(fn is_timeout(&self) -> ::core::primitive::bool),
            Method::RetryAfter => quote! {
                fn retry_after(&self) -> ::core::option::Option<::core::time::Duration>
            },
            Method::Fault => quote!(fn fault(&self) -> #krate::Fault),
        }
    }

    /// The method's name.
    fn name(self) -> syn::Ident {
        let name = match self {
            Method::RetrySafety => "retry_safety",
            Method::IsThrottling => "is_throttling",
            Method::IsTimeout => "is_timeout",
            Method::RetryAfter => "retry_after",
            Method::Fault => "fault",
        };
        syn::Ident::new(name, Span::call_site())
    }

    /// Whether the method returns `bool` (then a `matches!` is enough).
    fn is_bool(self) -> bool {
        matches!(self, Method::IsThrottling | Method::IsTimeout)
    }

    /// What `behavior` answers.
    fn answer<'a, 'f>(self, behavior: &Behavior<'a, 'f>, krate: &Path) -> Answer<'a, 'f> {
        let description = match behavior {
            Behavior::Transparent(field) => {
                let name = self.name();
                // Spanned at the field's type, so "`T` does not implement `RetryInfo`" points
                // at the field. The binding gets the same span in the pattern, so its hygiene
                // matches.
                let span = Span::call_site().located_at(type_span(field.ty));
                let binding = binding(span);
                return Answer::FromField {
                    field,
                    value: respan(quote!(#krate::RetryInfo::#name(#binding)), span, span),
                    binding,
                };
            }
            Behavior::Wrapped(field) => {
                // Asked through `WrappedError`, whose message (at the field's type) says what to
                // write when the type does not describe itself: the user wrote no `#[retry]`.
                let name = syn::Ident::new(&format!("wrapped_{}", self.name()), Span::call_site());
                let span = Span::call_site().located_at(type_span(field.ty));
                let binding = binding(span);
                let private = private_module();
                return Answer::FromField {
                    field,
                    value: respan(
                        quote!(#krate::#private::WrappedError::#name(#binding)),
                        span,
                        span,
                    ),
                    binding,
                };
            }
            Behavior::With(field, path) => {
                let name = self.name();
                // The function runs once and its description answers this one question.
                // The whole expression is spanned at the path: a function of the wrong type
                // (or whose return type is not a `RetryInfo`, which only the question requires)
                // is reported there, once.
                let (first, last) = span_range(path);
                let private = private_module();
                let binding = binding(Span::call_site());
                let described = respan(quote!(&#krate::#private::described_by), first, last);
                let arguments = parenthesized(quote!(#path, #binding), last);
                let ask = respan(quote!(#krate::RetryInfo::#name), first, last);
                let argument = parenthesized(quote!(#described #arguments), last);
                return Answer::FromField {
                    field,
                    value: quote!(#ask #argument),
                    binding,
                };
            }
            Behavior::Described(description) => description,
        };
        let constant = |value: TokenStream, default: bool| Answer::Const { value, default };
        match self {
            Method::RetrySafety => {
                let (variant, default) = match description.safety {
                    Safety::Yes => (quote!(Yes), false),
                    Safety::No => (quote!(No), false),
                    Safety::Maybe => (quote!(Maybe), true),
                };
                constant(quote!(#krate::RetrySafety::#variant), default)
            }
            Method::IsThrottling => {
                constant(bool_tokens(description.throttling), !description.throttling)
            }
            Method::IsTimeout => constant(bool_tokens(description.timeout), !description.timeout),
            Method::RetryAfter => match description.after {
                Some((field, kind)) => {
                    let binding = binding(Span::call_site());
                    let value = match kind {
                        AfterType::Duration => {
                            let span = field.ty.span();
                            let some = respan(quote!(::core::option::Option::Some), span, span);
                            quote!(#some(*#binding))
                        }
                        AfterType::OptionDuration => quote!(*#binding),
                    };
                    Answer::FromField {
                        field,
                        binding,
                        value,
                    }
                }
                None => constant(quote!(::core::option::Option::None), true),
            },
            Method::Fault => {
                let (variant, default) = match description.fault {
                    FaultSide::Client => (quote!(Client), false),
                    FaultSide::Server => (quote!(Server), false),
                    FaultSide::Unknown => (quote!(Unknown), true),
                };
                constant(quote!(#krate::Fault::#variant), default)
            }
        }
    }
}

/// `true` / `false`.
fn bool_tokens(value: bool) -> TokenStream {
    if value { quote!(true) } else { quote!(false) }
}

/// `(tokens)`, the parentheses located at `at`, so an expression ending with them ends there.
fn parenthesized(tokens: TokenStream, at: Span) -> Group {
    let mut group = Group::new(Delimiter::Parenthesis, tokens);
    group.set_span(Span::call_site().located_at(at));
    group
}

/// The identifier the generated patterns bind a field to.
fn binding(span: Span) -> syn::Ident {
    syn::Ident::new(BINDING, span)
}

/// Where to point at a field's type: the last segment's name of a path (`ParseIntError` in
/// `std::num::ParseIntError`), else the type's first token.
fn type_span(ty: &syn::Type) -> Span {
    match ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .map_or_else(|| ty.span(), |segment| segment.ident.span()),
        _ => ty.span(),
    }
}

/// The method's definition, or `None` when every item gives the trait's default answer.
fn method_body(
    method: Method,
    items: &[Item<'_, '_>],
    is_struct: bool,
    krate: &Path,
) -> Option<TokenStream> {
    let answers: Vec<(&TokenStream, Answer<'_, '_>)> = items
        .iter()
        .filter_map(|item| Some((&item.pattern, method.answer(item.behavior.as_ref()?, krate))))
        .collect();
    if answers
        .iter()
        .all(|(_, answer)| matches!(answer, Answer::Const { default: true, .. }))
    {
        return None;
    }
    let signature = method.signature(krate);

    // A struct: no `match`.
    if is_struct {
        let (_, answer) = answers.first()?;
        let body = match answer {
            Answer::Const { value, .. } => value.clone(),
            Answer::FromField {
                field,
                binding,
                value,
            } => {
                let member = &field.member;
                quote! {
                    let #binding = &self.#member;
                    #value
                }
            }
        };
        return Some(quote!(#signature { #body }));
    }

    // Group the variants giving the same constant answer into one arm, placed where the first of
    // them is; the arms reading a field stay one per variant.
    let mut groups: Vec<(String, TokenStream, Vec<&TokenStream>)> = Vec::new();
    let mut order = Vec::new();
    for (pattern, answer) in &answers {
        match answer {
            Answer::Const { value, .. } => {
                let key = value.to_string();
                match groups.iter_mut().find(|(seen, ..)| *seen == key) {
                    Some((_, _, patterns)) => patterns.push(pattern),
                    None => {
                        order.push(Arm::Group(groups.len()));
                        groups.push((key, value.clone(), vec![pattern]));
                    }
                }
            }
            Answer::FromField {
                field,
                binding,
                value,
            } => {
                let member = &field.member;
                order.push(Arm::Field(quote! {
                    #pattern { #member: #binding, .. } => #value,
                }));
            }
        }
    }
    let only_constants = order.iter().all(|arm| matches!(arm, Arm::Group(_)));
    if only_constants {
        if let [(_, value, _)] = groups.as_slice() {
            return Some(quote!(#signature { #value }));
        }
        if method.is_bool() {
            let patterns = groups
                .iter()
                .filter(|(key, ..)| key == "true")
                .flat_map(|(_, _, patterns)| patterns);
            return Some(quote! {
                #signature {
                    ::core::matches!(self, #(#patterns { .. })|*)
                }
            });
        }
    }
    let arms = order.into_iter().map(|arm| match arm {
        Arm::Field(arm) => arm,
        Arm::Group(i) => {
            let (_, value, patterns) = &groups[i];
            quote! {
                #(#patterns { .. })|* => #value,
            }
        }
    });
    Some(quote! {
        #signature {
            match self {
                #(#arms)*
            }
        }
    })
}

/// One arm of a generated `match`, in variant order.
enum Arm {
    /// The arm of the constant group with this index.
    Group(usize),
    /// An arm reading a field.
    Field(TokenStream),
}
