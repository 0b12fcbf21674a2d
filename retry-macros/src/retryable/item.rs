//! The function the attribute is placed on: read as written, then checked for what the rewrite
//! needs, and classified: an `async fn`, a plain (blocking) `fn`, or a method `#[async_trait]`
//! has already rewritten; its receiver; its return type (any type: whether it is a `Result` is
//! left to the type system, see `Outcome` in the runtime).

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::{
    Attribute, FnArg, GenericArgument, PathArguments, Receiver, ReceiverKind, ReturnType,
    Signature, Token, Type, TypeParamBound, Visibility, braced,
};

use crate::diagnostics::{Errors, written};
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
        "`#[retryable]` can only be placed on a function, found {found}: put it on the \
         `async fn` (or blocking `fn`) that makes the call \
         (`#[retryable] async fn get(...) -> Result<T, E> {{ ... }}`)"
    ))
}

/// What the function looks like, as far as the expansion cares.
pub(crate) struct FnShape {
    /// How an attempt runs.
    pub(crate) body: BodyKind,
    /// How each attempt gets `self` again.
    pub(crate) receiver: SelfKind,
    /// The type of one attempt's outcome: the declared return type, or the `Output` of the
    /// future `#[async_trait]` boxed.
    pub(crate) output: Type,
    /// The `E` of `Result<T, E>`, when written out.
    pub(crate) error_type: Option<Type>,
}

impl FnShape {
    /// Whether each attempt borrows `self` mutably (`&mut self`, `Pin<&mut Self>`): then a
    /// `strategy` / `classifier` read from `self` is cloned for the call.
    pub(crate) fn mut_self(&self) -> bool {
        matches!(self.receiver, SelfKind::RefMut | SelfKind::PinMut)
    }
}

/// How an attempt runs.
pub(crate) enum BodyKind {
    /// `async fn`: the body is awaited once per attempt.
    Async,
    /// A plain `fn`: the body is called once per attempt, the waits are thread sleeps.
    Blocking,
    /// A method `#[async_trait]` rewrote before this attribute ran: a plain `fn` whose body is
    /// `Box::pin(async move { ... })`. The retry loop goes inside the `async move` block.
    AsyncTrait(AsyncTraitBody),
}

/// The parts of a body `#[async_trait]` wrote.
pub(crate) struct AsyncTraitBody {
    /// `Box::pin`, as written.
    pub(crate) box_pin: TokenStream,
    /// `async move`, as written.
    pub(crate) async_move: TokenStream,
    /// The statements of the `async move` block: `#[async_trait]`'s type pin, its bindings of
    /// the arguments (`let __self = self;`, `let x = x;`) and the user's body.
    pub(crate) stmts: TokenStream,
    /// The span of that block's braces.
    pub(crate) span: Span,
}

/// The receiver, by how each attempt gets `self` again.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SelfKind {
    /// A free function.
    None,
    /// `&self` (or another `Copy` receiver: `self: &Arc<Self>`, `Pin<&Self>`): reused.
    Ref,
    /// `&mut self`: re-borrowed.
    RefMut,
    /// `self: Arc<Self>` / `Rc<Self>`: cloned for each attempt.
    Shared,
    /// `self: Pin<&mut Self>`: re-borrowed with `Pin::as_mut`.
    PinMut,
}

impl SelfKind {
    /// Whether each attempt gets its own `self` under another name (the body's `self` renamed).
    pub(crate) fn renamed(self) -> bool {
        matches!(self, SelfKind::Shared | SelfKind::PinMut)
    }
}

