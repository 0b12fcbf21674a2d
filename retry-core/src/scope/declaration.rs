//! Where a named scope is declared, with which settings, and the conflict between two
//! declarations of one name that disagree on them.
//!
//! A scope's settings are written once, where it is declared: `#[retryable(scope = "...")]`,
//! [`strategy_for`](crate::strategy_for) (and `RetryLayer` on the strategy it returns),
//! [`Scope::named`](super::Scope::named) or [`Scope::declare`](super::Scope::declare). Two
//! declarations of one name may share the scope when they agree on [`SCOPE_SETTINGS`], the
//! settings the scope is made from and a fleet syncs it with; the others (backoff, timeouts,
//! `retry_after_slack`, long polling) are the strategy's own, and may differ.

use std::fmt;
use std::panic::Location;

use crate::config::RetryConfig;

/// The settings a scope is made from and a fleet syncs it with: two declarations of one scope
/// name must agree on these, or they conflict ([`ScopeConflict`]).
///
/// The quota's sizes (`quota_capacity`, `quota_window`, `quota_refill_per_second`; the least a
/// retry finds is one whole call's retries, so `max_attempts` and the retry costs size it too;
/// `success_reward`), and the settings that change how the scope spends its budget or paces its
/// sends (`mode`, `max_wait`): those a fleet compares across processes, compared here across
/// the declarations of one process.
pub const SCOPE_SETTINGS: [&str; 10] = [
    "mode",
    "max_attempts",
    "quota_capacity",
    "quota_window",
    "quota_refill_per_second",
    "retry_cost",
    "timeout_retry_cost",
    "throttling_retry_cost",
    "success_reward",
    "max_wait",
];

/// The [`SCOPE_SETTINGS`] on which `first` and `second` differ, in that order.
pub(crate) fn differences(first: &RetryConfig, second: &RetryConfig) -> Vec<&'static str> {
    let differs = [
        first.mode() != second.mode(),
        first.max_attempts() != second.max_attempts(),
        first.quota_capacity() != second.quota_capacity(),
        first.quota_window() != second.quota_window(),
        first.quota_refill_per_second() != second.quota_refill_per_second(),
        first.retry_cost() != second.retry_cost(),
        first.timeout_retry_cost() != second.timeout_retry_cost(),
        first.throttling_retry_cost() != second.throttling_retry_cost(),
        first.success_reward() != second.success_reward(),
        first.max_wait() != second.max_wait(),
    ];
    SCOPE_SETTINGS
        .into_iter()
        .zip(differs)
        .filter_map(|(setting, differs)| differs.then_some(setting))
        .collect()
}

/// Where a named scope was declared: the kind of declaration and its place in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeDeclaration {
    /// A `#[retryable]` function's strategy (the attribute's place).
    Retryable(&'static Location<'static>),
    /// [`strategy_for`](crate::strategy_for) (the call's place).
    StrategyFor(&'static Location<'static>),
    /// [`Scope::named`](super::Scope::named) or [`Scope::declare`](super::Scope::declare)
    /// (the call's place).
    Named(&'static Location<'static>),
}

impl ScopeDeclaration {
    /// The place in the source.
    pub fn location(&self) -> &'static Location<'static> {
        match self {
            Self::Retryable(at) | Self::StrategyFor(at) | Self::Named(at) => at,
        }
    }
}

impl fmt::Display for ScopeDeclaration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Self::Retryable(_) => "#[retryable]",
            Self::StrategyFor(_) => "strategy_for",
            Self::Named(_) => "Scope::named",
        };
        write!(f, "{kind} at {}", self.location())
    }
}

/// Two declarations of one scope name with different [`SCOPE_SETTINGS`]: the scope keeps the
/// first one's, so the second's would be ignored.
///
/// [`Scope::declare`](super::Scope::declare) returns it. The declarations that cannot return an
/// error (`#[retryable]`, whose strategy is made at the function's first call;
/// [`strategy_for`](crate::strategy_for); [`Scope::named`](super::Scope::named)) log it as an
/// ERROR event (target `retry_core`), once per place, and use the scope as it is: a call must
/// never fail for a configuration mistake it cannot report, and a panic at a function's first
/// call would take down a server long after start-up.
///
/// ```
/// use retry_core::{RetryConfig, Scope};
/// let five = RetryConfig::builder().max_attempts(5).build()?;
/// let first = Scope::declare("docs-conflict", &RetryConfig::default())?;
/// let conflict = Scope::declare("docs-conflict", &five).unwrap_err();
/// assert_eq!(conflict.scope(), "docs-conflict");
/// assert_eq!(conflict.settings(), ["max_attempts"]);
/// assert!(conflict.to_string().contains("Scope::named at "));
/// # drop(first);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeConflict {
    scope: Box<str>,
    first: ScopeDeclaration,
    second: ScopeDeclaration,
    settings: Vec<&'static str>,
}

