//! Lending against the calls in flight: a traffic-sized scope whose retried calls come back
//! lets a retry borrow what its calls in flight hold.
//!
//! A retry's cost is taken from the quota when the retry is granted, and a traffic-sized quota
//! gives every retry's cost back when the call succeeds. So the tokens that calls in flight
//! hold are not spent yet: they come back if those calls succeed. Counted as spent, they made
//! the quota refuse a program whose every call succeeded: 20 workers whose calls each hold two
//! retries through their backoffs, and one in eight a third through a server's `Retry-After`
//! (after two 503s: a wait of up to 4 s), hold about 600 tokens at any time, more than a young
//! scope's 500; the first refusal left its worker less than a retry for every next key, and
//! the quota refused 125 to 175 of 190 keys (the newcomer's program of the repository's
//! `tests/tests/newcomer.rs`; `docs/sim/defaults.md` has the figures).
//!
//! [`Lending`] counts what calls in flight hold and whether they come back: a retry may take
//! the quota below zero by up to that (a debt, which what comes back repays first), so the
//! quota drains only through calls that fail, however many calls hold retries at once. It is
//! lent only on evidence:
//! * a retried call succeeded since the last [`FAILURES_THAT_END_LENDING`] in a row failed: in
//!   an outage retried calls fail, and two in a row end the lending until one succeeds again;
//! * or, before any retried call has ended, the scope is younger than its window (which,
//!   having no evidence, is generous, as its 500 tokens are). A scope older than that lends
//!   only once a retried call came back, so an outage that finds a scope whose calls never
//!   needed a retry is met by the quota alone (the simulator's S1 and S4 are unchanged).
//!
//! The debt is at most `quota_capacity`. Lending in the first moments of an outage (before
//! two retried calls have failed) grants the retries of the calls then in flight, once.
//!
//! Refusals and rate-limited retries are no evidence either way: they are the client's own
//! limits, not the server's answer; nor is a cancelled call.

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// Retried calls failing in a row that end the lending until a retried call succeeds: two, so
/// that one unlucky call among calls that keep succeeding does not stop it, while an outage
/// (where every retried call fails) stops it at its second failed call.
pub(crate) const FAILURES_THAT_END_LENDING: u32 = 2;

/// [`Lending::trust`] before any retried call has ended.
const NO_EVIDENCE: u32 = u32::MAX;

/// How a call that paid for retries ended, as evidence of whether retried calls come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetriedCall {
    /// It succeeded: its retries came back.
    Succeeded,
    /// The server's answers made it fail: its retries ran out (attempts, deadline, a
    /// `Retry-After` too long) or an answer was not retryable.
    Failed,
    /// It ended for a reason of the client's: the quota or the rate limiter refused its next
    /// retry, it was cancelled, or it gave up a retry it was granted.
    Undecided,
}

/// What a traffic-sized scope's calls in flight hold, and whether it is lent.
#[derive(Debug)]
pub(crate) struct Lending {
    /// Tokens the retries of calls still running paid.
    held: AtomicU64,
    /// [`NO_EVIDENCE`] before any retried call ended; then how many more retried calls may
    /// fail in a row before the lending stops (0: stopped until one succeeds).
    trust: AtomicU32,
}

impl Lending {
    /// Nothing held, no evidence.
    pub(crate) fn new() -> Self {
        Self {
            held: AtomicU64::new(0),
            trust: AtomicU32::new(NO_EVIDENCE),
        }
    }

    /// A retry paid `cost`: its call holds that much more.
    pub(crate) fn hold(&self, cost: u32) {
        self.held.fetch_add(u64::from(cost), Ordering::Relaxed);
    }

