//! `#[retryable]`: parse ([`args`]) -> validate ([`valid`]) -> expand ([`expand`]).
//!
//! Every mistake found is reported (not only the first) as a `compile_error!` spanned at the
//! user's token. When there is one, the function is emitted unchanged next to the errors, so
//! its body still type-checks on its own and no second error follows from the first.

mod args;
mod expand;
mod valid;

use proc_macro2::TokenStream;

/// Expands `#[retryable(args)]` on `item`.
pub(crate) fn retryable(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let parsed_args = args::parse_args(args, &mut errors);
    let function = match args::parse_fn(item.clone()) {
        Ok(function) => function,
        Err(error) => {
            errors.push(error);
            return expand::unchanged(item, &errors);
        }
    };
    let config = valid::validate_args(&parsed_args, &mut errors);
    let shape = valid::validate_fn(&function, &mut errors);
    match (config, shape) {
        (Some(config), Some(shape)) if errors.is_empty() => {
            expand::expand(&function, &shape, &config)
        }
        _ => expand::unchanged(item, &errors),
    }
}

/// Collects every error found, so the user sees them all at once.
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
