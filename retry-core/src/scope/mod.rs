//! Scopes: the quota, rate limiter and counters that calls share ([`Scope`]), and what they
//! counted ([`ScopeStats`]).

mod state;
mod stats;

pub use state::Scope;
pub(crate) use stats::Counter;
pub use stats::ScopeStats;
