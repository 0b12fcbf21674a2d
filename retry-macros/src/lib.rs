//! Procedural macros for [`retry-core`](https://docs.rs/retry-core): `#[derive(RetryInfo)]` and
//! `#[retryable]`.
//!
//! Do not depend on this crate directly. `retry-core` re-exports both macros under its default
//! feature `macros` (the pattern of `tokio` / `tokio-macros`), and the generated code names items
//! through `::retry_core` (overridable with `crate = "path"`), so the macros only work when
//! `retry-core` is a dependency:
//!
//! ```toml
//! [dependencies]
//! retry-core = "0.1"
//! ```
//!
//! This file holds the entry points only; each macro lives in its own module, split thiserror
//! style into parse, validate and expand steps. Shared by both: the argument-list syntax
//! (`list`), diagnostics, span helpers (`spans`), and the macro's copies of the runtime's small
//! value parsers (`parse`).

mod derive;
mod diagnostics;
mod list;
mod parse;
mod retryable;
mod runtime;
mod spans;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `retry_core::RetryInfo` from `#[retry(...)]` attributes.
///
/// Use it through the re-export `retry_core::RetryInfo`. It works on enums (one description per
/// variant) and structs:
///
/// ```ignore
/// use retry_core::RetryInfo;
/// use std::time::Duration;
///
/// #[derive(Debug, thiserror::Error, RetryInfo)]
/// enum StoreError {
///     #[error("slow down")]
///     #[retry(throttling)]
///     Throttled {
///         #[retry(after)]
///         retry_after: Option<Duration>,
///     },
///     #[error("unavailable")]
///     #[retry(transient)]
///     Unavailable,
///     #[error("not found")]
///     #[retry(fault = "client")] // a client fault: never retried
///     NotFound,
///     #[error(transparent)]
///     #[retry(transparent)] // ask the io::Error
///     Io(#[from] std::io::Error),
/// }
/// ```
///
/// # Keys
///
/// On a variant, or on the struct itself (several keys may share one attribute:
/// `#[retry(throttling, fault = "client")]`):
///
/// | key | `retry_safety` | `is_throttling` | `is_timeout` | `fault` | a retry's reason² |
/// |-----|----------------|-----------------|--------------|---------|---------|
/// | (none) | `Maybe` | `false` | `false` | `Unknown` | |
/// | (none), wrapping an error¹ | the wrapped error's | the wrapped error's | the wrapped error's | the wrapped error's | the wrapped error's |
/// | `retryable` | `Yes` | `false` | `false` | `Unknown` | `transient` |
/// | `transient` | `Yes` | `false` | `false` | `Unknown` | `transient` |
/// | `throttling` | `Yes` | `true` | `false` | `Server` | `throttling` |
/// | `timeout` | `Yes` | `false` | `true` | `Server` | `timeout` |
/// | `never` | `No` | `false` | `false` | `Unknown` | |
/// | `fault = "client"` | `No` unless a retryable key is present | | | `Client` | `client` (with a retryable key) |
/// | `fault = "server"` | `Maybe` unless a key says otherwise | | | `Server` | `server` (`#[retry(transient, fault = "server")]`: a failure the server reported) |
///
/// ² The `retry_core::ErrorKind` its retries are counted and labelled as, in the `retry.attempt`
/// span, the "retrying" event, the `on_retry` hook's `RetryReason` and the `retry.retries`
/// metric: `ErrorKind`'s documentation has the table of reasons.
///
/// ¹ A variant (or struct) that wraps an error by thiserror's conventions — a field marked
/// `#[from]` or `#[source]`, else a field named `source`, else the single field of an
/// `#[error(transparent)]` variant — and has no `#[retry(...)]` (on itself, on a field, or
/// inherited from the enum) asks that field, as `transparent` does, whatever its other fields:
/// `Status(#[from] HttpStatusError)` retries the 503 inside. The field's type must implement
/// `RetryInfo`; when it does not, it is a compile error at the field saying what to write
/// (`#[retry(transient)]`, `#[retry(never)]`, `#[retry(with = path)]`), never a silent `Maybe`.
/// A field whose type mentions a type parameter adds that bound, as `transparent` does.
///
/// * `transparent`: delegate all five methods to the variant's single field, which must
///   implement `RetryInfo` (a bound is added when its type mentions a type parameter). It cannot
///   be combined with other keys.
/// * `#[retry(after)]` on one field of type `Duration` or `Option<Duration>`: `retry_after()`
///   returns it.
/// * On an enum, the enum's own `#[retry(...)]` keys are defaults for its variants; a variant's
///   keys replace the enum's keys of the same category (the retry keys, `fault`, `transparent`).
/// * `#[retry(with = path)]` on a variant with one field, on a field, or on a struct with one
///   field: every method asks `path`, a `fn(&Field) -> impl RetryInfo` (e.g. returning a
///   `retry_core::classify::RetryDescription`, or an enum of yours deriving `RetryInfo`), about the
///   field: a foreign error (`sqlx::Error`) classified without a newtype. One function rather than
///   one per method: the five answers about one error are one decision, made in one `match`. It
///   cannot be combined with other keys on the same variant, nor with `#[retry(after)]`.
/// * `#[retry(crate = "path")]` on the enum or struct: the path of `retry_core` to use in the
///   generated code (default `::retry_core`).
///
/// Mistakes (unknown or conflicting keys, misplaced attributes, unions, ...) are compile errors
/// pointing at the attribute; the trait is still implemented so that no other error follows.
#[proc_macro_derive(RetryInfo, attributes(retry))]
pub fn derive_retry_info(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive::derive(&input).into()
}

