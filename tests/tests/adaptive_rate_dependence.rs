//! Whether adaptive mode tells throttling that depends on its send rate (a rate limit: sending
//! slower lowers the throttled share at once) from throttling that does not (a fixed share of
//! requests throttled whatever the rate: a hot key, a flaky dependency behind the service).
//! In virtual time: a client that wants to send `demand` requests per second, sending each
//! attempt its limiter grants (a denied one is dropped, so the send rate is the limiter's),
//! answered at once, against a service that either admits a rate or throttles a share.

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use retry_core::adaptive::{Admission, ClientRateLimiter};

/// How the simulated service throttles.
enum Service {
    /// Admits `limit` requests per second (a token bucket of one second), throttles the rest.
    Limit { limit: f64, tokens: f64 },
    /// Throttles each request with probability `share`, whatever the rate.
    FixedShare { share: f64, random: Box<StdRng> },
}

impl Service {
    fn limit(limit: f64) -> Self {
        Service::Limit {
            limit,
            tokens: limit,
        }
    }

    fn fixed_share(share: f64, seed: u64) -> Self {
        Service::FixedShare {
            share,
            random: Box::new(StdRng::seed_from_u64(seed)),
        }
    }

    /// One millisecond passes.
    fn tick(&mut self) {
        if let Service::Limit { limit, tokens } = self {
            *tokens = (*tokens + *limit / 1000.0).min(*limit);
        }
    }

    /// Whether a request is throttled.
    fn throttles(&mut self) -> bool {
        match self {
            Service::Limit { tokens, .. } => {
                if *tokens >= 1.0 {
                    *tokens -= 1.0;
                    false
                } else {
                    true
                }
            }
            Service::FixedShare { share, random } => random.random_bool(*share),
        }
    }
}

/// What a client did in each whole second of a run.
#[derive(Debug, Default)]
struct Run {
    /// Requests sent, per second.
    sent: Vec<u64>,
    /// Requests throttled, per second.
    throttled: Vec<u64>,
    /// Responses that lowered the fill rate, per second.
    cuts: Vec<u64>,
}

impl Run {
    fn cuts(&self, seconds: std::ops::Range<usize>) -> u64 {
        self.cuts[seconds].iter().sum()
    }

    fn rate(&self, seconds: std::ops::Range<usize>) -> f64 {
        let n = seconds.len() as f64;
        self.sent[seconds].iter().sum::<u64>() as f64 / n
    }

    fn throttled_share(&self, seconds: std::ops::Range<usize>) -> f64 {
        let sent: u64 = self.sent[seconds.clone()].iter().sum();
        let throttled: u64 = self.throttled[seconds].iter().sum();
        throttled as f64 / sent.max(1) as f64
    }
}

/// Drives `limiter` at `demand` requests per second against `service` for `seconds`, in 1 ms
/// steps from `from` seconds.
fn drive(
    limiter: &Arc<ClientRateLimiter>,
    service: &mut Service,
    demand: f64,
    from: u64,
    seconds: u64,
) -> Run {
    let mut run = Run {
        sent: vec![0; seconds as usize],
        throttled: vec![0; seconds as usize],
        cuts: vec![0; seconds as usize],
    };
    let mut owed = 0.0;
    for step in 0..seconds * 1000 {
        let now = Duration::from_millis(from * 1000 + step);
        let second = (step / 1000) as usize;
        service.tick();
        owed += demand / 1000.0;
        while owed >= 1.0 {
            owed -= 1.0;
            if !matches!(limiter.try_acquire(None, now), Admission::Granted) {
                continue;
            }
            run.sent[second] += 1;
            let throttled = service.throttles();
            run.throttled[second] += u64::from(throttled);
            let before = limiter.stats().fill_rate;
            limiter.record_response(throttled, now, now);
            if throttled && limiter.stats().fill_rate < before {
                run.cuts[second] += 1;
            }
        }
    }
    run
}

/// A limiter that served `demand` requests per second for 10 s before the throttling began.
fn warmed_up(demand: f64) -> Arc<ClientRateLimiter> {
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    drive(&limiter, &mut Service::fixed_share(0.0, 0), demand, 0, 10);
    limiter
}

