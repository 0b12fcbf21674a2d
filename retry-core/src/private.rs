//! Support for the code `#[retryable]` generates. Not public API: no stability guarantees.
//!
//! The module is `__private_<version>` (`__private_0_1_0`), and `retry-macros` generates paths
//! to `__private_<its own version>`: the runtime pins the macro crate to its exact version, and
//! should two versions still meet (a patched or vendored copy), the generated code fails to
//! compile instead of relying on helpers whose meaning may have changed (thiserror's scheme).

use std::fmt::Debug;
use std::future::Future;
use std::marker::PhantomData;
use std::ops::ControlFlow;

pub use std::sync::LazyLock;
pub use std::time::Duration;

pub use crate::backoff::Jitter;
pub use crate::classify::classifier::ClassifyRetry;
pub use crate::classify::{RetryIf, RetryInfoClassifier};
pub use crate::config::RetryConfigBuilder;
pub use crate::config::mode::RetryMode;
pub use crate::config::preset::RetryPreset;
pub use crate::config::quota::Quota;
pub use crate::config::retry_config::RetryConfig;
pub use crate::driver::attempt_timeout::cut_after;
pub use crate::driver::linger::Settled;
pub use crate::driver::{NoHook, OnRetry, RetryLoop};
pub use crate::info::RetryInfo;
pub use crate::strategy::ConfiguredStrategy;
pub use crate::strategy::retry_strategy::RetryStrategy;

/// A function's default strategy, built once on first call.
pub type FnStrategy = LazyLock<ConfiguredStrategy>;

/// The strategy of a `#[retryable]` function without `strategy = ...`: its arguments applied to
/// `preset`, in the process-wide scope `scope`, declared at the attribute (the generated call's
/// place). The macro checked every value at compile time; should the runtime still reject them,
/// the error is logged and the defaults are used rather than panicking in a user's call. A
/// conflict with another declaration of the scope is logged too
/// ([`ScopeConflict`](crate::scope::ScopeConflict)): the function has no error of its own to
/// report it with at its first call.
#[track_caller]
pub fn default_strategy(
    scope: &str,
    preset: RetryPreset,
    configure: fn(RetryConfigBuilder) -> RetryConfigBuilder,
) -> ConfiguredStrategy {
    let config = configure(RetryConfig::from_preset(preset)).build().unwrap_or_else(|error| {
        tracing::error!(target: "retry_core", scope, %error, "invalid #[retryable] configuration: using the defaults");
        RetryConfig::default()
    });
    let declared = crate::scope::ScopeDeclaration::Retryable(std::panic::Location::caller());
    crate::strategy::configured::configured_in(config, scope, declared)
}

// ---- `#[retryable]`: checks that report at the user's tokens ----------------------------------
//
// Each helper below carries one requirement on what the user wrote, so that a violation is
// reported once, at the user's token (the macro spans the call there), with a message that says
// what to write. A given strategy, a given classifier and the hook reach the retry loop as trait
// objects (`&dyn RetryStrategy`, `&dyn ClassifyRetry<T, E>`, `DynHook`): the coercion, spanned at
// the user's tokens, is then the only place where a wrong type is reported. The default
// classifier is picked at the error type (`DefaultClassifier`), for the same reason.

/// Stands for a by-value argument in [`CloneArg`].
#[derive(Debug)]
pub struct ByValueArgument;

/// Clones a by-value argument of type `T` for one attempt. `Name` is a marker type named after
/// the argument, so that the error for a non-`Clone` argument names it.
#[diagnostic::on_unimplemented(
    message = "by-value argument `{Name}` of a `#[retryable]` function must be `Clone`: each attempt runs with its own copy",
    label = "`{T}` is not `Clone`",
    note = "derive or implement `Clone` for `{T}`, add `+ Clone` to an `impl Trait` argument, or take the argument by reference (`{Name}: &{T}`)"
)]
pub trait CloneArg<T, Name> {
    /// A copy of the argument for the next attempt.
    fn clone_arg(value: &T) -> T;
}

#[diagnostic::do_not_recommend]
impl<T: Clone, Name> CloneArg<T, Name> for ByValueArgument {
    #[inline]
    fn clone_arg(value: &T) -> T {
        value.clone()
    }
}

