//! A scope's hedge budget: the extra load its percentile hedges add, held to the share of calls
//! the percentile stands for.
//!
//! Hedging at the p95 sends a hedge for the calls slower than the p95 of the scope's recent
//! calls: about 5 % of them while the latency holds still. When it does not (a replica in a
//! slow period, a service slowing down), more than 5 % of the calls outlast a percentile
//! measured over the last minute or two, and each of them would be hedged. The budget bounds
//! that, as Finagle's `BackupRequestFilter` bounds its backup requests to a share of the
//! requests (its `maxExtraLoad`):
//!
//! * each call hedged at a percentile `p` earns `(100 − p) / 100` of a hedge (0.05 at p95), and
//!   each percentile hedge spends one;
//! * the credit held is capped at [`HEDGE_BURST`] hedges;
//! * while the budget holds less than one hedge, a call's delay is [`DELAY_STRETCH`] times the
//!   percentile: the hedges go to the calls that are still in flight then, the slow ones
//!   (a slow replica's answers, a slow mode ten or a hundred times the body), not to those just
//!   past the percentile, which a spell of slow answers adds by the dozen;
//! * those hedges may take the budget into debt, down to [`HEDGE_DEBT`] hedges; below that, a
//!   percentile hedge is refused ([`HedgeRefusal::BudgetExhausted`](super::HedgeRefusal)).
//!
//! Over any run of a scope's calls, its percentile hedges are therefore at most `(100 − p) %`
//! of the calls plus [`HEDGE_BURST`] + [`HEDGE_DEBT`] hedges. A hedge refused for a slow call
//! leaves that call in the tail, so the debt is there to be used: refusing at zero, the first
//! design tried, left about 1 % of the calls unhedged in the simulator's H1 (p99.9 cut 1.4×
//! instead of 29× on its shape 1), as a budget spent as it is earned runs out by chance alone.
//! The budget is separate from the retry quota, which protects the server in an outage and pays
//! for the hedge as well.
//!
//! The credit is a count of millionths of a hedge in one atomic: earned and spent by every
//! thread of the scope without a lock, never above the cap nor below the debt.

use crate::sync::{AtomicI64, Ordering};

/// The most hedges a scope's budget holds, 2: after a quiet spell, its percentile hedges may
/// go two beyond their share at the percentile itself before the delay stretches. Small, so
/// that the extra load over a minute of calls stays within the share: a scope of 7 calls/s
/// makes 420 calls a minute, 21 hedges at p95.
pub const HEDGE_BURST: u32 = 2;

/// How far a scope's percentile hedges may go beyond their share, at the stretched delay, before
/// one is refused: 10 hedges. It carries the hedges of the slow calls through a slow spell that
/// makes more than the share of calls slow (one slow replica of 20 makes 5 % of the answers
/// slow, on top of the service's own slow mode) and is paid back by the calls after it.
pub const HEDGE_DEBT: u32 = 10;

/// The factor on a call's percentile delay while the budget holds less than one hedge, 2: the
/// calls still in flight at twice the percentile are the slow ones, whom a hedge saves.
pub const DELAY_STRETCH: u32 = 2;

/// One hedge, in the budget's unit (millionths of a hedge).
const HEDGE: i64 = 1_000_000;

/// The most credit, in the budget's unit.
const CAP: i64 = HEDGE_BURST as i64 * HEDGE;

/// The least credit (the deepest debt), in the budget's unit.
const FLOOR: i64 = -(HEDGE_DEBT as i64) * HEDGE;

/// A scope's hedge budget (see the [module](self)).
#[derive(Debug)]
pub(crate) struct HedgeBudget {
    /// Millionths of a hedge held, from [`FLOOR`] to [`CAP`].
    credit: AtomicI64,
}

impl HedgeBudget {
    /// An empty budget: a scope earns its first hedge from its first calls (a percentile is not
    /// known before 200 of them at p95 anyway).
    pub(crate) fn new() -> Self {
        Self {
            credit: AtomicI64::new(0),
        }
    }

