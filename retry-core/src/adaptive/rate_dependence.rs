//! Whether throttling depends on the send rate, tested by counting throttles once the rate has
//! fallen far.

use super::cubic::BETA;

/// A client whose rate has fallen to this fraction of the rate it sent at when the throttling
/// began has cut far enough for a rate limit to stop throttling it, even a limit shared with
/// other clients that cut as it did, unless that limit was more than four times overloaded
/// (throttling more than 3/4 of what was sent): its responses are then weighed for whether the
/// share fell. (A choice of this crate. In the simulator's S3, 100 clients sharing a 500/s
/// limit under 700/s, a client's rate dips by chance below 3/8 of where it began, the first
/// hot-key rule's fraction, and a client that held there sent more than its part: 0.112 of
/// the requests throttled at 3/8, 0.103 at 0.343, 0.096 at 0.3, 0.092 at 1/4, as without a
/// hold.)
pub(crate) const RATE_INDEPENDENT_AFTER: f64 = 0.25;

/// A throttled share at most this small is weighed once the rate has fallen by one cut
/// ([`BETA`]), not to [`RATE_INDEPENDENT_AFTER`]: a rate limit throttling that little is so
/// little overloaded that one cut lets it go, and should a limit shared with other clients be
/// held through after all, holding adds little to its load until the share doubles and the
/// rate is cut again ([`WORSE_SHARE`]). Without it, CUBIC regains the rate between the rare
/// throttles of a share of 1 %, and the rate never falls far enough to be weighed. (A choice
/// of this crate.)
pub(crate) const SMALL_SHARE: f64 = 0.05;

/// The responses that must have been counted in an episode before its share is taken to be
/// at most [`SMALL_SHARE`]: at that share, two throttles would be expected among them.
const SMALL_SHARE_RESPONSES: f64 = 2.0 / SMALL_SHARE;

/// The evidence (a log-likelihood ratio) at which the test decides: `ln 19`, the bound of
/// Wald's sequential probability ratio test (Wald, "Sequential Tests of Statistical
/// Hypotheses", 1945) with a 5 % chance of error each way, `ln((1 - 0.05) / 0.05)`.
pub(crate) const EVIDENCE_BOUND: f64 = 2.944_438_979_166_440_3;

/// What a rate limit leaves of the throttled share far below the rate the throttling began
/// at, at the most: this fraction. (A rate limit throttling a share `s` of a rate `r` admits
/// `(1 - s) * r`, and throttles nothing of a rate below that; a quarter allows for a limit
/// shared with clients that did not cut as far. A choice of this crate.)
pub(crate) const RATE_LIMITED_FALL: f64 = 0.25;

/// A client holding its rate through throttling lowers it again once the throttled share has
/// risen to this multiple of the share it held at (or to half the responses it still had
/// accepted, above a third): the throttling got worse.
pub(crate) const WORSE_SHARE: f64 = 2.0;

/// The evidence at which a share held is found to have risen: `ln 1_000_000`. Page's CUSUM,
/// which sums the evidence of a rise and starts over from 0 whenever it falls below, raises a
/// false alarm at most about once in `e^bound` responses at the share held (Lorden, "Procedures
/// for Reacting to a Change in Distribution", 1971): here once in a million, a few hours at
/// 100 requests/s. A share that rises from 3 % to 30 % is found within about 75 responses.
pub(crate) const RISE_BOUND: f64 = 13.815_510_557_964_274;

/// How many standard errors an estimate is taken on the cautious side: about 97.7 % of
/// estimates fall short of it (one-sided, for a normal error). The rate a rate limit admits is
/// taken this far below its estimate (so that a limit is seldom expected to throttle less than
/// it does, which would count for a fixed share); a share held, this far above (so that it
/// seldom seems to rise by chance).
const CONFIDENCE: f64 = 2.0;

