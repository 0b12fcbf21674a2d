//! Expansion: the function with the same signature, its body run once per attempt inside the
//! runtime's `RetryLoop` (the loop `retry_core::retry` uses too).
//!
//! ```text
//! async fn get(&self, key: &str, body: String) -> Result<Item, StoreError> {
//!     static __RETRY_STRATEGY: FnStrategy =
//!         LazyLock::new(|| default_strategy(scope, RetryPreset::Default, |b| b...));
//!     let __retry_strategy = &*__RETRY_STRATEGY;   // or `&dyn RetryStrategy = &(strategy expr)`
//!     let __retry_classifier = (&DefaultClassifier::<E>::NEW).classifier(); // RetryInfoClassifier
//!                                    // or the user's: `&dyn ClassifyRetry<T, E> = &(classifier)`
//!     let __retry_hook = NoHook;                     // or `DynHook(&on_retry)`
//!     let mut __retry = RetryLoop::new(__retry_strategy, __retry_classifier, __retry_hook);
//!                                                    // with `shed`: `.shed_load()`
//!     loop {
//!         let Ok(()) = __retry.ready().await;            // backoff, send permit; with `shed`:
//!         // if let Err(shed) = __retry.ready().await { return Err(from_load_shed(shed)); }
//!         let body = <ByValueArgument as CloneArg<_, body>>::clone_arg(&body); // per attempt
//!         let __retry_outcome = async {
//!             if false { let fake: Result<Item, StoreError> = loop {}; return fake; }
//!             { /* the user's body, inner attributes included */ }
//!         }
//!         .await;                                        // or `cut_after(timeout, async {..}, ..)`
//!         let __retry_result: &<Result<Item, StoreError> as Outcome>::Result = &__retry_outcome;
//!         if __retry.finish(__retry_result).is_break() {  // every stop decided here
//!             return __retry_outcome;
//!         }
//!     }
//! }
//! ```
//!
//! A function that may long-poll (`long_polling = true`, or a given `strategy`) returns
//! `(__retry_outcome, __retry.take_linger())` from the loop instead, the loop written
//! `Settled::new(async move { ... }).await`: `Settled` sleeps a long-polling call's backoff
//! before it gives the outcome back (a blocking one calls `linger_blocking()` before returning).
//! A shed call returns `(Err(from_load_shed(shed)), None)` there: nothing to sleep.
//!
//! * The `if false { return fake }` (the technique of `tracing`'s `#[instrument]`) fixes the
//!   inner async block's output type to the declared return type before the body is checked, so
//!   `?` conversions and type mismatches are reported at the user's expressions. Each
//!   `impl Trait` in the return type is written `_` there (`Result<_, E>`).
//! * The default strategy keeps its concrete type, so its calls inline into the success path.
//!   A given strategy, a given classifier and the hook reach the loop as trait objects. The
//!   coercion to `&dyn ...` is spanned at what the user wrote (the `strategy` / `classifier`
//!   expression, the `retry_if` / `on_retry` path), so a wrong type is reported there, once;
//!   the loop itself then type-checks. Dynamic dispatch costs one indirect call per attempt,
//!   nothing on the heap.
//! * The default classifier is concrete, `RetryInfoClassifier`, so the classification inlines
//!   into the success path (`#[retryable]` 177 -> 157 instructions a call, callgrind). It is
//!   picked by method resolution at the error type: where `E` lacks `RetryInfo` a fallback one
//!   autoref further is taken, whose bound is the one error and whose classifier type has none
//!   (`RetryInfoClassifier` named directly, or a function item bounded by `E: RetryInfo`, was
//!   reported again wherever its type appears).
//! * Generated locals use `Span::mixed_site()`: the user's body cannot see them.

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, FnArg, Pat, PatType, Type, TypeInfer};

use super::item::{BodyKind, FnShape, RetryableFn};
use super::lower::{ClassifierSource, Config, Setting, StrategySource};
use super::receiver;
use crate::diagnostics::Errors;
use crate::parse::hedge::HedgeDelay;
use crate::parse::quota::Quota;
use crate::runtime::private_module;
use crate::spans::{parenthesized, respan, span_range, strip_type, user_amp};