    /// A call hedged at `percentile` started: it earns `(100 − percentile) / 100` of a hedge, up
    /// to the cap.
    pub(crate) fn earn(&self, percentile: f64) {
        let share = ((100.0 - percentile) / 100.0).clamp(0.0, 1.0);
        let earned = (share * HEDGE as f64).round() as i64;
        // Relaxed: the credit is a count; no other memory is published through it.
        let _ = self
            .credit
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |credit| {
                (credit < CAP).then(|| credit.saturating_add(earned).min(CAP))
            });
    }

    /// Whether the budget holds a whole hedge: a call's delay is then the percentile itself,
    /// else it is stretched ([`DELAY_STRETCH`]).
    pub(crate) fn has_credit(&self) -> bool {
        self.credit.load(Ordering::Relaxed) >= HEDGE
    }

    /// Spends one hedge, if that leaves the budget no deeper in debt than [`HEDGE_DEBT`].
    pub(crate) fn try_spend(&self) -> bool {
        self.credit
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |credit| {
                let left = credit - HEDGE;
                (left >= FLOOR).then_some(left)
            })
            .is_ok()
    }

    /// Gives back a hedge spent and then not sent (the quota or the rate limiter refused it).
    pub(crate) fn refund(&self) {
        let _ = self
            .credit
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |credit| {
                Some(credit.saturating_add(HEDGE).min(CAP))
            });
    }

    /// The hedges the budget holds now, in hedges: negative in debt.
    pub(crate) fn hedges(&self) -> f64 {
        self.credit.load(Ordering::Relaxed) as f64 / HEDGE as f64
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_p95_budget_earns_one_hedge_per_twenty_calls() {
        let budget = HedgeBudget::new();
        for _ in 0..19 {
            budget.earn(95.0);
        }
        assert!(!budget.has_credit(), "19 calls earn 0.95 of a hedge");
        budget.earn(95.0);
        assert!(budget.has_credit());
        assert!(budget.try_spend());
        assert!(!budget.has_credit());
        assert_eq!(budget.hedges(), 0.0);
    }

    #[test]
    fn the_credit_stops_at_the_burst_and_the_debt() {
        let budget = HedgeBudget::new();
        for _ in 0..1_000 {
            budget.earn(95.0);
        }
        assert_eq!(budget.hedges(), f64::from(HEDGE_BURST));
        budget.refund();
        assert_eq!(budget.hedges(), f64::from(HEDGE_BURST));
        for _ in 0..HEDGE_BURST + HEDGE_DEBT {
            assert!(budget.try_spend());
        }
        assert!(!budget.try_spend(), "{} hedges of debt", HEDGE_DEBT);
        assert_eq!(budget.hedges(), -f64::from(HEDGE_DEBT));
        budget.refund();
        assert!(budget.try_spend());
        // A call at p99 earns a fifth of a p95 call's share.
        budget.earn(99.0);
        assert!((budget.hedges() + f64::from(HEDGE_DEBT) - 0.01).abs() < 1e-9);
    }

    #[test]
    fn threads_earning_and_spending_at_once_spend_what_they_earned_and_the_debt() {
        let budget = std::sync::Arc::new(HedgeBudget::new());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let budget = std::sync::Arc::clone(&budget);
                std::thread::spawn(move || {
                    let mut spent = 0u32;
                    for call in 0..20_000 {
                        budget.earn(95.0);
                        // Every call tries to hedge once in a while, ten times the share.
                        if call % 2 == 0 && budget.try_spend() {
                            spent += 1;
                        }
                    }
                    spent
                })
            })
            .collect();
        let spent: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        // 80,000 calls at p95 earn 4,000 hedges: spent, with the debt, never one more; the
        // credit left is what was not spent of them.
        assert_eq!(f64::from(spent), 4_000.0 - budget.hedges(), "spent {spent}");
        assert!(spent <= 4_000 + HEDGE_DEBT, "spent {spent}");
        // Ten times the share asked for: the budget ends in its debt, but for the shares of
        // the last calls, which earned and did not ask.
        let left = budget.hedges();
        assert!(
            left >= -f64::from(HEDGE_DEBT) && left <= 1.0 - f64::from(HEDGE_DEBT),
            "{left}"
        );
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;

    /// Two percentile hedges due at once, with the budget one hedge short of its deepest debt,
    /// while a call earns its share: exactly one hedge is granted, whatever the interleaving,
    /// and the credit is what was earned less what was spent.
    #[test]
    fn loom_two_hedges_racing_for_the_last_of_the_debt_take_it_once() {
        loom::model(|| {
            let budget = Arc::new(HedgeBudget::new());
            for _ in 0..HEDGE_DEBT - 1 {
                assert!(budget.try_spend());
            }
            let spenders: Vec<_> = (0..2)
                .map(|_| {
                    let budget = Arc::clone(&budget);
                    loom::thread::spawn(move || budget.try_spend())
                })
                .collect();
            budget.earn(95.0);
            let granted = spenders
                .into_iter()
                .map(|spender| spender.join().expect("no panic"))
                .filter(|&granted| granted)
                .count();
            // The share earned (0.05) never makes a second whole hedge.
            assert_eq!(granted, 1);
            let left = budget.hedges() + f64::from(HEDGE_DEBT);
            assert!((left - 0.05).abs() < 1e-9, "{left}");
        });
    }
}