/// Seconds without a throttle that end an episode of throttling: the next throttle starts
/// afresh, and a rate held through the last one is no longer held. (A choice of this crate:
/// a minute, the window over which the default retry quota counts a scope's traffic.)
pub(crate) const QUIET: f64 = 60.0;

/// Responses and throttles counted, and the send rates of the responses admitted.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Tally {
    responses: f64,
    throttles: f64,
    /// The sum of the send rates at which the responses not throttled were sent.
    admitted_rates: f64,
    /// The sum of their squares.
    admitted_squares: f64,
}

impl Tally {
    fn add(&mut self, throttled: bool, sending: f64) {
        self.responses += 1.0;
        if throttled {
            self.throttles += 1.0;
        } else {
            self.admitted_rates += sending;
            self.admitted_squares += sending * sending;
        }
    }

    /// The throttled share, with half a throttle and half an answer more (Jeffreys' prior): a
    /// share from few responses is never 0 or 1.
    fn share(&self) -> f64 {
        (self.throttles + 0.5) / (self.responses + 1.0)
    }

    /// The throttled share, at the most: [`share`](Self::share) and [`CONFIDENCE`] standard
    /// errors more.
    fn share_at_most(&self) -> f64 {
        let share = self.share();
        share + CONFIDENCE * (share * (1.0 - share) / (self.responses + 1.0)).sqrt()
    }

    /// The requests per second a rate limit admits, if one throttled these responses, at the
    /// least: at a send rate `r`, a limit `L` admits a share `L / r`, so each response's send
    /// rate if it was admitted (0 if throttled) averages `L`; less [`CONFIDENCE`] standard
    /// errors of that average (0 for fewer than two responses).
    fn admitted_rate(&self) -> f64 {
        if self.responses < 2.0 {
            return 0.0;
        }
        let mean = self.admitted_rates / self.responses;
        let variance = (self.admitted_squares / self.responses - mean * mean).max(0.0);
        (mean - CONFIDENCE * (variance / self.responses).sqrt()).max(0.0)
    }
}

/// The log-likelihood ratio of one response under a throttled share of `share` against one of
/// `other`.
fn evidence(throttled: bool, share: f64, other: f64) -> f64 {
    if throttled {
        (share / other).ln()
    } else {
        ((1.0 - share) / (1.0 - other)).ln()
    }
}

/// A rate held through throttling of a steady share: the responses since (the share held),
/// and the evidence that the share rose (Page's CUSUM, "Continuous Inspection Schemes", 1954:
/// the log-likelihood ratio of the share risen to [`WORSE_SHARE`] times against the share held
/// at the most, summed and floored at 0, until it reaches [`RISE_BOUND`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hold {
    held: Tally,
    risen: f64,
}

impl Hold {
    /// Counts one response; whether the share has now risen.
    fn rises(&mut self, throttled: bool) -> bool {
        // The share held at the most: a share counted low would rise by chance.
        let share = self.held.share_at_most();
        let worse = (WORSE_SHARE * share).min((1.0 + share) / 2.0);
        self.risen = (self.risen + evidence(throttled, worse, share)).max(0.0);
        self.held.add(throttled, 0.0);
        self.risen >= RISE_BOUND
    }
}

