//! Reconnection to the store: a jittered exponential backoff capped at one sync interval, and
//! the store's URL as errors show it (without its password).

use std::time::Duration;

use tokio::time::Instant;

/// When the next connection attempt is due after failures: the delay doubles from `base` with
/// each failure up to `most`, and each delay is drawn uniformly from its upper half ("equal
/// jitter", AWS Architecture Blog, "Exponential Backoff And Jitter"), so that a fleet whose
/// store restarted does not reconnect all at once, and no process waits less than half.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    base: Duration,
    most: Duration,
    failures: u32,
    due: Option<Instant>,
}

impl Backoff {
    /// No failure yet: an attempt is due at once.
    pub(crate) fn new(base: Duration, most: Duration) -> Self {
        Self {
            base,
            most,
            failures: 0,
            due: None,
        }
    }

    /// How long until the next attempt is due, `None` if it is due now.
    pub(crate) fn wait_left(&self, now: Instant) -> Option<Duration> {
        self.due
            .and_then(|due| due.checked_duration_since(now))
            .filter(|left| !left.is_zero())
    }

    /// An attempt failed at `now`: the next is due after the next delay.
    pub(crate) fn failed(&mut self, now: Instant) {
        let delay = self.delay(self.failures, fastrand::f64());
        self.failures = self.failures.saturating_add(1);
        self.due = Some(now + delay);
    }

    /// An attempt succeeded: the next failure starts from `base` again.
    pub(crate) fn succeeded(&mut self) {
        self.failures = 0;
        self.due = None;
    }

    /// The delay after `failures` earlier failures, `unit` in `[0, 1)` drawing the jitter:
    /// `d / 2 + unit × d / 2` with `d = min(most, base × 2^failures)`.
    pub(crate) fn delay(&self, failures: u32, unit: f64) -> Duration {
        let doubled = self
            .base
            .saturating_mul(2_u32.saturating_pow(failures.min(31)));
        let full = doubled.min(self.most);
        let half = full / 2;
        (half + half.mul_f64(unit.clamp(0.0, 1.0))).min(self.most)
    }
}

/// `url` with the password of its user information replaced by `***` (and nothing else
/// changed), for messages and logs.
pub(crate) fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|at| at + 3) else {
        return url.to_owned();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_attempt_is_due_again_after_the_jittered_delay() {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        let start = Instant::now();
        assert_eq!(
            backoff.wait_left(start),
            None,
            "due at once before any failure"
        );
        backoff.failed(start);
        let left = backoff.wait_left(start).expect("a wait after a failure");
        assert!((Duration::from_millis(50)..=Duration::from_millis(100)).contains(&left));
        tokio::time::advance(left).await;
        assert_eq!(backoff.wait_left(Instant::now()), None);
        for _ in 0..10 {
            backoff.failed(Instant::now());
        }
        let capped = backoff.wait_left(Instant::now()).expect("a wait");
        assert!(capped <= Duration::from_secs(1), "{capped:?}");
        backoff.succeeded();
        assert_eq!(backoff.wait_left(Instant::now()), None);
    }

    #[test]
    fn the_delay_doubles_with_jitter_up_to_one_interval() {
        let backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));
        assert_eq!(backoff.delay(0, 0.0), Duration::from_millis(25));
        assert_eq!(backoff.delay(2, 0.5), Duration::from_millis(150));
        // Capped at one sync interval, however many failures.
        assert_eq!(backoff.delay(40, 0.5), Duration::from_millis(750));
    }

    #[test]
    fn only_the_password_is_redacted() {
        assert_eq!(
            redact_url("redis://app:s3cret@db:6379/0"),
            "redis://app:***@db:6379/0"
        );
        assert_eq!(redact_url("redis://:s3cret@db/"), "redis://:***@db/");
        assert_eq!(redact_url("redis://db:6379/"), "redis://db:6379/");
    }

    #[test]
    fn a_password_never_shows() {
        let url = "rediss://user:p@ss:word@host:6380/?x=1";
        let shown = redact_url(url);
        assert!(!shown.contains("ss:word"), "{shown}");
        assert_eq!(shown, "rediss://user:***@host:6380/?x=1");
    }
}