/// Retries a function that returns a `Result` under a retry strategy: an `async fn`, or a
/// plain (blocking) `fn`.
///
/// Use it through the re-export `retry_core::retryable`:
///
/// ```ignore
/// use retry_core::retryable;
///
/// #[retryable(max_attempts = 5, mode = "adaptive", scope = "store")]
/// async fn get(&self, key: &str) -> Result<Item, StoreError> {
///     self.client.get(key).await
/// }
/// ```
///
/// The function keeps its signature (name, visibility, generics, receiver, return type) and its
/// attributes; its body runs once per attempt as an inner async block, so `?` and `return` end
/// the attempt, not the call, and the body's inner attributes (`#![allow(...)]`) apply to the
/// body. When retries end, the last attempt's own outcome is returned unchanged.
///
/// # Arguments
///
/// All optional, each at most once:
///
/// | argument | value | default |
/// |----------|-------|---------|
/// | `preset` | `"default"`, `"aws-classic"` or `"aws-2026"`: the configuration the other arguments are applied to (`RetryConfig::from_preset`) | `"default"` |
/// | `max_attempts` | whole number >= 1, the first attempt included | the preset's (`3`) |
/// | `mode` | `"standard"` or `"adaptive"` | `"standard"` |
/// | `initial_backoff` | duration string (`"100ms"`, `"2s"`, `"1m"`) | the preset's (`"50ms"`; `"1s"` in `aws-classic`) |
/// | `max_backoff` | duration string, >= `initial_backoff` | the preset's (`"20s"`) |
/// | `jitter` | `"none"`, `"full"`, `"equal"`, `"decorrelated"` | `"full"` |
/// | `timeout` | duration string: no attempt starts after it | none |
/// | `max_wait` | duration string, adaptive mode only: the longest an attempt waits for its send permit (one that has waited this long is sent), and a retry expected to wait longer is not made; with `shed`, a call whose first permit is expected later than this is shed (`RetryConfig::max_wait`) | none: an attempt waits as long as the rate limiter asks |
/// | `attempt_timeout` | duration string: cuts each attempt (`E: From<tokio::time::error::Elapsed>`) | none |
/// | `quota` | the scope's retry quota: `"off"` (every retry free, no traffic sampled), a whole number of tokens (a fixed bucket, `quota = 2000`, as the AWS SDKs keep it) or `"traffic"` (sized by the scope's calls of the last 60 s) | the preset's (`"traffic"`; `500` in `aws-classic`; `500` in `aws-2026`) |
/// | `long_polling` | `true`: when the quota refuses a retry, sleep the backoff before returning the error (the AWS SDKs' long-polling operations) | `false` |
/// | `scope` | name of the shared quota and rate limiter | the function's module path and name |
/// | `strategy` | an expression implementing `RetryStrategy` (excludes `preset`, the tuning arguments above and `scope`) | one per function |
/// | `classifier` | an expression implementing `ClassifyRetry<T, E>` | `RetryInfoClassifier` |
/// | `retry_if` | path of a `fn(&E) -> bool` (excludes `classifier`) | |
/// | `on_retry` | path of a `fn(&RetryEvent<'_, E>)` | |
/// | `shed` | `true`: in adaptive mode, a call whose first attempt's send permit is expected after its deadline (`timeout`) or later than `max_wait` fails at once with `E::from(LoadShed)`, nothing sent (needs `mode = "adaptive"` with `timeout` or `max_wait`, or a `strategy`; `E: From<LoadShed>`) | `false`: the first attempt is always made |
/// | `idempotent` | `true`: an error that may have reached the server (`RetrySafety::Maybe`, e.g. a timeout after the request was sent) is retried; `false`: it never is (`retry_core::classify::Idempotency`) | undeclared: retried only when its fault is the server's |
/// | `hedge_after` | `"50ms"` (longer than zero) or `"p95"` (a percentile of the scope's measured latency, strictly between 0 and 100): when no copy has answered this long after the last was sent, another copy of the call is sent, charged to the scope like a retry; the first answer that ends the call wins and the others are dropped (`retry_core::guide::hedging`). Declares the call idempotent | no hedging |
/// | `max_hedges` | 1 to 4: the most hedges a call sends; hedges and retries share `max_attempts` | 1 |
/// | `crate` | path of `retry_core`, e.g. `"::retry_core"` or a re-export | `"::retry_core"` |
///
/// Every value is checked at compile time with the runtime's parsing rules, and the values
/// against each other as the runtime would (`initial_backoff <= max_backoff`, the preset filling
/// in the one not given); mistakes are compile errors at the argument that say what to write
/// instead.
///
/// Any arguments combine, except:
///
/// | rule | why |
/// |------|-----|
/// | `strategy` excludes `preset`, `max_attempts`, `mode`, `initial_backoff`, `max_backoff`, `jitter`, `timeout`, `max_wait`, `quota`, `long_polling` and `scope` | the strategy carries its own configuration |
/// | `classifier` excludes `retry_if` | `retry_if = f` is shorthand for `classifier = RetryIf::new(f)` |
/// | `max_wait` needs `mode = "adaptive"` | standard mode never waits for a send permit: the bound would be ignored |
/// | `shed = true` needs `mode = "adaptive"` with `timeout` or `max_wait`, or a `strategy` | a call is shed only when its permit is expected past one of those limits |
/// | `attempt_timeout` needs an `async fn` | a blocking attempt cannot be cut short |
/// | `max_hedges` needs `hedge_after` | without a delay no hedge is sent: the count would be ignored |
/// | `hedge_after` excludes `idempotent = false` | a hedge sends the request again while the first copy may still be processed |
/// | `hedge_after` needs an `async fn` without `&mut self` or `&mut` arguments | two copies run at once: a blocking call cannot, and they cannot share a mutable borrow |
///
/// Every other pair of arguments compiles, on an `async fn` and (but for `attempt_timeout`,
/// `hedge_after` and `max_hedges`) on a blocking `fn` (the test suite builds and runs each
/// pair).
///
/// * Without `strategy`, the function's strategy is built once, on its first call, in the
///   process-wide scope named by `scope` (default: `concat!(module_path!(), "::", name)`, so two
///   methods of the same name in one module share it unless given a `scope`). Functions with the
///   same `scope` share one retry quota and one adaptive rate limiter. Strings are trimmed;
///   names (`preset`, `mode`, `jitter`) are case-insensitive. When the preset gives throttling
///   errors a backoff base of their own (`1s` in `aws-2026`), a `max_backoff` below it lowers
///   it to `max_backoff`.
/// * With `strategy = expr`, `expr` is evaluated at the start of each call and borrowed for it
///   (`Box<dyn RetryStrategy>` works). In a method taking `&mut self`, an expression that reads
///   `self` is cloned instead (`Clone::clone(&expr)`), so that the call holds no borrow of `self`
///   while each attempt re-borrows `&mut self`; `StandardStrategy`, `AdaptiveStrategy`, `Arc<S>`
///   and `&S` are cheap to clone. `classifier = expr` follows the same rule.
/// * Arguments: `&T` arguments are reused and `&mut T` arguments re-borrowed by each attempt;
///   arguments taken by value are cloned for each attempt, the first included (they must be
///   `Clone`; an `impl Trait` argument needs `+ Clone`; take `&T` to avoid the copy). The
///   receiver: `&self` is reused, `&mut self` and `self: Pin<&mut Self>` re-borrowed, and
///   `self: Arc<Self>` / `Rc<Self>` cloned for each attempt; `self` and `self: Box<Self>` by
///   value cannot be had again and are rejected.
/// * The return type must be a `Result`, under any name (`io::Result<T>`, an alias
///   `type Fallible<T> = Result<T, E>`): checked by the type system, at the return type.
///   Without `classifier` / `retry_if`, `E` must implement `RetryInfo`; for `anyhow::Error` or
///   `Box<dyn Error + Send + Sync>`, write `classifier = retry_core::classify::DynErrorClassifier`.
/// * A plain `fn` is retried on the calling thread (`retry_core::retry_blocking`'s loop): the
///   body is called once per attempt (as a closure, so `?` and `return` end the attempt), the
///   backoff and adaptive mode's waits are slept through the thread's `Sleeper` (replace it in
///   tests with `retry_core::driver::with_sleeper`). `attempt_timeout` needs an `async fn`. A plain
///   `fn` returning `impl Future` is rejected: write it as an `async fn`.
/// * In an `#[async_trait]` impl or trait, `#[async_trait]` expands first (it is on the
///   enclosing item) and hands this attribute a plain `fn` returning
///   `Pin<Box<dyn Future<Output = R> + Send + 'async_trait>>`, its body
///   `Box::pin(async move { ... })`: the retry loop is put inside that `async move` block, each
///   attempt running the block's statements. Should `#[retryable]` expand first (its output
///   given to another macro), its output is an ordinary `async fn`.
/// * Applied twice to one function, the attempts would multiply: a compile error. So is a
///   `const fn` (retries sleep and keep a quota at run time); `unsafe fn` and an `extern "C"`
///   blocking `fn` are retried like any other (the body keeps its own `unsafe` blocks).
/// * The future is `Send` when the body's is. Nothing is allocated on the heap per call (the
///   strategy, classifier and hook are used through references); by-value arguments are cloned,
///   which may allocate.
#[proc_macro_attribute]
pub fn retryable(args: TokenStream, item: TokenStream) -> TokenStream {
    retryable::retryable(args.into(), item.into()).into()
}
