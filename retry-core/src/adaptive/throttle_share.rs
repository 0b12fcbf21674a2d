//! The share of responses that are throttled, and whether lowering the rate changes it.

/// The weight of one response in the smoothed share of throttled responses: about the last
/// twenty responses count.
pub const SHARE_WEIGHT: f64 = 0.05;

/// Shares within this factor of each other (below or above) are "the same share".
pub const STEADY_SHARE: f64 = 1.3;

/// A client holding its rate lowers it again once the share of throttled responses has grown
/// past this multiple of the share it held at: the throttling got worse.
pub const WORSE_SHARE: f64 = 2.0;

/// A client whose rate has fallen to this fraction of the rate at the start of an episode of
/// throttling, with the share of throttled responses still the same, is being throttled
/// whatever its rate: it stops lowering the rate until the share changes.
pub const RATE_INDEPENDENT_AFTER: f64 = 0.375;

/// The smoothed share of throttled responses, and whether lowering the rate changes it.
///
/// Under a rate limit, sending slower lowers the share of throttled responses (the fleet falls
/// under the limit long before any client has halved its rate): each throttle lowers the
/// rate, as in the AWS SDKs. When a fixed share of requests is throttled whatever the rate (a
/// hot key, a throttled tenant), the share stays what it was while the rate halves: the
/// throttling does not depend on the rate, the client holds its rate (CUBIC raises it back
/// between throttles) and settles near what the service accepts, instead of falling to the
/// minimum rate. A change of the share (beyond [`STEADY_SHARE`], or while holding, a rise past
/// [`WORSE_SHARE`]) starts a new episode.
///
/// ```
/// use retry_core::adaptive::ThrottleShare;
/// let mut share = ThrottleShare::default();
/// // A hot key: one response in three throttled, whatever the rate. The share settles at 1/3,
/// // then each throttle starts from 10/s: 7/s, 4.9/s, 3.43/s (at most 3/8 of 10/s)...
/// for response in 0..100 {
///     share.record(response % 3 == 0);
/// }
/// let mut rate = 10.0;
/// let mut reductions = 0;
/// for response in 0..300 {
///     let throttled = response % 3 == 0;
///     if throttled && share.should_lower_rate(rate) {
///         rate *= 0.7;
///         reductions += 1;
///     }
///     share.record(throttled);
/// }
/// assert!(rate >= 10.0 * 0.375 * 0.7, "held: {rate}");
/// assert!(reductions <= 4, "{reductions}");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThrottleShare {
    share: f64,
    /// The rate and the share when the current episode started.
    episode: Option<(f64, f64)>,
    /// Whether the episode was found independent of the rate.
    holding: bool,
}

impl ThrottleShare {
    /// Counts one response.
    ///
    /// ```
    /// let mut share = retry_core::adaptive::ThrottleShare::default();
    /// share.record(true);
    /// assert!((share.share() - 0.05).abs() < 1e-12);
    /// ```
    pub fn record(&mut self, throttled: bool) {
        let sample = if throttled { 1.0 } else { 0.0 };
        self.share += SHARE_WEIGHT * (sample - self.share);
    }

    /// The smoothed share of throttled responses.
    ///
    /// ```
    /// assert_eq!(retry_core::adaptive::ThrottleShare::default().share(), 0.0);
    /// ```
    pub fn share(&self) -> f64 {
        self.share
    }

    /// Whether a throttle now, while sending at `rate`, should lower the rate.
    ///
    /// ```
    /// let mut share = retry_core::adaptive::ThrottleShare::default();
    /// assert!(share.should_lower_rate(10.0)); // the first throttle starts an episode
    /// share.record(true);
    /// ```
    pub fn should_lower_rate(&mut self, rate: f64) -> bool {
        let same_share = |before: f64| {
            self.share <= before * STEADY_SHARE && self.share * STEADY_SHARE >= before
        };
        match self.episode {
            // Holding: only a clearly worse share lowers the rate again.
            Some((_, start_share)) if self.holding && self.share <= start_share * WORSE_SHARE => {
                false
            }
            Some((start_rate, start_share)) if !self.holding && same_share(start_share) => {
                if rate <= start_rate * RATE_INDEPENDENT_AFTER {
                    self.holding = true;
                }
                !self.holding
            }
            _ => {
                self.episode = Some((rate, self.share));
                self.holding = false;
                true
            }
        }
    }
}
