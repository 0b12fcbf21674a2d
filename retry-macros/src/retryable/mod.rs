//! `#[retryable]`, in steps: the arguments are parsed ([`args`]), each value is read
//! ([`value`]), the rules between arguments are checked ([`rules`]), and the result is lowered
//! to what the expansion needs ([`lower`]); the function is read and checked ([`item`]), then
//! rewritten ([`expand`]).
//!
//! Every mistake found is reported (not only the first) as a `compile_error!` spanned at the
//! user's token. When there is one, the function is emitted unchanged next to the errors, so
//! its body still type-checks on its own and no second error follows from the first.

mod args;
mod expand;
mod item;
mod lower;
mod receiver;
mod rules;
mod value;

#[cfg(test)]
mod pairs;
#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;

use crate::diagnostics::Errors;
use lower::Config;

/// Expands `#[retryable(args)]` on `item`.
pub(crate) fn retryable(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let config = configure(args, &mut errors);
    let function = match item::parse(item.clone()) {
        Ok(function) => function,
        Err(error) => {
            errors.push(error);
            return expand::unchanged(item, &errors);
        }
    };
    let shape = item::check(&function, &mut errors);
    match (config, shape) {
        (Some(config), Some(shape)) if fits(&config, &function, &shape, &mut errors) => {
            expand::expand(&function, &shape, &config)
        }
        _ => expand::unchanged(item, &errors),
    }
}

/// The rules between the arguments and the function: a blocking attempt cannot be cut, so
/// `attempt_timeout` needs an `async fn`; a hedge is a second copy of the call in flight beside
/// the first, so `hedge_after` needs an `async fn` whose copies can run at once (no `&mut`
/// receiver or argument for two copies to share).
fn fits(
    config: &Config,
    function: &item::RetryableFn,
    shape: &item::FnShape,
    errors: &mut Errors,
) -> bool {
    let blocking = matches!(shape.body, item::BodyKind::Blocking);
    let mut fits = true;
    if let (true, Some((_, (key, _)))) = (blocking, config.attempt_timeout) {
        errors.push(syn::Error::new(
            key,
            "`attempt_timeout` needs an `async fn`: a blocking attempt cannot be cut \
             short; make the function `async`, or bound the blocking call itself (a socket \
             or client timeout) and leave `attempt_timeout` out",
        ));
        fits = false;
    }
    let Some((_, _, key)) = config.hedging else {
        return fits;
    };
    if blocking {
        errors.push(syn::Error::new(
            key,
            "`hedge_after` needs an `async fn`: a hedge is a second copy of the call in flight \
             beside the first, and a blocking call runs one at a time; make the function \
             `async`, or remove `hedge_after`",
        ));
        return false;
    }
    if matches!(
        shape.receiver,
        item::SelfKind::RefMut | item::SelfKind::PinMut
    ) {
        errors.push(syn::Error::new(
            key,
            "`hedge_after` runs two copies of the call at once, and both cannot borrow `self` \
             mutably: take `&self` (with interior mutability where the method changes state), \
             or remove `hedge_after`",
        ));
        fits = false;
    }
    for argument in function.sig.inputs.iter().filter_map(mutable_reference) {
        errors.spanned(
            argument,
            "`hedge_after` runs two copies of the call at once, and both cannot borrow this \
             argument mutably: take it by shared reference or by value (cloned for each copy), \
             or remove `hedge_after`",
        );
        fits = false;
    }
    fits
}

/// The argument, when it is a `&mut` reference.
fn mutable_reference(input: &syn::FnArg) -> Option<&syn::PatType> {
    match input {
        syn::FnArg::Typed(arg) => match crate::spans::strip_type(&arg.ty) {
            syn::Type::Reference(reference) if reference.mutability.is_some() => Some(arg),
            _ => None,
        },
        syn::FnArg::Receiver(_) => None,
    }
}

/// The attribute's arguments, parsed, read, checked against each other and lowered; `None`
/// when any of that found a mistake (recorded in `errors`).
fn configure(args: TokenStream, errors: &mut Errors) -> Option<Config> {
    let mut found = Errors::default();
    let args = args::parse(args, &mut found);
    let values = value::parse(&args, &mut found);
    rules::check(&args, &values, &mut found);
    let config = found.is_empty().then(|| lower::lower(&args, values));
    errors.extend(found);
    config
}
