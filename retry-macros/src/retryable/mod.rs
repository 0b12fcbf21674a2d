//! `#[retryable]`: parse ([`args`]) -> validate ([`valid`]) -> expand ([`expand`]).
//!
//! Every mistake found is reported (not only the first) as a `compile_error!` spanned at the
//! user's token. When there is one, the function is emitted unchanged next to the errors, so
//! its body still type-checks on its own and no second error follows from the first.

mod args;
mod expand;
mod valid;

use proc_macro2::TokenStream;

use crate::diagnostics::Errors;

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

#[cfg(test)]
mod tests {
    use super::retryable;
    use quote::quote;

    /// The expansion, without spaces, to search in, with the versioned module's name replaced
    /// by `__private`.
    fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        let private = super::expand::private_module().to_string();
        retryable(args, item)
            .to_string()
            .replace(' ', "")
            .replace(&private, "__private")
    }

    #[test]
    fn the_expansion_is_a_function_with_the_same_signature() {
        let item = quote! {
            /// Docs.
            pub(crate) async fn get<'a, T: Clone>(&'a self, key: &str, mut body: T, (a, b): (u8, u8))
                -> Result<&'a str, StoreError>
            where
                T: Send,
            {
                Ok(key)
            }
        };
        let output = retryable(quote!(max_attempts = 5, mode = "adaptive"), item);
        let function: syn::ImplItemFn = syn::parse2(output).expect("a function");
        assert_eq!(function.sig.ident, "get");
        assert!(function.sig.asyncness.is_some());
        assert!(matches!(function.vis, syn::Visibility::Restricted(_)));
        assert_eq!(function.sig.inputs.len(), 4);
        let private = super::expand::private_module().to_string();
        let code = quote!(#function)
            .to_string()
            .replace(' ', "")
            .replace(&private, "__private");
        assert!(
            code.contains(".max_attempts(5u32).mode(::retry_core::__private::RetryMode::Adaptive)"),
            "{code}"
        );
        assert!(code.contains("letmutbody="), "{code}");
        assert!(code.contains("let(a,b)="), "{code}");
        assert!(!code.contains("compile_error"), "{code}");
    }

    #[test]
    fn durations_follow_the_runtime_rules() {
        let code = expand(
            quote!(
                initial_backoff = "1.5s",
                max_backoff = "1m",
                timeout = " 250ms "
            ),
            quote!(
                async fn f() -> Result<(), E> {
                    Ok(())
                }
            ),
        );
        assert!(
            code.contains(
                ".initial_backoff(::retry_core::__private::Duration::new(1u64,500000000u32))"
            ),
            "{code}"
        );
        assert!(
            code.contains(".max_backoff(::retry_core::__private::Duration::new(60u64,0u32))"),
            "{code}"
        );
        assert!(
            code.contains(".timeout(::retry_core::__private::Duration::new(0u64,250000000u32))"),
            "{code}"
        );
    }

    #[test]
    fn errors_keep_the_function_unchanged() {
        let item = quote!(
            async fn f() -> Result<(), E> {
                Ok(())
            }
        );
        let code = expand(quote!(max_attempts = 0, retries = 3), item.clone());
        assert!(
            code.contains("compile_error!{\"`max_attempts`mustbeatleast1"),
            "{code}"
        );
        assert!(code.contains("unknownargument`retries`"), "{code}");
        assert!(code.ends_with(&item.to_string().replace(' ', "")), "{code}");
    }

    #[test]
    fn unknown_arguments_suggest_the_closest() {
        let code = expand(
            quote!(max_atempts = 3),
            quote!(
                async fn f() -> Result<(), E> {
                    Ok(())
                }
            ),
        );
        assert!(code.contains("(didyoumean`max_attempts`?)"), "{code}");
    }
}
