//! What a server's bucket lets any client have: the most of its limit a Poisson stream of
//! requests gets admitted at a given 429 share.
//!
//! The server admits a request when its bucket (`burst` requests, refilled at the limit) holds
//! a token. Requests that arrive as a Poisson stream, as those of many independent processes
//! do in sum, meet an empty bucket whenever a few come close together, at any rate: into a
//! bucket of 1, a stream at 2 % of the limit has about 2 % of its requests throttled; into a
//! bucket of 2, at 25 % of the limit about 3 %. The shape sweep's goals ask for both 0.9 of
//! `min(offered, limit)` admitted and a 429 share of at most 2 %: where the bucket is small,
//! no client whose requests arrive as a Poisson stream can have both, and a shape says there
//! only which of the two a client gave up. Clients that pace their requests together (one
//! process, or a central scheduler) are not bound by this; fleet mode's processes pace each
//! their own, which in sum is close to Poisson when they are many.
//!
//! Computed by running such a stream through the bucket: [`ARRIVALS`] requests drawn once
//! from a fixed seed, their gaps scaled to each rate tried (so a higher rate meets the same
//! draws closer together), and a bisection on the rate.

use std::collections::HashMap;

use crate::rng::Rng;

/// Requests per rate tried: 2 % of them is 400 throttles, counted within about 5 %.
pub const ARRIVALS: usize = 20_000;

/// Bisection steps on the rate: the rate found within `2^-30` of the limit.
const STEPS: u32 = 30;

/// The seed the arrivals are drawn from.
const SEED: u64 = 25;

/// The share of the limit admitted and the share of the requests throttled when a Poisson
/// stream at `offered` times the limit meets a bucket of `burst` requests, full at the start.
/// `gaps` are the stream's gaps at the limit (each a standard exponential: the limit is one
/// request per unit of time).
fn admitted_and_throttled(gaps: &[f64], burst: f64, offered: f64) -> (f64, f64) {
    let (mut tokens, mut elapsed, mut throttled) = (burst, 0.0, 0_usize);
    for gap in gaps {
        let gap = gap / offered;
        elapsed += gap;
        tokens = (tokens + gap).min(burst);
        if tokens >= 1.0 {
            tokens -= 1.0;
        } else {
            throttled += 1;
        }
    }
    let admitted = (gaps.len() - throttled) as f64;
    (admitted / elapsed, throttled as f64 / gaps.len() as f64)
}

/// The standard exponential gaps of [`ARRIVALS`] requests from [`SEED`].
fn gaps() -> Vec<f64> {
    let mut rng = Rng::new(SEED);
    (0..ARRIVALS)
        .map(|_| -(1.0 - rng.next_f64()).ln())
        .collect()
}

/// The share of the limit a Poisson stream of requests gets admitted through a bucket of
/// `burst` requests (at least 1) with at most `share_429` of its requests throttled: the
/// admitted share at the highest rate, up to the limit, whose throttled share is within it.
///
/// ```
/// use retry_sim::fleet::frontier::admitted_at_share;
///
/// // A bucket of one request: about 2 % of the limit at a 2 % 429 share.
/// let one = admitted_at_share(1.0, 0.02);
/// assert!((0.015..0.025).contains(&one), "{one}");
/// // A bucket of a hundred: nearly all of it.
/// assert!(admitted_at_share(100.0, 0.02) > 0.95);
/// ```
pub fn admitted_at_share(burst: f64, share_429: f64) -> f64 {
    Frontier::new().admitted_at_share(burst, share_429)
}

/// [`admitted_at_share`] for many buckets: the arrivals drawn once, each bucket's answer kept.
#[derive(Debug, Clone)]
pub struct Frontier {
    gaps: Vec<f64>,
    known: HashMap<(u64, u64), f64>,
}

impl Default for Frontier {
    fn default() -> Self {
        Self::new()
    }
}

impl Frontier {
    /// The arrivals drawn; nothing computed yet.
    pub fn new() -> Self {
        Self {
            gaps: gaps(),
            known: HashMap::new(),
        }
    }

    /// [`admitted_at_share`], kept for the next ask with the same `burst` and `share_429`.
    pub fn admitted_at_share(&mut self, burst: f64, share_429: f64) -> f64 {
        let burst = burst.max(1.0);
        let key = (burst.to_bits(), share_429.to_bits());
        if let Some(&admitted) = self.known.get(&key) {
            return admitted;
        }
        let admitted = self.bisect(burst, share_429);
        self.known.insert(key, admitted);
        admitted
    }

    fn bisect(&self, burst: f64, share_429: f64) -> f64 {
        let at = |offered: f64| admitted_and_throttled(&self.gaps, burst, offered);
        let (admitted, throttled) = at(1.0);
        if throttled <= share_429 {
            return admitted;
        }
        let (mut within, mut over) = (0.0, 1.0);
        for _ in 0..STEPS {
            let mid = (within + over) / 2.0;
            if at(mid).1 <= share_429 {
                within = mid;
            } else {
                over = mid;
            }
        }
        if within == 0.0 { 0.0 } else { at(within).0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_of_one_admits_poisson_requests_only_while_they_rarely_come_close() {
        // Into a bucket of 1 refilled at the limit, every request within one refill time of
        // the last admitted one is throttled: x of them a time on average at x times the
        // limit, so a share of x / (1 + x), 2 % at x = 0.0204, admitting 0.98 x = 0.0200 of
        // the limit.
        let mut frontier = Frontier::new();
        let one = frontier.admitted_at_share(1.0, 0.02);
        assert!((0.017..0.023).contains(&one), "{one}");
        // A burst under 1 is a bucket of 1: the server admits whole requests.
        assert_eq!(frontier.admitted_at_share(0.3, 0.02), one);
    }

    #[test]
    fn a_larger_bucket_or_a_larger_share_admits_more() {
        let mut frontier = Frontier::new();
        let by_burst: Vec<f64> = [1.0, 2.0, 5.0, 20.0, 100.0]
            .iter()
            .map(|&burst| frontier.admitted_at_share(burst, 0.02))
            .collect();
        assert!(by_burst.windows(2).all(|w| w[0] < w[1]), "{by_burst:?}");
        // A bucket of 2 at 2 %: between a fifth and a third of the limit (the harness's
        // shape G throttled 2.8 % of a Poisson stream at a quarter of it).
        assert!((0.15..0.30).contains(&by_burst[1]), "{by_burst:?}");
        assert!(by_burst[4] > 0.95, "{by_burst:?}");
        assert!(frontier.admitted_at_share(2.0, 0.10) > by_burst[1]);
    }

    #[test]
    fn a_stream_at_the_limit_into_a_deep_bucket_is_admitted_whole() {
        // Nothing throttled at the limit: the answer is the stream's own admitted share.
        let (admitted, throttled) = admitted_and_throttled(&gaps(), 1e9, 1.0);
        assert_eq!(throttled, 0.0);
        assert!((admitted - 1.0).abs() < 0.03, "{admitted}");
        assert_eq!(admitted_at_share(1e9, 0.0), admitted);
    }
}