/// Clones the `strategy = ...` of a method taking `&mut self` when it is read from `self`, so
/// that the retry loop holds no borrow of `self` while each attempt re-borrows it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `Clone`: in a method taking `&mut self`, `#[retryable(strategy = ...)]` clones a strategy read from `self` at the start of each call",
    label = "the strategy must be a cheap `Clone` handle",
    note = "cloning lets each attempt borrow `self` mutably while the strategy is in use: use a `StandardStrategy`, an `AdaptiveStrategy`, an `Arc<S>` or a `&S` (keep a `Box<dyn RetryStrategy>` as an `Arc<dyn RetryStrategy>` instead)"
)]
pub trait CloneStrategy: Sized {
    /// The handle this call uses.
    fn clone_strategy(&self) -> Self;
}

#[diagnostic::do_not_recommend]
impl<S: Clone> CloneStrategy for S {
    #[inline]
    fn clone_strategy(&self) -> Self {
        self.clone()
    }
}

/// Clones the `classifier = ...` of a method taking `&mut self` when it is read from `self`, so
/// that the retry loop holds no borrow of `self` while each attempt re-borrows it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `Clone`: in a method taking `&mut self`, `#[retryable(classifier = ...)]` clones a classifier read from `self` at the start of each call",
    label = "the classifier must be `Clone`",
    note = "cloning lets each attempt borrow `self` mutably while the classifier is in use: derive `Clone` for `{Self}` or keep it in an `Arc`"
)]
pub trait CloneClassifier: Sized {
    /// The classifier this call uses.
    fn clone_classifier(&self) -> Self;
}

#[diagnostic::do_not_recommend]
impl<C: Clone> CloneClassifier for C {
    #[inline]
    fn clone_classifier(&self) -> Self {
        self.clone()
    }
}

/// The `Result<T, E>` a `#[retryable]` function returns, taken apart: names `T` and `E` in the
/// trait objects below, so errors about them show the function's types.
///
/// Implemented by `Result` only, so any spelling of it works (`io::Result<T>`, an alias
/// `type Fallible<T> = Result<T, MyError>`): the return type is checked by the type system, not
/// by its name. The macro names `T` and `E` through it with the return type's tokens, so a
/// return type that is not a `Result` is reported there, once.
#[diagnostic::on_unimplemented(
    message = "`#[retryable]` functions must return a `Result<T, E>`, found `{Self}`",
    label = "not a `Result`",
    note = "write `-> Result<{Self}, E>` where `E` is the error to retry on (any alias of `Result` works too)"
)]
pub trait Outcome {
    /// `T`.
    type Ok;
    /// `E`.
    type Err;
    /// `Result<T, E>`: the outcome seen as the `Result` it is.
    type Result;
}

impl<T, E> Outcome for Result<T, E> {
    type Ok = T;
    type Err = E;
    type Result = Result<T, E>;
}

/// An `on_retry` hook behind a reference: the macro coerces the user's hook to
/// `&dyn OnRetry<E>` where the user wrote it, so a hook of the wrong type is reported there, once.
pub struct DynHook<'a, E>(pub &'a dyn OnRetry<E>);

impl<E> OnRetry<E> for DynHook<'_, E> {
    #[inline]
    fn on_retry(&self, event: &crate::driver::RetryEvent<'_, E>) {
        self.0.on_retry(event);
    }
}

impl<E> Debug for DynHook<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DynHook")
    }
}

/// Picks the default classifier of a `#[retryable]` function returning `Result<_, E>`:
/// `(&DefaultClassifier::<E>::NEW).classifier()`, spanned at the error type.
///
/// Where `E: RetryInfo` holds, method resolution takes [`RetryInfoDefault`]'s: the concrete
/// [`RetryInfoClassifier`], so the classification inlines into the success path (20 instructions
/// a call, callgrind, against `&dyn ClassifyRetry`). Otherwise it falls back, one autoref
/// further, to [`MissingRetryInfo`]'s, whose own bound `E: RetryInfo` is the one error, and
/// whose classifier type ([`Unclassified`]) carries no bound, so nothing after it fails again
/// (a classifier bounded by `E: RetryInfo` in the loop was reported wherever its type appears).
pub struct DefaultClassifier<E>(PhantomData<fn() -> E>);

impl<E> DefaultClassifier<E> {
    /// The probe.
    pub const NEW: Self = Self(PhantomData);
}

/// The default classifier where `E: RetryInfo` holds (see [`DefaultClassifier`]).
pub trait RetryInfoDefault {
    /// [`RetryInfoClassifier`].
    fn classifier(&self) -> RetryInfoClassifier;
}