/// Whether throttling depends on the send rate, and so whether a throttle should lower it.
///
/// Under a rate limit, sending slower lowers the throttled share (the limit admits as many
/// requests per second of fewer sent): each throttle should lower the rate, as in the AWS
/// SDKs. When a fixed share of requests is throttled whatever the rate (a hot key, a throttled
/// tenant), lowering the rate leaves the share as it was, and a client that goes on cutting
/// falls to the minimum rate. This rule tells the two apart by counting responses, not
/// smoothing them, so that it decides at a share of 1 % as well as 30 %:
///
/// * a throttle lowers the rate, as in the AWS SDKs, until the rate has fallen to
///   [`RATE_INDEPENDENT_AFTER`] of the rate the episode of throttling began at (by one cut,
///   [`BETA`], for a share known to be at most [`SMALL_SHARE`]). There a rate limit, even one
///   shared with other clients that cut as far, throttles less: `1 - L / r` at a rate `r`,
///   for `L` the rate it admitted of the responses counted nearer (see `admitted_rate`), at
///   least [`RATE_LIMITED_FALL`] of the episode's share;
/// * there, each response is weighed before it is counted: the episode's share against what a
///   rate limit would leave of it, as Wald's sequential test does, and a throttle does not
///   lower the rate while the test has not found that the share fell (where a rate limit would
///   throttle almost as much, nothing is weighed and a throttle lowers the rate, as in the AWS
///   SDKs). When the evidence reaches [`EVIDENCE_BOUND`], the throttling does not depend on the
///   rate: the rate is held (the limiter takes it back to where the episode began), until the
///   share rises to [`WORSE_SHARE`] times the share held ([`RISE_BOUND`]) or the throttling
///   ends ([`QUIET`]). When it reaches `-EVIDENCE_BOUND`, the share fell: throttles lower the
///   rate again, until the evidence is back to even (a fixed share that follows a rate limit
///   is told within a few throttles);
/// * a share that rose through a hold is not held again until the throttling ends: a fixed
///   share keeps its level, and one that stays put while the rate is down and rises when it is
///   taken back is demand that comes and goes (the client's own, or other clients' on a
///   shared limit), which every throttle then lowers the rate for, as in the AWS SDKs. (In the
///   simulator's shape sweep, processes in on/off spells held through 40-60 % of their
///   requests throttled, `docs/sim/adaptive.md`.)
///
/// The limiter feeds it every response once it is on ([`record`](Self::record)) and tells it
/// of each cut ([`cut`](Self::cut)).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct RateDependence {
    /// When the rate was last cut (seconds), and the rate the episode's first cut was from.
    last_cut: Option<(f64, f64)>,
    /// The episode's responses.
    seen: Tally,
    /// Those not weighed: what a rate limit, were it one, admitted of them is the rate it
    /// admits (they were sent where it would throttle as much as the episode's share, or more:
    /// above what it admits).
    unweighed: Tally,
    /// The share was found to fall with the rate: throttles lower it again, however far it
    /// fell, until the evidence is back to even.
    falls: bool,
    /// The log-likelihood ratio of a fixed share against a rate limit, over the responses
    /// weighed.
    evidence: f64,
    /// The rate is held through a steady share.
    hold: Option<Hold>,
    /// When the latest throttle came (its attempt's send time, seconds).
    last_throttle_at: f64,
    /// A hold of this throttling saw the share rise ([`WORSE_SHARE`]): a steady share keeps its
    /// level, so this one follows something else (demand that comes and goes, the client's or
    /// others' on a shared limit). Nothing is weighed, and nothing held, until the throttling
    /// ends ([`QUIET`]).
    rose: bool,
}

