//! CUBIC congestion control applied to a client's send rate (RFC 8312, as the AWS SDKs use it).

/// Multiplicative decrease on throttling: the new rate is `beta` times the rate in use.
/// Source: the AWS SDKs' adaptive retry (botocore `retries/adaptive.py`, `BETA = 0.7`).
pub(crate) const BETA: f64 = 0.7;

/// CUBIC's scaling constant `C`: how fast the rate grows back after a throttle.
/// Source: the AWS SDKs' adaptive retry (`SCALE_CONSTANT = 0.4`).
pub(crate) const SCALE_CONSTANT: f64 = 0.4;

/// The rate up to which the curve is the AWS SDKs' own, in requests per second. Above it the
/// curve is that of this rate scaled by `last_max / REFERENCE_RATE`: the same shape in time at
/// every rate. With the AWS constants alone, the time to regain the last maximum grows as its
/// cube root and the growth beyond it does not scale at all: at 400 requests/s the rate takes
/// 7 s to regain the last maximum and 17 s to regain 90 % of a limit raised to 1000/s; scaled,
/// 2 s and under 5 s, as at 10 requests/s. (A choice of this crate; TCP CUBIC's `C` is
/// likewise chosen for a scale, RFC 8312 §5.1.)
pub(crate) const REFERENCE_RATE: f64 = 10.0;

/// The state CUBIC keeps between throttles: the rate at the last throttle and when it happened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cubic {
    last_max_rate: f64,
    last_throttle_time: f64,
    time_window: f64,
}

impl Cubic {
    /// CUBIC state before any throttle, started at `now` (seconds).
    pub fn new(now: f64) -> Self {
        Self {
            last_max_rate: 0.0,
            last_throttle_time: now,
            time_window: 0.0,
        }
    }

    /// A throttle at `now` while sending at `rate_to_use`: remembers it as the last maximum
    /// and returns the reduced rate `rate_to_use * BETA`.
    pub fn on_throttle(&mut self, rate_to_use: f64, now: f64) -> f64 {
        self.last_max_rate = rate_to_use;
        self.time_window = (self.last_max_rate * (1.0 - BETA) / SCALE_CONSTANT).cbrt();
        self.last_throttle_time = now;
        rate_to_use * BETA
    }

    /// The rate CUBIC allows at `now` after a success: `C * (t - t_last - K)^3 + last_max`, or
    /// above [`REFERENCE_RATE`] the same curve scaled to `last_max`, whichever is higher.
    pub fn on_success(&self, now: f64) -> f64 {
        // A clock that stepped back reads as no time since the throttle.
        let elapsed = (now - self.last_throttle_time).max(0.0);
        let absolute = SCALE_CONSTANT * (elapsed - self.time_window).powi(3) + self.last_max_rate;
        // The reference rate's curve, scaled: K is the reference's, the growth proportional.
        let reference_window = (REFERENCE_RATE * (1.0 - BETA) / SCALE_CONSTANT).cbrt();
        let scaled = self.last_max_rate
            * (1.0 + SCALE_CONSTANT / REFERENCE_RATE * (elapsed - reference_window).powi(3));
        absolute.max(scaled)
    }

    /// Resumes the curve at `rate` at `now` (seconds), as if `rate` had been the last maximum
    /// and the curve had just regained it: from here it grows as after a throttle's window
    /// `K`. For a rate held after throttles that turned out not to depend on it: the cuts
    /// bought nothing, and the rate goes back to where they began.
    pub fn resume_at(&mut self, rate: f64, now: f64) {
        self.on_throttle(rate, now);
        self.last_throttle_time = now - self.time_window;
    }

    /// When the last throttle happened (seconds), or the start time before any.
    pub fn last_throttle_time(&self) -> f64 {
        self.last_throttle_time
    }

    /// The rate at the last throttle (read by the tests).
    #[cfg(test)]
    pub fn last_max_rate(&self) -> f64 {
        self.last_max_rate
    }
}

/// The examples of this file's items, which are internal to the crate.
#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn cubic() {
        let mut cubic = Cubic::new(0.0);
        // Throttled at t = 10 s while sending 10 requests/s: the rate drops to 7.
        assert!((cubic.on_throttle(10.0, 10.0) - 7.0).abs() < 1e-9);
        // K = cbrt(10 * 0.3 / 0.4) = cbrt(7.5) s after the throttle, the rate is back at 10.
        let k = 7.5f64.cbrt();
        assert!((cubic.on_success(10.0 + k) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn new() {
        let cubic = Cubic::new(0.0);
        assert_eq!(cubic.last_max_rate(), 0.0);
    }

    #[test]
    fn on_throttle() {
        let mut cubic = Cubic::new(0.0);
        assert_eq!(cubic.on_throttle(4.0, 1.0), 4.0 * 0.7);
        assert_eq!(cubic.last_max_rate(), 4.0);
    }

    #[test]
    fn on_success() {
        let mut cubic = Cubic::new(0.0);
        cubic.on_throttle(10.0, 0.0);
        // At the throttle instant the curve gives back beta * last_max.
        assert!((cubic.on_success(0.0) - 7.0).abs() < 1e-9);
    }

    #[test]
    fn resume_at() {
        let mut cubic = Cubic::new(0.0);
        cubic.on_throttle(10.0, 0.0); // 7/s
        cubic.resume_at(10.0, 1.0);
        assert!((cubic.on_success(1.0) - 10.0).abs() < 1e-9);
        assert!(cubic.on_success(2.0) > 10.0);
    }
}