impl<E: RetryInfo> RetryInfoDefault for DefaultClassifier<E> {
    #[inline(always)]
    fn classifier(&self) -> RetryInfoClassifier {
        RetryInfoClassifier
    }
}

/// The fallback where `E: RetryInfo` does not hold: the call is the one error (see
/// [`DefaultClassifier`]).
pub trait MissingRetryInfo<E> {
    /// Never compiles: `E` lacks `RetryInfo`.
    fn classifier(&self) -> Unclassified
    where
        E: RetryInfo;
}

impl<E> MissingRetryInfo<E> for &DefaultClassifier<E> {
    fn classifier(&self) -> Unclassified
    where
        E: RetryInfo,
    {
        Unclassified
    }
}

/// The classifier of a call that does not compile ([`MissingRetryInfo`]): a type that
/// classifies anything, so that the rest of the function type-checks.
#[derive(Debug, Clone, Copy)]
pub struct Unclassified;

impl<T, E> ClassifyRetry<T, E> for Unclassified {
    fn classify(&self, _: &Result<T, E>) -> crate::classify::RetryAction {
        crate::classify::RetryAction::NoActionIndicated
    }

    fn name(&self) -> &'static str {
        "unclassified"
    }
}

/// The error of a `#[retryable]` function, logged with its `Debug` when the call gives up (the
/// one warning of a call whose retry the strategy refused).
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Debug`: a `#[retryable]` function's error is logged with its `Debug` when the call gives up",
    label = "`{Self}` must implement `Debug`",
    note = "derive it (`#[derive(Debug)]`); if `{Self}` is a type parameter, add the bound `{Self}: std::fmt::Debug`"
)]
pub trait DebugError: Debug {}

#[diagnostic::do_not_recommend]
impl<E: Debug + ?Sized> DebugError for E {}

/// [`RetryLoop::finish`], called by the generated code through this function, which the macro
/// spans at the error type: an error type without `Debug` is reported there, once.
#[inline(always)]
pub fn finish<S, C, H, L, T, E>(
    retry: &mut RetryLoop<'_, S, C, H, L>,
    outcome: &Result<T, E>,
) -> ControlFlow<()>
where
    S: RetryStrategy + ?Sized,
    C: ClassifyRetry<T, E>,
    H: OnRetry<E>,
    E: DebugError,
{
    retry.finish(outcome)
}

/// The error of an attempt cut by `attempt_timeout`.
#[diagnostic::on_unimplemented(
    message = "`attempt_timeout` needs `{Self}: From<tokio::time::error::Elapsed>`: an attempt cut by the timeout fails with the function's own error type",
    label = "`{Self}` cannot represent a timed-out attempt",
    note = "implement `From<tokio::time::error::Elapsed>` for `{Self}`, e.g. with a `TimedOut` variant marked `#[retry(timeout)]`"
)]
pub trait FromElapsed {
    /// The error for a timed-out attempt.
    fn from_elapsed(elapsed: tokio::time::error::Elapsed) -> Self;
}

#[diagnostic::do_not_recommend]
impl<E: From<tokio::time::error::Elapsed>> FromElapsed for E {
    #[inline]
    fn from_elapsed(elapsed: tokio::time::error::Elapsed) -> Self {
        E::from(elapsed)
    }
}

/// The error of a call shed by `shed = true`.
#[diagnostic::on_unimplemented(
    message = "`shed = true` needs `{Self}: From<retry_core::LoadShed>`: a shed call fails with the function's own error type",
    label = "`{Self}` cannot represent a call shed before its first attempt",
    note = "implement `From<LoadShed>` for `{Self}`, e.g. with a variant `Shed(#[from] LoadShed)` marked `#[retry(never)]`, so callers can tell a local refusal from the service's errors"
)]
pub trait FromLoadShed {
    /// The error for a shed call.
    fn from_load_shed(shed: crate::load_shed::LoadShed) -> Self;
}

#[diagnostic::do_not_recommend]
impl<E: From<crate::load_shed::LoadShed>> FromLoadShed for E {
    #[inline]
    fn from_load_shed(shed: crate::load_shed::LoadShed) -> Self {
        E::from(shed)
    }
}

