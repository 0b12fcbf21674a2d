//! The expansion of `#[retryable]`, and its compile-time checks against the runtime's.

use super::retryable;
use quote::quote;

/// The expansion, without spaces, to search in, with the versioned module's name replaced
/// by `__private`.
fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    let private = crate::runtime::private_module().to_string();
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
    let private = crate::runtime::private_module().to_string();
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
            timeout = " 250ms ",
            mode = "adaptive",
            max_wait = "2.5s"
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
    assert!(
        code.contains(".max_wait(::retry_core::__private::Duration::new(2u64,500000000u32))"),
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

#[test]
fn the_preset_fills_in_the_backoff_not_given() {
    let code = expand(
        quote!(preset = "aws-2026", max_backoff = "10ms"),
        quote!(
            async fn f() -> Result<(), E> {
                Ok(())
            }
        ),
    );
    assert!(
        code.contains("initial_backoff(50ms,frompreset`aws-2026`)mustnotexceedmax_backoff(10ms)"),
        "{code}"
    );
}

#[test]
fn inner_attributes_stay_in_the_body() {
    let code = expand(
        quote!(),
        quote!(
            #[inline]
            async fn f() -> Result<(), E> {
                #![allow(unused_variables)]
                let x = 1;
                Ok(())
            }
        ),
    );
    assert!(code.starts_with("#[inline]asyncfnf()"), "{code}");
    assert!(
        code.contains("{#![allow(unused_variables)]letx=1;Ok(())}"),
        "{code}"
    );
}

#[test]
fn impl_trait_in_the_return_type_is_erased_from_the_type_pin() {
    let code = expand(
        quote!(),
        quote!(
            async fn f() -> Result<impl Iterator<Item = impl Display>, E> {
                Ok([1].into_iter())
            }
        ),
    );
    assert!(
        code.contains("let__retry_fake_return:Result<_,E>=loop{};"),
        "{code}"
    );
}

// ---- the compile-time checks are the runtime's --------------------------------------------

mod against_the_runtime {
    use proptest::prelude::*;
    use quote::quote;
    use retry_core::{ConfigError, RetryConfig};

    use super::super::configure;
    use super::super::lower::{Config, Setting, StrategySource};
    use crate::diagnostics::Errors;
    use crate::parse::quota::Quota;

    /// The runtime's configuration built from what the expansion passes it: the preset, then
    /// each builder call.
    fn generated_config(config: &Config) -> Result<RetryConfig, ConfigError> {
        let StrategySource::Default {
            preset, settings, ..
        } = &config.strategy
        else {
            panic!("the function's own strategy");
        };
        let preset = preset.as_str().parse().expect("a runtime preset");
        let mut builder = RetryConfig::from_preset(preset);
        for setting in settings {
            builder = match *setting {
                Setting::MaxAttempts(n) => builder.max_attempts(n),
                Setting::Mode(mode) => builder.mode(mode.as_str().parse().expect("a mode")),
                Setting::InitialBackoff(value) => builder.initial_backoff(value),
                Setting::MaxBackoff(value) => builder.max_backoff(value),
                Setting::ThrottlingBackoff(value) => builder.throttling_backoff(value),
                Setting::Jitter(jitter) => {
                    builder.jitter(jitter.as_str().parse().expect("a jitter"))
                }
                Setting::Timeout(value) => builder.timeout(value),
                Setting::MaxWait(value) => builder.max_wait(value),
                Setting::Quota(quota) => builder.quota(match quota {
                    Quota::Off => retry_core::Quota::Off,
                    Quota::Fixed(tokens) => retry_core::Quota::Fixed(tokens),
                    Quota::Traffic => retry_core::Quota::Traffic,
                }),
                Setting::LongPolling(on) => builder.long_polling(on),
            };
        }
        builder.build()
    }

    /// Every quota the attribute accepts, on every preset, beside long polling: the runtime
    /// builds the configuration the expansion generates, and reports the quota asked for.
    #[test]
    fn every_quota_the_attribute_accepts_is_built() {
        let quotas = [
            (quote!("off"), retry_core::Quota::Off),
            (quote!(" Traffic "), retry_core::Quota::Traffic),
            (quote!(1), retry_core::Quota::Fixed(1)),
            (quote!(2000), retry_core::Quota::Fixed(2000)),
            (quote!(4294967295u32), retry_core::Quota::Fixed(u32::MAX)),
        ];
        for preset in retry_core::RetryPreset::NAMES {
            for (written, expected) in &quotas {
                let mut errors = Errors::default();
                let args = quote!(preset = #preset, quota = #written, long_polling = true);
                let config = configure(args, &mut errors).expect("valid arguments");
                let built = generated_config(&config).expect("the runtime accepts it");
                assert_eq!(built.quota(), *expected, "{preset}, {written}");
                assert!(built.long_polling());
            }
        }
    }

    /// Durations around every preset's backoff numbers.
    const DURATIONS: [&str; 11] = [
        "0ms", "10ms", "49ms", "50ms", "51ms", "999ms", "1s", "1001ms", "20s", "21s", "1h",
    ];

    fn duration() -> impl Strategy<Value = Option<&'static str>> {
        prop::option::of(prop::sample::select(DURATIONS.to_vec()))
    }

    proptest! {
        /// `#[retryable]` accepts a preset and backoffs exactly when the runtime accepts the
        /// same values (a `max_backoff` below a throttling base of the preset's own lowering
        /// that base), and then generates that configuration.
        #[test]
        fn the_backoff_checks_are_the_runtimes(
            preset in prop::option::of(prop::sample::select(
                retry_core::RetryPreset::NAMES.to_vec()
            )),
            initial in duration(),
            max in duration(),
        ) {
            let mut tokens = Vec::new();
            tokens.extend(preset.map(|name| quote!(preset = #name)));
            tokens.extend(initial.map(|value| quote!(initial_backoff = #value)));
            tokens.extend(max.map(|value| quote!(max_backoff = #value)));
            let mut errors = Errors::default();
            let generated = configure(quote!(#(#tokens),*), &mut errors);

            // What the user asked for, given to the runtime as it is.
            let preset = preset.map_or(retry_core::RetryPreset::Default, |name| {
                name.parse().expect("a preset")
            });
            let parse = |value: &str| retry_core::config::parse_duration(value).expect("a duration");
            let mut asked = RetryConfig::from_preset(preset);
            if let Some(value) = initial {
                asked = asked.initial_backoff(parse(value));
            }
            if let Some(value) = max {
                asked = asked.max_backoff(parse(value));
            }
            let asked = asked.build();

            match generated {
                Some(config) => {
                    let built = generated_config(&config).expect("the runtime accepts it");
                    let base = RetryConfig::from_preset(preset).build().expect("a preset");
                    prop_assert_eq!(
                        built.initial_backoff(),
                        initial.map_or(base.initial_backoff(), parse)
                    );
                    prop_assert_eq!(built.max_backoff(), max.map_or(base.max_backoff(), parse));
                    // The runtime rejects the values as asked only for the throttling base
                    // the expansion lowers.
                    if let Err(error) = asked {
                        prop_assert!(
                            matches!(
                                error,
                                ConfigError::BackoffOrder { setting: "throttling_backoff", .. }
                            ),
                            "{error}"
                        );
                        prop_assert_eq!(built.throttling_backoff(), built.max_backoff());
                    }
                }
                None => {
                    let error = asked.expect_err("the runtime rejects it too");
                    prop_assert!(
                        matches!(error, ConfigError::BackoffOrder { setting: "initial_backoff", .. }),
                        "{error}"
                    );
                }
            }
        }
    }
}

// ---- shapes ------------------------------------------------------------------------------------

#[test]
fn an_arc_receiver_is_cloned_and_renamed_but_not_module_paths_or_nested_items() {
    let code = expand(
        quote!(),
        quote! {
            async fn get(self: Arc<Self>) -> Result<u32, E> {
                fn helper(x: u32) -> u32 { x }
                impl Local { fn own(&self) -> &Self { self } }
                let f: fn(&Self) = Self::noop;
                self::helper(self.value)
            }
        },
    );
    assert!(
        code.contains("let__retry_self=::core::clone::Clone::clone(&self);"),
        "{code}"
    );
    assert!(code.contains("self::helper(__retry_self.value)"), "{code}");
    assert!(code.contains("fnown(&self)->&Self{self}"), "{code}");
    assert!(code.contains("letf:fn(&Self)=Self::noop;"), "{code}");
}

#[test]
fn a_pinned_receiver_is_made_mut_and_reborrowed() {
    let code = expand(
        quote!(),
        quote! {
            async fn get(self: Pin<&mut Self>) -> Result<u32, E> {
                Ok(self.get_mut().n)
            }
        },
    );
    assert!(code.contains("asyncfnget(mutself:Pin<&mutSelf>)"), "{code}");
    assert!(
        code.contains("let__retry_self=::core::pin::Pin::as_mut(&mutself);"),
        "{code}"
    );
}

#[test]
fn an_async_trait_body_gets_the_loop_inside_its_async_block() {
    let code = expand(
        quote!(),
        quote! {
            fn get<'life0, 'async_trait>(&'life0 mut self, x: u32)
                -> ::core::pin::Pin<Box<dyn ::core::future::Future<Output = Result<u32, E>>
                    + ::core::marker::Send + 'async_trait>>
            where 'life0: 'async_trait, Self: 'async_trait
            {
                Box::pin(async move {
                    if let ::core::option::Option::Some(__ret) =
                        ::core::option::Option::None::<Result<u32, E>> {
                        return __ret;
                    }
                    let mut __self = self;
                    let x = x;
                    let __ret: Result<u32, E> = { __self.n += x; Ok(__self.n) };
                    __ret
                })
            }
        },
    );
    assert!(code.contains("Box::pin(asyncmove{"), "{code}");
    assert!(
        code.contains("let::core::result::Result::Ok(())=__retry.ready().await;"),
        "{code}"
    );
    // Each attempt re-borrows `self` instead of moving it.
    assert!(code.contains("letmut__self=&mut*self;"), "{code}");
    assert!(!code.contains("compile_error"), "{code}");
}

#[test]
fn a_blocking_fn_runs_its_body_as_a_closure_between_thread_sleeps() {
    let code = expand(
        quote!(),
        quote! {
            fn get(&self) -> Result<u32, E> {
                Ok(1)
            }
        },
    );
    assert!(
        code.contains("let::core::result::Result::Ok(())=__retry.wait_blocking();"),
        "{code}"
    );
    // The body as a closure, called in the attempt's context.
    assert!(
        code.contains("let__retry_outcome=__retry.in_attempt_blocking(||{"),
        "{code}"
    );
    assert!(!code.contains(".await"), "{code}");
}

#[test]
fn each_attempt_is_polled_in_its_context_timed_out_or_not() {
    let item = || {
        quote! {
            async fn get(&self) -> Result<u32, E> {
                Ok(1)
            }
        }
    };
    let code = expand(quote!(), item());
    assert!(
        code.contains("let__retry_outcome=__retry.in_attempt(async{"),
        "{code}"
    );
    let code = expand(quote!(attempt_timeout = "1s"), item());
    assert!(
        code.contains("let__retry_outcome=__retry.in_attempt(::retry_core::__private::cut_after("),
        "{code}"
    );
}

#[test]
fn idempotent_declares_the_loops_idempotency() {
    let item = || {
        quote! {
            async fn get(&self) -> Result<u32, E> {
                Ok(1)
            }
        }
    };
    for (args, declared) in [
        (quote!(idempotent = true), ".idempotent(true);"),
        (quote!(idempotent = false), ".idempotent(false);"),
        (
            quote!(
                mode = "adaptive",
                timeout = "1s",
                shed = true,
                idempotent = false
            ),
            ".shed_load().idempotent(false);",
        ),
    ] {
        let code = expand(args, item());
        assert!(code.contains(declared), "{code}");
    }
    let code = expand(quote!(), item());
    assert!(!code.contains("idempotent"), "undeclared: {code}");
}

#[test]
fn only_a_call_that_may_long_poll_lingers_before_returning() {
    let item = || {
        quote! {
            async fn get(&self) -> Result<u32, E> {
                Ok(1)
            }
        }
    };
    let blocking = quote! {
        fn get(&self) -> Result<u32, E> {
            Ok(1)
        }
    };
    let settles = "let__retry_linger=__retry.take_linger();return(__retry_outcome,__retry_linger);";
    for args in [
        quote!(long_polling = true),
        quote!(strategy = self.strategy),
    ] {
        let code = expand(args, item());
        assert!(code.contains(settles), "{code}");
        assert!(
            code.contains("::__private::Settled::new(asyncmove{"),
            "{code}"
        );
        assert!(!code.contains(".linger().await"), "{code}");
    }
    for args in [
        quote!(),
        quote!(long_polling = false),
        quote!(quota = "off"),
    ] {
        let code = expand(args, item());
        assert!(!code.contains("linger"), "{code}");
    }
    let code = expand(quote!(long_polling = true), blocking);
    assert!(
        code.contains("__retry.linger_blocking();return__retry_outcome;"),
        "{code}"
    );
    assert!(!code.contains("Settled"), "{code}");
}

#[test]
fn shed_builds_a_shedding_loop_and_returns_the_shed_as_the_error() {
    let code = expand(
        quote!(mode = "adaptive", timeout = "1s", shed = true),
        quote! {
            async fn get(&self) -> Result<u32, E> {
                Ok(1)
            }
        },
    );
    assert!(code.contains("__retry_hook,).shed_load();"), "{code}");
    assert!(
        code.contains("iflet::core::result::Result::Err(__retry_shed)=__retry.ready().await"),
        "{code}"
    );
    assert!(
        code.contains("FromLoadShed>::from_load_shed(__retry_shed));}"),
        "{code}"
    );
    // A loop that long-polls returns its outcome with what to sleep: a shed call, nothing.
    for args in [
        quote!(
            mode = "adaptive",
            timeout = "1s",
            shed = true,
            long_polling = true
        ),
        quote!(strategy = self.strategy, shed = true),
    ] {
        let code = expand(
            args,
            quote! {
                async fn get(&self) -> Result<u32, E> {
                    Ok(1)
                }
            },
        );
        assert!(
            code.contains(
                "return(::core::result::Result::Err(<_as::retry_core::__private::FromLoadShed>\
                 ::from_load_shed(__retry_shed)),::core::option::Option::None);"
            ),
            "{code}"
        );
    }
}
