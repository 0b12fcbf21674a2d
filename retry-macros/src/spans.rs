//! Spans: placing generated tokens over the user's, so that a compiler error about generated
//! code points at what the user wrote; and seeing through the invisible groups `macro_rules!`
//! wraps around what it passes on.

use proc_macro2::{Delimiter, Group, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Expr, Type};

/// The first and last spans of `tokens`. A compiler error about an expression made of tokens
/// located at these two spans covers the user's tokens from the first to the last.
pub(crate) fn span_range(tokens: &impl ToTokens) -> (Span, Span) {
    let mut iter = tokens.to_token_stream().into_iter();
    let first = iter
        .next()
        .map_or_else(Span::call_site, |token| token.span());
    let last = iter.last().map_or(first, |token| token.span());
    (first, last)
}

/// `tokens` located at `last`, except the first token, located at `first` (pass the same span
/// twice to locate them all there). Identifiers keep their hygiene, other tokens get the
/// macro's, so lints (`unused_qualifications`) still see them as generated.
pub(crate) fn respan(tokens: TokenStream, first: Span, last: Span) -> TokenStream {
    let mut result = TokenStream::new();
    for (index, mut token) in tokens.into_iter().enumerate() {
        let at = if index == 0 { first } else { last };
        match &mut token {
            TokenTree::Group(group) => {
                let mut inner = Group::new(group.delimiter(), respan(group.stream(), last, last));
                inner.set_span(Span::call_site().located_at(at));
                *group = inner;
            }
            TokenTree::Ident(ident) => ident.set_span(ident.span().located_at(at)),
            other => other.set_span(Span::call_site().located_at(at)),
        }
        result.extend([token]);
    }
    result
}

/// A `&` spanned like the user's token at `span`, to put before the user's tokens: an
/// expression's span only covers its first and last tokens when both come from the same place.
pub(crate) fn user_amp(span: Span) -> TokenStream {
    let mut amp = Punct::new('&', Spacing::Alone);
    amp.set_span(span);
    amp.into_token_stream()
}

/// `(tokens)`, the parentheses located at `span`.
pub(crate) fn parenthesized(tokens: TokenStream, span: Span) -> TokenStream {
    let mut group = Group::new(Delimiter::Parenthesis, tokens);
    group.set_span(Span::call_site().located_at(span));
    group.into_token_stream()
}

/// `ty` without the invisible groups and parentheses around it.
pub(crate) fn strip_type(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => strip_type(&group.elem),
        Type::Paren(paren) => strip_type(&paren.elem),
        other => other,
    }
}

/// `expr` without the invisible groups around it.
pub(crate) fn strip_expr(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => strip_expr(&group.expr),
        other => other,
    }
}
