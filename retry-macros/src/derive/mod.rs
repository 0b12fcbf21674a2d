//! `#[derive(RetryInfo)]`: parse ([`ast`], [`attr`]) -> validate ([`valid`]) -> expand
//! ([`expand`]).
//!
//! Every mistake is collected (not only the first), reported as a spanned `compile_error!`, and
//! accompanied by an empty `impl RetryInfo for T {}` so that code using `T` as a `RetryInfo` does
//! not fail a second time.

mod ast;
mod attr;
mod expand;
mod valid;

use proc_macro2::TokenStream;
use syn::DeriveInput;

/// Expands `#[derive(RetryInfo)]` on `input`.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let krate = attr::crate_path(&input.attrs);
    let Some(parsed) = ast::Input::from_syn(input, &mut errors) else {
        return expand::fallback(input, &krate, errors);
    };
    valid::validate(&parsed, &mut errors);
    if errors.is_empty() {
        expand::expand(&parsed, &krate)
    } else {
        expand::fallback(input, &krate, errors)
    }
}

/// Collects every error found in the input, so the user sees them all at once.
#[derive(Default)]
pub(crate) struct Errors {
    /// All errors so far, combined into one (`syn::Error` holds a list).
    combined: Option<syn::Error>,
}

impl Errors {
    /// Records one error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(combined) => combined.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Records an error spanning `tokens` (first to last token).
    pub(crate) fn spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// The `compile_error!` invocations for everything recorded.
    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.combined
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}