impl ScopeConflict {
    /// The conflict of `second` with `first`, if their configurations differ in a scope setting.
    pub(crate) fn between(
        scope: &str,
        (first, first_config): (ScopeDeclaration, &RetryConfig),
        (second, second_config): (ScopeDeclaration, &RetryConfig),
    ) -> Option<Self> {
        let settings = differences(first_config, second_config);
        (!settings.is_empty()).then(|| Self {
            scope: scope.into(),
            first,
            second,
            settings,
        })
    }

    /// The scope's name.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The declaration that made the scope: its settings are the scope's.
    pub fn first(&self) -> ScopeDeclaration {
        self.first
    }

    /// The declaration whose settings differ.
    pub fn second(&self) -> ScopeDeclaration {
        self.second
    }

    /// The [`SCOPE_SETTINGS`] that differ.
    pub fn settings(&self) -> &[&'static str] {
        &self.settings
    }

    /// Logs the conflict as an ERROR event: what a declaration that cannot return it does.
    pub(crate) fn log(&self) {
        tracing::error!(
            target: "retry_core",
            scope = &*self.scope,
            first = %self.first,
            second = %self.second,
            settings = ?self.settings,
            "{self}"
        );
    }
}

impl fmt::Display for ScopeConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scope {:?} is declared twice with different settings ({}): first by {}, then by \
             {}; the scope keeps the first one's. Give both declarations the same settings, or \
             use two scope names",
            self.scope,
            self.settings.join(", "),
            self.first,
            self.second
        )
    }
}

impl std::error::Error for ScopeConflict {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::mode::RetryMode;
    use std::time::Duration;

    fn config(builder: crate::config::RetryConfigBuilder) -> RetryConfig {
        builder.build().expect("valid")
    }

    #[test]
    fn every_scope_setting_is_compared() {
        let standard = RetryConfig::default();
        let adaptive_mode = || RetryConfig::builder().mode(RetryMode::Adaptive);
        let adaptive = config(adaptive_mode());
        let from_standard = |builder| (&standard, config(builder));
        let changed = [
            (&standard, adaptive.clone()),
            from_standard(RetryConfig::builder().max_attempts(4)),
            from_standard(RetryConfig::builder().quota_capacity(600)),
            from_standard(RetryConfig::builder().quota_window(Duration::from_secs(30))),
            from_standard(RetryConfig::builder().quota_refill_per_second(1.0)),
            from_standard(RetryConfig::builder().retry_cost(13)),
            from_standard(RetryConfig::builder().timeout_retry_cost(9)),
            from_standard(RetryConfig::builder().throttling_retry_cost(4)),
            from_standard(RetryConfig::builder().success_reward(2)),
            // An adaptive mode setting: against an adaptive base.
            (
                &adaptive,
                config(adaptive_mode().max_wait(Duration::from_secs(1))),
            ),
        ];
        assert_eq!(changed.len(), SCOPE_SETTINGS.len());
        for (setting, (base, other)) in SCOPE_SETTINGS.iter().zip(&changed) {
            assert_eq!(differences(base, other), [*setting]);
        }
    }

    #[test]
    fn a_strategy_s_own_settings_do_not_conflict() {
        let other = config(
            RetryConfig::builder()
                .initial_backoff(Duration::from_millis(7))
                .max_backoff(Duration::from_secs(3))
                .timeout(Duration::from_secs(2))
                .long_polling(true),
        );
        assert!(differences(&RetryConfig::default(), &other).is_empty());
    }

    #[test]
    fn the_conflict_names_both_declarations_and_the_settings() {
        let first = ScopeDeclaration::Retryable(Location::caller());
        let second = ScopeDeclaration::StrategyFor(Location::caller());
        let five = config(RetryConfig::builder().max_attempts(5).quota_capacity(9));
        let conflict = ScopeConflict::between(
            "inventory",
            (first, &RetryConfig::default()),
            (second, &five),
        )
        .expect("a conflict");
        let message = conflict.to_string();
        assert!(message.contains("\"inventory\""), "{message}");
        assert!(
            message.contains("(max_attempts, quota_capacity)"),
            "{message}"
        );
        assert!(message.contains(&format!("first by #[retryable] at {}", first.location())));
        assert!(message.contains(&format!("then by strategy_for at {}", second.location())));
    }
}