impl RateDependence {
    /// Counts a response to an attempt sent at `sent_at` (seconds, on the limiter's clock),
    /// while the client sends `sending` requests per second; returns whether it is a throttle
    /// that should lower the rate. The caller then lowers it and calls [`cut`](Self::cut).
    ///
    /// A throttle to an attempt sent before the last cut reports the rate already lowered,
    /// and lowers nothing (one reduction per congestion event, as TCP's once per round trip,
    /// RFC 5681 §3.2).
    pub fn record(&mut self, throttled: bool, sent_at: f64, sending: f64) -> bool {
        if throttled {
            if sent_at - self.last_throttle_at > QUIET && self.last_cut.is_some() {
                // The throttling ended: this throttle starts a new episode.
                *self = RateDependence::default();
            }
            self.last_throttle_at = self.last_throttle_at.max(sent_at);
        }
        if let Some(hold) = self.hold.as_mut() {
            if !hold.rises(throttled) {
                return false;
            }
            // Worse: a new episode, started by this throttle's cut, that holds nothing.
            *self = RateDependence {
                last_throttle_at: self.last_throttle_at,
                rose: true,
                ..RateDependence::default()
            };
            return true;
        }
        // Before an episode's first cut nothing is counted: the throttle that starts it is
        // where it starts, not a sample of its share.
        let Some((last_cut, start_rate)) = self.last_cut else {
            return throttled;
        };
        let far = sending <= self.far_below() * start_rate && sending > 0.0;
        // Far down, where a rate limit would throttle clearly less, a throttle lowers the rate
        // again only once the share is found to fall.
        let weighed = far && !self.rose && self.weigh(throttled, sending);
        if !weighed {
            self.unweighed.add(throttled, sending);
        }
        self.seen.add(throttled, sending);
        let measuring = weighed && !self.falls;
        throttled && sent_at >= last_cut && !measuring && self.hold.is_none()
    }

    /// The rate was lowered at `now` (seconds) from `rate` (requests per second).
    pub fn cut(&mut self, now: f64, rate: f64) {
        let start_rate = self.last_cut.map_or(rate, |(_, start_rate)| start_rate);
        self.last_cut = Some((now, start_rate));
    }

    /// How far below the rate the episode began at the rate must have fallen for its
    /// responses to be weighed: [`RATE_INDEPENDENT_AFTER`], or one cut ([`BETA`]) once the
    /// share is known to be at most [`SMALL_SHARE`].
    fn far_below(&self) -> f64 {
        if self.seen.responses >= SMALL_SHARE_RESPONSES && self.seen.share() <= SMALL_SHARE {
            BETA
        } else {
            RATE_INDEPENDENT_AFTER
        }
    }

    /// The rate the episode's first cut was from (`None` before it).
    pub fn start_rate(&self) -> Option<f64> {
        self.last_cut.map(|(_, start_rate)| start_rate)
    }

    /// Whether the rate is held: the throttling was found not to depend on it.
    pub fn is_holding(&self) -> bool {
        self.hold.is_some()
    }

