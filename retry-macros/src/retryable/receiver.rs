//! `self` for each attempt. `&self` is reused and `&mut self` re-borrowed as they are; a
//! receiver that an attempt would consume is had again under another name: `self: Arc<Self>` /
//! `Rc<Self>` cloned, `self: Pin<&mut Self>` re-borrowed with `Pin::as_mut`, the body's `self`
//! renamed to it.
//!
//! In a method `#[async_trait]` rewrote, the body already reads `self` through a binding of
//! its own, `let __self = self;`, which each attempt would move: its initializer is replaced.

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use quote::quote;
use syn::{FnArg, Signature, Token};

use super::item::{BodyKind, FnShape, SelfKind};

/// How the expansion gives each attempt its `self`.
pub(crate) struct Receiver {
    kind: SelfKind,
    /// Whether the body is `#[async_trait]`'s.
    async_trait: bool,
    /// The name an attempt's own `self` is bound to, located at the receiver (the body's
    /// renamed `self` tokens must resolve to it).
    renamed: Ident,
    /// The `Pin<&mut Self>` moved into a mutable binding, in an `#[async_trait]` body.
    pinned: Ident,
}

impl Receiver {
    /// Reads the receiver; makes a `self: Pin<&mut Self>` of a function that is not
    /// `#[async_trait]`'s `mut` (each attempt re-borrows it).
    pub(crate) fn new(sig: &mut Signature, shape: &FnShape) -> Self {
        let async_trait = matches!(shape.body, BodyKind::AsyncTrait(_));
        let mut span = Span::call_site();
        if let Some(FnArg::Receiver(receiver)) = sig.inputs.first_mut() {
            span = receiver.self_token.span;
            if shape.receiver == SelfKind::PinMut && !async_trait {
                receiver.mutability = Some(Token![mut](span));
            }
        }
        Receiver {
            kind: shape.receiver,
            async_trait,
            renamed: Ident::new("__retry_self", span),
            pinned: Ident::new("__retry_pinned_self", Span::mixed_site()),
        }
    }

    /// The expression giving one attempt its `self`, when the receiver is not reused as is.
    fn again(&self) -> Option<TokenStream> {
        let pinned = &self.pinned;
        match (self.kind, self.async_trait) {
            (SelfKind::Shared, _) => Some(quote!(::core::clone::Clone::clone(&self))),
            (SelfKind::PinMut, false) => Some(quote!(::core::pin::Pin::as_mut(&mut self))),
            (SelfKind::PinMut, true) => Some(quote!(::core::pin::Pin::as_mut(&mut #pinned))),
            (SelfKind::RefMut, true) => Some(quote!(&mut *self)),
            _ => None,
        }
    }

    /// Before the loop: in an `#[async_trait]` body with `self: Pin<&mut Self>`, the receiver
    /// moved into a mutable binding that each attempt re-borrows.
    pub(crate) fn pinned(&self) -> TokenStream {
        let pinned = &self.pinned;
        if self.kind == SelfKind::PinMut && self.async_trait {
            quote!(let mut #pinned = self;)
        } else {
            TokenStream::new()
        }
    }

    /// At the top of each attempt: `let __retry_self = <self again>;` when the body's `self` is
    /// renamed.
    pub(crate) fn binding(&self) -> TokenStream {
        if self.async_trait || !self.kind.renamed() {
            return TokenStream::new();
        }
        let renamed = &self.renamed;
        let again = self.again();
        quote!(let #renamed = #again;)
    }

    /// The user's body, its `self` renamed when each attempt has its own.
    pub(crate) fn body(&self, body: &TokenStream) -> TokenStream {
        if self.kind.renamed() {
            rename_self(body.clone(), &self.renamed)
        } else {
            body.clone()
        }
    }

    /// `#[async_trait]`'s statements, its `let __self = self;` given `self` again.
    pub(crate) fn async_trait_stmts(&self, stmts: &TokenStream) -> TokenStream {
        match self.again() {
            Some(again) => replace_self_binding(stmts.clone(), &again),
            None => stmts.clone(),
        }
    }
}

/// `tokens` with each `self` (the value, not the module path `self::`) replaced by `renamed`,
/// except inside nested items (`fn name`, `impl`, `trait`, `mod`), which have their own.
fn rename_self(tokens: TokenStream, renamed: &Ident) -> TokenStream {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut result = Vec::with_capacity(tokens.len());
    let mut nested_item = false;
    for (index, token) in tokens.iter().enumerate() {
        let next = tokens.get(index + 1);
        match token {
            TokenTree::Ident(_) if nested_item => result.push(token.clone()),
            TokenTree::Ident(ident) if starts_item(ident, next) => {
                nested_item = true;
                result.push(token.clone());
            }
            TokenTree::Ident(ident) if ident == "self" && !is_path_separator(next) => {
                // The binding's hygiene (so that it resolves to the binding), the user's
                // location (so that errors point at the user's `self`).
                let span = renamed.span().located_at(ident.span());
                result.push(TokenTree::Ident(Ident::new(&renamed.to_string(), span)));
            }
            TokenTree::Group(group) if nested_item => {
                if group.delimiter() == Delimiter::Brace {
                    nested_item = false;
                }
                result.push(token.clone());
            }
            TokenTree::Group(group) => {
                let mut inner = Group::new(group.delimiter(), rename_self(group.stream(), renamed));
                inner.set_span(group.span());
                result.push(TokenTree::Group(inner));
            }
            TokenTree::Punct(punct) if nested_item && punct.as_char() == ';' => {
                nested_item = false;
                result.push(token.clone());
            }
            other => result.push(other.clone()),
        }
    }
    result.into_iter().collect()
}

/// Whether `ident` starts a nested item, whose `self` is its own: `impl`, `trait`, `mod`, or
/// `fn` followed by a name (a `fn(...)` pointer type is not an item).
fn starts_item(ident: &Ident, next: Option<&TokenTree>) -> bool {
    if ident == "fn" {
        return matches!(next, Some(TokenTree::Ident(_)));
    }
    ident == "impl" || ident == "trait" || ident == "mod"
}

/// Whether `token` starts `::` (then the `self` before it is the module path).
fn is_path_separator(token: Option<&TokenTree>) -> bool {
    matches!(token, Some(TokenTree::Punct(punct)) if punct.as_char() == ':')
}

/// `#[async_trait]`'s `let [mut] __self = self;` with `again` for `self`.
fn replace_self_binding(stmts: TokenStream, again: &TokenStream) -> TokenStream {
    let mut result: Vec<TokenTree> = Vec::new();
    for token in stmts {
        let is_self = matches!(&token, TokenTree::Ident(ident) if ident == "self");
        if is_self && binds_self(&result) {
            result.extend(again.clone());
        } else {
            result.push(token);
        }
    }
    result.into_iter().collect()
}

/// Whether `before` ends with `let [mut] __self =`.
fn binds_self(before: &[TokenTree]) -> bool {
    let is = |token: Option<&TokenTree>, word: &str| match token {
        Some(TokenTree::Ident(ident)) => ident == word,
        Some(TokenTree::Punct(punct)) => punct.as_char().to_string() == word,
        _ => false,
    };
    let mut back = before.iter().rev();
    if !is(back.next(), "=") || !is(back.next(), "__self") {
        return false;
    }
    match back.next() {
        Some(token) if is(Some(token), "mut") => is(back.next(), "let"),
        token => is(token, "let"),
    }
}