/// The most cuts a fixed share of throttled requests may take before the rate is held, in two
/// minutes: at 1 %, a throttle a second at 100/s, CUBIC regains most of each cut before the
/// next, and the rate falls far enough to be weighed only every few cuts.
const MOST_CUTS_TO_HOLD: u64 = 40;

/// Runs of each share, one seed each.
const RUNS: u64 = 64;

/// The runs at a 1 % share that may still cut in the last minute: at a throttle a second, the
/// evidence that the share does not fall with the rate comes slowly, and by chance it has not
/// come within a minute in a few runs (2 of 64 here; 5 of 64 before a cut took the permits
/// banked at the old rate, 2 of them after more than 40 cuts).
const SLOW_TO_HOLD_AT_ONE_PERCENT: usize = RUNS as usize / 16;

#[test]
fn a_fixed_share_holds_the_rate_within_a_bounded_number_of_cuts() {
    // 100 requests/s wanted; 1, 3, 10 or 30 % of them throttled whatever the rate, for two
    // minutes. Lowering the rate does not lower the share: the client must stop cutting after
    // a bounded number of cuts, and send what it wants in the last minute, without a cut (at
    // 1 %, in all but a few runs). (The AWS SDKs' rule, and this crate's before, cut 60 to 80
    // times, some 30 in the last minute, and sent 5 to 60 of the 100/s at 1 to 10 %.)
    let mut misses = Vec::new();
    for share in [0.01, 0.03, 0.1, 0.3] {
        let mut slow = Vec::new();
        for seed in 0..RUNS {
            let limiter = warmed_up(100.0);
            let mut service = Service::fixed_share(share, seed);
            let run = drive(&limiter, &mut service, 100.0, 10, 120);
            let cuts = run.cuts(0..120);
            let rate = run.rate(60..120);
            let outcome = format!(
                "share {share}, seed {seed}: {cuts} cuts ({} in the last minute), \
                 {rate:.1}/s sent in the last minute",
                run.cuts(60..120)
            );
            if cuts > MOST_CUTS_TO_HOLD {
                misses.push(outcome);
            } else if run.cuts(60..120) > 0 || rate < 0.9 * 100.0 {
                slow.push(outcome);
            }
        }
        let allowed = if share == 0.01 {
            SLOW_TO_HOLD_AT_ONE_PERCENT
        } else {
            0
        };
        if slow.len() > allowed {
            misses.extend(slow);
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn under_a_rate_limit_the_client_keeps_cutting_and_sends_near_the_limit() {
    // 50/s admitted of the 100/s (or 200/s) wanted: each time CUBIC probes above the limit
    // the share of throttled requests rises, and the cut lowers it at once. The client goes on
    // cutting (once per probe) for as long as the limit lasts, and sends near the limit.
    for demand in [100.0, 200.0] {
        let limiter = warmed_up(demand);
        let run = drive(&limiter, &mut Service::limit(50.0), demand, 10, 120);
        let rate = run.rate(60..120);
        let share = run.throttled_share(60..120);
        let cuts = run.cuts(60..120);
        assert!(
            (40.0..=60.0).contains(&rate),
            "demand {demand}: sends {rate}/s against a 50/s limit: {:?}",
            run.sent
        );
        assert!(
            share <= 0.1,
            "demand {demand}: {share} of the last minute's requests throttled"
        );
        assert!(
            cuts >= 10,
            "demand {demand}: {cuts} cuts in the last minute: {:?}",
            run.cuts
        );
    }
}

#[test]
fn a_rate_limit_after_a_held_fixed_share_is_cut_to() {
    // A hot key (10 % throttled) the client learns to hold through, then a 50/s limit: the
    // throttled share rises past the share held, and the client cuts down to the limit.
    let limiter = warmed_up(100.0);
    drive(&limiter, &mut Service::fixed_share(0.1, 1), 100.0, 10, 60);
    let run = drive(&limiter, &mut Service::limit(50.0), 100.0, 70, 60);
    let rate = run.rate(30..60);
    assert!(
        (35.0..=60.0).contains(&rate),
        "sends {rate}/s against a 50/s limit: {:?}",
        run.sent
    );
    assert!(run.throttled_share(30..60) <= 0.1, "{:?}", run.throttled);
}