    /// A call that paid `paid` for its retries ended as `call`: it holds nothing any more
    /// (what it paid came back with a success, or stays spent), and its end is evidence.
    pub(crate) fn end(&self, paid: u32, call: RetriedCall) {
        let paid = u64::from(paid);
        // Never below zero, whatever the order of racing calls' updates.
        let _ = self
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                Some(held.saturating_sub(paid))
            });
        match call {
            // A read-modify-write, ordered with a racing failure's decrement: with a load and a
            // store instead, loom found an interleaving that left the lending off.
            RetriedCall::Succeeded => {
                self.trust
                    .swap(FAILURES_THAT_END_LENDING, Ordering::Relaxed);
            }
            RetriedCall::Failed => {
                let _ = self
                    .trust
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |trust| match trust {
                        0 => None,
                        NO_EVIDENCE => Some(0),
                        trust => Some(trust - 1),
                    });
            }
            RetriedCall::Undecided => {}
        }
    }

    /// What a retry may borrow beyond an empty quota: what calls in flight hold, at most
    /// `most` (the quota's capacity), while retried calls come back; before any retried call
    /// ended, only for a `young` scope.
    pub(crate) fn credit(&self, young: bool, most: u32) -> u32 {
        let lends = match self.trust.load(Ordering::Relaxed) {
            NO_EVIDENCE => young,
            trust => trust > 0,
        };
        if !lends {
            return 0;
        }
        let held = self.held.load(Ordering::Relaxed);
        u32::try_from(held).unwrap_or(u32::MAX).min(most)
    }

    /// What calls in flight hold now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.held.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_young_scope_lends_what_calls_in_flight_hold_before_any_evidence() {
        let lending = Lending::new();
        lending.hold(14);
        lending.hold(28);
        assert_eq!(lending.credit(true, 5_000), 42);
        // At most the traffic's cap.
        assert_eq!(lending.credit(true, 30), 30);
        // An older scope without evidence lends nothing.
        assert_eq!(lending.credit(false, 5_000), 0);
        // A call ends: it holds nothing any more.
        lending.end(28, RetriedCall::Undecided);
        assert_eq!(lending.held(), 14);
        assert_eq!(lending.credit(false, 5_000), 0, "no evidence yet");
    }

    #[test]
    fn two_failed_retried_calls_in_a_row_end_the_lending_until_one_succeeds() {
        let lending = Lending::new();
        lending.hold(100);
        lending.end(0, RetriedCall::Succeeded);
        assert_eq!(
            lending.credit(false, 5_000),
            100,
            "a retried call came back"
        );
        lending.end(0, RetriedCall::Failed);
        assert_eq!(
            lending.credit(false, 5_000),
            100,
            "one failure among successes"
        );
        lending.end(0, RetriedCall::Succeeded);
        lending.end(0, RetriedCall::Failed);
        lending.end(0, RetriedCall::Undecided);
        assert_eq!(
            lending.credit(false, 5_000),
            100,
            "a refusal is no evidence"
        );
        lending.end(0, RetriedCall::Failed);
        assert_eq!(
            lending.credit(true, 5_000),
            0,
            "two in a row: even a young scope"
        );
        lending.end(0, RetriedCall::Failed);
        assert_eq!(lending.credit(true, 5_000), 0);
        lending.end(0, RetriedCall::Succeeded);
        assert_eq!(lending.credit(false, 5_000), 100);
    }

    #[test]
    fn a_first_retried_call_that_fails_ends_a_young_scopes_lending() {
        let lending = Lending::new();
        lending.hold(56);
        lending.end(28, RetriedCall::Failed);
        assert_eq!(lending.credit(true, 5_000), 0);
    }

    #[test]
    fn what_is_held_never_goes_below_zero() {
        let lending = Lending::new();
        lending.hold(14);
        lending.end(28, RetriedCall::Succeeded);
        assert_eq!(lending.held(), 0);
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;

    /// Two calls hold and end at once, one succeeding and one failing, from a scope whose
    /// last retried call failed: whatever the order, nothing is held after, and one more
    /// failure in a row is allowed (the success came before or after the failure; either way
    /// lending goes on).
    #[test]
    fn loom_racing_calls_leave_nothing_held_and_the_lending_on() {
        loom::model(|| {
            let lending = Arc::new(Lending::new());
            lending.end(0, RetriedCall::Succeeded);
            lending.end(0, RetriedCall::Failed);
            let calls: Vec<_> = [RetriedCall::Succeeded, RetriedCall::Failed]
                .into_iter()
                .map(|call| {
                    let lending = Arc::clone(&lending);
                    loom::thread::spawn(move || {
                        lending.hold(14);
                        lending.end(14, call);
                    })
                })
                .collect();
            for call in calls {
                call.join().expect("no panic");
            }
            assert_eq!(lending.held(), 0);
            let trust = lending.trust.load(Ordering::Relaxed);
            assert!(trust == 1 || trust == 2, "{trust}");
        });
    }
}