    /// Weighs one response, sent at `sending` requests per second, far below the rate the
    /// episode began at, before it is counted: the episode's share `s` against what a rate
    /// limit would leave of it, `1 - L / sending` for a limit admitting `L` requests per second
    /// ([`Tally::admitted_rate`] of the responses not weighed), between [`RATE_LIMITED_FALL`]
    /// times `s` and `s`. Returns whether that is clearly less than `s`, at most halfway
    /// between the two; otherwise the response tells the two apart by little, and is not
    /// weighed (nor does it hold a throttle back: the rate is lowered as in the AWS SDKs).
    fn weigh(&mut self, throttled: bool, sending: f64) -> bool {
        let share = self.seen.share();
        let limited = (1.0 - self.unweighed.admitted_rate() / sending)
            .clamp(RATE_LIMITED_FALL * share, share);
        if limited > (1.0 + RATE_LIMITED_FALL) / 2.0 * share {
            return false;
        }
        self.evidence = (self.evidence + evidence(throttled, share, limited))
            .clamp(-EVIDENCE_BOUND, EVIDENCE_BOUND);
        if self.evidence <= -EVIDENCE_BOUND {
            self.falls = true;
        } else if self.evidence >= 0.0 {
            self.falls = false;
        }
        if self.evidence >= EVIDENCE_BOUND {
            let mut held = self.seen;
            held.add(throttled, sending);
            self.hold = Some(Hold { held, risen: 0.0 });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive::cubic::Cubic;

    /// What a client did: the cuts it made (after it first held the rate, too) and its rate at
    /// the end.
    #[derive(Debug)]
    struct Run {
        cuts: u32,
        cuts_once_held: u32,
        rate: f64,
    }

    /// A client that wants to send `demand` requests per second and sends at the rate CUBIC
    /// allows (lowered when the rule says so, raised by every other response), for `seconds`;
    /// each response throttled when `throttles` says so, given the rate.
    fn drive(
        rule: &mut RateDependence,
        demand: f64,
        seconds: f64,
        mut throttles: impl FnMut(f64) -> bool,
    ) -> Run {
        let mut cubic = Cubic::new(0.0);
        let (mut now, mut rate) = (0.0, demand);
        let mut run = Run {
            cuts: 0,
            cuts_once_held: 0,
            rate,
        };
        let mut held = false;
        while now < seconds {
            if rule.record(throttles(rate), now, rate) {
                rule.cut(now, rate);
                rate = cubic.on_throttle(rate, now);
                run.cuts += 1;
                run.cuts_once_held += u32::from(held);
            } else if run.cuts > 0 {
                rate = cubic.on_success(now).min(demand);
            }
            held |= rule.is_holding();
            now += 1.0 / rate;
        }
        run.rate = rate;
        run
    }

    /// A uniform number in [0, 1) from a linear congruential generator (Knuth's MMIX
    /// constants), seeded.
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Throttles `share` of the requests at random, whatever the rate.
    fn fixed_share(share: f64, seed: u64) -> impl FnMut(f64) -> bool {
        let mut uniform = uniform(seed);
        move |_| uniform() < share
    }

    /// Throttles at random what a rate limit of `limit` throttles of a rate: `1 - limit / rate`.
    fn limit(limit: f64, seed: u64) -> impl FnMut(f64) -> bool {
        let mut uniform = uniform(seed);
        move |rate| uniform() < 1.0 - limit / rate
    }

    /// The most cuts before a fixed share is held, in two minutes at 100 requests/s: at 1 %,
    /// a throttle a second, CUBIC regains most of each cut before the next, and a weighed
    /// throttle comes only every few cuts (the old rule never held: 60 to 80 cuts, and as many
    /// in every minute that followed).
    const MOST_CUTS: u32 = 40;

    #[test]
    fn a_fixed_share_is_held_within_a_bounded_number_of_cuts() {
        let mut misses = Vec::new();
        for share in [0.01, 0.03, 0.1, 0.3] {
            for seed in 0..20 {
                let mut rule = RateDependence::default();
                let run = drive(&mut rule, 100.0, 120.0, fixed_share(share, seed));
                if !rule.is_holding()
                    || run.cuts > MOST_CUTS
                    || run.cuts_once_held > 0
                    || run.rate < 100.0
                {
                    misses.push(format!("share {share}, seed {seed}: {run:?}"));
                }
            }
        }
        assert!(misses.is_empty(), "{}", misses.join("\n"));
    }

    #[test]
    fn a_rate_limit_is_never_held() {
        let mut misses = Vec::new();
        for (demand, limit_at) in [(60.0, 50.0), (100.0, 50.0), (100.0, 90.0), (1000.0, 50.0)] {
            for seed in 0..20 {
                let mut rule = RateDependence::default();
                let run = drive(&mut rule, demand, 120.0, limit(limit_at, seed));
                if rule.is_holding() || run.cuts < 10 || run.rate > 1.2 * limit_at {
                    misses.push(format!(
                        "{demand}/s against {limit_at}/s, seed {seed}: {run:?}"
                    ));
                }
            }
        }
        assert!(misses.is_empty(), "{}", misses.join("\n"));
    }

    #[test]
    fn a_share_that_rises_while_held_cuts_and_starts_over() {
        let mut rule = RateDependence::default();
        drive(&mut rule, 100.0, 60.0, fixed_share(0.05, 1));
        assert!(rule.is_holding());
        let run = drive(&mut rule, 100.0, 5.0, limit(50.0, 1));
        assert!(run.cuts >= 1);
        assert!(!rule.is_holding());
    }

    #[test]
    fn a_share_that_rose_through_a_hold_is_not_held_again_until_the_throttling_ends() {
        // Held at 5 %, then 30 % of the requests throttled: the share rose through the hold.
        // A steady share holds its level; one that rises and falls with the rate held is what
        // demand that comes and goes (the client's, or others' on a shared limit) looks like.
        let mut rule = RateDependence::default();
        drive(&mut rule, 100.0, 60.0, fixed_share(0.05, 3));
        assert!(rule.is_holding());
        let run = drive(&mut rule, 100.0, 120.0, fixed_share(0.3, 3));
        assert!(
            !rule.is_holding() && run.rate < 10.0,
            "held again after the share rose: {run:?}"
        );
        // A quiet minute ends the throttling: the next episode may hold again.
        assert!(rule.record(true, 1_000.0, 100.0));
        let run = drive(&mut rule, 100.0, 60.0, fixed_share(0.05, 4));
        assert!(rule.is_holding(), "a new throttling is weighed: {run:?}");
    }

    #[test]
    fn a_hold_ends_with_the_throttling() {
        let mut rule = RateDependence::default();
        drive(&mut rule, 100.0, 60.0, fixed_share(0.1, 2));
        assert!(rule.is_holding());
        // A throttle after a quiet minute starts a new episode, which it cuts.
        assert!(rule.record(true, 200.0, 100.0));
        assert!(!rule.is_holding());
    }

    #[test]
    fn throttles_in_flight_before_a_cut_do_not_cut() {
        let mut rule = RateDependence::default();
        assert!(rule.record(true, 0.0, 10.0));
        rule.cut(0.1, 10.0);
        assert!(!rule.record(true, 0.05, 10.0));
        assert!(rule.record(true, 0.1, 7.0));
    }

    #[test]
    fn a_rate_limit_admits_the_same_rate_whatever_is_sent() {
        // 100/s sent, every other request admitted: the admitted send rates average 50/s,
        // less two standard errors, sqrt(50 * 50 / 1000) each.
        let mut tally = Tally::default();
        for n in 0..1000u32 {
            tally.add(n % 2 == 0, 100.0);
        }
        let expected = 50.0 - 2.0 * (2500.0f64 / 1000.0).sqrt();
        assert!((tally.admitted_rate() - expected).abs() < 1e-9);
        assert!((tally.share() - 500.5 / 1001.0).abs() < 1e-12);
    }
}

/// The examples of this file's items, which are internal to the crate.
#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn rate_dependence() {
        // A hot key: one request in ten throttled whatever the rate, for a client that sends what
        // its limiter allows (CUBIC's recovery and the rate held taken back left out).
        let mut rule = RateDependence::default();
        let (mut rate, mut now, mut cuts) = (100.0, 0.0, 0);
        for i in 0..3_000u32 {
            if rule.record(i % 10 == 0, now, rate) {
                rule.cut(now, rate);
                rate *= BETA;
                cuts += 1;
            }
            now += 1.0 / rate;
        }
        assert!(rule.is_holding());
        assert_eq!(cuts, 4); // 100/s to 24/s, below a quarter of 100/s, then held
    }

    #[test]
    fn record() {
        let mut rule = RateDependence::default();
        assert!(rule.record(true, 0.0, 10.0)); // the first throttle cuts
        rule.cut(0.1, 10.0);
        assert!(!rule.record(true, 0.05, 10.0)); // in flight before the cut
        assert!(rule.record(true, 0.2, 7.0));
    }

    #[test]
    fn cut() {
        let mut rule = RateDependence::default();
        rule.cut(3.0, 10.0);
        assert!(!rule.record(true, 2.9, 10.0));
    }

    #[test]
    fn start_rate() {
        let mut rule = RateDependence::default();
        rule.cut(1.0, 40.0);
        rule.cut(2.0, 28.0);
        assert_eq!(rule.start_rate(), Some(40.0));
    }
}
