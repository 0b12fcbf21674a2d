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
//! style into parse (`ast`, `attr`), validate (`valid`) and expand (`expand`) steps.

mod derive;

// `#[retryable]`: `mod retryable;` and its `#[proc_macro_attribute] pub fn retryable` entry point
// go here (owned by the `retryable` module's author).

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
/// | key | `retry_safety` | `is_throttling` | `is_timeout` | `fault` |
/// |-----|----------------|-----------------|--------------|---------|
/// | (none) | `Maybe` | `false` | `false` | `Unknown` |
/// | `retryable` | `Yes` | `false` | `false` | `Unknown` |
/// | `transient` | `Yes` | `false` | `false` | `Server` |
/// | `throttling` | `Yes` | `true` | `false` | `Server` |
/// | `timeout` | `Yes` | `false` | `true` | `Server` |
/// | `never` | `No` | `false` | `false` | `Unknown` |
/// | `fault = "client"` | `No` unless a retryable key is present | | | `Client` |
/// | `fault = "server"` | `Maybe` unless a key says otherwise | | | `Server` |
///
/// * `transparent`: delegate all five methods to the variant's single field, which must
///   implement `RetryInfo` (a bound is added when its type mentions a type parameter). It cannot
///   be combined with other keys.
/// * `#[retry(after)]` on one field of type `Duration` or `Option<Duration>`: `retry_after()`
///   returns it.
/// * On an enum, the enum's own `#[retry(...)]` keys are defaults for its variants; a variant's
///   keys replace the enum's keys of the same category (the retry keys, `fault`, `transparent`).
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
