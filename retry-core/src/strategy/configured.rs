//! The strategy a configuration's mode names, as one concrete type.

use super::{
    AdaptiveStrategy, RetryError, RetryStrategy, RetryToken, SendPermit, StandardStrategy,
};
use crate::classify::RetryReason;
use crate::config::{RetryConfig, RetryMode};
use crate::hedge::{HedgeGrant, HedgeRefusal, ScopeHedging};
use crate::load_shed::LoadShed;
use crate::scope::{Scope, ScopeDeclaration};
use std::panic::Location;

/// The strategy `config.mode()` names: standard or adaptive, chosen at run time (a
/// configuration read from the environment) yet dispatched without a virtual call, so that the
/// success path of a call inlines. This is what `#[retryable]` builds when no `strategy` is
/// given.
///
/// ```
/// use retry_core::strategy::ConfiguredStrategy;
/// use retry_core::{RetryConfig, RetryMode, RetryStrategy, strategy_for};
/// let config = RetryConfig::builder().mode(RetryMode::Adaptive).build().unwrap();
/// let strategy = strategy_for(config, "docs-configured-strategy");
/// assert!(matches!(strategy, ConfiguredStrategy::Adaptive(_)));
/// assert_eq!(strategy.scope().name(), "docs-configured-strategy");
/// ```
#[derive(Debug, Clone)]
pub enum ConfiguredStrategy {
    /// `mode = "standard"` (and `legacy`, which maps to standard behaviour here).
    Standard(StandardStrategy),
    /// `mode = "adaptive"`.
    Adaptive(AdaptiveStrategy),
}

/// The strategy `config.mode()` names, in a process-wide [`Scope`] called `scope`: this call
/// declares the scope (see [`Scope::named`]). Its [`SCOPE_SETTINGS`](crate::scope::SCOPE_SETTINGS)
/// are the scope's if this call made it; if another declaration made it with other ones, the
/// strategy uses the scope as it is and the [`ScopeConflict`](crate::scope::ScopeConflict),
/// naming both declarations, is logged as an ERROR event (once for this place).
///
/// Keep the strategy (or the `RetryLayer` on it) for as long as its scope's state should
/// carry over: a scope no strategy holds is forgotten once it has nothing to remember
/// ([How long a named scope lives](Scope#how-long-a-named-scope-lives)).
///
/// ```
/// use retry_core::{RetryConfig, RetryMode, RetryStrategy, strategy_for};
/// let config = RetryConfig::builder().mode(RetryMode::Adaptive).build().unwrap();
/// let strategy = strategy_for(config, "docs-strategy-for");
/// assert_eq!(strategy.scope().name(), "docs-strategy-for");
/// ```
#[track_caller]
pub fn strategy_for(config: RetryConfig, scope: &str) -> ConfiguredStrategy {
    let declared = ScopeDeclaration::StrategyFor(Location::caller());
    configured_in(config, scope, declared)
}

/// The strategy `config.mode()` names, in the process-wide scope called `scope` as `declared`
/// declares it.
pub(crate) fn configured_in(
    config: RetryConfig,
    scope: &str,
    declared: ScopeDeclaration,
) -> ConfiguredStrategy {
    let scope = Scope::declared(scope, &config, declared);
    let builder = StandardStrategy::builder(config).scope(scope);
    match builder.config().mode() {
        RetryMode::Adaptive => {
            ConfiguredStrategy::Adaptive(AdaptiveStrategy::from_builder(builder))
        }
        _ => ConfiguredStrategy::Standard(builder.build()),
    }
}

/// Calls `$method` on whichever strategy the enum holds.
macro_rules! dispatch {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match $self {
            ConfiguredStrategy::Standard(strategy) => strategy.$method($($arg),*),
            ConfiguredStrategy::Adaptive(strategy) => strategy.$method($($arg),*),
        }
    };
}

impl ConfiguredStrategy {
    /// The scope whose quota, limiter and counters this strategy uses.
    pub fn scope(&self) -> &Scope {
        dispatch!(self.scope())
    }

    /// The configuration this strategy follows.
    ///
    /// ```
    /// use retry_core::{RetryConfig, strategy_for};
    /// let strategy = strategy_for(RetryConfig::builder().max_attempts(4).build().unwrap(), "docs-configured-config");
    /// assert_eq!(strategy.config().max_attempts(), 4);
    /// ```
    #[inline]
    pub fn config(&self) -> &RetryConfig {
        dispatch!(self.config())
    }
}

impl RetryStrategy for ConfiguredStrategy {
    #[inline(always)]
    fn acquire_initial_token(&self) -> RetryToken {
        dispatch!(self.acquire_initial_token())
    }

    #[inline(always)]
    fn acquire_send_permit(&self, token: &mut RetryToken) -> SendPermit {
        dispatch!(self.acquire_send_permit(token))
    }

    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError> {
        dispatch!(self.refresh_retry_token(token, reason))
    }

    #[inline(always)]
    fn record_success(&self, token: RetryToken) {
        dispatch!(self.record_success(token))
    }

    fn shed(&self, token: &RetryToken) -> Option<LoadShed> {
        dispatch!(self.shed(token))
    }

    fn record_failure(&self, token: RetryToken) {
        dispatch!(self.record_failure(token))
    }

    fn record_cancelled(&self, token: RetryToken) {
        dispatch!(self.record_cancelled(token))
    }

    fn abandon(&self, token: RetryToken) {
        dispatch!(self.abandon(token))
    }

    fn record_shed(&self, token: RetryToken) {
        dispatch!(self.record_shed(token))
    }

    #[inline(always)]
    fn max_attempts(&self) -> Option<u32> {
        Some(self.config().max_attempts())
    }

    fn scope_name(&self) -> Option<&str> {
        Some(self.scope().name())
    }

    fn acquire_hedge(&self, token: &RetryToken) -> Result<HedgeGrant, HedgeRefusal> {
        dispatch!(self.acquire_hedge(token))
    }

    fn record_copy_failure(&self, copy: &RetryToken, reason: &RetryReason) {
        dispatch!(self.record_copy_failure(copy, reason))
    }

    fn record_copy_cancelled(&self, copy: &RetryToken) {
        dispatch!(self.record_copy_cancelled(copy))
    }

    fn scope_hedging(&self) -> Option<&ScopeHedging> {
        dispatch!(self.scope_hedging())
    }
}
