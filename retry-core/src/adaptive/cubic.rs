//! CUBIC congestion control applied to a client's send rate (RFC 8312, as the AWS SDKs use it).

/// Multiplicative decrease on throttling: the new rate is `beta` times the rate in use.
/// Source: the AWS SDKs' adaptive retry (botocore `retries/adaptive.py`, `BETA = 0.7`).
pub const BETA: f64 = 0.7;

/// CUBIC's scaling constant `C`: how fast the rate grows back after a throttle.
/// Source: the AWS SDKs' adaptive retry (`SCALE_CONSTANT = 0.4`).
pub const SCALE_CONSTANT: f64 = 0.4;

/// The state CUBIC keeps between throttles: the rate at the last throttle and when it happened.
///
/// ```
/// use retry_core::adaptive::Cubic;
///
/// let mut cubic = Cubic::new(0.0);
/// // Throttled at t = 10 s while sending 10 requests/s: the rate drops to 7.
/// assert!((cubic.on_throttle(10.0, 10.0) - 7.0).abs() < 1e-9);
/// // K = cbrt(10 * 0.3 / 0.4) = cbrt(7.5) s after the throttle, the rate is back at 10.
/// let k = 7.5f64.cbrt();
/// assert!((cubic.on_success(10.0 + k) - 10.0).abs() < 1e-9);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cubic {
    last_max_rate: f64,
    last_throttle_time: f64,
    time_window: f64,
}

impl Cubic {
    /// CUBIC state before any throttle, started at `now` (seconds).
    ///
    /// ```
    /// let cubic = retry_core::adaptive::Cubic::new(0.0);
    /// assert_eq!(cubic.last_max_rate(), 0.0);
    /// ```
    pub fn new(now: f64) -> Self {
        Self {
            last_max_rate: 0.0,
            last_throttle_time: now,
            time_window: 0.0,
        }
    }

    /// A throttle at `now` while sending at `rate_to_use`: remembers it as the last maximum
    /// and returns the reduced rate `rate_to_use * BETA`.
    ///
    /// ```
    /// let mut cubic = retry_core::adaptive::Cubic::new(0.0);
    /// assert_eq!(cubic.on_throttle(4.0, 1.0), 4.0 * 0.7);
    /// assert_eq!(cubic.last_max_rate(), 4.0);
    /// ```
    pub fn on_throttle(&mut self, rate_to_use: f64, now: f64) -> f64 {
        self.last_max_rate = rate_to_use;
        self.time_window = (self.last_max_rate * (1.0 - BETA) / SCALE_CONSTANT).cbrt();
        self.last_throttle_time = now;
        rate_to_use * BETA
    }

    /// The rate CUBIC allows at `now` after a success: `C * (t - t_last - K)^3 + last_max`.
    ///
    /// ```
    /// let mut cubic = retry_core::adaptive::Cubic::new(0.0);
    /// cubic.on_throttle(10.0, 0.0);
    /// // At the throttle instant the curve gives back beta * last_max.
    /// assert!((cubic.on_success(0.0) - 7.0).abs() < 1e-9);
    /// ```
    pub fn on_success(&self, now: f64) -> f64 {
        // A clock that stepped back reads as no time since the throttle.
        let dt = (now - self.last_throttle_time).max(0.0) - self.time_window;
        SCALE_CONSTANT * dt.powi(3) + self.last_max_rate
    }

    /// When the last throttle happened (seconds), or the start time before any.
    ///
    /// ```
    /// let mut cubic = retry_core::adaptive::Cubic::new(0.0);
    /// cubic.on_throttle(4.0, 2.5);
    /// assert_eq!(cubic.last_throttle_time(), 2.5);
    /// ```
    pub fn last_throttle_time(&self) -> f64 {
        self.last_throttle_time
    }

    /// The rate at the last throttle.
    ///
    /// ```
    /// assert_eq!(retry_core::adaptive::Cubic::new(0.0).last_max_rate(), 0.0);
    /// ```
    pub fn last_max_rate(&self) -> f64 {
        self.last_max_rate
    }
}
