//! `#[derive(RetryInfo)]`: parse ([`ast`], [`attr`], thiserror's marks of a wrapped error in
//! [`wrapped`]) -> validate ([`valid`]) -> expand ([`expand`]).
//!
//! Every mistake is collected (not only the first), reported as a spanned `compile_error!`, and
//! accompanied by an empty `impl RetryInfo for T {}` so that code using `T` as a `RetryInfo` does
//! not fail a second time.

mod ast;
mod attr;
mod expand;
mod valid;
mod wrapped;

use proc_macro2::TokenStream;
use syn::DeriveInput;

use crate::diagnostics::Errors;

/// Expands `#[derive(RetryInfo)]` on `input`.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let attrs = attr::parse(&input.attrs, &mut errors);
    let krate = attrs
        .crate_path()
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(::retry_core));
    let Some(parsed) = ast::Input::from_syn(input, attrs, &mut errors) else {
        return expand::fallback(input, &krate, errors);
    };
    valid::validate(&parsed, &mut errors);
    if errors.is_empty() {
        expand::expand(&parsed, &krate)
    } else {
        expand::fallback(input, &krate, errors)
    }
}

#[cfg(test)]
mod tests {
    use super::derive;
    use syn::parse_quote;

    /// The expansion of `input`, without spaces, to search in.
    fn expand(input: &syn::DeriveInput) -> String {
        derive(input).to_string().replace(' ', "")
    }

    #[test]
    fn only_methods_away_from_the_defaults_are_generated() {
        let code = expand(&parse_quote! {
            enum E {
                #[retry(transient)]
                A,
                #[retry(transient)]
                B,
                #[retry(throttling)]
                C,
            }
        });
        assert!(
            code.contains(
                "fnretry_safety(&self)->::retry_core::RetrySafety{::retry_core::RetrySafety::Yes}"
            ),
            "{code}"
        );
        assert!(
            code.contains("::core::matches!(self,Self::C{..})"),
            "{code}"
        );
        assert!(!code.contains("fnis_timeout"), "{code}");
        assert!(!code.contains("fnretry_after"), "{code}");
        assert!(!code.contains("compile_error"), "{code}");
    }

    #[test]
    fn no_attributes_means_an_empty_impl() {
        let code = expand(&parse_quote! {
            enum E<T> { A(T), B }
        });
        assert_eq!(
            code,
            "#[automatically_derived]#[allow(unused_qualifications,clippy::match_same_arms)]\
             impl<T>::retry_core::RetryInfoforE<T>{}"
        );
    }

    #[test]
    fn transparent_fields_mentioning_a_parameter_get_a_bound() {
        let code = expand(&parse_quote! {
            #[retry(crate = "my::retry")]
            enum E<'a, T, U> {
                #[retry(transparent)]
                A(Box<T>),
                #[retry(transparent)]
                B(&'a std::io::Error),
                C(U),
            }
        });
        assert!(code.contains("whereBox<T>:my::retry::RetryInfo{"), "{code}");
        assert!(!code.contains("::retry_core"), "{code}");
    }

    #[test]
    fn a_wrapped_error_without_retry_keys_is_asked_through_wrapped_error() {
        let code = expand(&parse_quote! {
            enum E<T> {
                #[error(transparent)]
                A(#[from] T),
                B { path: String, #[source] cause: std::io::Error },
                C { source: Box<T> },
                #[error(transparent)]
                D(std::io::Error),
                #[retry(never)]
                F(#[from] Other),
                G(String),
            }
        });
        let private = crate::runtime::private_module().to_string();
        let wrapped =
            format!("::retry_core::{private}::WrappedError::wrapped_retry_safety(__retry_field)");
        for arm in [
            "Self::A{0:__retry_field,..}=>",
            "Self::B{cause:__retry_field,..}=>",
            "Self::C{source:__retry_field,..}=>",
            "Self::D{0:__retry_field,..}=>",
        ] {
            assert!(code.contains(&format!("{arm}{wrapped}")), "{arm}: {code}");
        }
        assert!(
            code.contains("whereT:::retry_core::RetryInfo,Box<T>:::retry_core::RetryInfo{"),
            "{code}"
        );
        assert!(!code.contains("Self::F{0:__retry_field"), "{code}");
        assert!(!code.contains("Self::G{0:__retry_field"), "{code}");
    }

    #[test]
    fn errors_come_with_an_empty_impl() {
        let code = expand(&parse_quote! {
            enum E<T> where T: Clone {
                #[retry(never, throttling)]
                A(T),
            }
        });
        assert!(code.contains("compile_error"), "{code}");
        assert!(
            code.ends_with("impl<T>::retry_core::RetryInfoforE<T>whereT:Clone{}"),
            "{code}"
        );
    }
}