/// Checks that the function can be rewritten. `None` when it cannot (the reasons recorded).
pub(crate) fn check(function: &RetryableFn, errors: &mut Errors) -> Option<FnShape> {
    let sig = &function.sig;
    let mut ok = true;
    if let Some(second) = function.attrs.iter().find(|attr| is_retryable(attr)) {
        errors.spanned(
            second,
            "`#[retryable]` is applied twice: the attempts would multiply (3 attempts of 3 \
             attempts make 9); keep one `#[retryable(...)]` and give it all the arguments",
        );
        ok = false;
    }
    if let Some(constness) = &sig.constness {
        errors.spanned(
            constness,
            "`#[retryable]` cannot make a `const fn` retry: retrying sleeps between attempts and \
             keeps a quota at run time, which a `const fn` cannot do; remove `const` (the \
             retries then run where the function is called), or remove `#[retryable]`",
        );
        ok = false;
    }
    let receiver = receiver(sig, errors);
    ok &= receiver.is_some();
    let declared = match &sig.output {
        ReturnType::Type(_, ty) => Some((**ty).clone()),
        ReturnType::Default => {
            errors.push(syn::Error::new(
                sig.paren_token.span.close(),
                "`#[retryable]` functions must return a `Result`: add a return type such as \
                 `-> Result<T, E>` after the arguments",
            ));
            None
        }
    };
    let (body, output) = match declared {
        Some(declared) => body_kind(function, declared, errors)?,
        None => return None,
    };
    if let Some(written) = never_a_result(&output) {
        errors.spanned(
            &output,
            format!(
                "`#[retryable]` functions must return a `Result`, found `{written}`: write \
                 `-> Result<{written}, E>` where `E` is the error to retry on"
            ),
        );
        return None;
    }
    if !ok {
        return None;
    }
    Some(FnShape {
        body,
        receiver: receiver?,
        error_type: result_error_type(&output),
        output,
    })
}

/// Whether `attr` is another `#[retryable]` (`#[retryable]`, `#[retry_core::retryable(...)]`).
fn is_retryable(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "retryable")
}

/// How the body runs, and the type of one attempt's outcome.
fn body_kind(
    function: &RetryableFn,
    declared: Type,
    errors: &mut Errors,
) -> Option<(BodyKind, Type)> {
    let sig = &function.sig;
    if sig.asyncness.is_some() {
        return Some((BodyKind::Async, declared));
    }
    if let Some(output) = boxed_future_output(&declared)
        && let Some(body) = async_trait_body(&function.body)
    {
        return Some((BodyKind::AsyncTrait(body), output));
    }
    if returns_future(&declared) {
        errors.spanned(
            &declared,
            format!(
                "`#[retryable]` retries the function's body, which must be the attempt itself, \
                 not code that returns a future: write `async fn {}(...) -> R` instead of \
                 `fn {}(...) -> impl Future<Output = R>` (or, for a blocking call, a plain \
                 `fn {}(...) -> R`)",
                sig.ident, sig.ident, sig.ident
            ),
        );
        return None;
    }
    Some((BodyKind::Blocking, declared))
}

/// The receiver's kind; `None` (an error recorded) for one that cannot be had again per
/// attempt (`self`, `Box<Self>`).
fn receiver(sig: &Signature, errors: &mut Errors) -> Option<SelfKind> {
    let Some(FnArg::Receiver(receiver)) = sig.inputs.first() else {
        return Some(SelfKind::None);
    };
    let kind = receiver_kind(receiver);
    if kind.is_none() {
        errors.spanned(
            receiver,
            "each attempt of a retryable method needs `self` again, so it cannot take `self` by \
             value (`self`, `self: Box<Self>`): take `&self` or `&mut self`, or share it as \
             `self: Arc<Self>` / `self: Rc<Self>` (cloned for each attempt) or \
             `self: Pin<&mut Self>` (re-borrowed)",
        );
    }
    kind
}