/// The function unchanged, with the errors: the user's code still type-checks on its own.
pub(crate) fn unchanged(item: TokenStream, errors: &Errors) -> TokenStream {
    let errors = errors.to_compile_errors();
    quote!(#errors #item)
}

/// The rewritten function.
pub(crate) fn expand(function: &RetryableFn, shape: &FnShape, config: &Config) -> TokenStream {
    let krate = &config.krate;
    let private = private_module();
    let private = quote!(#krate::#private);
    let mut sig = function.sig.clone();
    let bindings = rebind_arguments(&mut sig.inputs, &private);
    let receiver = receiver::Receiver::new(&mut sig, shape);
    let again = receiver.binding();

    let types = OutcomeTypes::new(&shape.output, &private);
    let strategy = strategy(function, shape, config, &private);
    let classifier = classifier(shape, config, &private, &types);
    let hook = hook(config, &private, &types);
    let attempt = attempt(function, shape, config, &receiver, &private, &types.pinned);

    let retry = local("__retry");
    let outcome = local("__retry_outcome");
    let strategy_local = local("__retry_strategy");
    let classifier_local = local("__retry_classifier");
    let hook_local = local("__retry_hook");
    // An async call that may long-poll returns its outcome from the loop with what to sleep
    // before returning it, and the loop is awaited through `Settled`, which sleeps it: a
    // suspension point after the attempt, even one never reached, would cost every call.
    let blocking = matches!(shape.body, BodyKind::Blocking);
    let settles = config.lingers && !blocking;
    let wait = wait(blocking, settles, config, &private);
    // Shedding is the loop's option: its `ready` may then refuse the call. So is idempotency.
    let shedding = config.shed.map(|_| quote!(.shed_load()));
    let idempotent = config
        .idempotent
        .map(|idempotent| quote!(.idempotent(#idempotent)));
    // The outcome seen as a `Result`, through `Outcome` at the return type's tokens: a return
    // type that is not a `Result` is reported there (as for the classifier's type, so once).
    // The projection then stays unknown rather than an error type, so `finish` adds an E0308 at
    // the attribute; `item::never_a_result` reports the types that are never a `Result` before
    // expansion, which leaves the second error to aliases of them
    // (`ui/retryable/not_a_result_alias.stderr`).
    let as_result = &types.result;
    let result = local("__retry_result");
    // `finish` through a function spanned at the error type: `E: Debug` is reported there.
    let (first, last) = match &shape.error_type {
        Some(error) => span_range(error),
        None => span_range(&shape.output),
    };
    let finish = respan(quote!(#private::finish), first, last);
    // The outcome argument, located there too: rustc points at the argument whose type breaks
    // the bound.
    let located_result = Ident::new("__retry_result", Span::mixed_site().located_at(first));
    let pinned = receiver.pinned();
    let finished = if settles {
        let linger = local("__retry_linger");
        quote! {
            let #linger = #retry.take_linger();
            return (#outcome, #linger);
        }
    } else if config.lingers {
        quote! {
            #retry.linger_blocking();
            return #outcome;
        }
    } else {
        quote!(return #outcome;)
    };

    if let Some(hedging) = &config.hedging {
        let copy = attempt_future(function, shape, config, &receiver, &private, &types.pinned);
        let hedged = respan(quote!(#private::hedged), first, last);
        let shedding = match config.shed {
            Some((first, last)) => respan(quote!(#private::ShedLoad), first, last),
            None => quote!(#private::NeverShed),
        };
        let policy = hedge_policy(hedging, &private);
        let looped = quote! {
            #strategy
            #classifier
            #hook
            #hedged(
                #strategy_local,
                #classifier_local,
                #hook_local,
                #shedding,
                #policy,
                || {
                    #again
                    #(#bindings)*
                    #copy
                },
            )
            .await
        };
        return finish_fn(function, shape, sig, looped);
    }
    let looped = quote! {
        #strategy
        #classifier
        #hook
        let mut #retry = #private::RetryLoop::new(
            #strategy_local,
            #classifier_local,
            #hook_local,
        )#shedding #idempotent;
        #pinned
        loop {
            #wait
            #again
            #(#bindings)*
            #attempt
            let #result: &#as_result = &#outcome;
            if #finish(&mut #retry, #located_result).is_break() {
                #finished
            }
        }
    };
    let looped = if settles {
        quote!(#private::Settled::new(async move { #looped }).await)
    } else {
        looped
    };
    finish_fn(function, shape, sig, looped)
}

/// The function with its signature `sig` and the body `looped` (in `#[async_trait]`'s boxed
/// future when the body was one).
fn finish_fn(
    function: &RetryableFn,
    shape: &FnShape,
    sig: syn::Signature,
    looped: TokenStream,
) -> TokenStream {
    let body = match &shape.body {
        BodyKind::AsyncTrait(body) => {
            let box_pin = &body.box_pin;
            let async_move = &body.async_move;
            let mut block = Group::new(Delimiter::Brace, looped);
            block.set_span(body.span);
            quote!(#box_pin(#async_move #block))
        }
        BodyKind::Async | BodyKind::Blocking => looped,
    };
    let attrs = &function.attrs;
    let vis = &function.vis;
    quote! {
        #(#attrs)*
        #vis #sig {
            #body
        }
    }
}

/// `(HedgeDelay::..., max_hedges)`: the hedging of `hedge_after` and `max_hedges`.
fn hedge_policy(hedging: &(HedgeDelay, u32, Span), private: &TokenStream) -> TokenStream {
    let (delay, max_hedges, _) = hedging;
    let delay = match delay {
        HedgeDelay::After(after) => {
            let after = duration(*after, private);
            quote!(#private::HedgeDelay::After(#after))
        }
        HedgeDelay::Percentile(percentile) => {
            let percentile = proc_macro2::Literal::f64_suffixed(*percentile);
            quote!(#private::HedgeDelay::Percentile(#percentile))
        }
    };
    quote!((#delay, #max_hedges))
}

/// The wait before each attempt: `ready().await` (`wait_blocking()` in a blocking function),
/// which never fails (`Result<(), Infallible>`); with `shed = true` (the loop built with
/// `shed_load()`), a shed call returning `Err(E::from(LoadShed))` at once, `E: From<LoadShed>`
/// required at the argument. In a loop that `settles` (awaited through `Settled`), every return
/// gives the outcome with what to sleep before returning it: a shed call, nothing.
fn wait(blocking: bool, settles: bool, config: &Config, private: &TokenStream) -> TokenStream {
    let retry = local("__retry");
    let ready = if blocking {
        quote!(#retry.wait_blocking())
    } else {
        quote!(#retry.ready().await)
    };
    let Some((first, last)) = config.shed else {
        return quote!(let ::core::result::Result::Ok(()) = #ready;);
    };
    let shed = local("__retry_shed");
    let on_shed = respan(
        quote!(<_ as #private::FromLoadShed>::from_load_shed),
        first,
        last,
    );
    let refused = quote!(::core::result::Result::Err(#on_shed(#shed)));
    let returned = if settles {
        quote!((#refused, ::core::option::Option::None))
    } else {
        refused
    };
    quote! {
        if let ::core::result::Result::Err(#shed) = #ready {
            return #returned;
        }
    }
}

/// A local variable of the generated code, invisible to the user's body.
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// Rewrites the arguments so that each attempt gets its own: by-value arguments are cloned,
/// `&mut` references re-borrowed, `&` references reused. Returns the per-attempt bindings.
///
/// In the signature, an argument keeps its name when its pattern is an identifier (`mut` moves
/// to the per-attempt binding); other patterns get a fresh name and are matched per attempt.
fn rebind_arguments(
    inputs: &mut syn::punctuated::Punctuated<FnArg, syn::Token![,]>,
    private: &TokenStream,
) -> Vec<TokenStream> {
    let mut bindings = Vec::new();
    for (index, input) in inputs.iter_mut().enumerate() {
        let FnArg::Typed(arg) = input else { continue };
        if matches!(&*arg.pat, Pat::Wild(_)) {
            continue;
        }
        let simple = simple_ident(arg);
        let pat = (*arg.pat).clone();
        let outer = match &simple {
            Some(ident) => ident.clone(),
            None => format_ident!("__retry_arg{}", index, span = Span::mixed_site()),
        };
        let binding = match strip_type(&arg.ty) {
            Type::Reference(reference) if reference.mutability.is_none() => {
                if is_plain(&arg.pat) {
                    continue;
                }
                quote!(let #pat = #outer;)
            }
            Type::Reference(_) => quote!(let #pat = &mut *#outer;),
            _ => {
                // A marker type named after the argument, for the "must be `Clone`" message,
                // which is spanned over the argument (`name: Type`).
                let marker = match &simple {
                    Some(ident) => Ident::new(&ident.to_string(), Span::call_site()),
                    None => format_ident!("argument_{}", index + 1),
                };
                let (first, last) = span_range(&*arg);
                let check = respan(quote!(#private::ByValueArgument), first, last);
                quote! {
                    let #pat = {
                        #[allow(dead_code, non_camel_case_types)]
                        struct #marker {}
                        <#check as #private::CloneArg<_, #marker>>::clone_arg(&#outer)
                    };
                }
            }
        };
        bindings.push(binding);
        *arg.pat = Pat::Ident(syn::PatIdent {
            attrs: Vec::new(),
            by_ref: None,
            mutability: None,
            ident: outer,
            subpat: None,
        });
    }
    bindings
}

/// The identifier of an argument written `name: T` or `mut name: T`.
fn simple_ident(arg: &PatType) -> Option<Ident> {
    match &*arg.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(pat.ident.clone()),
        _ => None,
    }
}

/// Whether the pattern is a bare identifier (no `mut`, `ref` or `@`).
fn is_plain(pat: &Pat) -> bool {
    matches!(
        pat,
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.mutability.is_none() && pat.subpat.is_none()
    )
}

/// `expr` as the operand of a prefix operator (`&expr`). Expressions that bind more loosely
/// than `&` are parenthesized. The user's tokens are kept as they are, so that an error about
/// the operand covers exactly what the user wrote.
fn operand(expr: &Expr) -> TokenStream {
    let binds_tighter = matches!(
        expr,
        Expr::Path(_)
            | Expr::Field(_)
            | Expr::MethodCall(_)
            | Expr::Call(_)
            | Expr::Index(_)
            | Expr::Lit(_)
            | Expr::Macro(_)
            | Expr::Paren(_)
            | Expr::Struct(_)
            | Expr::Tuple(_)
            | Expr::Array(_)
            | Expr::Block(_)
            | Expr::Unary(_)
            | Expr::Reference(_)
            | Expr::Await(_)
            | Expr::Try(_)
    );
    if binds_tighter {
        return expr.to_token_stream();
    }
    let (first, last) = span_range(expr);
    let mut group = Group::new(Delimiter::Parenthesis, expr.to_token_stream());
    group.set_span(first.join(last).unwrap_or(first));
    group.into_token_stream()
}

/// `let __retry_strategy: &dyn RetryStrategy = ...;`
///
/// * Without `strategy`: the function's own strategy, a `static` built on first call (shared
///   by every call and every instantiation of a generic function).
/// * `strategy = expr`: borrowed for the call (`&expr`, a temporary lives as long as the call).
///   In a method taking `&mut self`, an expression that reads `self` is cloned instead, so that
///   the call holds no borrow of `self` while each attempt re-borrows `&mut self`.
fn strategy(
    function: &RetryableFn,
    shape: &FnShape,
    config: &Config,
    private: &TokenStream,
) -> TokenStream {
    let local = local("__retry_strategy");
    let ty = quote!(&dyn #private::RetryStrategy);
    match &config.strategy {
        StrategySource::Default {
            scope,
            preset,
            settings,
        } => {
            let name = function.sig.ident.unraw().to_string();
            let scope = match scope {
                Some(scope) => scope.to_token_stream(),
                None => quote!(::core::concat!(::core::module_path!(), "::", #name)),
            };
            let builder = self::local("__retry_config");
            let calls = settings
                .iter()
                .map(|setting| self::setting(setting, private));
            let configured = quote!(#builder #(#calls)*);
            let stat = Ident::new("__RETRY_STRATEGY", Span::mixed_site());
            let preset = Ident::new(preset.variant(), Span::call_site());
            quote! {
                static #stat: #private::FnStrategy = #private::LazyLock::new(|| {
                    #private::default_strategy(
                        #scope,
                        #private::RetryPreset::#preset,
                        |#builder| #configured,
                    )
                });
                // The default strategy's concrete type: no virtual calls on the success path.
                let #local = &*#stat;
            }
        }
        StrategySource::Expr(expr) => {
            let (first, last) = span_range(expr);
            let value = operand(expr);
            if shape.mut_self() && mentions_self(expr) {
                let handle = self::local("__retry_strategy_handle");
                let clone = respan(quote!(#private::CloneStrategy::clone_strategy), first, last);
                let amp = user_amp(first);
                let arg = parenthesized(quote!(#amp #value), last);
                quote! {
                    let #handle = #clone #arg;
                    let #local: #ty = &#handle;
                }
            } else {
                let amp = user_amp(first);
                quote!(let #local: #ty = #amp #value;)
            }
        }
    }
}

/// `Duration::new(secs, nanos)`.
fn duration(value: std::time::Duration, private: &TokenStream) -> TokenStream {
    let secs = value.as_secs();
    let nanos = value.subsec_nanos();
    quote!(#private::Duration::new(#secs, #nanos))
}

/// One builder call.
fn setting(setting: &Setting, private: &TokenStream) -> TokenStream {
    match setting {
        Setting::MaxAttempts(value) => quote!(.max_attempts(#value)),
        Setting::Mode(mode) => {
            let variant = Ident::new(mode.variant(), Span::call_site());
            quote!(.mode(#private::RetryMode::#variant))
        }
        Setting::InitialBackoff(value) => {
            let value = duration(*value, private);
            quote!(.initial_backoff(#value))
        }
        Setting::MaxBackoff(value) => {
            let value = duration(*value, private);
            quote!(.max_backoff(#value))
        }
        Setting::ThrottlingBackoff(value) => {
            let value = duration(*value, private);
            quote!(.throttling_backoff(#value))
        }
        Setting::Jitter(jitter) => {
            let variant = Ident::new(jitter.variant(), Span::call_site());
            quote!(.jitter(#private::Jitter::#variant))
        }
        Setting::Timeout(value) => {
            let value = duration(*value, private);
            quote!(.timeout(#value))
        }
        Setting::MaxWait(value) => {
            let value = duration(*value, private);
            quote!(.max_wait(#value))
        }
        Setting::Quota(quota) => {
            let quota = match quota {
                Quota::Off => quote!(#private::Quota::Off),
                Quota::Fixed(tokens) => quote!(#private::Quota::Fixed(#tokens)),
                Quota::Traffic => quote!(#private::Quota::Traffic),
            };
            quote!(.quota(#quota))
        }
        Setting::LongPolling(on) => quote!(.long_polling(#on)),
    }
}

/// `let __retry_classifier: &dyn ClassifyRetry<_, _> = &<classifier>;`, the coercion spanned
/// at the classifier expression, the `retry_if` path, or (default classifier) the error type.
fn classifier(
    shape: &FnShape,
    config: &Config,
    private: &TokenStream,
    types: &OutcomeTypes,
) -> TokenStream {
    let local = local("__retry_classifier");
    let OutcomeTypes { ok, err, .. } = types;
    let borrowed = match &config.classifier {
        ClassifierSource::RetryInfo => {
            let (first, last) = match &shape.error_type {
                Some(error) => span_range(error),
                None => span_range(&shape.output),
            };
            // The probe needs `E` named: the written error type, or `<Output as Outcome>::Err`.
            // Without either (an `impl Trait` in the return type and no written error type,
            // or one that is itself `impl Trait`), `&dyn` as for a given classifier.
            let error = match &shape.error_type {
                Some(error) if !erase_impl_trait(error).1 => Some(error.to_token_stream()),
                Some(_) => None,
                None => (err.to_string() != "_").then(|| err.clone()),
            };
            let Some(error) = error else {
                let borrowed = respan(quote!(&#private::RetryInfoClassifier), first, last);
                return quote! {
                    let #local: &dyn #private::ClassifyRetry<#ok, #err> = #borrowed;
                };
            };
            // Concrete, not `&dyn`, so it inlines into the success path; a missing `RetryInfo`
            // is reported once (see `DefaultClassifier`), at the method's name (a method call's
            // error spans its name alone). Every token has the error type's first token's own
            // span: a return type that is not a `Result` is then reported here exactly as at
            // `#ok`, which rustc emits once, not again at the attribute.
            let picked = spanned_as(
                quote!((&#private::DefaultClassifier::<#error>::NEW).classifier()),
                first,
            );
            // Spanned as the user's, the probe is linted as theirs: its full path and borrow
            // are the expansion's.
            return quote! {
                #[allow(unused_qualifications, clippy::needless_borrow)]
                let #local = {
                    use #private::{MissingRetryInfo as _, RetryInfoDefault as _};
                    #picked
                };
            };
        }
        ClassifierSource::Expr(expr) if shape.mut_self() && mentions_self(expr) => {
            let (first, last) = span_range(expr);
            let clone = respan(
                quote!(&#private::CloneClassifier::clone_classifier),
                first,
                last,
            );
            let amp = user_amp(first);
            let value = operand(expr);
            let arg = parenthesized(quote!(#amp #value), last);
            quote!(#clone #arg)
        }
        ClassifierSource::Expr(expr) => {
            let amp = user_amp(span_range(expr).0);
            let value = operand(expr);
            quote!(#amp #value)
        }
        ClassifierSource::RetryIf(path) => {
            let (first, last) = span_range(path);
            let new = respan(quote!(&#private::RetryIf::new), first, last);
            let arg = parenthesized(path.to_token_stream(), last);
            quote!(#new #arg)
        }
    };
    quote! {
        let #local: &dyn #private::ClassifyRetry<#ok, #err> = #borrowed;
    }
}

/// `tokens`, every one spanned `span` (a user's token's span, not one located there: the
/// diagnostics are then the user's token's own).
fn spanned_as(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner = Group::new(group.delimiter(), spanned_as(group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// The declared return type as the generated code names it, worked out once per function.
struct OutcomeTypes {
    /// The return type with each `impl Trait` written `_`, to pin an attempt's output type.
    pinned: Type,
    /// `<Output as Outcome>::Ok` (`_` when the return type mentions `impl Trait`), so that
    /// errors about the classifier name it.
    ok: TokenStream,
    /// `<Output as Outcome>::Err` (or `_`), so that errors about the classifier or the hook
    /// name it.
    err: TokenStream,
    /// `<Output as Outcome>::Result` (or `Result<_, _>`): the outcome seen as a `Result`.
    result: TokenStream,
}

impl OutcomeTypes {
    /// The names for `output`, the declared return type.
    fn new(output: &Type, private: &TokenStream) -> Self {
        let (pinned, erased) = erase_impl_trait(output);
        if erased {
            return OutcomeTypes {
                pinned,
                ok: quote!(_),
                err: quote!(_),
                result: quote!(::core::result::Result<_, _>),
            };
        }
        OutcomeTypes {
            pinned,
            ok: quote!(<#output as #private::Outcome>::Ok),
            err: quote!(<#output as #private::Outcome>::Err),
            result: quote!(<#output as #private::Outcome>::Result),
        }
    }
}

/// `let __retry_hook = DynHook(&<path>)` or `NoHook`, the coercion spanned at the path.
fn hook(config: &Config, private: &TokenStream, types: &OutcomeTypes) -> TokenStream {
    let local = local("__retry_hook");
    match &config.on_retry {
        Some(path) => {
            let (first, _) = span_range(path);
            let amp = user_amp(first);
            let err = &types.err;
            quote! {
                let #local: &dyn #private::OnRetry<#err> = #amp #path;
                let #local = #private::DynHook(#local);
            }
        }
        None => quote!(let #local = #private::NoHook;),
    }
}

/// `let __retry_outcome = <one attempt>;`: the body as an inner async block (cut by
/// `attempt_timeout` when given), or, in a blocking function, as a closure called at once;
/// its output type pinned to `output`, the declared return type with `impl Trait` erased.
fn attempt(
    function: &RetryableFn,
    shape: &FnShape,
    config: &Config,
    receiver: &receiver::Receiver,
    private: &TokenStream,
    output: &Type,
) -> TokenStream {
    let body = body_group(function, shape, receiver);
    let outcome = local("__retry_outcome");
    let pin_output = pin_output(output);
    let retry = local("__retry");
    if let BodyKind::Blocking = shape.body {
        // A closure, so that `return` and `?` end the attempt, not the call; run in the
        // attempt's context.
        return quote! {
            let #outcome = #retry.in_attempt_blocking(|| { #pin_output #body });
        };
    }
    let attempt = cut(config, private, quote!(async { #pin_output #body }));
    // Polled in the attempt's context (and a retry's span).
    quote!(let #outcome = #retry.in_attempt(#attempt).await;)
}

/// The user's body in braces located at the user's (the receiver's `self` renamed when each
/// attempt has its own).
fn body_group(function: &RetryableFn, shape: &FnShape, receiver: &receiver::Receiver) -> Group {
    match &shape.body {
        BodyKind::AsyncTrait(body) => {
            let mut group = Group::new(Delimiter::Brace, receiver.async_trait_stmts(&body.stmts));
            group.set_span(generated_at(body.span));
            group
        }
        BodyKind::Async | BodyKind::Blocking => {
            let mut group = Group::new(Delimiter::Brace, receiver.body(&function.body));
            group.set_span(generated_at(function.body_span));
            group
        }
    }
}

/// `if false { return <a value of type output>; }`: fixes the attempt's output type to the
/// declared return type before the body is checked.
fn pin_output(output: &Type) -> TokenStream {
    let fake = local("__retry_fake_return");
    quote! {
        #[allow(
            unreachable_code,
            clippy::diverging_sub_expression,
            clippy::empty_loop,
            clippy::let_unit_value,
            clippy::let_with_type_underscore,
            clippy::unreachable
        )]
        if false {
            let #fake: #output = loop {};
            return #fake;
        }
    }
}

/// One copy of a hedged call: the body as an `async move` block that owns what the closure
/// around it gives each copy (its arguments' clones, its `self`), cut by `attempt_timeout` when
/// given; its output type pinned to `output`.
fn attempt_future(
    function: &RetryableFn,
    shape: &FnShape,
    config: &Config,
    receiver: &receiver::Receiver,
    private: &TokenStream,
    output: &Type,
) -> TokenStream {
    let body = body_group(function, shape, receiver);
    let pin_output = pin_output(output);
    cut(config, private, quote!(async move { #pin_output #body }))
}

/// `block`, cut after `attempt_timeout` when given.
fn cut(config: &Config, private: &TokenStream, block: TokenStream) -> TokenStream {
    match config.attempt_timeout {
        Some((timeout, (first, last))) => {
            let timeout = duration(timeout, private);
            // `E: From<Elapsed>` is required here, spanned at `attempt_timeout = "..."`.
            let on_elapsed = respan(
                quote!(<_ as #private::FromElapsed>::from_elapsed),
                first,
                last,
            );
            quote! {
                #private::cut_after(
                    #timeout,
                    #block,
                    #on_elapsed,
                )
            }
        }
        None => block,
    }
}

/// A span located at the user's `braces` but belonging to the expansion: the braces the
/// expansion puts around the body (now the value of an inner block) are its own, so rustc's
/// `unused_braces`, which skips generated blocks, does not advise removing them from a
/// one-line body (`{ Ok(1) }`), which is not valid Rust. Errors still point at the braces.
fn generated_at(braces: Span) -> Span {
    Span::call_site().located_at(braces)
}

/// Whether `expr` reads `self` (then, in a `&mut self` method, it is cloned for the call).
fn mentions_self(expr: &Expr) -> bool {
    fn scan(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => ident == "self",
            TokenTree::Group(group) => scan(group.stream()),
            _ => false,
        })
    }
    scan(expr.to_token_stream())
}

/// `ty` with each `impl Trait` in it written `_`, and whether there was one: `let x: impl Trait`
/// is not allowed, `let x: Result<_, E>` still fixes the rest of the type (as `tracing`'s
/// `#[instrument]` does).
fn erase_impl_trait(ty: &Type) -> (Type, bool) {
    struct Eraser {
        erased: bool,
    }
    impl VisitMut for Eraser {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::ImplTrait(impl_trait) = ty {
                let underscore_token = syn::Token![_](impl_trait.impl_token.span);
                *ty = Type::Infer(TypeInfer {
                    attrs: Vec::new(),
                    underscore_token,
                });
                self.erased = true;
            } else {
                visit_mut::visit_type_mut(self, ty);
            }
        }
    }
    let mut erased = ty.clone();
    let mut eraser = Eraser { erased: false };
    eraser.visit_type_mut(&mut erased);
    (erased, eraser.erased)
}
