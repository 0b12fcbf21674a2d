//! What a scope's hedges report to the `metrics` facade (feature `metrics`): handles made with
//! the scope's hedging state, on its first hedged call, so that a scope that never hedges
//! registers none. Without the feature the meter is empty and every report compiles to nothing.

use super::refusal::HedgeRefusal;

/// The hedge metric handles of one scope (feature `metrics`).
#[cfg(feature = "metrics")]
#[derive(Debug)]
pub(crate) struct HedgeMeter {
    sent: metrics::Counter,
    won: metrics::Counter,
    cancelled: metrics::Counter,
    /// `retry.hedges.refused`, one per [`HedgeRefusal::METERED`].
    refused: [metrics::Counter; 7],
}

/// Without the feature: nothing to report to.
#[cfg(not(feature = "metrics"))]
#[derive(Debug)]
pub(crate) struct HedgeMeter;

#[cfg(feature = "metrics")]
impl HedgeMeter {
    /// The handles of the scope `scope`, registered with the recorder installed now.
    pub(crate) fn new(scope: &str) -> Self {
        use crate::metrics::names::{
            HEDGES_CANCELLED, HEDGES_REFUSED, HEDGES_SENT, HEDGES_WON, REFUSAL, SCOPE,
        };
        use metrics::counter;
        describe();
        let scope = scope.to_owned();
        Self {
            sent: counter!(HEDGES_SENT, SCOPE => scope.clone()),
            won: counter!(HEDGES_WON, SCOPE => scope.clone()),
            cancelled: counter!(HEDGES_CANCELLED, SCOPE => scope.clone()),
            refused: HedgeRefusal::METERED.map(|refusal| {
                counter!(HEDGES_REFUSED, SCOPE => scope.clone(), REFUSAL => refusal.as_str())
            }),
        }
    }

    /// A hedge was sent.
    pub(crate) fn sent(&self) {
        self.sent.increment(1);
    }

    /// A hedge's answer ended its call.
    pub(crate) fn won(&self) {
        self.won.increment(1);
    }

    /// A copy of a hedged call was dropped unanswered.
    pub(crate) fn cancelled(&self) {
        self.cancelled.increment(1);
    }

    /// A hedge was not sent, for `refusal`.
    pub(crate) fn refused(&self, refusal: HedgeRefusal) {
        if let Some(index) = refusal.metered_index() {
            self.refused[index].increment(1);
        }
    }
}

#[cfg(not(feature = "metrics"))]
impl HedgeMeter {
    /// No handles.
    pub(crate) fn new(_scope: &str) -> Self {
        HedgeMeter
    }

    /// Nothing reported.
    #[inline(always)]
    pub(crate) fn sent(&self) {}

    /// Nothing reported.
    #[inline(always)]
    pub(crate) fn won(&self) {}

    /// Nothing reported.
    #[inline(always)]
    pub(crate) fn cancelled(&self) {}

    /// Nothing reported.
    #[inline(always)]
    pub(crate) fn refused(&self, _refusal: HedgeRefusal) {}
}

/// Describes the hedge metrics to the recorder installed now (describing again is harmless).
#[cfg(feature = "metrics")]
fn describe() {
    use crate::metrics::names::{HEDGES_CANCELLED, HEDGES_REFUSED, HEDGES_SENT, HEDGES_WON};
    use metrics::{Unit, describe_counter};
    describe_counter!(
        HEDGES_SENT,
        Unit::Count,
        "Hedges sent: copies of an in-flight request, by scope"
    );
    describe_counter!(
        HEDGES_WON,
        Unit::Count,
        "Hedged calls whose answer came from a hedge, by scope"
    );
    describe_counter!(
        HEDGES_CANCELLED,
        Unit::Count,
        "Copies of hedged calls dropped unanswered (another copy answered first, or the call was cancelled), by scope"
    );
    describe_counter!(
        HEDGES_REFUSED,
        Unit::Count,
        "Hedges not sent, by scope and refusal"
    );
}