/// `#[derive(RetryInfo)]` on a variant (or struct) that wraps an error (thiserror's `#[from]`,
/// `#[source]`, a field named `source`, `#[error(transparent)]`) and says nothing with
/// `#[retry(...)]`: every method asks the wrapped error through this trait, so that a type that
/// does not describe itself is reported once, at the field, with what to write instead.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `RetryInfo`, so `#[derive(RetryInfo)]` cannot tell whether the error wrapped here is worth retrying",
    label = "wrapped without `#[retry(...)]`: `{Self}` does not describe itself",
    note = "say it on the variant (or struct): `#[retry(transient)]` or `#[retry(never)]` to decide here, or `#[retry(with = path)]` with a `fn(&{Self}) -> impl RetryInfo` to decide from the value",
    note = "or implement `RetryInfo` for `{Self}`: a variant wrapping an error that describes itself asks it, as `#[retry(transparent)]` does"
)]
pub trait WrappedError {
    /// `RetryInfo::retry_safety` of the wrapped error.
    fn wrapped_retry_safety(&self) -> crate::info::RetrySafety;
    /// `RetryInfo::is_throttling` of the wrapped error.
    fn wrapped_is_throttling(&self) -> bool;
    /// `RetryInfo::is_timeout` of the wrapped error.
    fn wrapped_is_timeout(&self) -> bool;
    /// `RetryInfo::retry_after` of the wrapped error.
    fn wrapped_retry_after(&self) -> Option<Duration>;
    /// `RetryInfo::fault` of the wrapped error.
    fn wrapped_fault(&self) -> crate::info::Fault;
}

#[diagnostic::do_not_recommend]
impl<T: RetryInfo + ?Sized> WrappedError for T {
    #[inline]
    fn wrapped_retry_safety(&self) -> crate::info::RetrySafety {
        self.retry_safety()
    }
    #[inline]
    fn wrapped_is_throttling(&self) -> bool {
        self.is_throttling()
    }
    #[inline]
    fn wrapped_is_timeout(&self) -> bool {
        self.is_timeout()
    }
    #[inline]
    fn wrapped_retry_after(&self) -> Option<Duration> {
        self.retry_after()
    }
    #[inline]
    fn wrapped_fault(&self) -> crate::info::Fault {
        self.fault()
    }
}

// ---- `#[retryable(hedge_after = ...)]` --------------------------------------------------------

pub use crate::driver::{NeverShed, ShedLoad};
pub use crate::hedge::HedgeDelay;

/// A `#[retryable(hedge_after = ..., max_hedges = ...)]` call: the copies made by `operation`
/// (each an attempt of the function's body, cut by `attempt_timeout` when given), run as
/// [`Retry::hedge`](crate::Retry::hedge) runs them. The macro checked `delay` and `max_hedges`
/// with the runtime's rules, and spans this function at the error type (`E: Debug` is reported
/// there, once).
pub fn hedged<S, C, H, L, F, Fut, T, E>(
    strategy: S,
    classifier: C,
    on_retry: H,
    shedding: L,
    (delay, max_hedges): (HedgeDelay, u32),
    operation: F,
) -> impl Future<Output = Result<T, E>>
where
    S: RetryStrategy,
    C: ClassifyRetry<T, E>,
    H: OnRetry<E>,
    L: crate::driver::ShedInto<E>,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: DebugError,
{
    let hedging = crate::hedge::Hedging::checked_by_macro(delay, max_hedges);
    let call = crate::driver::HedgedLoop::new(strategy, classifier, on_retry, hedging)
        .with_shedding(shedding);
    Settled::new(async move {
        let (outcome, _, linger) = crate::driver::hedged::Hedged::new(call, operation).await;
        (outcome, linger)
    })
}

/// `#[retry(with = path)]` of `#[derive(RetryInfo)]`: what the user's function says of the
/// field. Each generated method calls this once and asks the description the one question it
/// answers, so the user's function runs once per method called and no other answer is
/// computed. The derive spans the call and the question at the path, so a function of another
/// type (expected `fn(&Field) -> _`) or one whose return type is not a `RetryInfo` is reported
/// there, once: `R` is left unbounded here so that only the question requires `RetryInfo`.
#[inline]
pub fn described_by<T: ?Sized, R>(describe: fn(&T) -> R, value: &T) -> R {
    describe(value)
}

#[cfg(test)]
mod tests {
    /// `retry-macros` derives this module's name from its own version; the runtime's name must
    /// follow the runtime's version, or no generated code compiles.
    #[test]
    fn the_module_is_named_after_the_crate_version() {
        let version = env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_");
        assert_eq!(
            module_path!(),
            format!("retry_core::__private_{version}::tests"),
            "the module is not named after the crate's version: rename `pub mod __private_...` in \
             retry-core/src/lib.rs \
             to `__private_{version}`"
        );
    }
}
