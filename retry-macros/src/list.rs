//! The lists inside both attributes, `#[retryable(key = value, ...)]` and
//! `#[retry(key, key = value, ...)]`, read with syn's meta parser (`syn::meta::parser`): each
//! macro reads what follows a key; this module checks what separates the keys, so that a
//! misplaced token is reported in the macro's own words, at the token.

use proc_macro2::{TokenStream, TokenTree};
use syn::Token;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};

/// What a list's messages say when its syntax is wrong.
pub(crate) struct ListSyntax {
    /// Where a key belongs but something else is written.
    pub(crate) expected_key: String,
    /// Where a `,` belongs but something else is written.
    pub(crate) expected_comma: &'static str,
}

/// Parses `tokens` as keys separated by commas (a trailing comma allowed), calling `key` with
/// each: the key's path is read, what follows it (`= value`, `(...)`, nothing) is `key`'s to
/// read. A token where a key or a comma belongs ends the parse with an error at that token.
pub(crate) fn parse(
    tokens: TokenStream,
    syntax: &ListSyntax,
    mut key: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    if let Some(first) = tokens.clone().into_iter().next()
        && !starts_key(&first)
    {
        return Err(syn::Error::new(first.span(), &syntax.expected_key));
    }
    let parser = syn::meta::parser(|meta| {
        key(&meta)?;
        end_of_key(meta.input, syntax)
    });
    parser.parse2(tokens)
}

/// Whether a key (an identifier, or a path starting with `::`) starts at `token`.
fn starts_key(token: &TokenTree) -> bool {
    match token {
        TokenTree::Ident(_) => true,
        TokenTree::Punct(punct) => punct.as_char() == ':',
        _ => false,
    }
}

/// What may follow a key: the end of the list, or a comma and then the end or another key.
fn end_of_key(input: ParseStream<'_>, syntax: &ListSyntax) -> syn::Result<()> {
    if input.is_empty() {
        return Ok(());
    }
    if !input.peek(Token![,]) {
        return Err(input.error(syntax.expected_comma));
    }
    let after_comma = input.fork();
    after_comma.parse::<Token![,]>()?;
    if after_comma.is_empty()
        || after_comma.peek(syn::Ident::peek_any)
        || after_comma.peek(Token![::])
    {
        Ok(())
    } else {
        Err(after_comma.error(&syntax.expected_key))
    }
}
