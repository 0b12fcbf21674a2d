//! The runtime's small value parsers, kept in the macro crate.
//!
//! `#[retryable]` checks its values at compile time with the rules `retry-core` applies at run
//! time: duration strings (`duration`), hedge delays (`hedge`), the names of modes, jitters and presets (`mode`,
//! `jitter`, `preset`, read by `name`), quotas (`quota`) and the presets' backoff numbers
//! (`defaults`). A proc-macro crate cannot depend on the runtime it generates code for (the
//! runtime depends on it), so each file here is a copy of its runtime counterpart, as
//! tokio-macros and tracing-attributes keep theirs.
//! `tests` proves the copies and the runtime agree on every value and every error message, and
//! fails, naming the file to sync, as soon as one side changes without the other.

pub(crate) mod defaults;
pub(crate) mod duration;
pub(crate) mod hedge;
pub(crate) mod jitter;
pub(crate) mod mode;
mod name;
pub(crate) mod preset;
pub(crate) mod quota;

#[cfg(test)]
mod tests;