fn receiver_kind(receiver: &Receiver) -> Option<SelfKind> {
    let ty = match &receiver.kind {
        ReceiverKind::Reference(_, _, Some(_)) => return Some(SelfKind::RefMut),
        ReceiverKind::Reference(_, _, None) => return Some(SelfKind::Ref),
        ReceiverKind::Typed(_, ty) => strip_type(ty),
        _ => return None,
    };
    match ty {
        Type::Reference(reference) if reference.mutability.is_some() => Some(SelfKind::RefMut),
        Type::Reference(_) => Some(SelfKind::Ref),
        Type::Path(path) => {
            let segment = path.path.segments.last()?;
            let inner = single_type_argument(&segment.arguments)?;
            match (segment.ident.to_string().as_str(), strip_type(inner)) {
                ("Arc" | "Rc", _) => Some(SelfKind::Shared),
                ("Pin", Type::Reference(reference)) if reference.mutability.is_some() => {
                    Some(SelfKind::PinMut)
                }
                ("Pin", Type::Reference(_)) => Some(SelfKind::Ref),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The `T` of `Name<T>`.
fn single_type_argument(arguments: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(arguments) = arguments else {
        return None;
    };
    match arguments.args.iter().collect::<Vec<_>>()[..] {
        [GenericArgument::Type(ty)] => Some(ty),
        _ => None,
    }
}

/// The `R` of `Pin<Box<dyn Future<Output = R> + ...>>`, the return type `#[async_trait]` gives
/// the methods it rewrites.
fn boxed_future_output(ty: &Type) -> Option<Type> {
    let Type::Path(pin) = strip_type(ty) else {
        return None;
    };
    let pin = pin.path.segments.last().filter(|s| s.ident == "Pin")?;
    let Type::Path(boxed) = strip_type(single_type_argument(&pin.arguments)?) else {
        return None;
    };
    let boxed = boxed.path.segments.last().filter(|s| s.ident == "Box")?;
    let Type::TraitObject(object) = strip_type(single_type_argument(&boxed.arguments)?) else {
        return None;
    };
    object.bounds.iter().find_map(future_output)
}

/// The `R` of a bound `Future<Output = R>`.
fn future_output(bound: &TypeParamBound) -> Option<Type> {
    let TypeParamBound::Trait(bound) = bound else {
        return None;
    };
    let future = bound.path.segments.last().filter(|s| s.ident == "Future")?;
    let PathArguments::AngleBracketed(arguments) = &future.arguments else {
        return None;
    };
    arguments.args.iter().find_map(|argument| match argument {
        GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(assoc.ty.clone()),
        _ => None,
    })
}

/// Whether a plain `fn` returning `ty` returns a future (`impl Future<...>`, a boxed one).
fn returns_future(ty: &Type) -> bool {
    match strip_type(ty) {
        Type::ImplTrait(bounds) => bounds.bounds.iter().any(|bound| {
            matches!(bound, TypeParamBound::Trait(bound)
                if bound.path.segments.last().is_some_and(|s| s.ident == "Future"))
        }),
        _ => boxed_future_output(ty).is_some(),
    }
}

/// `Box::pin(async move { ... })`, the body `#[async_trait]` writes, taken apart.
fn async_trait_body(body: &TokenStream) -> Option<AsyncTraitBody> {
    let mut tokens: Vec<TokenTree> = body.clone().into_iter().collect();
    let TokenTree::Group(call) = tokens.pop()? else {
        return None;
    };
    let is_pin = matches!(tokens.last(), Some(TokenTree::Ident(ident)) if ident == "pin");
    if call.delimiter() != Delimiter::Parenthesis || !is_pin {
        return None;
    }
    let inner: Vec<TokenTree> = call.stream().into_iter().collect();
    match &inner[..] {
        [
            TokenTree::Ident(async_token),
            TokenTree::Ident(move_token),
            TokenTree::Group(block),
        ] if async_token == "async"
            && move_token == "move"
            && block.delimiter() == Delimiter::Brace =>
        {
            Some(AsyncTraitBody {
                box_pin: tokens.into_iter().collect(),
                async_move: [inner[0].clone(), inner[1].clone()].into_iter().collect(),
                stmts: block.stream(),
                span: block.span(),
            })
        }
        _ => None,
    }
}

/// The return type as written, when it cannot be a `Result` whatever the names in scope: a
/// tuple, reference, array, slice, `impl Trait`, `!`, or a primitive, `String`, `Option` or
/// `Vec`. Other types (aliases of any name) are left to the type system.
fn never_a_result(ty: &Type) -> Option<String> {
    const NOT_RESULTS: &[&str] = &[
        "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32",
        "i64", "i128", "isize", "f32", "f64", "String", "Option", "Vec",
    ];
    let never = match strip_type(ty) {
        Type::Tuple(_)
        | Type::Reference(_)
        | Type::Array(_)
        | Type::Slice(_)
        | Type::ImplTrait(_)
        | Type::Never(_) => true,
        Type::Path(path) => {
            path.qself.is_none()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|segment| NOT_RESULTS.iter().any(|name| segment.ident == name))
        }
        _ => false,
    };
    never.then(|| written(ty))
}

/// The `E` of a return type written `Result<T, E>`, to point at it when it lacks `RetryInfo`.
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
