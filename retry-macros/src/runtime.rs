//! Names in the runtime that generated code uses.

use proc_macro2::{Ident, Span};

/// The runtime's module for generated code, named after this crate's version
/// (`__private_0_1_0`): the runtime names it after its own, so the generated code compiles only
/// against the runtime of the same version.
pub(crate) fn private_module() -> Ident {
    let version = env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_");
    Ident::new(&format!("__private_{version}"), Span::call_site())
}
