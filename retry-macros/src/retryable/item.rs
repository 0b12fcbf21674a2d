//! The function the attribute is placed on: read as written, then checked for what the rewrite
//! needs (`async`, `self` by reference, a `Result` return type).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::{
    Attribute, FnArg, GenericArgument, PathArguments, ReceiverKind, ReturnType, Signature, Token,
    Type, Visibility, braced,
};

use crate::diagnostics::Errors;
use crate::spans::strip_type;

/// The function as written. The body is kept as tokens, inner attributes included (not parsed
/// into statements), so the user's code reaches the compiler untouched.
pub(crate) struct RetryableFn {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    /// What is between the body's braces.
    pub(crate) body: TokenStream,
    /// The span of the body's braces.
    pub(crate) body_span: Span,
}

/// Reads the annotated item as a function with a body; anything else is an error spanned at
/// the item's keyword.
pub(crate) fn parse(item: TokenStream) -> syn::Result<RetryableFn> {
    let parser = |input: ParseStream<'_>| {
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
        let body: TokenStream = content.parse()?;
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the function"));
        }
        Ok(RetryableFn {
            attrs,
            vis,
            sig,
            body,
            body_span: brace.span.join(),
        })
    };
    parser.parse2(item)
}

fn not_a_fn(input: ParseStream<'_>) -> syn::Error {
    let found = input
        .cursor()
        .token_tree()
        .map_or_else(|| "nothing".to_owned(), |(token, _)| format!("`{token}`"));
    input.error(format!(
        "`#[retryable]` can only be placed on an `async fn`, found {found}: put it on the \
         `async fn` that makes the call (`#[retryable] async fn get(...) -> Result<T, E> {{ ... }}`)"
    ))
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

/// Checks that the function can be rewritten. `None` when it cannot (the reasons recorded).
pub(crate) fn check(function: &RetryableFn, errors: &mut Errors) -> Option<FnShape> {
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
        let mutability = match &receiver.kind {
            ReceiverKind::Reference(_, _, mutability) => Some(mutability.is_some()),
            ReceiverKind::Typed(_, ty) => match strip_type(ty) {
                Type::Reference(reference) => Some(reference.mutability.is_some()),
                _ => None,
            },
            _ => None,
        };
        match mutability {
            Some(mutable) => mut_self = mutable,
            None => {
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
        ReturnType::Type(_, ty) if is_result(ty) => Some((**ty).clone()),
        ReturnType::Type(_, ty) => {
            let written = ty.to_token_stream();
            errors.spanned(
                ty,
                format!(
                    "`#[retryable]` functions must return a `Result`, found `{written}`: write \
                     `-> Result<{written}, E>` where `E` is the error to retry on"
                ),
            );
            None
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
    let output = output.filter(|_| ok)?;
    Some(FnShape {
        mut_self,
        error_type: result_error_type(&output),
        output,
    })
}

/// Whether `ty` is written as a `Result`: a path whose last segment is `Result` or ends in
/// `Result` (an alias such as `io::Result<T>` or `StoreResult<T>`). Checked textually, so the
/// error comes before type checking and points at the return type.
fn is_result(ty: &Type) -> bool {
    match strip_type(ty) {
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
    let Type::Path(path) = strip_type(ty) else {
        return None;
    };
    let segment = path.path.segments.last()?;
    if segment.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(arguments) = &segment.arguments else {
        return None;
    };
    match arguments.args.iter().collect::<Vec<_>>()[..] {
        [GenericArgument::Type(_), GenericArgument::Type(error)] => Some(error.clone()),
        _ => None,
    }
}
