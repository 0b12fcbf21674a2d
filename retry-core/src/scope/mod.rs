//! Scopes: the quota, rate limiter and counters that calls share ([`Scope`]), and what they
//! counted ([`ScopeStats`]).

mod declaration;
mod meter;
pub(crate) mod outcome;
mod registry;
pub(crate) mod state;
mod stats;

pub use declaration::{SCOPE_SETTINGS, ScopeConflict, ScopeDeclaration};
pub(crate) use state::Scope;
pub(crate) use stats::Counter;
pub use stats::ScopeStats;
#[cfg(feature = "fleet")]
pub(crate) use stats::ScopeTotals;
